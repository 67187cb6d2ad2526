"""The Kubernetes API schema, as shipped by the pinned `kubernetes-validate` package.

Definitions are named like `io.k8s.api.core.v1.PodSpec`; properties point at other
definitions with `$ref` (arrays through `items`). Everything loads on first use and once
per process: importing this module reads no file.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

KUBERNETES_SCHEMA_VERSION = "1.33.0"

# Strict flavour: additionalProperties false, so unknown fields stay unknown here too.
_SCHEMA_DIR = f"v{KUBERNETES_SCHEMA_VERSION}-local-strict"


@dataclass(frozen=True)
class Field:
    """A property of a definition, with what strategic merge patch needs from it."""

    schema: dict[str, Any]  # the property's own schema, as written
    definition: str | None  # the definition of its value, or of its items for an array
    is_list: bool
    patch_strategies: frozenset[str]  # from x-kubernetes-patch-strategy, e.g. {"merge", "retainKeys"}
    patch_merge_key: str | None  # x-kubernetes-patch-merge-key


@functools.cache
def document(filename: str) -> dict[str, Any]:
    """One JSON file of the schema, e.g. "_definitions.json" or "pod-v1.json" (parsed once)."""
    # find_spec locates the package without importing it (its __init__ loads jsonschema).
    spec = importlib.util.find_spec("kubernetes_validate")
    package = Path(next(iter(spec.submodule_search_locations)))
    folder = package / "kubernetes-json-schema" / _SCHEMA_DIR
    return json.loads((folder / filename).read_text(encoding="utf-8"))


@functools.cache
def definitions() -> dict[str, dict[str, Any]]:
    """Every definition by name (read on first call, then cached)."""
    return document("_definitions.json")["$defs"]


def definition(name: str) -> dict[str, Any]:
    """One definition; KeyError names it when the schema has no such definition."""
    try:
        return definitions()[name]
    except KeyError:
        raise KeyError(f"no {name!r} in the Kubernetes {KUBERNETES_SCHEMA_VERSION} schema") from None


def ref_name(schema: dict[str, Any]) -> str | None:
    """The definition a `$ref` names ("#/$defs/io.k8s...Container" -> "io.k8s...Container")."""
    ref = schema.get("$ref")
    return ref.rsplit("/", 1)[-1] if isinstance(ref, str) else None


@functools.cache
def field(definition_name: str, name: str) -> Field | None:
    """Property `name` of a definition, resolved through `$ref` and `items`; None when the
    schema does not know it. Cached per (definition, field): merges ask again and again."""
    prop = definition(definition_name).get("properties", {}).get(name)
    if prop is None:
        return None
    types = prop.get("type", [])
    is_list = "array" in (types if isinstance(types, list) else [types])
    target = prop.get("items", {}) if is_list else prop
    strategy = prop.get("x-kubernetes-patch-strategy", "")
    return Field(
        schema=prop,
        definition=ref_name(target),
        is_list=is_list,
        patch_strategies=frozenset(s for s in strategy.split(",") if s),
        patch_merge_key=prop.get("x-kubernetes-patch-merge-key"),
    )


def resolve(definition_name: str, *path: str) -> dict[str, Any] | None:
    """The schema of a property path, e.g. resolve("io.k8s.api.core.v1.PodSpec",
    "containers", "volumeMounts"): the referenced definition (an array's items), or the
    inline property schema when it names none; None when a step is unknown."""
    current: str | None = definition_name
    schema: dict[str, Any] | None = definition(definition_name)
    for name in path:
        found = field(current, name) if current else None
        if found is None:
            return None
        current = found.definition
        schema = definition(current) if current else found.schema
    return schema


def structural(node: Any) -> Any:
    """A custom resource's structural schema node as the API server applies it: closed to
    unknown fields (unless it preserves them), with Kubernetes' extensions turned into JSON
    Schema (int-or-string, nullable, embedded resources, set lists). Only the structural
    part (properties, items, additionalProperties) is walked: anyOf/allOf/oneOf/not only
    restrict values."""
    if not isinstance(node, dict):
        return node
    node = dict(node)
    if node.get("x-kubernetes-int-or-string") and "anyOf" not in node and "type" not in node:
        node["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if node.get("nullable") and isinstance(node.get("type"), str):
        node["type"] = [node["type"], "null"]
    if "properties" in node:
        node["properties"] = {name: structural(sub) for name, sub in node["properties"].items()}
    if isinstance(node.get("additionalProperties"), dict):
        node["additionalProperties"] = structural(node["additionalProperties"])
    if "items" in node:
        node["items"] = structural(node["items"])
    if node.get("x-kubernetes-embedded-resource"):
        properties = node.setdefault("properties", {})
        for name in ("apiVersion", "kind", "metadata"):
            properties.setdefault(name, {})
    if (
        node.get("type") == "object"
        and not node.get("x-kubernetes-preserve-unknown-fields")
        and "additionalProperties" not in node
    ):
        node["additionalProperties"] = False
    if node.get("x-kubernetes-list-type") == "set":
        node["uniqueItems"] = True
    return node
