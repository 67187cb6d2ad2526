"""From the args the provider host hands a component to the library's pydantic Args.

The host gives the constructor plain dicts keyed by the TypedDicts' Python names (snake_case:
`ComponentProvider.map_input_properties`, pulumi 3.272.0,
.venv/lib/python3.11/site-packages/pulumi/provider/experimental/component.py), leaving out
the keys the program did not set. The Args models accept their camelCase keys only
(components.config.base.ConfigModel), so the keys are mapped back through each model's
aliases, guided by the model (the keys of a user's map, such as node labels, stay as they
are). A value the model refuses is a ConfigError: one line per problem naming its camelCase
key path (components.config.errors), the names the schema shows.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from components.config.errors import ConfigError, discriminated_union, pydantic_problems

Model = TypeVar("Model", bound=BaseModel)


def _strip(annotation: Any) -> Any:
    """Annotated[X, ...] -> X; X | None -> X."""
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    members = [m for m in typing.get_args(annotation) if m is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(members) == 1:
        return _strip(members[0])
    return annotation


def _fields(model: type[BaseModel]) -> dict[str, tuple[str, Any]]:
    """Python name -> (key, annotation with its discriminator) of each field."""
    return {
        name: (
            info.alias or name,
            typing.Annotated[info.annotation, info] if info.discriminator else info.annotation,
        )
        for name, info in model.model_fields.items()
    }


def by_alias(annotation: Any, value: Any) -> Any:
    """`value` (keyed by Python names) keyed the way the model of `annotation` reads it."""
    union = discriminated_union(annotation)
    if union and isinstance(value, Mapping):
        discriminator, variants = union
        # The variant the tag names; without a tag (a default one), any variant's keys: the
        # generated TypedDict gives every field of a union one type and one name.
        chosen = variants.get(value.get(discriminator))
        fields: dict[str, tuple[str, Any]] = {}
        for variant in [chosen] if chosen else dict.fromkeys(variants.values()):
            fields = _fields(variant) | fields
        return _mapped(fields, value)
    annotation = _strip(annotation)
    origin = typing.get_origin(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel) and isinstance(value, Mapping):
        return _mapped(_fields(annotation), value)
    members = [m for m in typing.get_args(annotation) if m is not type(None)]
    if origin in (typing.Union, types.UnionType) and isinstance(value, Mapping):
        # A union of models without a tag (node pools of any cloud): every member's keys,
        # one TypedDict for all of them as for a tagged union.
        fields = {}
        for member in reversed(members):
            if isinstance(member, type) and issubclass(member, BaseModel):
                fields |= _fields(member)
        return _mapped(fields, value)
    if origin is list and isinstance(value, list):
        (item,) = typing.get_args(annotation)
        return [by_alias(item, v) for v in value]
    if origin is dict and isinstance(value, Mapping):
        item = typing.get_args(annotation)[1]
        return {k: by_alias(item, v) for k, v in value.items()}
    return value


def _mapped(fields: dict[str, tuple[str, Any]], value: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, item in value.items():
        key, annotation = fields.get(name, (name, Any))  # an unknown key: the model refuses it
        out[key] = by_alias(annotation, item)
    return out


def validated(model: type[Model], args: Mapping[str, Any]) -> Model:
    """The component's pydantic Args from the host's dict; ConfigError names each bad key."""
    raw = by_alias(model, args)
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(pydantic_problems(exc, model, raw)) from None
