"""The plan checks its Kubernetes objects against what the API server accepts beyond its
schema (components.kube.api_rules): metadata names per kind, labels, annotations and their size,
the pod templates of workloads, Secret and ConfigMap sizes (the master's configuration
Secret at its real size), and the task pod specs master.yaml hands to the master.

A problem here is a bug, not bad input: config validation should have refused whatever led
to it. The plan then stops as an internal error (exit 3) instead of writing a plan that a
real `pulumi up` (or every task of a pool) would fail on.
"""

from __future__ import annotations

from typing import Any

import yaml

from components import constants
from components.config.errors import format_path
from components.kube import api_rules
from plan.errors import PlanFailure
from plan.redaction import SECRET, UNKNOWN

# Resources whose inputs are not one object the API server validates as such.
_NOT_OBJECTS = ("kubernetes:helm.sh/", "kubernetes:yaml/", "kubernetes:kustomize/")
_POD_SPEC_KEYS = ("cpu_pod_spec", "gpu_pod_spec", "checkpoint_gc_pod_spec")


def _known(value: Any) -> Any:
    """The value with placeholders ("[secret]", "[unknown until apply]") made neutral: what
    is not known yet is not judged."""
    if isinstance(value, dict):
        return {k: _known(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_known(v) for v in value]
    if isinstance(value, str) and value in (SECRET, UNKNOWN):
        return "x"
    return value


def _master_yaml_secret(obj: dict[str, Any], master_yaml: str | None) -> dict[str, Any]:
    """The master's configuration Secret with master.yaml at its real size (the plan shows
    it redacted)."""
    meta = obj.get("metadata") or {}
    if (
        obj.get("kind") != "Secret"
        or meta.get("name") != constants.MASTER_CONFIG_SECRET
        or master_yaml is None
    ):
        return obj
    given = obj.get("stringData")
    # In a first preview the whole stringData may be unknown: judged by master.yaml alone.
    string_data = dict(given) if isinstance(given, dict) else {}
    string_data[constants.MASTER_YAML] = master_yaml
    return {**obj, "stringData": string_data}


def task_pod_specs(master: dict[str, Any]) -> list[tuple[str, Any]]:
    """(where in master.yaml, pod spec) of every task pod spec the master is given."""
    found = []
    sections = [("task_container_defaults", master.get("task_container_defaults"))]
    for i, pool in enumerate(master.get("resource_pools") or []):
        if isinstance(pool, dict):
            sections.append(
                (f"resource_pools[{i}].task_container_defaults", pool.get("task_container_defaults"))
            )
    for where, tcd in sections:
        for key in _POD_SPEC_KEYS:
            spec = tcd.get(key) if isinstance(tcd, dict) else None
            if isinstance(spec, dict):
                # Given as a Pod, or as its bare spec.
                found.append(
                    (f"{where}.{key}", spec if "spec" in spec or "metadata" in spec else {"spec": spec})
                )
    return found


def violations(resources: list[dict[str, Any]], master_yaml: str | None = None) -> list[str]:
    """What the API server would refuse in the plan's Kubernetes objects (resources.json's
    entries) and in the task pod specs of `master_yaml` (the master's configuration, as
    written into its Secret)."""
    found: list[str] = []
    for res in resources:
        kind = res["type"]
        if not kind.startswith("kubernetes:") or kind.startswith(_NOT_OBJECTS):
            continue
        inputs = res.get("inputs") or {}
        obj = _known(_master_yaml_secret(inputs, master_yaml))
        found += [f"{kind} {res['name']}: {format_path(w)}: {m}" for w, m in api_rules.object_problems(obj)]
    if master_yaml is not None:
        master = yaml.safe_load(master_yaml)
        for where, pod in task_pod_specs(master if isinstance(master, dict) else {}):
            found += [
                f"master.yaml {where}: {format_path(w)}: {m}" for w, m in api_rules.pod_problems(_known(pod))
            ]
    return found


def check(resources: list[dict[str, Any]], master_yaml: str | None = None) -> None:
    """Raise PlanFailure (exit 3) naming the first violation."""
    found = violations(resources, master_yaml)
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise PlanFailure(f"the Kubernetes API server would refuse the plan: {found[0]}{more}")
