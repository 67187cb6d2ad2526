"""How deep a configuration value may nest: one limit, wherever the value comes from.

The stack file is checked as it is parsed (plan.stackfile), and every value Pulumi hands
the program is checked as it is decoded (decode_raw): nothing that walks a value by
recursion (validation, stand-ins, strategic merges, redaction) then meets more than
MAX_DEPTH levels of the user's nesting, far from Python's recursion limit. The deepest
value the project reads, a pod spec's affinity terms, is about a dozen levels deep.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from components.config.errors import Problem, format_path

MAX_DEPTH = 64
TOO_DEEP = f"nested more than {MAX_DEPTH} levels deep"
# How much of a too-deep value's path a message shows.
_SHOWN_PARTS = 8


def shown_path(parts: Sequence[str | int]) -> str:
    """A key path for a message, its tail elided past a few levels."""
    text = format_path(parts[:_SHOWN_PARTS])
    return text + "…" if len(parts) > _SHOWN_PARTS else text


def too_deep(value: Any, top: str) -> Problem | None:
    """A problem naming where `value` (the value of the key `top`) nests mappings and lists
    more than MAX_DEPTH levels deep, else None. Walks with a stack of its own, not
    recursion, so a value of any depth is measured."""
    stack: list[tuple[Any, tuple[str | int, ...], int]] = [(value, (top,), 1)]
    while stack:
        item, path, level = stack.pop()
        if isinstance(item, dict):
            children = [(key, child) for key, child in item.items()]
        elif isinstance(item, list):
            children = list(enumerate(item))
        else:
            continue
        if level > MAX_DEPTH:
            return Problem(shown_path(path), TOO_DEEP)
        stack += [(child, (*path, key), level + 1) for key, child in children]
    return None
