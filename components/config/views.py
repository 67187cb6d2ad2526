"""The views of a Determined deployment its settings imply: default pools, slot type,
namespaces, pull Secrets, Kueue quotas, where the master runs.

One copy of their logic for the two models that hold those settings: the stack's whole
configuration (components.config.StackConfig, whose rules check them) and the Determined
component's Args (components.determined.args.DeterminedArgs, whose parts deploy them).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal

from components import constants, versions
from components.config import capacity, eks_instances, gke_gpu_sharing
from components.config.node_pools import NodePool
from components.config.resource_pools import QuotaConfig, ResourcePoolConfig

if TYPE_CHECKING:
    from components.config.master import MasterConfig
    from components.config.observability import ObservabilityConfig
    from components.config.resource_pools import SlotsConfig
    from components.config.shared_filesystems import SharedFilesystemBase

# Queue quotas of resources whose amount is not known: covered (Kueue refuses a task asking
# for an uncovered resource) but not limited.
UNLIMITED_CPU = "1000000"
UNLIMITED_MEMORY = "1Ei"

# The EFA device plugin's resource (components/determined/fabric.py, with its source).
EFA_RESOURCE = "vpc.amazonaws.com/efa"

# The default task namespace (0.35+) is the master's namespace with this suffix.
TASK_NAMESPACE_SUFFIX = "-tasks"


def _system_capable(pool: NodePool) -> bool:
    """A node pool fit for the master and the database: no taints, no GPUs, not spot (nor
    flex-start)."""
    # Spot or flex-start nodes are reclaimed: not where the master and its database belong.
    interruptible = {"spot", "flexStart"} & set(getattr(pool, "capacity_types", ()))
    return not pool.all_taints and not pool.gpu and not interruptible


def _mounts(fs: SharedFilesystemBase, resource_pool: ResourcePoolConfig) -> bool:
    """Whether a resource pool's task pods mount `fs` (its resourcePools, default every pool)."""
    return fs.resource_pools is None or resource_pool.name in fs.resource_pools


class DeploymentViews:
    """Views derived from the deployment's settings; mixed into a pydantic model that has
    the fields named below (read, never written)."""

    if TYPE_CHECKING:  # the fields of the model this is mixed into
        namespace: str
        task_namespace: str | None
        environment: Literal["dev", "prod"]
        allow_data_deletion: bool
        node_pools: list[NodePool]
        master: MasterConfig
        resource_pools: list[ResourcePoolConfig]
        default_compute_pool: str | None
        default_aux_pool: str | None
        scheduler: Literal["default", "kueue"]
        slots: SlotsConfig
        image_pull_secrets: list[str]
        registry_credentials: object | None
        observability: ObservabilityConfig
        shared_filesystems: list[SharedFilesystemBase]
        checkpoint_storage: object

    def node_pool(self, name: str) -> NodePool:
        return next(pool for pool in self.node_pools if pool.name == name)

    def node_pool_of(self, resource_pool: ResourcePoolConfig) -> NodePool:
        return self.node_pool(resource_pool.node_pool)

    def _pool_has_gpus(self, resource_pool: ResourcePoolConfig) -> bool:
        # Tolerates a dangling reference so that validation can report it.
        return any(n.gpu for n in self.node_pools if n.name == resource_pool.node_pool)

    def pool_role(self, resource_pool: ResourcePoolConfig) -> Literal["compute", "aux"]:
        """Whether a pool serves a workspace's training (compute) or its CPU-only tasks (aux):
        pools on GPU nodes, and every pool of a CPU-slot cluster, compute."""
        return "compute" if self._pool_has_gpus(resource_pool) or self.slot_type == "cpu" else "aux"

    def queued(self, resource_pool: ResourcePoolConfig) -> bool:
        """Whether a pool's tasks go through Kueue: every pool, with scheduler kueue (so each
        pool's namespace is admitted against its own quota)."""
        return self.scheduler == "kueue"

    def queue_quota(self, resource_pool: ResourcePoolConfig) -> dict[str, str]:
        """nominalQuota per resource of a queued pool: the pool's quota where set, else what
        its node pool holds at its largest (maxNodes times the `nvidia.com/gpu` a node
        advertises, MIG partitions and shared GPUs counted as GKE exposes them, and
        allocatable CPUs where the machine type says them). CPU and memory are always
        covered (Kueue refuses a task that asks for a resource its queue does not cover):
        without a known amount they are not limited."""
        node_pool = self.node_pool_of(resource_pool)
        quota = resource_pool.quota or QuotaConfig()
        nodes = getattr(node_pool, "max_nodes", None)  # created node pools only
        nominal: dict[str, str] = {}
        if node_pool.gpu:
            per_node = gke_gpu_sharing.exposed_gpus_per_node(node_pool)
            gpus = quota.gpu if quota.gpu is not None else (nodes * per_node if nodes else None)
            if gpus is not None:
                nominal["nvidia.com/gpu"] = str(gpus)
        cores = capacity.vcpus(node_pool.machine_type) if node_pool.machine_type else None
        if quota.cpu is not None:
            nominal["cpu"] = quota.cpu
        elif nodes and cores:
            nominal["cpu"] = f"{int(nodes * capacity.allocatable_cpu(cores) * 1000)}m"
        else:
            nominal["cpu"] = UNLIMITED_CPU
        nominal["memory"] = quota.memory if quota.memory is not None else UNLIMITED_MEMORY
        # What the node pool's task pods ask for besides (components/determined/local_nvme.py,
        # fabric.py): the scratch space, not limited; a node's EFA devices per node.
        if getattr(node_pool, "local_nvme", None) is not None:
            nominal["ephemeral-storage"] = UNLIMITED_MEMORY
        if getattr(node_pool, "fabric", None) == "efa" and resource_pool.fabric:
            # As many as a pod asks for (fabric.efa_count): the smallest type's, per node.
            efa = min(c for m in node_pool.machine_types if (c := eks_instances.efa_interfaces(m)) > 0)
            nominal[EFA_RESOURCE] = str(nodes * efa) if nodes else UNLIMITED_CPU
        return nominal

    @property
    def compute_pool(self) -> str:
        """Default compute pool: as configured, else the first pool on GPU nodes."""
        if self.default_compute_pool:
            return self.default_compute_pool
        gpu_pools = [p for p in self.resource_pools if self._pool_has_gpus(p)]
        return (gpu_pools or self.resource_pools)[0].name

    @property
    def aux_pool(self) -> str:
        """Default aux pool: as configured, else the first pool on CPU-only nodes."""
        if self.default_aux_pool:
            return self.default_aux_pool
        cpu_pools = [p for p in self.resource_pools if not self._pool_has_gpus(p)]
        return (cpu_pools or self.resource_pools)[0].name

    @property
    def slot_type(self) -> Literal["gpu", "cpu"]:
        if self.slots.type:
            return self.slots.type
        return "gpu" if any(self._pool_has_gpus(p) for p in self.resource_pools) else "cpu"

    @property
    def gpu_pools_in_use(self) -> list[NodePool]:
        """The GPU node pools that resource pools run on, in order."""
        names = {p.node_pool for p in self.resource_pools}
        return [n for n in self.node_pools if n.name in names and n.gpu]

    @property
    def gpu_counts(self) -> list[int]:
        """Distinct GPUs per node of the node pools that resource pools run on, ascending:
        the `nvidia.com/gpu` a node advertises (a slot each), MIG partitions and shared GPUs
        counted as GKE exposes them."""
        return sorted({gke_gpu_sharing.exposed_gpus_per_node(n) for n in self.gpu_pools_in_use})

    @property
    def max_slots_per_pod(self) -> int:
        """The global slots-per-pod limit: as configured, else the largest value that
        divides the GPUs a task pod may take on every GPU pool (so no pod asks for more GPUs
        than a node gives one container, and multi-pod tasks fill nodes evenly)."""
        if self.slots.max_slots_per_pod:
            return self.slots.max_slots_per_pod
        per_pod = [gke_gpu_sharing.gpus_per_container(n) for n in self.gpu_pools_in_use]
        return math.gcd(*per_pod) if per_pod else 1

    @property
    def default_task_namespace(self) -> str:
        """The master's default namespace (`default_namespace`, before 0.35 `namespace`):
        from 0.35 tasks of workspaces bound to no namespace and checkpoint GC run there, a
        namespace of their own (taskNamespace, default `<namespace>-tasks`); older masters
        look for their Service there, so it stays the master's."""
        if self.master.version_tuple < versions.RELEASE_NAMESPACE_SINCE:
            return self.namespace
        return self.task_namespace or f"{self.namespace}{TASK_NAMESPACE_SUFFIX}"

    @property
    def task_namespaces(self) -> list[str]:
        """Namespaces task pods may run in: the default task namespace, then every pool's,
        without repeats."""
        pools = (rp.namespace_name for rp in self.resource_pools)
        return list(dict.fromkeys([self.default_task_namespace, *pools]))

    @property
    def pod_namespaces(self) -> list[str]:
        """Every namespace pods of the stack run in: the master's, then the task namespaces."""
        return list(dict.fromkeys([self.namespace, *self.task_namespaces]))

    @property
    def pull_secrets(self) -> list[str]:
        """Every image pull Secret pods name: the configured ones, then the project's own."""
        own = [constants.REGISTRY_SECRET] if self.registry_credentials else []
        return list(dict.fromkeys([*self.image_pull_secrets, *own]))

    @property
    def master_node_pool(self) -> NodePool | None:
        """Where the master and the in-cluster database run: master.nodePool, else the
        first untainted, on-demand CPU pool (None when there is none: a config error)."""
        if self.master.node_pool:
            return next((p for p in self.node_pools if p.name == self.master.node_pool), None)
        return next((p for p in self.node_pools if _system_capable(p)), None)

    @property
    def data_deletion_allowed(self) -> bool:
        # Refused in prod by validation; kept explicit here for the app.
        return self.allow_data_deletion and self.environment == "dev"

    @property
    def observed(self) -> bool:
        """Whether metrics, dashboards and alerts are installed: observability.enabled, by
        default in prod only."""
        enabled = self.observability.enabled
        return self.environment == "prod" if enabled is None else enabled

    @property
    def master_prometheus(self) -> bool:
        """Whether the master serves its Prometheus endpoints: master.observability.enablePrometheus,
        or observability on (whose Prometheus scrapes them)."""
        return self.master.observability.enable_prometheus or self.observed

    # --- shared filesystems (sharedFilesystems) ---------------------------------------------

    def pool_filesystems(self, resource_pool: ResourcePoolConfig) -> list[SharedFilesystemBase]:
        """The shared filesystems a resource pool's task pods mount, in the order configured."""
        return [fs for fs in self.shared_filesystems if _mounts(fs, resource_pool)]

    def _mounting_pools(self, fs: SharedFilesystemBase) -> list[ResourcePoolConfig]:
        """The resource pools whose task pods mount `fs`."""
        return [rp for rp in self.resource_pools if _mounts(fs, rp)]

    @property
    def checkpoint_filesystem(self) -> SharedFilesystemBase | None:
        """The shared filesystem checkpoints are kept on (checkpointStorage.sharedFilesystem)."""
        name = getattr(self.checkpoint_storage, "shared_filesystem", None)
        return next((fs for fs in self.shared_filesystems if fs.name == name), None)

    def filesystem_namespaces(self, fs: SharedFilesystemBase) -> list[str]:
        """The namespaces whose pods mount `fs`: its pools' and, for the checkpoint filesystem,
        every namespace pods of the stack run in (the master reads checkpoints, checkpoint GC
        runs in the default task namespace, every task writes them)."""
        if self.checkpoint_filesystem is fs:
            return self.pod_namespaces
        pools = self._mounting_pools(fs)
        if not pools:
            return []
        # Where a pool's pods (with its pod spec) may run, as resource_pools.pool_namespaces
        # says with its sources: from 0.35 any task namespace (a task runs in its workspace's
        # namespace or the default one, whatever its pool); before, the pool's own and the
        # default aux pool's (checkpoint GC with the experiment's pod spec).
        if self.master.version_tuple >= versions.WORKSPACE_NAMESPACES_SINCE:
            return list(self.task_namespaces)
        aux = [rp.namespace_name for rp in self.resource_pools if rp.name == self.aux_pool]
        return list(dict.fromkeys([*(rp.namespace_name for rp in pools), *aux]))

    def filesystem_node_pools(self, fs: SharedFilesystemBase) -> list[NodePool]:
        """The node pools whose nodes mount `fs` (its resource pools'; every pool's for the
        checkpoint filesystem)."""
        pools = self.resource_pools if self.checkpoint_filesystem is fs else self._mounting_pools(fs)
        names = list(dict.fromkeys(rp.node_pool for rp in pools))
        if self.checkpoint_filesystem is fs and self.master_node_pool is not None:
            names = list(dict.fromkeys([self.master_node_pool.name, *names]))
        return [self.node_pool(name) for name in names if any(p.name == name for p in self.node_pools)]
