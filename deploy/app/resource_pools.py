"""Resource pools: Determined pools mapped to namespaces and pinned to node pools.

Pure functions build the namespaces, quotas and each pool's task pod specs; the
`ResourcePools` component registers the Kubernetes objects.
"""

from __future__ import annotations

from typing import Any

import pulumi

from deploy import defaults, kube, versions
from deploy.addons import kueue
from deploy.config import NodePool, ResourcePoolConfig, StackConfig
from deploy.kube import strategic_merge

# Zero-GPU task pods (TensorBoards, CPU notebooks) on GPU nodes would otherwise see every
# GPU of the node through the NVIDIA runtime: the CUDA images set NVIDIA_VISIBLE_DEVICES=all.
_HIDE_GPUS = {
    "spec": {
        "containers": [
            {
                "name": defaults.TASK_CONTAINER,
                "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}],
            }
        ]
    }
}


# Determined fills in its task container by this name; naming it keeps the spec a valid Pod.
_TASK_CONTAINER = {"spec": {"containers": [{"name": defaults.TASK_CONTAINER}]}}


def task_pod(*layers: dict[str, Any]) -> dict[str, Any]:
    """A task pod spec: Determined's task container, then each layer merged over it
    (strategic merge), in Pod form."""
    return strategic_merge.merge_pods(_TASK_CONTAINER, *layers)


def tolerations_for(pool: NodePool) -> list[dict[str, Any]]:
    """Tolerations for every taint of `pool` (GPU pools: nvidia.com/gpu first)."""
    return [taint.toleration for taint in pool.all_taints]


def pin(pod: dict[str, Any], node_pool: NodePool) -> dict[str, Any]:
    """`pod` kept on `node_pool`: its node selector added over the pod's own (the pinning
    labels win), and a toleration for each of its taints beside the pod's own. Strategic
    merge would replace the pod's tolerations (an atomic list); pinning only adds."""
    spec = dict(pod.get("spec") or {})
    spec["nodeSelector"] = {**(spec.get("nodeSelector") or {}), **node_pool.selector}
    own = list(spec.get("tolerations") or [])
    tolerations = tolerations_for(node_pool) + [t for t in own if t not in tolerations_for(node_pool)]
    if tolerations:
        spec["tolerations"] = tolerations
    return {**pod, "spec": spec}


def service_account(name: str | None) -> dict[str, Any]:
    """The layer that runs task pods as `name` (the account workload identity binds to
    storage), or nothing. Layered first: a pool's podSpec may still choose another."""
    return {"spec": {"serviceAccountName": name}} if name else {}


def pool_pod_specs(
    cfg: StackConfig, rp: ResourcePoolConfig, task_service_account: str | None = None
) -> dict[str, dict[str, Any]]:
    """cpu_pod_spec and gpu_pod_spec of a pool: the task service account, the defaults and
    the pool's podSpec over them (strategic merge), then the pinning (which the pool
    cannot undo)."""
    tcd = cfg.task_container_defaults
    node_pool = cfg.node_pool_of(rp)
    account = service_account(task_service_account)
    cpu = task_pod(account, tcd.cpu_pod_spec, rp.pod_spec)
    if node_pool.gpu:
        cpu = strategic_merge.merge_pods(cpu, _HIDE_GPUS)
    gpu = task_pod(account, tcd.gpu_pod_spec, rp.pod_spec)
    specs = {"cpu_pod_spec": pin(cpu, node_pool), "gpu_pod_spec": pin(gpu, node_pool)}
    if cfg.queued(rp):
        # Last, like the pinning: the pool's tasks always go through its queue.
        specs = {
            key: strategic_merge.merge_pods(pod, kueue.queue_label_layer(rp)) for key, pod in specs.items()
        }
    return specs


def queue_objects(cfg: StackConfig) -> list[dict[str, Any]]:
    """scheduler kueue: a ResourceFlavor per node pool of a queued pool, and per queued pool
    a ClusterQueue (its quota on that flavor) and a LocalQueue in its namespace."""
    queued = [rp for rp in cfg.resource_pools if cfg.queued(rp)]
    flavors = {rp.node_pool: kueue.resource_flavor(cfg.node_pool_of(rp)) for rp in queued}
    objects = list(flavors.values())
    for rp in queued:
        flavor = kueue.flavor_name(cfg.node_pool_of(rp))
        objects.append(kueue.cluster_queue(rp, flavor, cfg.queue_quota(rp), cfg.kueue.cohort))
        objects.append(kueue.local_queue(rp))
    return objects


def pool_max_slots(cfg: StackConfig, rp: ResourcePoolConfig) -> int | None:
    """A pool's own max_slots_per_pod where the master supports it: the configured value,
    else the GPUs per node of its node pool. None: the global value applies."""
    if cfg.master.version_tuple < versions.PER_POOL_MAX_SLOTS_SINCE:
        return None
    if cfg.slots.max_slots_per_pod:
        return cfg.slots.max_slots_per_pod
    node_pool = cfg.node_pool_of(rp)
    return node_pool.gpu_count if cfg.slot_type == "gpu" and node_pool.gpu else None


def master_resource_pools(cfg: StackConfig, task_service_account: str | None = None) -> list[dict[str, Any]]:
    """The `resource_pools` section of master.yaml."""
    pools = []
    for rp in cfg.resource_pools:
        entry: dict[str, Any] = {"pool_name": rp.name, "description": rp.description}
        if cfg.master.version_tuple < versions.WORKSPACE_NAMESPACES_SINCE:
            entry["kubernetes_namespace"] = rp.namespace_name
        tcd: dict[str, Any] = pool_pod_specs(cfg, rp, task_service_account)
        max_slots = pool_max_slots(cfg, rp)
        if max_slots is not None:
            tcd["kubernetes"] = {"max_slots_per_pod": max_slots}
        entry["task_container_defaults"] = tcd
        pools.append(entry)
    return pools


def namespaces(cfg: StackConfig) -> list[dict[str, Any]]:
    """One Namespace per distinct pool namespace."""
    names = dict.fromkeys(rp.namespace_name for rp in cfg.resource_pools)
    return [kube.manifest("v1", "Namespace", kube.metadata(name, "resource-pool")) for name in names]


def quota(rp: ResourcePoolConfig) -> dict[str, Any] | None:
    """ResourceQuota capping what a pool's tasks may request, when configured."""
    if rp.quota is None:
        return None
    hard = {}
    if rp.quota.gpu is not None:
        hard["requests.nvidia.com/gpu"] = str(rp.quota.gpu)
    if rp.quota.cpu is not None:
        hard["requests.cpu"] = rp.quota.cpu
    if rp.quota.memory is not None:
        hard["requests.memory"] = rp.quota.memory
    if rp.quota.limits is not None:
        if rp.quota.limits.cpu is not None:
            hard["limits.cpu"] = rp.quota.limits.cpu
        if rp.quota.limits.memory is not None:
            hard["limits.memory"] = rp.quota.limits.memory
    if not hard:
        return None
    meta = kube.metadata(kube.dns_label(f"determined-{rp.name}"), "resource-pool", rp.namespace_name)
    return kube.manifest("v1", "ResourceQuota", meta, spec={"hard": hard})


def task_service_accounts(cfg: StackConfig, annotations: dict[str, Any]) -> list[dict[str, Any]]:
    """The service account task pods run as, in every namespace tasks run in, annotated
    for workload identity."""
    accounts = []
    for ns in cfg.task_namespaces:
        meta = kube.metadata(defaults.TASK_SERVICE_ACCOUNT, "task", ns)
        meta["annotations"] = dict(annotations)
        accounts.append(kube.manifest("v1", "ServiceAccount", meta))
    return accounts


class ResourcePools(pulumi.ComponentResource):
    """Namespaces (and quotas) for the resource pools, and the task service accounts when
    the platform binds storage to them (`storage_identity`)."""

    def __init__(
        self,
        name: str,
        cfg: StackConfig,
        storage_identity: dict[str, Any],
        master_namespace: pulumi.Resource,
        queues_after: list[pulumi.Resource] | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ):
        """`queues_after`: what Kueue's objects wait for (its Release, which brings the CRDs)."""
        super().__init__("determined:components:ResourcePools", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.namespaces = {}
        for obj in namespaces(cfg):
            self.namespaces[obj["metadata"]["name"]] = kube.register(obj, child)
        for obj in queue_objects(cfg):
            namespace = obj["metadata"].get("namespace")
            after = [*(queues_after or []), *([self.namespaces[namespace]] if namespace else [])]
            kube.register(obj, pulumi.ResourceOptions(parent=self, depends_on=after))
        if storage_identity:
            for obj in task_service_accounts(cfg, storage_identity):
                ns = self.namespaces.get(obj["metadata"]["namespace"], master_namespace)
                kube.register(obj, pulumi.ResourceOptions(parent=self, depends_on=[ns]))
        for rp in cfg.resource_pools:
            obj = quota(rp)
            if obj:
                ns = self.namespaces[rp.namespace_name]
                kube.register(obj, pulumi.ResourceOptions(parent=self, depends_on=[ns]))
        self.register_outputs({})
