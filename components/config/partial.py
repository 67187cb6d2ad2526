"""A partial configuration: the stack built from the values that passed validation, every
value that failed it standing as BROKEN.

Pydantic stops at a model whose field failed: nothing of it (nor of anything holding it)
exists, so neither the model validators of its other fields nor the cross-section rules can
judge the rest, and problems would come one round at a time. Here a failed value is taken
out and the model validated again without it, the value then set to BROKEN: model
validators and rules run on everything else, and one that reads a BROKEN value stops with
`Unreliable` (its findings are dropped), so no rule judges a value the user did not write.
"""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, BeforeValidator, Field, ValidationError, create_model

from components.config.errors import discriminated_union

Loc = tuple[Any, ...]


class Unreliable(Exception):
    """Raised on any use of BROKEN. Deliberately neither ValueError nor AttributeError:
    pydantic would turn the one into a problem, getattr/hasattr would swallow the other."""


class _Broken:
    """A value that failed validation: any use of it raises Unreliable."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise Unreliable

    __getattr__ = __getitem__ = __iter__ = __len__ = __contains__ = __call__ = _refuse
    __bool__ = __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __hash__ = _refuse
    __str__ = __repr__ = __format__ = __int__ = __float__ = __index__ = _refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __mod__ = _refuse

    def __copy__(self) -> _Broken:
        return self

    def __deepcopy__(self, memo: Any) -> _Broken:
        return self


BROKEN: Any = _Broken()


def is_broken(value: Any) -> bool:
    return type(value) is _Broken


@functools.cache
def _without(cls: type[BaseModel], fields: frozenset[str]) -> type[BaseModel]:
    """`cls` with `fields` optional, of any type and BROKEN by default: a subclass, so that
    isinstance and the unions holding `cls` take it."""
    overrides: dict[str, Any] = {name: (Any, Field(default_factory=lambda: BROKEN)) for name in fields}
    return create_model(cls.__name__, __base__=cls, __module__=cls.__module__, **overrides)


def _strip_optional(annotation: Any) -> Any:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(members) == 1:
            return members[0]
    return annotation


def _before(annotation: Any, value: Any) -> tuple[Any, Any]:
    """(the annotation's type, the value after its before-validators), as pydantic would
    see it; Optional[X] taken as X."""
    validators = []
    while typing.get_origin(annotation) is typing.Annotated:
        annotation, *extras = typing.get_args(annotation)
        validators += [extra.func for extra in extras if isinstance(extra, BeforeValidator)]
    for func in reversed(validators):  # pydantic runs the last-declared one first
        value = func(value)
    return _strip_optional(annotation), value


class Partial:
    """Builds the partial configuration; `found` collects what model validators found once
    the failed values were out of their way, as pydantic errors."""

    def __init__(self) -> None:
        self.found: list[dict[str, Any]] = []

    def value(self, annotation: Any, value: Any, errors: list[Loc], at: Loc = ()) -> Any:
        """A value pydantic accepts for `annotation` (model instances standing for the
        parts with errors, BROKEN inside them), or BROKEN."""
        if any(not loc for loc in errors):
            return BROKEN  # the value itself is wrong, not a part of it
        union = discriminated_union(annotation)
        try:
            kind, value = _before(annotation, value)
        except Exception:  # a before-validator refusing: reported by validation already
            return BROKEN
        if union:
            tags = {loc[0] for loc in errors}
            if len(tags) != 1 or next(iter(tags)) not in union[1]:
                return BROKEN
            tag = next(iter(tags))
            return self.model(union[1][tag], value, [loc[1:] for loc in errors], (*at, tag))
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            return self.model(kind, value, errors, at)
        origin = typing.get_origin(kind)
        if origin is list and isinstance(value, list) and all(isinstance(loc[0], int) for loc in errors):
            (item,) = typing.get_args(kind)
            return self._items(item, dict(enumerate(value)), errors, at, list)
        if origin is dict and isinstance(value, dict) and all(loc[0] in value for loc in errors):
            item = typing.get_args(kind)[1]
            return self._items(item, value, errors, at, dict)
        return BROKEN

    def _items(self, item: Any, items: dict[Any, Any], errors: list[Loc], at: Loc, kind: type) -> Any:
        built = dict(items)
        for key in dict.fromkeys(loc[0] for loc in errors):
            part = self.value(item, items[key], [loc[1:] for loc in errors if loc[0] == key], (*at, key))
            if is_broken(part):
                return BROKEN  # a container cannot hold BROKEN through validation
            built[key] = part
        return list(built.values()) if kind is list else built

    def model(self, cls: type[BaseModel], data: Any, errors: list[Loc], at: Loc) -> Any:
        if not isinstance(data, dict) or any(not loc for loc in errors):
            return BROKEN  # not a mapping, or a model validator refused the whole
        fields = {info.alias or name: name for name, info in cls.model_fields.items()}
        data = dict(data)
        broken: set[str] = set()
        for key in dict.fromkeys(loc[0] for loc in errors):
            if key not in fields:
                data.pop(key, None)  # an unknown key: reported, and left out
                continue
            info = cls.model_fields[fields[key]]
            # The field's own validators and discriminator are in its FieldInfo, not its annotation.
            annotation = typing.Annotated[info.annotation, *info.metadata, info]
            mine = [loc[1:] for loc in errors if loc[0] == key]
            part = self.value(annotation, data.get(key, BROKEN), mine, (*at, key)) if key in data else BROKEN
            if is_broken(part):
                broken.add(key)
                data.pop(key, None)
            else:
                data[key] = part
        given = {fields[key] for key in broken}
        variant = _without(cls, frozenset(fields[key] for key in broken)) if broken else cls
        try:
            model = variant.model_validate(data)
        except ValidationError as exc:
            # What a model validator finds once the failed values are out of its way (the
            # fields themselves passed).
            self.found += [{**e, "loc": (*at, *e["loc"])} for e in exc.errors(include_url=False)]
            return BROKEN
        except Exception:  # a validator that read a BROKEN value (Unreliable)
            return BROKEN
        object.__setattr__(model, "__pydantic_fields_set__", model.model_fields_set | given)
        return model


def build(annotation: Any, raw: Any, errors: Iterable[Loc]) -> tuple[Any, list[dict[str, Any]]]:
    """(the partial configuration or BROKEN, the errors of model validators it could run,
    as pydantic reports errors)."""
    partial = Partial()
    try:
        return partial.value(annotation, raw, list(errors)), partial.found
    except Exception:  # never in the way of reporting what validation found
        return BROKEN, []
