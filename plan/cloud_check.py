"""The plan checks its Google Cloud and AWS resources against what the clouds' APIs accept,
as it checks master.yaml against the master's keys: every name against components.names (length,
characters, and no two resources of one type sharing a name in a scope), every label, tag,
node label, taint and enum against components.cloud_limits.

A problem here is a bug, not bad input: config validation should have refused whatever led
to it. The plan then stops as an internal error (exit 3) instead of writing a plan that a
real `pulumi up` would fail on.
"""

from __future__ import annotations

from typing import Any

from components import cloud_limits, names
from plan.errors import PlanFailure
from plan.redaction import SECRET, UNKNOWN

_CLOUDS = ("gcp:", "aws:")


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
        check = cloud_limits.RESOURCE_CHECKS.get(kind)
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
