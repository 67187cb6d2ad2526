"""The stack configuration (CONTRACT §1): typed models, validation and error reporting."""

from deploy.config.models import *  # noqa: F403  (split into modules by section next)
from deploy.config.models import _Model  # noqa: F401
