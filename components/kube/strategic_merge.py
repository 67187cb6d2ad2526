"""Kubernetes strategic merge patch, for pod specs and any other schema definition.

`merge(base, overlay)` gives what `kubectl patch --local --type=strategic -p overlay` gives
for `base` (Kubernetes' strategicpatch package), with one addition, retainKeys, below. How
each field merges is read from the Kubernetes OpenAPI schema (`components.kube.schema`), at
every depth: `x-kubernetes-patch-strategy` and `x-kubernetes-patch-merge-key`.

- Maps merge key by key; `null` deletes a key. Fields the schema does not know (the
  contents of labels and annotations, free-form maps) merge as plain maps.
- Lists with strategy `merge` and a merge key (containers, env, volumes by `name`,
  volumeMounts by `mountPath`, ports by `containerPort`, ...) merge item by item: an
  overlay item merges into the base item with the same key. Lists of scalars with
  strategy `merge` (finalizers) are unions.
- Any other list (tolerations, command, args, envFrom, ...) is replaced by the overlay's.
- Scalars, and values whose type differs between base and overlay, are replaced.
- Order of merged lists, as Kubernetes orders them: items named in the overlay keep the
  overlay's order, the others the base's, and an overlay item new to the base goes before
  the base items that follow it. So `[a, b]` + `[c]` is `[c, a, b]`, `[a, b]` + `[b, c]` is
  `[a, b, c]`. `$setElementOrder/<field>` sets the order explicitly.

retainKeys: `volumes` and `resourceClaims` have the strategy `merge,retainKeys`. For such a
field `kubectl apply` puts `$retainKeys` (the item's non-null keys) into each item of the
patch it sends, so a volume that reuses a name replaces the base's source (hostPath ->
persistentVolumeClaim) instead of ending up with two. `merge` does the same: it gives the
result of `kubectl patch --type=strategic` with the patch `kubectl apply` would send. An
item with its own `$retainKeys` keeps that one.

Directives (never in the result):
- `{"$patch": "delete", <merge key>: v}` in a keyed merge list removes that base item;
- `{"$patch": "replace"}` as a list item: the overlay's list (without it) replaces the base's.
  With other keys beside it kubectl would silently drop the item: refused here;
- `"$patch": "replace"` in a map: the overlay map replaces the base's;
  `"$patch": "delete"` in a map: an empty map (none when the base has no such map);
- `$retainKeys: [...]` in a map: base keys not listed are dropped before merging; the
  overlay may set only listed keys;
- `$deleteFromPrimitiveList/<field>: [...]` removes those values from a list of scalars;
- `$setElementOrder/<field>: [...]` orders the merged list (merge-key maps or scalars).
Any other `$` key or `$patch` value raises ValueError, as do merge-list items without their
merge key (messages never quote a value: pod specs may carry credentials). Where the base
lacks a value, overlay directives apply to nothing (kubectl copies the overlay there after
dropping every map with a `$patch`, even `"replace"`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from components.kube import schema as kube_schema
from components.kube.schema import Field

POD = "io.k8s.api.core.v1.Pod"
POD_SPEC = "io.k8s.api.core.v1.PodSpec"

_POD_FIELDS = {"apiVersion", "kind", "metadata", "spec"}
_PATCH = "$patch"
_RETAIN_KEYS = "$retainKeys"
_DELETE_FROM = "$deleteFromPrimitiveList/"
_SET_ORDER = "$setElementOrder/"
_MISSING: Any = object()


def as_pod(spec: dict[str, Any]) -> dict[str, Any]:
    """Normalise a Pod or a bare PodSpec to Determined's form: a v1 Pod (a new dict)."""
    pod = copy.deepcopy(spec) if _POD_FIELDS & spec.keys() else {"spec": copy.deepcopy(spec)}
    return {"apiVersion": "v1", "kind": "Pod", **pod}


def merge(base: dict[str, Any], overlay: dict[str, Any], schema: str = POD_SPEC) -> dict[str, Any]:
    """A new dict: `overlay` strategic-merged over `base`, both of the schema definition
    `schema`; neither argument is changed."""
    kube_schema.definition(schema)  # an unknown definition fails here, not half-way
    return _merge_map(copy.deepcopy(base), overlay, schema)


def merge_pods(*pods: dict[str, Any]) -> dict[str, Any]:
    """Merge pod specs left to right, each given as a Pod or a bare PodSpec; a Pod results."""
    result = as_pod({})
    for pod in pods:
        if pod:
            result = merge(result, as_pod(pod), schema=POD)
    return result


# The helpers below own `base` (merge deep-copied it) and may change it; they never change
# the overlay, and copy what they take from it by rebuilding maps and lists.


def _merge_map(
    base: dict[str, Any], patch: dict[str, Any], definition: str | None, retain: bool = False
) -> dict[str, Any]:
    directive = patch.get(_PATCH, _MISSING)
    if directive == "replace":
        return _merge_map({}, {k: v for k, v in patch.items() if k != _PATCH}, definition)
    if directive == "delete":
        return {}
    if directive is not _MISSING:
        raise ValueError(f"unsupported strategic merge patch directive {_PATCH} (only replace and delete)")

    keep = patch.get(_RETAIN_KEYS, _MISSING)
    if keep is _MISSING and retain:
        # What kubectl apply sends for a retainKeys field: the keys the item sets.
        keep = [k for k, v in patch.items() if v is not None and not k.startswith("$")]
    if keep is not _MISSING:
        base = _retain(base, patch, keep)

    orders = {k.removeprefix(_SET_ORDER): v for k, v in patch.items() if k.startswith(_SET_ORDER)}
    originals = {name: base.get(name) for name in orders}  # orders refer to the base's lists
    for key, value in patch.items():
        if key == _RETAIN_KEYS or key.startswith(_SET_ORDER):
            continue
        if key.startswith(_DELETE_FROM):
            name = key.removeprefix(_DELETE_FROM)
            if not isinstance(value, list):
                raise ValueError(f"{key} must be a list")
            if isinstance(base.get(name), list):
                base[name] = [item for item in base[name] if item not in value]
            continue
        if key.startswith("$"):
            raise ValueError(f"unsupported strategic merge patch directive {key!r}")
        if value is None:
            base.pop(key, None)
            continue
        merged = _merge_value(base.get(key, _MISSING), value, _field(definition, key))
        if merged is _MISSING:
            base.pop(key, None)
        else:
            base[key] = merged

    for name, order in orders.items():
        if isinstance(base.get(name), list):
            field = _field(definition, name)
            base[name] = _set_order(base[name], order, originals[name], patch.get(name), field)
    return base


def _retain(base: dict[str, Any], patch: dict[str, Any], keep: Any) -> dict[str, Any]:
    """`$retainKeys`: only the listed keys of the base survive; the patch may set no other."""
    if not isinstance(keep, list) or not all(isinstance(k, str) for k in keep):
        raise ValueError(f"{_RETAIN_KEYS} must be a list of field names")
    unlisted = [k for k, v in patch.items() if v is not None and not k.startswith("$") and k not in keep]
    if unlisted:
        raise ValueError(f"{_RETAIN_KEYS} does not list {unlisted!r}, which the patch sets")
    return {k: v for k, v in base.items() if k in keep}


def _field(definition: str | None, name: str) -> Field | None:
    return kube_schema.field(definition, name) if definition else None


def _merge_value(base: Any, value: Any, field: Field | None) -> Any:
    strategies = field.patch_strategies if field else frozenset()
    if isinstance(value, dict):
        if base is _MISSING and value.get(_PATCH) == "delete":
            return _MISSING  # nothing to delete: no key rather than an empty map
        if not isinstance(base, dict) or "replace" in strategies:
            base = {}
        return _merge_map(base, value, field.definition if field else None, "retainKeys" in strategies)
    if isinstance(value, list):
        return _merge_list(base if isinstance(base, list) else [], value, field)
    return value


def _fresh(value: Any, definition: str | None) -> Any:
    """An overlay value with nothing under it: nulls dropped, directives applied to nothing."""
    if isinstance(value, dict):
        return _merge_map({}, value, definition)
    if isinstance(value, list):
        return _merge_list([], value, None)
    return value


def _merge_list(base: list[Any], patch: list[Any], field: Field | None) -> list[Any]:
    strategies = field.patch_strategies if field else frozenset()
    key = field.patch_merge_key if field else None
    item_definition = field.definition if field else None
    merging = "merge" in strategies

    items, deleted, replace = [], [], not merging
    for item in patch:
        directive = item.get(_PATCH, _MISSING) if isinstance(item, dict) else _MISSING
        if directive is _MISSING:
            items.append(item)
        elif directive == "replace" and item.keys() == {_PATCH}:
            replace = True
        elif directive == "delete" and merging and key:
            if key not in item:
                raise ValueError(f"a {_PATCH}: delete item has no merge key {key!r}")
            deleted.append(item[key])
        else:
            raise ValueError("unsupported strategic merge patch list item (only $patch: replace or delete)")

    if replace:
        return [_fresh(item, item_definition) for item in items]

    if not key:  # a set of scalars: the union
        if any(isinstance(item, dict | list) for item in base + items):
            raise ValueError("cannot merge lists of maps without a merge key")
        merged = []
        for item in base + items:
            if item not in merged:
                merged.append(item)
        return _order(merged, items, base, lambda item: item)

    for item in base + items:
        if not isinstance(item, dict) or key not in item:
            raise ValueError(f"a list item has no merge key {key!r}")
    base = [item for item in base if item[key] not in deleted]
    merged = list(base)
    for item in items:
        found = next((i for i, old in enumerate(merged) if old[key] == item[key]), None)
        if found is None:
            merged.append(_fresh(item, item_definition))
        else:
            merged[found] = _merge_map(merged[found], item, item_definition, "retainKeys" in strategies)
    return _order(merged, items, base, lambda item: item[key])


def _order(merged: list[Any], patch: list[Any], server: list[Any], ident: Callable[[Any], Any]) -> list[Any]:
    """strategicpatch's normalizeElementOrder: items named in `patch` in patch order, the
    others in `server` order; a server item goes first only if it preceded, in `server`,
    the patch item it is compared with, so items new to the server come early."""
    patch_ids = [ident(item) for item in patch]
    server_ids = [ident(item) for item in server]
    ours = sorted((m for m in merged if ident(m) in patch_ids), key=lambda m: patch_ids.index(ident(m)))
    theirs = [m for m in merged if ident(m) not in patch_ids]
    result: list[Any] = []
    i = j = 0
    while i < len(theirs) and j < len(ours):
        mine = ident(ours[j])
        if mine in server_ids and server_ids.index(ident(theirs[i])) < server_ids.index(mine):
            result.append(theirs[i])
            i += 1
        else:
            result.append(ours[j])
            j += 1
    return result + theirs[i:] + ours[j:]


def _set_order(merged: list[Any], order: Any, original: Any, patch: Any, field: Field | None) -> list[Any]:
    """`$setElementOrder/<field>`: the listed items in that order, the others placed as by
    `_order`. Maps are listed by their merge key (`{key: value}`), scalars as themselves."""
    key = field.patch_merge_key if field else None
    if not isinstance(order, list) or (key and not all(isinstance(o, dict) and key in o for o in order)):
        raise ValueError(f"a $setElementOrder list must list items by merge key {key!r}")
    ident: Callable[[Any], Any] = (lambda item: item.get(key)) if key else (lambda item: item)
    listed = [ident(o) for o in order]
    # As in kubectl: the overlay's own items must appear in the order list, in its order.
    named = [ident(item) for item in patch or [] if not (isinstance(item, dict) and _PATCH in item)]
    remaining = iter(listed)
    if not all(name in remaining for name in named):  # a subsequence of the order list
        raise ValueError("a list does not follow its $setElementOrder")
    return _order(merged, order, original if isinstance(original, list) else [], ident)
