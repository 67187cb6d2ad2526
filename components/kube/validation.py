"""Checking objects against the Kubernetes schema (the strict JSON schema shipped by the
pinned kubernetes-validate package), with messages that never quote a value.

Used at config time for the pod specs users write; the schema loads once, on first use,
so stacks without pod specs pay nothing.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

from components.kube.schema import document


@functools.cache
def _validator(kind: str, group_version: str):
    import jsonschema
    from referencing import Registry, Resource

    schema = document(f"{kind.lower()}-{group_version}.json")
    definitions = document("_definitions.json")
    registry = Resource.from_contents(schema) @ Registry()
    registry = Resource.from_contents(definitions) @ registry
    return jsonschema.Draft202012Validator(schema, registry=registry)


def _message(error: Any) -> str:
    kind = error.validator
    if kind == "additionalProperties":
        unknown = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        return f"unknown field {', '.join(map(repr, unknown))}"
    if kind == "required":
        missing = [name for name in error.validator_value if name not in error.instance]
        return f"{', '.join(map(repr, missing))} required"
    if kind == "type":
        expected = error.validator_value
        expected = [t for t in expected if t != "null"] if isinstance(expected, list) else [expected]
        words = {"object": "a mapping", "array": "a list", "string": "a string", "integer": "a whole number"}
        return "must be " + " or ".join(words.get(t, f"a {t}") for t in expected)
    if kind == "enum":
        return f"must be one of {', '.join(map(repr, error.validator_value))}"
    if kind in ("oneOf", "anyOf"):
        return "is not of an accepted form"
    return f"is not valid ({kind})"


def problems(obj: dict[str, Any]) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """(path inside obj, message) for each way `obj` breaks its kind's schema."""
    # Schema files are named <kind>-<group's first label>-<version> (core: <kind>-<version>).
    group, _, version = obj["apiVersion"].rpartition("/")
    group_version = f"{group.split('.')[0]}-{version}" if group else version
    validator = _validator(obj["kind"], group_version)
    for error in sorted(validator.iter_errors(obj), key=lambda e: list(map(str, e.absolute_path))):
        yield tuple(error.absolute_path), _message(error)


def template_problems(pod: dict[str, Any]) -> list[tuple[tuple[str | int, ...], str]]:
    """`problems` of a Pod used as a template (Determined's task pod specs): the name the
    schema requires is given only when a pod is made from it."""
    metadata = pod.get("metadata")
    if metadata is None or isinstance(metadata, dict):
        pod = {**pod, "metadata": {"name": "template", **(metadata or {})}}
    return list(problems(pod))
