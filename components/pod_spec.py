"""Pod spec merging, the way Kubernetes strategic merge patch merges pod specs.

Maps merge key by key; `null` in the overlay removes a key; lists of named items
(containers, volumes, volume mounts, env, ...) merge item by item on `name`, so an
overlay can replace a default volume by reusing its name; other lists are appended,
without repeating an item that is already there.
"""

from __future__ import annotations

import copy
from typing import Any

_MERGED_BY_NAME = {
    "containers",
    "initContainers",
    "ephemeralContainers",
    "volumes",
    "volumeMounts",
    "env",
    "imagePullSecrets",
    "resourceClaims",
}

_POD_FIELDS = {"apiVersion", "kind", "metadata", "spec"}


def as_pod(spec: dict[str, Any]) -> dict[str, Any]:
    """Normalise a Pod or a bare PodSpec to Determined's form: a v1 Pod."""
    pod = copy.deepcopy(spec) if _POD_FIELDS & spec.keys() else {"spec": copy.deepcopy(spec)}
    return {"apiVersion": "v1", "kind": "Pod", **pod}


def merge(base: dict[str, Any], overlay: dict[str, Any]) -> dict[str, Any]:
    """A new dict: `overlay` merged over `base`; neither argument is changed."""
    result = copy.deepcopy(base)
    for key, value in overlay.items():
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = merge(result[key], value)
        elif isinstance(value, list) and isinstance(result.get(key), list):
            result[key] = _merge_lists(key, result[key], value)
        else:
            result[key] = copy.deepcopy(value)
    return result


def _named(items: list[Any]) -> bool:
    return all(isinstance(item, dict) and "name" in item for item in items)


def _merge_lists(key: str, base: list[Any], overlay: list[Any]) -> list[Any]:
    if key in _MERGED_BY_NAME and _named(base) and _named(overlay):
        merged = list(base)
        positions = {item["name"]: i for i, item in enumerate(merged)}
        for item in overlay:
            if item["name"] in positions:
                i = positions[item["name"]]
                merged[i] = merge(merged[i], item)
            else:
                positions[item["name"]] = len(merged)
                merged.append(copy.deepcopy(item))
        return merged
    return list(base) + [copy.deepcopy(item) for item in overlay if item not in base]


def merge_pods(*pods: dict[str, Any]) -> dict[str, Any]:
    """Merge pod specs left to right, each given as a Pod or a bare PodSpec."""
    result = as_pod({})
    for pod in pods:
        if pod:
            result = merge(result, as_pod(pod))
    return result
