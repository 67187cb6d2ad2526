"""`determined:master`: the Determined master."""

from __future__ import annotations

import re

from pydantic import field_validator

from deploy import versions
from deploy.config.base import ConfigModel
from deploy.config.secrets import Secret
from deploy.config.syntax import Flag, ImageRepository, Quantity, Version


def _password_rule(value: Secret | None) -> Secret | None:
    # Determined's rule for user passwords; the message never repeats the value.
    if value is None:
        return value
    text = value.get_secret_value()
    if len(text) < 8 or not all(re.search(p, text) for p in ("[A-Z]", "[a-z]", "[0-9]")):
        raise ValueError(
            "does not meet Determined's password rule: at least 8 characters with an "
            "upper-case letter, a lower-case letter and a digit"
        )
    return value


class MasterConfig(ConfigModel):
    version: Version = versions.DEFAULT_DETERMINED_VERSION
    image_registry: ImageRepository = "determinedai"
    cpu: Quantity = "2"
    memory: Quantity = "8Gi"
    initial_user_password: Secret | None = None
    telemetry: Flag = False

    _password = field_validator("initial_user_password")(_password_rule)

    @field_validator("version")
    @classmethod
    def _supported(cls, value: str) -> str:
        if versions.parse_version(value) < versions.MIN_DETERMINED_VERSION:
            oldest = ".".join(map(str, versions.MIN_DETERMINED_VERSION))
            raise ValueError(f"Determined {value} is older than the oldest supported, {oldest}")
        return value

    @property
    def version_tuple(self) -> tuple[int, int, int]:
        return versions.parse_version(self.version)
