"""Reading `determined:*` values the way Pulumi hands them to a program, and validating them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import TypeAdapter, ValidationError

from components.config import partial, rules
from components.config.base import PROJECT
from components.config.errors import ConfigError, error_problems
from components.config.stack import AnyStack, StackConfig
from components.config.task_pods import TaskPods

# Top-level keys whose values are plain strings: Pulumi passes "123" for both `123` and
# `"123"`, so a pool name of digits stays a string. Only JSON null and booleans are read
# as such: an empty value or `false` is refused, not taken for a name.
_STRING_KEYS = {"cloud", "environment", "namespace", "defaultComputePool", "defaultAuxPool", "scheduler"}
_NOT_STRINGS = {"null": None, "true": True, "false": False}

_ADAPTER: TypeAdapter[StackConfig] = TypeAdapter(AnyStack)


def decode_raw(raw: Mapping[str, str]) -> dict[str, Any]:
    """Decode Pulumi config values (strings, JSON for everything else) into Python values.
    ConfigError names each value nested deeper than nesting.MAX_DEPTH."""
    from components.config import nesting

    decoded: dict[str, Any] = {}
    deep = []
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
            except RecursionError:  # deeper than the decoder goes: far deeper than allowed
                deep.append(nesting.Problem(key, nesting.TOO_DEEP))
                continue
        problem = nesting.too_deep(decoded[key], key)
        if problem is not None:
            deep.append(problem)
    if deep:
        raise ConfigError(deep)
    return decoded


def load_config(raw: Mapping[str, Any], task_pods: TaskPods | None = None) -> StackConfig:
    """Validate decoded config values (keys without the `determined:` prefix); ConfigError
    lists every problem, each naming its key path: the values that fail validation, and
    what the model validators and cross-section rules find in the others (components.config.partial).
    `task_pods`: the Determined component's (components.config.task_pods), for the rules that
    read the task pods it renders; the composition root passes them (stack_args.load_stack)."""
    raw = dict(raw)
    try:
        cfg = _ADAPTER.validate_python(raw)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        built, found = partial.build(AnyStack, raw, [tuple(e["loc"]) for e in errors])
        problems = error_problems([*errors, *found], AnyStack, raw)
        if not partial.is_broken(built):
            problems += rules.problems(built, partial=True, task_pods=task_pods)
        raise ConfigError(dict.fromkeys(problems)) from None
    problems = rules.problems(cfg, task_pods=task_pods)
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
