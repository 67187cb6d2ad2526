"""The config models are the single source of truth for what a user sets, descriptions
included: every field of every model in components.config says what it is for (the reference the
docs generate from them reads these)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest
from pydantic import BaseModel

import components.config


def _models() -> list[type[BaseModel]]:
    found = []
    for info in pkgutil.iter_modules(components.config.__path__):
        module = importlib.import_module(f"components.config.{info.name}")
        for obj in vars(module).values():
            if inspect.isclass(obj) and issubclass(obj, BaseModel) and obj.__module__ == module.__name__:
                found.append(obj)
    return sorted(found, key=lambda m: (m.__module__, m.__qualname__))


MODELS = _models()


def test_the_models_are_found():
    assert len(MODELS) > 30


@pytest.mark.parametrize("model", MODELS, ids=lambda m: f"{m.__module__.rsplit('.', 1)[1]}.{m.__qualname__}")
def test_every_field_says_what_it_is_for(model):
    missing = [
        info.alias or name
        for name, info in model.model_fields.items()
        if not (info.description or "").strip()
    ]
    assert not missing, f"{model.__qualname__}: no description for {', '.join(missing)}"
