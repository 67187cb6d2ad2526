"""The base every configuration section is built on."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

PROJECT = "determined"


class ConfigModel(BaseModel):
    """camelCase keys only (the contract's names; snake_case is refused, not accepted
    silently), unknown keys refused, values immutable, inputs never echoed in errors."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_alias=True,
        validate_by_name=False,
        extra="forbid",
        frozen=True,
        hide_input_in_errors=True,
    )


def default_tag(key: str, value: str):
    """A before-validator for a discriminated section whose discriminator may be left out
    (`database: {storageSize: 10Gi}` means mode inCluster)."""

    def fill(raw: Any) -> Any:
        if isinstance(raw, dict) and key not in raw:
            return {key: value, **raw}
        return raw

    return fill
