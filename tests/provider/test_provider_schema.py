"""The component provider's schema, generated offline with the SDK's analyzer as
`pulumi package add ./provider` would get it (pulumi 3.272.0: analyzer.py `Analyzer.analyze`,
schema.py `generate_schema`): every public component, every field of its Args with the
field's description, and its outputs."""

from __future__ import annotations

import ast
import inspect
import types
import typing
from typing import Any

import pulumi
import pytest
from conftest import ROOT
from pulumi.provider.experimental.analyzer import Analyzer
from pulumi.provider.experimental.schema import generate_schema
from pydantic import BaseModel

from provider import cluster, hosted

PUBLIC = [hosted.GkeCluster, hosted.EksCluster, hosted.ExistingCluster, hosted.Determined]


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    result = Analyzer("determined").analyze(PUBLIC)
    spec = generate_schema(
        "determined",
        "0.0.0",
        None,
        result["component_definitions"],
        result["type_definitions"],
        sorted(result["dependencies"], key=str),
    )
    return spec.to_json()


def library_class(component: type) -> type:
    return component.__mro__[1]


def args_model(component: type) -> type[BaseModel]:
    return typing.get_type_hints(library_class(component).__init__)["args"]


def models_in(annotation: Any) -> list[type[BaseModel]]:
    """The models a field's type holds (through Annotated, unions, lists and maps)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    if typing.get_origin(annotation) is typing.Annotated:
        return models_in(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) in (typing.Union, types.UnionType, list, dict):
        return [m for arg in typing.get_args(annotation) for m in models_in(arg)]
    return []


def ref_of(prop: dict[str, Any]) -> str | None:
    for holder in (prop, prop.get("items") or {}, prop.get("additionalProperties") or {}):
        if "$ref" in holder:
            return holder["$ref"].removeprefix("#/types/")
    return None


def text(description: str) -> str:
    return " ".join(description.split()).rstrip(".")


def assert_fields_described(
    schema, model: type[BaseModel], properties: dict[str, Any], where: str, seen: set
):
    for name, info in model.model_fields.items():
        key = info.alias or name
        assert key in properties, f"{where}.{key} is missing from the schema"
        description = properties[key].get("description") or ""
        assert text(info.description) in " ".join(description.split()), f"{where}.{key}: {description!r}"
        nested = models_in(info.annotation)
        if nested:
            ref = ref_of(properties[key])
            assert ref, f"{where}.{key} is not typed by its model"
            for inner in nested:
                if (inner, ref) not in seen:
                    seen.add((inner, ref))
                    type_properties = schema["types"][ref]["properties"]
                    assert_fields_described(schema, inner, type_properties, f"{where}.{key}", seen)


def test_every_public_component_is_a_resource_with_its_description(schema):
    assert sorted(schema["resources"]) == [
        "determined:index:Determined",
        "determined:index:EksCluster",
        "determined:index:ExistingCluster",
        "determined:index:GkeCluster",
    ]
    for component in PUBLIC:
        resource = schema["resources"][f"determined:index:{component.__name__}"]
        assert resource["isComponent"] is True
        assert text(inspect.getdoc(library_class(component))) in " ".join(resource["description"].split())


@pytest.mark.parametrize("component", PUBLIC, ids=lambda c: c.__name__)
def test_every_args_field_is_an_input_with_its_description(schema, component):
    resource = schema["resources"][f"determined:index:{component.__name__}"]
    model = args_model(component)
    assert_fields_described(schema, model, resource["inputProperties"], component.__name__, set())
    required = {info.alias or name for name, info in model.model_fields.items() if info.is_required()}
    if component is hosted.Determined:
        required.add("cluster")
    assert set(resource.get("requiredInputs", [])) == required


@pytest.mark.parametrize("component", PUBLIC, ids=lambda c: c.__name__)
def test_every_output_of_the_library_class_is_an_output_with_its_description(schema, component):
    resource = schema["resources"][f"determined:index:{component.__name__}"]
    expected = [
        name for name in inspect.get_annotations(library_class(component)) if not name.startswith("_")
    ]
    if component in (hosted.GkeCluster, hosted.EksCluster):
        expected += list(inspect.get_annotations(cluster.HandleOutputs))
    assert expected
    camel = {name: pulumi.provider.experimental.util.camel_case(name) for name in expected}
    assert set(resource["properties"]) == set(camel.values())
    for prop in resource["properties"].values():
        assert prop["description"]


def test_determined_takes_the_cluster_handle_a_cluster_component_outputs(schema):
    handle = schema["types"]["determined:index:ClusterHandle"]
    gke = schema["resources"]["determined:index:GkeCluster"]["properties"]
    # Every output a cluster component adds for Determined is a key of the handle it takes.
    assert set(handle["properties"]) == {"kubeconfig", *(k for k in gke if k in handle["properties"])}
    assert {"defaultStorageClass", "storageIdentity", "bucket", "databaseServer"} <= set(gke)
    assert handle["required"] == ["kubeconfig"]
    cluster_input = schema["resources"]["determined:index:Determined"]["inputProperties"]["cluster"]
    assert cluster_input["$ref"] == "#/types/determined:index:ClusterHandle"


def test_unions_are_one_type_with_the_tag_and_every_variants_fields(schema):
    database = schema["types"]["determined:index:DatabaseConfig"]
    assert "mode" in database["properties"]
    assert "One of: inCluster, external, managed" in database["properties"]["mode"]["description"]
    # A field of one variant only says so.
    assert "Only with mode external" in database["properties"]["host"]["description"]
    assert "required" not in database or "host" not in database["required"]


def test_the_entry_point_hosts_every_public_component_under_the_package_name():
    tree = ast.parse((ROOT / "provider" / "__main__.py").read_text())
    (call,) = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "component_provider_host"
    ]
    keywords = {k.arg: k.value for k in call.keywords}
    assert keywords["name"].value == "determined"
    assert (
        sorted(e.id for e in keywords["components"].elts)
        == sorted(hosted.__all__)
        == sorted(c.__name__ for c in PUBLIC)
    )
