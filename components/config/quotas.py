"""Resource pool quotas read with the namespaces they cap and the task pods that land there."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from components import constants
from components.config.errors import Add

if TYPE_CHECKING:
    from components.config.stack import StackConfig
    from components.config.task_pods import TaskPods


# Every ResourceQuota of a namespace applies to every pod created in it, and a pod is refused
# when it would exceed any of them (https://kubernetes.io/docs/concepts/policy/resource-quotas/,
# read 2026-11; the master relies on it too: "we want to patch the smallest quota",
# master/internal/rm/kubernetesrm/jobs.go:2431 at v0.38.1). Pools sharing a namespace (one
# workspace's compute and aux pool; workspaces bound to one namespace, which the master allows:
# the primary key of workspace_namespace_bindings is (workspace_id, cluster_name, namespace),
# master/static/migrations/20240724134232_add-workspace-namespace-bindings-table.tx.up.sql at
# v0.38.1) would each get a quota that in truth caps them all together, at the smallest: so a
# quota is the namespace's, given on one of its pools.
def shared_quota_problems(cfg: StackConfig, add: Add) -> None:
    """One quota per namespace (see above)."""
    quota_of: dict[str, int] = {}
    for i, rp in enumerate(cfg.resource_pools):
        if rp.quota is None:
            continue
        j = quota_of.setdefault(rp.namespace_name, i)
        if j != i:
            add(
                f"resourcePools[{i}].quota",
                f"namespace {rp.namespace_name!r} already has the quota of resourcePools[{j}]: every quota "
                "of a namespace caps every pod in it, so the pools there would share the smallest; give "
                "the quota on one pool of the namespace (it caps them together) or separate namespaces",
            )


def quota_limit_problems(cfg: StackConfig, add: Add, task_pods: TaskPods | None) -> None:
    """A pool quota on limits: every container of every task pod that can land in its namespace
    declares them, or the namespace's LimitRange default (sized for Determined's init container)
    caps it. Determined's task container declares GPUs only (CPUs on CPU-slot clusters)."""
    limited: dict[str, dict[str, int]] = {}  # namespace -> resource -> index of the quota's pool
    for i, rp in enumerate(cfg.resource_pools):
        limits = rp.quota.limits if rp.quota else None
        for resource in ("cpu", "memory"):
            if limits is not None and getattr(limits, resource) is not None:
                limited.setdefault(rp.namespace_name, {}).setdefault(resource, i)
    names = {p.name for p in cfg.node_pools}
    if task_pods is None or not limited or any(rp.node_pool not in names for rp in cfg.resource_pools):
        return

    def undeclared(pod: dict[str, Any], resource: str) -> list[str]:
        spec = pod.get("spec") or {}
        found = []
        for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
            if resource in ((container.get("resources") or {}).get("limits") or {}):
                continue
            if (
                container.get("name") == constants.TASK_CONTAINER
                and resource == "cpu"
                and cfg.slot_type == "cpu"
            ):
                continue  # Determined limits a CPU slot's CPUs itself
            found.append(container.get("name", "?"))
        return found

    # (where from, pod spec, namespaces it lands in)
    sources = [
        (f"resourcePools[{j}].podSpec ({key})", pod, task_pods.pool_namespaces(cfg, rp))
        for j, rp in enumerate(cfg.resource_pools)
        for key, pod in task_pods.pool_pod_specs(cfg, rp).items()
    ]
    gc_spec = task_pods.checkpoint_gc_pod_spec(cfg)
    if gc_spec:
        # Checkpoint GC runs on the default aux pool (see pool_namespaces).
        aux = next((rp for rp in cfg.resource_pools if rp.name == cfg.aux_pool), None)
        if aux is not None:
            sources.append(
                (
                    "taskContainerDefaults.checkpointGcPodSpec",
                    gc_spec,
                    task_pods.pool_namespaces(cfg, aux),
                )
            )
    for where, pod, namespaces in sources:
        for namespace in namespaces:
            for resource, i in sorted(limited.get(namespace, {}).items()):
                missing = undeclared(pod, resource)
                if missing:
                    add(
                        f"resourcePools[{i}].quota.limits.{resource}",
                        f"tasks with {where} run in namespace {namespace!r}, where this quota limits "
                        f"{resource}, and its container(s) {', '.join(missing)} declare no {resource} limit: "
                        "Determined sets none, and the namespace's default (sized for Determined's init "
                        f"container) would cap them; give them resources.limits.{resource} there",
                    )
