"""Resource pools: Determined pools mapped to namespaces and pinned to node pools.

Pure functions build the namespaces, quotas and each pool's task pod specs; the
`ResourcePools` component registers the Kubernetes objects.
"""

from __future__ import annotations

import copy
from typing import Any

import pulumi

from components import constants, kube, versions
from components.addons import kueue, provisioning
from components.cluster import SharedVolume
from components.config import NodePool, ResourcePoolConfig, SharedFsStorage, gke_gpu_sharing
from components.determined import (
    ca_bundle,
    checkpoint_volumes,
    fabric,
    local_nvme,
    proxy,
    registry,
    shared_filesystems,
)
from components.determined.args import DeterminedArgs
from components.kube import pod_security, strategic_merge

# Zero-GPU task pods (TensorBoards, CPU notebooks) on GPU nodes would otherwise see every
# GPU of the node through the NVIDIA runtime: the CUDA images set NVIDIA_VISIBLE_DEVICES=all.
_HIDE_GPUS = {
    "spec": {
        "containers": [
            {
                "name": constants.TASK_CONTAINER,
                "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}],
            }
        ]
    }
}


# Determined fills in its task container by this name; naming it keeps the spec a valid Pod.
_TASK_CONTAINER = {"spec": {"containers": [{"name": constants.TASK_CONTAINER}]}}


def task_pod(*layers: dict[str, Any]) -> dict[str, Any]:
    """A task pod spec: Determined's task container, then each layer merged over it
    (strategic merge), in Pod form."""
    return strategic_merge.merge_pods(_TASK_CONTAINER, *layers)


def tolerations_for(pool: NodePool) -> list[dict[str, Any]]:
    """Tolerations for every taint of `pool` (GPU pools: nvidia.com/gpu first)."""
    return [taint.toleration for taint in pool.all_taints]


# A running task is never moved by the node autoscalers' own choices: an evicted task pod
# fails its allocation (a trial restarts from its last checkpoint, a notebook is lost).
# Karpenter does not consolidate or drift a node with a pod so annotated, and drains an
# expired one only once such pods end (https://karpenter.sh/docs/concepts/disruption/
# #pod-level-controls, read 2026-11; expiry itself is forceful); the
# cluster autoscaler does not scale such a node down (kubernetes/autoscaler
# cluster-autoscaler/FAQ.md "What types of pods can prevent CA from removing a node?").
# Involuntary losses (spot reclaimed, flex-start's end) are not prevented: docs/concepts/capacity.md.
NO_DISRUPTION = {
    "karpenter.sh/do-not-disrupt": "true",
    "cluster-autoscaler.kubernetes.io/safe-to-evict": "false",
}


def pin(pod: dict[str, Any], node_pool: NodePool) -> dict[str, Any]:
    """`pod` kept on `node_pool`: its node selector added over the pod's own (the pinning
    labels win), and a toleration for each of its taints beside the pod's own. Strategic
    merge would replace the pod's tolerations (an atomic list); pinning only adds. The pod
    is marked not to be disrupted by the autoscalers (NO_DISRUPTION), over its own marks."""
    meta = dict(pod.get("metadata") or {})
    meta["annotations"] = {**(meta.get("annotations") or {}), **NO_DISRUPTION}
    pod = {**pod, "metadata": meta}
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


def project_layer(cfg: DeterminedArgs) -> dict[str, Any]:
    """What every task pod gets from the project, under the defaults and the pool's own
    podSpec: image pull Secrets, extra CAs, the checkpoint volume, the proxy."""
    layers: list[dict[str, Any]] = []
    if cfg.pull_secrets:
        layers.append({"spec": registry.pod_field(cfg)})
    layers.append(ca_bundle.task_layer(cfg, cfg.master.image_reference))
    layers.append(checkpoint_volumes.task_layer(cfg))
    proxy_env = proxy.env(cfg)
    if proxy_env:
        layers.append({"spec": {"containers": [{"name": constants.TASK_CONTAINER, "env": proxy_env}]}})
    layers = [layer for layer in layers if layer]
    return strategic_merge.merge_pods(*layers) if layers else {}


def pool_layer(cfg: DeterminedArgs, rp: ResourcePoolConfig, gpu: bool = True) -> dict[str, Any]:
    """What a pool's task pods get from the project for that pool, under the defaults and
    the pool's own podSpec: its shared filesystems, its node pool's local NVMe scratch
    space and, for GPU tasks (`gpu`: the gpu_pod_spec), its GPU fabric, whose devices and
    networks one pod per node takes (components/determined/fabric.py)."""
    layers = [
        shared_filesystems.pool_layer(cfg, rp),
        local_nvme.pool_layer(cfg, rp, gpu=gpu),
        fabric.pool_layer(cfg, rp) if gpu else {},
    ]
    layers = [layer for layer in layers if layer]
    return strategic_merge.merge_pods(*layers) if layers else {}


def pool_pod_specs(
    cfg: DeterminedArgs,
    rp: ResourcePoolConfig,
    task_service_account: str | None = None,
    project: dict[str, Any] | None = None,
) -> dict[str, dict[str, Any]]:
    """cpu_pod_spec and gpu_pod_spec of a pool: the task service account, the defaults and
    the pool's podSpec over them (strategic merge), then the pinning (which the pool
    cannot undo)."""
    tcd = cfg.task_container_defaults
    node_pool = cfg.node_pool_of(rp)
    account = service_account(task_service_account)
    # `project`: project_layer(cfg), when the caller already built it (it is the same for every pool).
    project = project_layer(cfg) if project is None else project
    cpu = task_pod(account, project, pool_layer(cfg, rp, gpu=False), tcd.cpu_pod_spec, rp.pod_spec)
    if node_pool.gpu:
        cpu = strategic_merge.merge_pods(cpu, _HIDE_GPUS)
    gpu = task_pod(account, project, pool_layer(cfg, rp, gpu=True), tcd.gpu_pod_spec, rp.pod_spec)
    specs = {"cpu_pod_spec": pin(cpu, node_pool), "gpu_pod_spec": pin(gpu, node_pool)}
    if cfg.queued(rp):
        # Last, like the pinning: the pool's tasks always go through its queue.
        specs = {
            key: strategic_merge.merge_pods(pod, kueue.queue_label_layer(rp)) for key, pod in specs.items()
        }
    return specs


def pool_namespaces(cfg: DeterminedArgs, rp: ResourcePoolConfig) -> list[str]:
    """Every namespace the master may put a pool's tasks in (with the pool's pod spec). A
    queued pool needs its LocalQueue in each, or Kueue never admits the Job and the task waits
    forever (the master reacts to Job conditions only). By version (Determined's source):

    - up to 0.34: a task runs in its pool's `kubernetes_namespace` (master/internal/rm/
      kubernetesrm/resource_pool.go:550 at 0.34.0). Checkpoint GC runs on the default aux pool
      (checkpoint_gc.go:102 at 0.34.0), in its namespace, with the experiment's pod spec
      (this pool's queue label) when no checkpoint_gc_pod_spec is set (pkg/tasks/task_gc.go:41-44).
    - 0.35+: a task runs in its workspace's namespace, else in the default namespace
      (resource_pool.go:613-616 at 0.35.0 and v0.38.1), whatever its pool. The pool serves the
      workspaces bound to it; one bound to none serves every workspace (db/postgres_rp_
      workspace_bindings.go:212, kubernetes_resource_manager.go:498 at v0.38.1). The
      workspace Job binds each pool to its workspace except the master's default pools, which
      cannot be bound (api_resourcepool.go:214-232 at v0.38.1). Checkpoint GC of an experiment
      runs in its workspace's namespace, and of a deleted experiment in the default namespace
      (the master's own task spec, api_experiment.go:389 at v0.38.1), with the experiment's pod spec as
      above: so every pool's Jobs may land in the default namespace.
      Bindings do not keep a pool's Jobs in its workspace's namespace either: an experiment
      keeps the pod spec (and queue label) it was created with when it is moved to another
      workspace (pkg/model/task_container_defaults.go:140-155 and
      internal/experiment/bulk_action.go:701 at v0.38.1), and a pool stays open to every
      workspace until the binding Job has run. So on 0.35+ every queued pool has its
      LocalQueue in every task namespace; the master's bindings decide who may use a pool."""
    if cfg.master.version_tuple < versions.WORKSPACE_NAMESPACES_SINCE:
        aux = next((p for p in cfg.resource_pools if p.name == cfg.aux_pool), rp)
        return list(dict.fromkeys([rp.namespace_name, aux.namespace_name]))
    return list(cfg.task_namespaces)


def queue_objects(cfg: DeterminedArgs) -> list[dict[str, Any]]:
    """scheduler kueue: a ResourceFlavor per node pool of a queued pool, and per queued pool
    a ClusterQueue (its quota on that flavor, for the namespaces its Jobs land in) and a
    LocalQueue in each of those namespaces. Pools on GKE queued-provisioning node pools: their
    ClusterQueue names the ProvisioningRequest check, which (with its config) comes once."""
    queued = [rp for rp in cfg.resource_pools if cfg.queued(rp)]
    flavors = {rp.node_pool: kueue.resource_flavor(cfg.node_pool_of(rp)) for rp in queued}
    objects = list(flavors.values())
    if any(provisioning.queued_provisioning(cfg.node_pool_of(rp)) for rp in queued):
        objects += provisioning.objects()
    for rp in queued:
        node_pool = cfg.node_pool_of(rp)
        flavor = kueue.flavor_name(node_pool)
        namespaces = pool_namespaces(cfg, rp)
        checks = [provisioning.NAME] if provisioning.queued_provisioning(node_pool) else None
        objects.append(
            kueue.cluster_queue(rp, flavor, cfg.queue_quota(rp), cfg.kueue.cohort, namespaces, checks)
        )
        objects += [kueue.local_queue(rp, namespace) for namespace in namespaces]
    return objects


def pool_max_slots(cfg: DeterminedArgs, rp: ResourcePoolConfig) -> int | None:
    """A pool's own max_slots_per_pod where the master supports it: the configured value,
    else the GPUs a task pod may take on its node pool's nodes (each `nvidia.com/gpu` a slot:
    MIG partitions and shared GPUs as GKE exposes them). None: the global value applies."""
    if cfg.master.version_tuple < versions.PER_POOL_MAX_SLOTS_SINCE:
        return None
    if cfg.slots.max_slots_per_pod:
        return cfg.slots.max_slots_per_pod
    node_pool = cfg.node_pool_of(rp)
    if cfg.slot_type == "gpu" and node_pool.gpu:
        return gke_gpu_sharing.gpus_per_container(node_pool)
    return None


def master_resource_pools(
    cfg: DeterminedArgs, task_service_account: str | None = None, project: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """The `resource_pools` section of master.yaml; `project`: project_layer(cfg), when the
    caller already built it."""
    pools = []
    # The same for every pool: built once (and copied into each, so that master.yaml holds
    # no shared objects, which YAML would write as aliases).
    project = project_layer(cfg) if project is None else project
    settings = task_settings(cfg)
    gc_spec = checkpoint_gc_pod_spec(cfg, task_service_account, project)
    for rp in cfg.resource_pools:
        entry: dict[str, Any] = {"pool_name": rp.name, "description": rp.description}
        if cfg.master.version_tuple < versions.WORKSPACE_NAMESPACES_SINCE:
            entry["kubernetes_namespace"] = rp.namespace_name
        # Everything, not only what differs: see task_settings.
        tcd: dict[str, Any] = {
            **copy.deepcopy(settings),
            **fabric.pool_settings(cfg, rp),
            **pool_pod_specs(cfg, rp, task_service_account, project),
        }
        if gc_spec:
            tcd["checkpoint_gc_pod_spec"] = copy.deepcopy(gc_spec)
        max_slots = pool_max_slots(cfg, rp)
        if max_slots is not None:
            tcd["kubernetes"] = {"max_slots_per_pod": max_slots}
        entry["task_container_defaults"] = tcd
        pools.append(entry)
    return pools


def checkpoint_gc_pod_spec(
    cfg: DeterminedArgs, task_service_account: str | None, project: dict[str, Any] | None = None
) -> dict[str, Any] | None:
    """The checkpoint GC pod (0.34+): it reads and deletes checkpoints, so it runs as the task
    service account and gets what every task pod gets (pull Secrets, CAs, proxy, volumes)."""
    if cfg.master.version_tuple < versions.CHECKPOINT_GC_POD_SPEC_SINCE:
        return None
    own = cfg.task_container_defaults.checkpoint_gc_pod_spec
    account = service_account(task_service_account)
    project = project_layer(cfg) if project is None else project
    if not (own or account or project):
        return None
    return task_pod(account, project, own)


def task_settings(cfg: DeterminedArgs) -> dict[str, Any]:
    """The task_container_defaults keys besides pod specs, in the keys the version knows.
    Written at the top and into every pool's task_container_defaults alike: a pool's
    section replaces the top one before 0.35 and, after, brings its own defaults for
    shm_size_bytes and network_mode (4 GiB, bridge) over the top one's."""
    tcd = cfg.task_container_defaults
    version = cfg.master.version_tuple
    out: dict[str, Any] = {"shm_size_bytes": tcd.shm_size_bytes, "network_mode": tcd.network_mode}
    images = tcd.images.model_dump(exclude_none=True)
    if images:
        out["image"] = images
    if tcd.force_pull_image:
        out["force_pull_image"] = True
    if tcd.env:
        out["environment_variables"] = [f"{name}={value}" for name, value in tcd.env.items()]
    if tcd.dtrain_network_interface:
        out["dtrain_network_interface"] = tcd.dtrain_network_interface
    if tcd.startup_hook and version >= versions.STARTUP_HOOK_SINCE:
        out["startup_hook"] = tcd.startup_hook
    if tcd.log_policies is not None and version >= versions.LOG_POLICIES_SINCE:
        out["log_policies"] = [_log_policy(policy, version) for policy in tcd.log_policies]
    return out


def _log_policy(policy: Any, version: tuple[int, int, int]) -> dict[str, Any]:
    entry: dict[str, Any] = {"pattern": policy.pattern}
    if policy.name and version >= versions.LOG_POLICY_NAME_SINCE:
        entry = {"name": policy.name, **entry}
    if policy.action:
        entry["action"] = {"type": policy.action}
    return entry


def task_privileges(cfg: DeterminedArgs) -> list[str]:
    """Why task pods need the `privileged` Pod Security level rather than `baseline` (the
    least they need: Determined's task images run as root). Empty: baseline admits them.

    One answer for every namespace tasks run in: from 0.35 a task's namespace comes from its
    workspace and its pod spec from its pool, so any pool's pods may land in any of them (and
    in the default task namespace: tasks of unbound workspaces, checkpoint GC)."""
    why = []
    if cfg.task_container_defaults.network_mode == "host":
        why.append("taskContainerDefaults.networkMode host: Determined runs task pods on the host network")
    if isinstance(cfg.checkpoint_storage, SharedFsStorage):
        why.append("checkpointStorage sharedFs: Determined mounts the hostPath into every trial")
    overrides = cfg.master.config_overrides.get("task_container_defaults")
    if isinstance(overrides, dict) and overrides.get("bind_mounts"):
        why.append("master.configOverrides task_container_defaults.bind_mounts: hostPath volumes in tasks")
    project = project_layer(cfg)
    tcd = cfg.task_container_defaults
    specs = {
        "taskContainerDefaults.cpuPodSpec": task_pod(project, tcd.cpu_pod_spec),
        "taskContainerDefaults.gpuPodSpec": task_pod(project, tcd.gpu_pod_spec),
        "taskContainerDefaults.checkpointGcPodSpec": checkpoint_gc_pod_spec(cfg, None, project) or {},
    }
    for i, rp in enumerate(cfg.resource_pools):
        for key, pod in pool_pod_specs(cfg, rp, None, project).items():
            specs[f"resourcePools[{i}].podSpec ({key})"] = pod
    # What a node pool's GPU fabric puts in the pool's GPU pods is named by the fabric.
    fabric_needs = {
        f"resourcePools[{i}].podSpec (gpu_pod_spec)": (
            fabric.privilege_reason(cfg, rp),
            set(pod_security.baseline_problems(fabric.pool_layer(cfg, rp))),
        )
        for i, rp in enumerate(cfg.resource_pools)
        if fabric.fabric_of(cfg, rp)
    }
    for where, pod in specs.items():
        reason, needs = fabric_needs.get(where, (where, set()))
        why += [
            f"{reason if problem in needs else where}: {problem}"
            for problem in pod_security.baseline_problems(pod)
        ]
    return why


def task_pod_security(cfg: DeterminedArgs) -> str:
    """The Pod Security level namespaces that run task pods enforce."""
    return "privileged" if task_privileges(cfg) else "baseline"


def master_namespace_pod_security(cfg: DeterminedArgs) -> str:
    """The level the master's namespace enforces: `restricted` (what its own pods meet) when
    no task runs there (0.35+: tasks default to their own namespace), else the laxest of that
    and what tasks need."""
    if cfg.namespace not in cfg.task_namespaces:
        return "restricted"
    return pod_security.laxest("restricted", task_pod_security(cfg))


def namespaces(cfg: DeterminedArgs) -> list[dict[str, Any]]:
    """One Namespace per task namespace but the master's (which the stack makes apart): the
    default task namespace (0.35+) and each distinct pool namespace, enforcing the Pod
    Security level task pods need (and auditing what would fail `restricted`)."""
    pools = {rp.namespace_name for rp in cfg.resource_pools}
    level = task_pod_security(cfg)
    found = []
    for name in (ns for ns in cfg.task_namespaces if ns != cfg.namespace):
        meta = kube.metadata(name, "resource-pool" if name in pools else "tasks")
        meta["labels"] |= pod_security.namespace_labels(level, audit="restricted")
        found.append(kube.manifest("v1", "Namespace", meta))
    return found


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


# A ResourceQuota on cpu or memory (requests or limits) refuses every pod with a container
# that does not declare them, init containers included (kubernetes pkg/quota/v1/evaluator/
# core/pods.go, Constraints: "if we quota cpu or memory, then each container must make an
# explicit request for the resource"; https://kubernetes.io/docs/concepts/policy/resource-quotas/,
# read 2026-11). Determined's init container declares nothing (master/internal/rm/
# kubernetesrm/spec.go:825-843 at v0.38.1, :802 at 0.34.0, :653 at 0.33.0) and its task
# container only the slots (nvidia.com/gpu, or cpu on CPU-slot clusters: spec.go:57-105 at
# v0.38.1), so a LimitRange gives every container what it leaves out.
# Quota key -> (LimitRange field, resource) it needs defaulted.
QUOTA_DEFAULTS = {
    "cpu": ("defaultRequest", "cpu"),
    "requests.cpu": ("defaultRequest", "cpu"),
    "memory": ("defaultRequest", "memory"),
    "requests.memory": ("defaultRequest", "memory"),
    "limits.cpu": ("default", "cpu"),
    "limits.memory": ("default", "memory"),
}
# Sized for Determined's init container: it untars the task's archives, which come from a
# ConfigMap (at most 1 MiB: https://kubernetes.io/docs/concepts/configuration/configmap/,
# read 2026-11), with bash and tar (k8_init_container_entrypoint.sh). A task container without
# requests of its own gets as much (a floor the scheduler reserves, not a cap). No official
# sizing exists; these are small on purpose.
CONTAINER_DEFAULTS = {"cpu": "100m", "memory": "128Mi"}
LIMIT_RANGE_NAME = "determined-container-defaults"


def limit_ranges(quotas: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A LimitRange in each namespace whose ResourceQuotas (`quotas`) constrain cpu or memory:
    default requests for what they constrain (and default limits where they constrain limits:
    the init container's size, so a task container in such a namespace declares its own limits,
    as the stack configuration checks), so that Determined's containers are admitted."""
    wanted: dict[str, dict[str, set[str]]] = {}
    for obj in quotas:
        fields = wanted.setdefault(obj["metadata"]["namespace"], {})
        for key in obj["spec"]["hard"]:
            if key in QUOTA_DEFAULTS:
                field, resource = QUOTA_DEFAULTS[key]
                fields.setdefault(field, set()).add(resource)
                if field == "default":
                    # A default limit without a default request would make the limit the request.
                    fields.setdefault("defaultRequest", set()).add(resource)
    found = []
    for namespace, fields in wanted.items():
        if not fields:
            continue
        item: dict[str, Any] = {"type": "Container"}
        for field in ("default", "defaultRequest"):
            if field in fields:
                item[field] = {r: CONTAINER_DEFAULTS[r] for r in sorted(fields[field])}
        meta = kube.metadata(LIMIT_RANGE_NAME, "resource-pool", namespace)
        found.append(kube.manifest("v1", "LimitRange", meta, spec={"limits": [item]}))
    return found


def task_service_accounts(cfg: DeterminedArgs, annotations: dict[str, Any]) -> list[dict[str, Any]]:
    """The service account task pods run as, in every namespace tasks run in, annotated
    for workload identity."""
    accounts = []
    for ns in cfg.task_namespaces:
        meta = kube.metadata(constants.TASK_SERVICE_ACCOUNT, "task", ns)
        meta["annotations"] = dict(annotations)
        accounts.append(kube.manifest("v1", "ServiceAccount", meta))
    return accounts


def namespace_objects(cfg: DeterminedArgs, docker_config: Any = None) -> list[dict[str, Any]]:
    """What pods find in every namespace they run in (the master's included): the registry
    Secret made from registryCredentials (`docker_config`: its secret document) and the CA
    bundle's ConfigMap."""
    objects = []
    for ns in cfg.pod_namespaces:
        if cfg.registry_credentials:
            objects.append(registry.pull_secret(ns, docker_config))
        bundle = ca_bundle.config_map(cfg, ns)
        if bundle:
            objects.append(bundle)
    return objects


def _docker_config(cfg: DeterminedArgs) -> pulumi.Output[str] | None:
    login = cfg.registry_credentials
    if login is None:
        return None
    return pulumi.Output.secret(
        registry.docker_config(login.server, login.username, login.password.get_secret_value())
    )


class ResourcePools(pulumi.ComponentResource):
    """Namespaces (and quotas) for the resource pools, the task service accounts when the
    platform binds storage to them (`storage_identity`), and in every namespace pods run in
    the registry Secret and CA bundle they use."""

    def __init__(
        self,
        name: str,
        cfg: DeterminedArgs,
        storage_identity: dict[str, Any],
        master_namespace: pulumi.Resource,
        queues_after: list[pulumi.Resource] | None = None,
        opts: pulumi.ResourceOptions | None = None,
        shared_volumes: dict[str, SharedVolume] | None = None,
    ):
        """`queues_after`: what Kueue's objects wait for (its Release, which brings the CRDs);
        `shared_volumes`: the shared filesystems the cluster component created
        (ClusterHandle.shared_filesystems)."""
        super().__init__("determined:components:ResourcePools", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.namespaces = {}
        for obj in namespaces(cfg):
            self.namespaces[obj["metadata"]["name"]] = kube.register(obj, child)
        for obj in queue_objects(cfg):
            namespace = obj["metadata"].get("namespace")
            ns = [self.namespaces.get(namespace, master_namespace)] if namespace else []
            after = [*(queues_after or []), *ns]
            kube.register(obj, pulumi.ResourceOptions(parent=self, depends_on=after))
        if storage_identity:
            for obj in task_service_accounts(cfg, storage_identity):
                ns = self.namespaces.get(obj["metadata"]["namespace"], master_namespace)
                kube.register(obj, pulumi.ResourceOptions(parent=self, depends_on=[ns]))
        # What pods find in their namespace (registry Secret, CA bundle): the database waits
        # for these only, not for the queues.
        self.shared: list[pulumi.Resource] = []
        for obj in namespace_objects(cfg, _docker_config(cfg)):
            ns = self.namespaces.get(obj["metadata"]["namespace"], master_namespace)
            self.shared.append(kube.register(obj, pulumi.ResourceOptions(parent=self, depends_on=[ns])))
        # Checkpoint volumes and claims (directory storage): data, kept like the database's.
        keep = checkpoint_volumes.data_options(cfg)
        volumes: dict[str, pulumi.Resource] = {}
        for obj in checkpoint_volumes.objects(cfg):
            namespace = obj["metadata"].get("namespace")
            if namespace is None:
                volumes[obj["spec"]["claimRef"]["namespace"]] = kube.register(
                    obj, pulumi.ResourceOptions.merge(pulumi.ResourceOptions(parent=self), keep)
                )
                continue
            volume = volumes.pop(namespace, None)
            after = [self.namespaces.get(namespace, master_namespace), *([volume] if volume else [])]
            # A claim the master and tasks mount: what pods find in their namespace.
            self.shared.append(
                kube.register(
                    obj,
                    pulumi.ResourceOptions.merge(pulumi.ResourceOptions(parent=self, depends_on=after), keep),
                )
            )
        self._shared_filesystems(cfg, shared_volumes or {}, master_namespace)
        quotas = [obj for obj in (quota(rp) for rp in cfg.resource_pools) if obj]
        # Each LimitRange before its namespace's quota: no pod meets the quota without it.
        defaults_of = {}
        for obj in limit_ranges(quotas):
            ns = self.namespaces[obj["metadata"]["namespace"]]
            defaults_of[obj["metadata"]["namespace"]] = kube.register(
                obj, pulumi.ResourceOptions(parent=self, depends_on=[ns])
            )
        for obj in quotas:
            namespace = obj["metadata"]["namespace"]
            after = [
                self.namespaces[namespace],
                *([defaults_of[namespace]] if namespace in defaults_of else []),
            ]
            kube.register(obj, pulumi.ResourceOptions(parent=self, depends_on=after))
        self.register_outputs({})

    def _shared_filesystems(
        self,
        cfg: DeterminedArgs,
        created: dict[str, SharedVolume],
        master_namespace: pulumi.Resource,
    ) -> None:
        """Shared filesystems' volumes and claims: each volume after what its source needs
        (SharedVolume.ready), each claim after its namespace and volume. The checkpoint
        filesystem's claims are what pods find in their namespace (the master mounts one).

        Not kept on destroy: the data is the filesystem's, which deleting a volume of it never
        touches (reclaim policy Retain on a volume the stack made: "the associated storage asset
        in external infrastructure still exists after the PV is deleted",
        kubernetes.io/docs/concepts/storage/persistent-volumes/#retain, read 2026-11). A kept
        volume would outlive a removed pool's namespace as Released, never bindable again, and
        block the pool's return (AlreadyExists). Options: shared_filesystems.volume_options
        and claim_options."""
        for fs, volume, pv, pvc in shared_filesystems.objects(cfg, created):
            pv_res = kube.register(
                pv,
                pulumi.ResourceOptions(
                    parent=self, depends_on=list(volume.ready), **shared_filesystems.volume_options()
                ),
            )
            namespace = pvc["metadata"]["namespace"]
            after = [self.namespaces.get(namespace, master_namespace), pv_res]
            claim = kube.register(
                pvc,
                pulumi.ResourceOptions(
                    parent=self, depends_on=after, **shared_filesystems.claim_options(pv_res)
                ),
            )
            if shared_filesystems.is_checkpoint_filesystem(cfg, fs):
                self.shared.append(claim)
