"""The plan checks its Google Cloud and AWS resources against what the clouds' APIs accept,
as it checks master.yaml against the master's keys: every name against components.names (length,
characters, and no two resources of one type sharing a name in a scope), every label, tag,
node label, taint and enum against components.cloud_limits, and GKE node pools against the
machine and GPU tables of the config (their boot disks and zones).

A problem here is a bug, not bad input: config validation should have refused whatever led
to it. The plan then stops as an internal error (exit 3) instead of writing a plan that a
real `pulumi up` would fail on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from components import cloud_limits, names
from components.config import gke_gpu_zones, gke_machines
from plan.errors import PlanFailure
from plan.redaction import SECRET, UNKNOWN

_CLOUDS = ("gcp:", "aws:")


def _gke_node_pool(inputs: dict[str, Any]) -> list[str]:
    """A node pool's boot disk is one its machine series can use, and its GPUs are offered in
    every zone it names (components/config/gke_machines.py, gke_gpu_zones.py: data with sources)."""
    found = []
    node_config = inputs.get("nodeConfig") or {}
    machine = node_config.get("machineType")
    if not isinstance(machine, str):
        return found
    allowed = gke_machines.disk_types(machine)
    disk = node_config.get("diskType")
    if allowed is not None and disk not in allowed:
        found.append(f"{machine} boots from {', '.join(allowed)}, not {disk!r} ({gke_machines.__name__})")
    for accelerator in node_config.get("guestAccelerators") or []:
        offered = gke_gpu_zones.zones(accelerator.get("type"), inputs.get("location"), machine)
        locations = inputs.get("nodeLocations")
        if offered is None:
            continue
        if not locations:
            found.append(
                f"{accelerator.get('type')} pool without nodeLocations: it would span zones without it"
            )
        for zone in locations or []:
            if zone not in offered:
                found.append(f"{accelerator.get('type')} is not offered in {zone} ({gke_gpu_zones.SOURCE})")
    return found


# Checks that read several properties of one resource.
RESOURCE_CHECKS: dict[str, Callable[[dict[str, Any]], list[str]]] = {
    "gcp:container/nodePool:NodePool": _gke_node_pool,
}


def _known(value: Any) -> bool:
    return not (isinstance(value, str) and value in (SECRET, UNKNOWN))


def problems(resources: list[dict[str, Any]]) -> list[str]:
    """What the clouds would refuse in the plan's resources (resources.json's entries)."""
    found: list[str] = []
    taken: dict[tuple[str, str, str], str] = {}
    for res in resources:
        kind, inputs = res["type"], res.get("inputs") or {}
        if not kind.startswith(_CLOUDS):
            continue
        where = f"{kind} {res['name']}"
        for rule in names.rules_for(kind):
            value = inputs.get(rule.prop)
            if not isinstance(value, str) or not _known(value):
                continue
            found += [f"{where}: {p} ({rule.source})" for p in rule.problems(value)]
            if rule.scope != "resource":
                # IAM names are unique whatever the case; the others are lower case anyway.
                key = (kind, rule.prop, value.lower())
                other = taken.setdefault(key, res["name"])
                if other != res["name"]:
                    found.append(
                        f"{where}: {rule.prop} {value!r} is also {kind} {other}'s ({rule.scope} scope)"
                    )
        check = RESOURCE_CHECKS.get(kind)
        if check is not None:
            found += [f"{where}: {p}" for p in check(inputs)]
        for limit in cloud_limits.limits_for(kind):
            for value in cloud_limits.values_at(inputs, limit.path):
                if _known(value):
                    found += [f"{where}: {limit.path}: {p} ({limit.source})" for p in limit.check(value)]
    return found


def check(resources: list[dict[str, Any]]) -> None:
    """Raise PlanFailure (exit 3) naming the first problem."""
    found = problems(resources)
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise PlanFailure(f"a cloud API would refuse the plan: {found[0]}{more}")


def scoped_names(resources: list[dict[str, Any]], region: str) -> set[tuple[str, str, str, str]]:
    """Every name whose scope is wider than the stack's cluster, as (resource type, property,
    name, region for region-scoped names else ""): two stacks of one project or account may
    share none of them."""
    found = set()
    for res in resources:
        for rule in names.rules_for(res["type"]):
            value = (res.get("inputs") or {}).get(rule.prop)
            if isinstance(value, str) and _known(value) and rule.scope in (*names.WIDE_SCOPES, "region"):
                found.add((res["type"], rule.prop, value.lower(), region if rule.scope == "region" else ""))
    return found
