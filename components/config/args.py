"""The base of every public component's Args: a config model whose bad values are a
ConfigError, as a stack file's are.

A program that builds a component from its own values gets what `pulumi up` gets from a
stack file: one line per problem naming its key (camelCase, as the Args' fields are
written), and no traceback: ConfigError is a pulumi.RunError, which the Python language host
prints alone (pulumi/pulumi sdk/python/cmd/pulumi-language-python-exec: `except
pulumi.RunError: pulumi.log.error(str(e))`; anything else is printed with its traceback).
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from components.config.base import ConfigModel
from components.config.errors import ConfigError, pydantic_problems


class ArgsModel(ConfigModel):
    """A component's Args (a config model: camelCase fields, unknown keys refused)."""

    # model_validate comes here too: pydantic builds a model with an __init__ of its own
    # through that __init__ (`__pydantic_custom_init__`, pydantic 2.14
    # _internal/_model_construction.py:146), so one wrapper serves both.
    def __init__(self, /, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise ConfigError(pydantic_problems(exc, type(self), data)) from None
