"""Custom resources checked strictly against their official CRD schemas.

tests/data/crd-schemas/<group>_<version>_<Kind>.json holds one served version's
openAPIV3Schema; its README's table gives each kind's scope. The schema is adapted the way
the API server treats it: a structural object without `x-kubernetes-preserve-unknown-fields`
is closed (an unknown field is an error here, where the server would silently drop it),
int-or-string and nullable are honoured, `x-kubernetes-list-type: set` items must be unique
and `map` items unique by their keys, int32/int64 formats are range-checked. CEL rules
(`x-kubernetes-validations`) are not evaluated. `metadata` is checked loosely: a name, a
namespace exactly when the kind is namespaced, and labels. `status` belongs to controllers
and is an error.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
from jsonschema import validators

from components.kube.schema import structural

SCHEMA_DIR = Path(__file__).resolve().parent / "data" / "crd-schemas"
SCOPES = ("Cluster", "Namespaced")

_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


def schema_path(api_version: str, kind: str) -> Path:
    group, _, version = api_version.rpartition("/")
    return SCHEMA_DIR / f"{group}_{version}_{kind}.json"


@functools.cache
def scopes() -> dict[str, str]:
    """{schema file name: scope} from the README's table."""
    found = {}
    for line in (SCHEMA_DIR / "README.md").read_text().splitlines():
        cells = [cell.strip().strip("`") for cell in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0].endswith(".json") and cells[1] in SCOPES:
            found[cells[0]] = cells[1]
    return found


def _list_map_keys(validator, keys, instance, schema):
    """`x-kubernetes-list-type: map`: no two items with the same values of the map keys."""
    if schema.get("x-kubernetes-list-type") != "map" or not validator.is_type(instance, "array"):
        return
    seen = set()
    for item in instance:
        if not isinstance(item, dict):
            continue
        key = json.dumps([item.get(k) for k in keys])
        if key in seen:
            yield jsonschema.ValidationError(f"duplicate entry for keys {keys}: {key}")
        seen.add(key)


_Validator = validators.extend(
    jsonschema.Draft202012Validator, {"x-kubernetes-list-map-keys": _list_map_keys}
)

_FORMATS = jsonschema.FormatChecker()
for _name, (_low, _high) in _INT_RANGES.items():
    _FORMATS.checks(_name)(
        lambda value, low=_low, high=_high: (
            not isinstance(value, int) or isinstance(value, bool) or low <= value <= high
        )
    )


def _python_patterns(node: Any) -> Any:
    """Go (RE2) patterns as Python reads them: a flag group after the start, `^(?i)x` (the
    PrometheusRule schema's partial_response_strategy), becomes the scoped `^(?i:x)`."""
    if isinstance(node, dict):
        return {
            key: (
                value.replace("(?i)", "(?i:", 1) + ")"
                if key == "pattern" and isinstance(value, str) and "(?i)" in value[1:]
                else _python_patterns(value)
            )
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_python_patterns(item) for item in node]
    return node


@functools.cache
def _validator(file_name: str):
    schema = structural(_python_patterns(json.loads((SCHEMA_DIR / file_name).read_text())))
    properties = schema["properties"]
    properties["metadata"] = {"type": "object"}  # checked by _metadata_problems
    properties.pop("status", None)  # reported by crd_problems
    _Validator.check_schema(schema)
    return _Validator(schema, format_checker=_FORMATS)


def _where(path: Any) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text.lstrip(".") or "(object)"


def _message(error: jsonschema.ValidationError) -> str:
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        known = error.schema.get("properties", {})
        unknown = sorted(set(error.instance) - set(known))
        return f"unknown field {', '.join(map(repr, unknown))}"
    return error.message


def _metadata_problems(meta: Any, scope: str) -> list[str]:
    if not isinstance(meta, dict):
        return ["metadata: must be a mapping"]
    found = []
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        found.append("metadata.name: required")
    elif len(name) > 253 or not _DNS_SUBDOMAIN.fullmatch(name):
        found.append(f"metadata.name: {name!r} is not a DNS subdomain")
    namespace = meta.get("namespace")
    if scope == "Namespaced":
        if not isinstance(namespace, str) or not namespace:
            found.append("metadata.namespace: required (namespaced kind)")
        elif len(namespace) > 63 or not _DNS_LABEL.fullmatch(namespace):
            found.append(f"metadata.namespace: {namespace!r} is not a DNS label")
    elif namespace is not None:
        found.append("metadata.namespace: set on a cluster-scoped kind")
    for field in ("labels", "annotations"):
        value = meta.get(field)
        if value is None and field == "labels":
            found.append("metadata.labels: required")
        elif value is not None and (
            not isinstance(value, dict)
            or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
        ):
            found.append(f"metadata.{field}: must map strings to strings")
    return found


def crd_problems(obj: dict[str, Any]) -> list[str]:
    """'path: message' for each way `obj` breaks the schema of its apiVersion and kind;
    empty when it conforms (CEL rules aside)."""
    if not isinstance(obj, dict):
        return ["(object): must be a mapping"]
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str) or "/" not in api_version:
        return ["(object): needs a group apiVersion and a kind"]
    path = schema_path(api_version, kind)
    if not path.is_file():
        return [
            f"(object): no schema for {api_version} {kind} (not a served version, or not in {SCHEMA_DIR})"
        ]
    scope = scopes().get(path.name)
    if scope is None:
        return [f"(object): {path.name} has no scope row in {SCHEMA_DIR / 'README.md'}"]
    found = _metadata_problems(obj.get("metadata"), scope)
    if "status" in obj:
        found.append("status: written by the controller, not by the plan")
    body = {key: value for key, value in obj.items() if key != "status"}
    errors = sorted(_validator(path.name).iter_errors(body), key=lambda e: [str(p) for p in e.absolute_path])
    found += [f"{_where(error.absolute_path)}: {_message(error)}" for error in errors]
    return found
