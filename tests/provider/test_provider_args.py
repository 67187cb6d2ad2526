"""scripts/provider_args.py: the provider's TypedDicts and components follow the library's
Args and outputs (a drift fails here), and each pydantic form becomes the schema form the
generator's docstring promises."""

from __future__ import annotations

import importlib.util
import sys
from typing import Annotated, Literal

import pytest
from conftest import ROOT
from pydantic import Field, SecretStr

from components.config.base import ConfigModel


def _generator():
    spec = importlib.util.spec_from_file_location("provider_args", ROOT / "scripts" / "provider_args.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["provider_args"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


provider_args = _generator()


def test_the_committed_files_are_what_the_generator_writes():
    files = provider_args.render([provider_args.load(spec, handle) for spec, handle in provider_args.PUBLIC])
    for path, text in files.items():
        assert path.read_text() == text, f"{path.relative_to(ROOT)} is stale: run scripts/provider_args.py"


# --- each form, on small models --------------------------------------------------------


class Inner(ConfigModel):
    """An inner section."""

    size: int = Field(3, description="How many.")


class Cat(ConfigModel):
    kind: Literal["cat"] = Field(description="cat: meows.")
    lives: int = Field(9, description="Lives left.")


class Dog(ConfigModel):
    kind: Literal["dog"] = Field(description="dog: barks.")
    breed: str = Field(description="The breed.")


Pet = Annotated[Cat | Dog, Field(discriminator="kind")]


class Owner(ConfigModel):
    """Someone with a pet."""

    name: str = Field(description="Their name.")
    mood: Literal["calm", "busy"] = Field("calm", description="How they are.")
    token: SecretStr | None = Field(None, description="A key.")
    inner: Inner = Field(default_factory=Inner, description="The inner section.")
    pets: list[Pet] = Field(default_factory=list, description="Their pets.")
    tags: dict[str, str] = Field(default_factory=dict, description="Labels.")


def generated(model) -> dict:
    generator = provider_args.Generator(reserved=["Owner"])
    generator.model(model, name="OwnerArgs")
    return {name: {f.name: f for f in td.fields} for name, td in generator.typed_dicts.items()}


def test_fields_keep_their_names_optionality_and_descriptions():
    owner = generated(Owner)["OwnerArgs"]
    assert (owner["name"].type, owner["name"].optional, owner["name"].description) == (
        "str",
        False,
        "Their name.",
    )
    assert owner["inner"].type == "Inner" and owner["inner"].optional
    assert owner["tags"].type == "dict[str, str]"


def test_a_literal_is_its_values_type_and_the_description_names_the_values():
    mood = generated(Owner)["OwnerArgs"]["mood"]
    assert mood.type == "str"
    assert mood.description == "How they are. One of: calm, busy."


def test_a_secret_is_a_string_and_says_so():
    token = generated(Owner)["OwnerArgs"]["token"]
    assert token.type == "str"
    assert "A secret" in token.description


def test_a_tagged_union_is_one_typed_dict_with_the_tag_and_every_variants_fields():
    types = generated(Owner)
    assert types["OwnerArgs"]["pets"].type == "list[Pet]"
    pet = types["Pet"]
    assert list(pet) == ["kind", "lives", "breed"]
    assert not pet["kind"].optional  # no variant is taken without it
    assert pet["kind"].description == "Which one. cat: meows. dog: barks. One of: cat, dog."
    assert pet["breed"].optional and pet["breed"].description == "The breed. Only with kind dog."


def test_a_component_name_is_not_reused_for_a_type():
    generator = provider_args.Generator(reserved=["Inner"])
    assert generator.model(Inner) == "InnerConfig"


def test_what_the_schema_cannot_say_stops_the_generator():
    class Mixed(ConfigModel):
        value: int | str = Field(description="A number or a word.")

    class Undescribed(ConfigModel):
        value: int

    for model in (Mixed, Undescribed):
        with pytest.raises(provider_args.Unexpressible):
            provider_args.Generator(reserved=[]).model(model)
