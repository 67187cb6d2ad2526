"""Reading `determined:*` values the way Pulumi hands them to a program, and validating them."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from pydantic import TypeAdapter, ValidationError

from deploy.config.base import PROJECT
from deploy.config.errors import ConfigError, Problem, pydantic_problems
from deploy.config.stack import AnyStack, StackConfig

# Top-level keys whose values are plain strings: Pulumi passes "123" for both `123` and
# `"123"`, so a pool name of digits stays a string. Only JSON null and booleans are read
# as such: an empty value or `false` is refused, not taken for a name.
_STRING_KEYS = {"cloud", "environment", "namespace", "defaultComputePool", "defaultAuxPool", "scheduler"}
_NOT_STRINGS = {"null": None, "true": True, "false": False}

_ADAPTER: TypeAdapter[StackConfig] = TypeAdapter(AnyStack)


def decode_raw(raw: Mapping[str, str]) -> dict[str, Any]:
    """Decode Pulumi config values (strings, JSON for everything else) into Python values."""
    decoded: dict[str, Any] = {}
    for key, value in raw.items():
        if not isinstance(value, str):
            decoded[key] = value
        elif key in _STRING_KEYS:
            decoded[key] = _NOT_STRINGS.get(value, value)
        else:
            try:
                decoded[key] = json.loads(value)
            except json.JSONDecodeError:
                decoded[key] = value  # left for the model to report with the key path
    return decoded


def _top_key(problem: Problem) -> str:
    return re.split(r"[.\[]", problem.path, maxsplit=1)[0]


def load_config(raw: Mapping[str, Any]) -> StackConfig:
    """Validate decoded config values (keys without the `determined:` prefix); ConfigError
    lists every problem, each naming its key path."""
    raw = dict(raw)
    try:
        cfg = _ADAPTER.validate_python(raw)
    except ValidationError as exc:
        problems = pydantic_problems(exc, AnyStack, raw)
        # Report the relations between the remaining keys too: validate again without the
        # broken top-level keys (where they have defaults) and keep what does not touch them.
        broken = {_top_key(p) for p in problems}
        try:
            cfg = _ADAPTER.validate_python({k: v for k, v in raw.items() if k not in broken})
        except ValidationError:
            raise ConfigError(problems) from None
        problems += cfg.problems(unreliable=broken)
        raise ConfigError(problems) from None
    problems = cfg.problems()
    if problems:
        raise ConfigError(problems)
    return cfg


def read_pulumi_config() -> dict[str, Any]:
    """All `determined:*` values of the running stack, decoded."""
    from pulumi.runtime import config as runtime_config

    prefix = PROJECT + ":"
    everything = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    raw = {k[len(prefix) :]: v for k, v in everything.items() if k.startswith(prefix)}
    return decode_raw(raw)
