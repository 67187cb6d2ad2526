"""Configuration problems: one line each, `determined:<key path>: <what is wrong>`.

Pydantic's errors are translated here: key paths as the user wrote them (camelCase, list
indexes, no union variant names), messages in words (never a regex or a class name), the
user's value shown only where it cannot be a secret, and a hint for unknown keys (a
near-miss spelling, or the mode the key belongs to).
"""

from __future__ import annotations

import difflib
import re
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pulumi
from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_camel
from pydantic_core import InitErrorDetails, PydanticCustomError

from components.config.base import PROJECT
from components.config.syntax import path_safe, shown


@dataclass(frozen=True)
class Problem:
    """One configuration problem: a key path (without the project prefix) and a message."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{PROJECT}:{self.path}: {self.message}"


# How a rule reports a problem: add(key path, message).
Add = Callable[[str, str], None]


class ConfigError(pulumi.RunError):
    """Raised before any resource is registered. pulumi.RunError prints no traceback."""

    def __init__(self, problems: Iterable[Problem]):
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


def format_path(parts: Iterable[str | int]) -> str:
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif path_safe(str(part)):
            text += ("." if text else "") + str(part)
        else:
            # A key with a newline, a space or a ':' would break the one-line message.
            text += f"[{shown(str(part))}]"
    return text


# --- walking the model types along an error location --------------------------------------


@dataclass(frozen=True)
class _Union:
    """A discriminated union met on the way: where its tag sits in the location."""

    discriminator: str
    variants: dict[str, type[BaseModel]]
    tag: str


def _strip(annotation: Any) -> Any:
    """Annotated[X, ...] -> X; Optional[X] -> X."""
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(members) == 1:
            return _strip(members[0])
    return annotation


def discriminated_union(annotation: Any) -> tuple[str, dict[str, type[BaseModel]]] | None:
    """(discriminator, {tag: variant}) for a discriminated union annotation."""
    discriminator = None
    while typing.get_origin(annotation) is typing.Annotated:
        annotation, *extras = typing.get_args(annotation)
        for extra in extras:
            discriminator = getattr(extra, "discriminator", None) or discriminator
    if not discriminator or typing.get_origin(annotation) not in (typing.Union, types.UnionType):
        return None
    variants = {}
    for member in typing.get_args(annotation):
        field = member.model_fields[discriminator]
        for tag in typing.get_args(field.annotation):
            variants[tag] = member
    return discriminator, variants


def _fields_by_alias(model: type[BaseModel]) -> dict[str, Any]:
    return {info.alias or name: info for name, info in model.model_fields.items()}


def _walk(annotation: Any, loc: tuple[Any, ...]) -> Iterator[tuple[str, Any]]:
    """Follow `loc` through the types: yields ("key", part) for parts that are keys or
    indexes, ("union", _Union) for parts that name a union variant, and finally
    ("type", annotation) for the type at the end."""
    for part in loc:
        union = discriminated_union(annotation)
        if union:
            discriminator, variants = union
            if part in variants:
                yield "union", _Union(discriminator, variants, part)
                annotation = variants[part]
                continue
            annotation = None
        annotation = _strip(annotation)
        origin = typing.get_origin(annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            field = _fields_by_alias(annotation).get(part)
            annotation = field.annotation if field else None
            if field is not None:
                annotation = _with_metadata(field)
        elif origin is list and isinstance(part, int):
            annotation = typing.get_args(annotation)[0]
        elif origin is dict and isinstance(part, str):
            annotation = typing.get_args(annotation)[1]
        elif isinstance(part, str) and ("[" in part or part.startswith("function-")):
            # Validator wrappers add location parts that are not keys.
            continue
        else:
            annotation = None
        yield "key", part
    yield "type", annotation


def _with_metadata(field: Any) -> Any:
    # A field's discriminator lives in FieldInfo, not in its annotation.
    if field.discriminator:
        return typing.Annotated[field.annotation, field]
    return field.annotation


def _model_at(root: Any, loc: tuple[Any, ...]) -> tuple[list[Any], list[_Union], Any]:
    keys, unions, end = [], [], None
    for kind, value in _walk(root, loc):
        if kind == "key":
            keys.append(value)
        elif kind == "union":
            unions.append((len(keys), value))
        else:
            end = value
    return keys, unions, end


def _unknown_key_hint(root: Any, loc: tuple[Any, ...], keys: list[Any], unions: list, model: Any) -> str:
    key = loc[-1]
    model = _strip(model)
    known = list(_fields_by_alias(model)) if isinstance(model, type) and issubclass(model, BaseModel) else []
    if isinstance(key, str):
        first = re.split(r"[.\[]", key, maxsplit=1)[0]
        if len(keys) == 1 and first != key and first in known:
            # `pulumi config set determined:master.version x` without --path: one flat key.
            return (
                f"unknown key; to set {key!r} inside {first!r}, run pulumi config set --path "
                "(without --path the whole name is one key)"
            )
        if to_camel(key) in known and to_camel(key) != key:
            return f"unknown key; did you mean {to_camel(key)!r}?"
        # Does the key belong to another variant of a union on the way?
        for position, union in unions:
            owners = []
            for tag, variant in union.variants.items():
                if tag == union.tag:
                    continue
                _, _, other = _model_at(variant, tuple(keys[position:-1]))
                other = _strip(other)
                if (
                    isinstance(other, type)
                    and issubclass(other, BaseModel)
                    and to_camel(key) in _fields_by_alias(other)
                ):
                    owners.append(tag)
            if owners:
                where = format_path([*keys[:position], union.discriminator])
                spelling = f"unknown key {key!r}; {to_camel(key)!r} is " if to_camel(key) != key else ""
                return f"{spelling}only for {where} {' or '.join(owners)}"
        close = difflib.get_close_matches(key, known, n=1, cutoff=0.6) or [
            k for k in known if k.lower() == key.lower().replace("_", "")
        ]
        if close:
            return f"unknown key; did you mean {close[0]!r}?"
    return "unknown key" + (f" (allowed: {', '.join(known)})" if 0 < len(known) <= 12 else "")


def _only_in(located: tuple[int, _Union], keys: list[Any]) -> str:
    """' for <mode> <tag>' when a required key is required by this variant of a union only."""
    position, union = located
    for tag, variant in union.variants.items():
        if tag == union.tag:
            continue
        _, _, other = _model_at(variant, tuple(keys[position:-1]))
        other = _strip(other)
        if not isinstance(other, type):
            continue  # the key's parent exists in this variant only: nothing to contrast
        field = _fields_by_alias(other).get(keys[-1])
        if field is None or not field.is_required():
            return f" for {format_path([*keys[:position], union.discriminator])} {union.tag}"
    return ""


# --- messages -----------------------------------------------------------------------------


def kind_of(value: Any) -> str:
    """How a message names the kind of a value the user wrote."""
    if value is None:
        return "empty (null)"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, float) and not value.is_integer():
        return "a fraction"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return "of another type"


def _given(raw: Any, loc: tuple[Any, ...]) -> Any:
    """The value the user gave at `loc` (location parts that are union tags skipped)."""
    value = raw
    for part in loc:
        in_dict = isinstance(value, dict) and part in value
        in_list = isinstance(value, list) and isinstance(part, int) and part < len(value)
        if in_dict or in_list:
            value = value[part]
        elif isinstance(value, dict):
            continue  # a union tag or validator wrapper
        else:
            return None
    return value


def _describe(error: Mapping[str, Any], given: Any) -> str:
    kind = error["type"]
    ctx = error.get("ctx") or {}
    if kind == "missing":
        return "required"
    if kind in ("literal_error", "union_tag_invalid"):
        expected = ctx.get("expected") or ctx.get("expected_tags")
        if given is None:
            shown = " (got nothing: the value is empty)"
        elif isinstance(given, (str, int, float, bool)):
            shown = f" (got {given!r})"
        else:
            shown = f" (got {kind_of(given)})"
        return f"must be one of {expected}{shown}"
    if kind == "value_error":
        return str(ctx.get("error", error["msg"]))
    if kind == "string_type":
        hint = " (quote it in YAML)" if isinstance(given, (bool, int, float)) else ""
        return f"must be a string, not {kind_of(given)}{hint}"
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return f"must be a whole number, not {kind_of(given)}"
    if kind in ("float_type", "float_parsing"):
        return f"must be a number, not {kind_of(given)}"
    if kind in ("bool_type", "bool_parsing"):
        return f"must be true or false, not {kind_of(given)}"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return f"must be a mapping, not {kind_of(given)}"
    if kind == "list_type":
        return f"must be a list, not {kind_of(given)}"
    if kind == "too_short":
        return (
            f"needs at least {ctx.get('min_length')} item(s)"
            if isinstance(given, list)
            else "must not be empty"
        )
    if kind == "too_long":
        return f"must have at most {ctx.get('max_length')} item(s)"
    if kind == "string_too_short":
        return "must not be empty"
    if kind == "string_too_long":
        return f"must be at most {ctx.get('max_length')} characters"
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        words = {
            "greater_than_equal": "at least",
            "greater_than": "greater than",
            "less_than_equal": "at most",
            "less_than": "less than",
        }[kind]
        bound = next(iter(ctx.values()))
        return f"must be {words} {bound}"
    if kind == "union_tag_not_found":
        return f"required ({ctx.get('discriminator', '').strip(chr(39))})"
    return str(error["msg"])[0].lower() + str(error["msg"])[1:]


# Errors that a null value meets where a value of a type (or one of some values) belongs.
_NULL_REFUSED = {
    "literal_error",
    "string_type",
    "int_type",
    "float_type",
    "bool_type",
    "dict_type",
    "model_type",
    "model_attributes_type",
    "list_type",
}


def _has_default(root: Any, loc: tuple[Any, ...]) -> bool:
    """Whether the key at `loc` is a field that may be left out."""
    if not loc or not isinstance(loc[-1], str):
        return False
    _, _, parent = _model_at(root, loc[:-1])
    parent = _strip(parent)
    if not (isinstance(parent, type) and issubclass(parent, BaseModel)):
        return False
    field = _fields_by_alias(parent).get(loc[-1])
    return field is not None and not field.is_required()


def pydantic_problems(exc: ValidationError, root: Any, raw: Any) -> list[Problem]:
    """One Problem per pydantic error, located by the key path the user wrote."""
    return error_problems(exc.errors(include_url=False), root, raw)


def error_problems(errors: Iterable[Mapping[str, Any]], root: Any, raw: Any) -> list[Problem]:
    """One Problem per error (as pydantic reports them), without repeats."""
    problems: list[Problem] = []
    for error in errors:
        loc = tuple(error["loc"])
        keys, unions, _ = _model_at(root, loc)
        if error["type"] == "union_tag_not_found":
            discriminator = error["ctx"]["discriminator"].strip("'")
            problems.append(Problem(format_path([*keys, discriminator]), "required"))
            continue
        if error["type"] == "union_tag_invalid":
            discriminator = error["ctx"]["discriminator"].strip("'")
            given = _given(raw, (*keys, discriminator))
            problems.append(Problem(format_path([*keys, discriminator]), _describe(error, given)))
            continue
        if error["type"] == "extra_forbidden":
            _, _, parent = _model_at(root, loc[:-1])
            message = _unknown_key_hint(root, loc, keys, unions, parent)
        elif error["type"] == "missing" and unions:
            message = "required" + _only_in(unions[-1], keys)
        else:
            given = _given(raw, tuple(keys))
            message = _describe(error, given)
            if given is None and error["type"] in _NULL_REFUSED and _has_default(root, loc):
                # `key:` with nothing after it in YAML, or `null`: most likely meant "the default".
                message += "; leave the key out to use its default"
        problems.append(Problem(format_path(keys), message))
    return list(dict.fromkeys(problems))


def refuse(
    problems: Iterable[tuple[str | tuple[str | int, ...], str]], title: str = "config"
) -> ValidationError:
    """For a validator that finds several problems: raise this, and each is reported at its
    own key (relative to the value validated: a key, or a tuple of keys and indexes) as its
    own line, instead of the first alone. An empty key is the value itself."""
    details = [
        InitErrorDetails(
            type=PydanticCustomError("value_error", "{error}", {"error": message}),
            loc=(where,) if isinstance(where, str) and where else tuple(where) if where else (),
            input=None,
        )
        for where, message in problems
    ]
    return ValidationError.from_exception_data(title, details)
