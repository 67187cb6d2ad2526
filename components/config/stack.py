"""The whole stack configuration: sections, per-target variants, cross-section rules.

`StackConfig` holds what every target shares and the views the app derives from it; the
variants (`ExistingStack`, `GkeStack`, `EksStack`) are chosen by `cloud` and type the
cluster and node pools of their target. Rules that relate sections live here; each
section checks its own values.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, ValidationInfo, field_validator

from components import constants, versions
from components.config import capacity, gke_gpu_sharing
from components.config.addons import GpuOperatorConfig, KueueConfig
from components.config.base import ConfigModel
from components.config.checkpoint_directory import directory_problems
from components.config.checkpoint_storage import (
    CheckpointStorageConfig,
    GcsStorage,
    S3Storage,
)
from components.config.cloud_names import name_problems
from components.config.cluster import ClusterConfig, EksCluster, ExistingCluster, GkeCluster
from components.config.database import (
    DatabaseConfig,
    ExternalDatabase,
    ManagedDatabase,
    backup_problems,
    managed_tier_problems,
)
from components.config.eks import SYSTEM_MIN_NODES, eks_problems
from components.config.errors import Problem, format_path
from components.config.gke import gke_problems
from components.config.master import MasterConfig
from components.config.master_config_size import master_config_size_problems
from components.config.node_pools import CloudNodePool, EksNodePool, ExistingNodePool, GkeNodePool, NodePool
from components.config.partial import Unreliable
from components.config.resource_pools import (
    POD_KEYS,
    QuotaConfig,
    ResourcePoolConfig,
    SlotsConfig,
    TaskContainerDefaultsConfig,
    determined_owned,
    pod_form_problem,
)
from components.config.secrets import Secret
from components.config.syntax import (
    DnsLabel,
    DnsSubdomain,
    Flag,
    NonEmpty,
    RegistryServerPort,
    annotation_value_problems,
    dns_label_problem,
    pattern_check,
    quantity_value,
)
from components.config.tls import (
    CertManagerCertificate,
    ExposedTls,
    MasterTls,
    TlsConfig,
    acme_problems,
    dns01_problems,
)
from components.kube import api_rules, strategic_merge, validation

# Queue quotas of resources whose amount is not known: covered (Kueue refuses a task asking
# for an uncovered resource) but not limited.
UNLIMITED_CPU = "1000000"
UNLIMITED_MEMORY = "1Ei"

# The default task namespace (0.35+) is the master's namespace with this suffix.
TASK_NAMESPACE_SUFFIX = "-tasks"


def _refuse_coscheduler(value: Any) -> Any:
    if value == "coscheduler":
        raise ValueError(
            "coscheduler is refused: Determined's coscheduler support needs scheduler-plugins "
            "v0.18.9 (Kubernetes 1.18, retired image), which current clusters cannot run; use "
            "default (or kueue for gang admission)"
        )
    if value == "preemption":
        raise ValueError(
            "'preemption' is not accepted by the Kubernetes resource manager of current "
            "Determined releases (older docs still show it); use 'default'"
        )
    return value


def _no_colon(value: str) -> str:
    # Not repeated: a user name holding ':' may be a password pasted in.
    if ":" in value:
        raise ValueError("must not contain ':' (a registry login joins user name and password with ':')")
    return value


# As image references name it (registry.example.com:5000, ghcr.io); Docker Hub's classic
# https://index.docker.io/v1/ too.
RegistryServer = Annotated[
    NonEmpty,
    AfterValidator(
        pattern_check(
            r"(https?://)?[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?(:[0-9]+)?(/[A-Za-z0-9._/-]*)?",
            "a registry host (examples: ghcr.io, registry.example.com:5000)",
            255,
        )
    ),
    RegistryServerPort,
]


class RegistryCredentials(ConfigModel):
    """A private registry's login; the password (a token) is a secret."""

    server: RegistryServer = Field(
        description="The registry host the credentials are for (examples: ghcr.io, "
        "registry.example.com:5000)."
    )
    username: Annotated[NonEmpty, AfterValidator(_no_colon)] = Field(
        description="The registry user name (without ':')."
    )
    password: Secret = Field(description="Secret: the registry password or token.")


class StackConfig(ConfigModel):
    cloud: str = Field(
        description="Required: where Determined runs: existing (a cluster you have), gke or eks."
    )
    environment: Literal["dev", "prod"] = Field(
        "dev",
        description="dev or prod; prod refuses allowDataDeletion, makes the policies marked so mandatory "
        "and, on gke/eks, adds deletion protection, database standby and backups and a versioned bucket. "
        "Default dev.",
    )
    allow_data_deletion: Flag = Field(
        False,
        description="true lets destroy delete the database volume, and on gke/eks the created bucket (when "
        "empty) and Cloud SQL or RDS; dev only. Default false.",
    )
    namespace: DnsLabel = Field(
        "determined",
        description="The namespace of the master and database, a DNS label (not default or kube-*); default "
        "determined.",
    )
    # 0.35+: where tasks of workspaces bound to no namespace and checkpoint GC run (the
    # master's `default_namespace`); default `<namespace>-tasks`.
    task_namespace: DnsLabel | None = Field(
        None,
        description="0.35+: the master's default namespace, where tasks of workspaces bound to none and "
        "checkpoint GC run; not the master's own. Default <namespace>-tasks.",
    )
    cluster: ClusterConfig = Field(
        description="Required: the Kubernetes cluster: created on gke/eks (name, region, network...), or "
        "reached through a kubeconfig and context on existing."
    )
    node_pools: list[NodePool] = Field(
        min_length=1,
        description="At least one node pool (GKE node pools, EKS node groups, or an existing cluster's node "
        "sets); one must be untainted, as system pods need it.",
    )
    gpu_operator: GpuOperatorConfig = Field(
        default_factory=GpuOperatorConfig,
        description="The NVIDIA GPU operator (gke/eks only), {enabled, version}; default: not installed.",
    )
    master: MasterConfig = Field(
        default_factory=MasterConfig,
        description="The Determined master: version, image, resources, service and master.yaml settings; "
        "default: version 0.38.1 with the defaults of its keys.",
    )
    database: DatabaseConfig = Field(
        default_factory=lambda: {"mode": "inCluster"},
        validate_default=True,
        description="The master's PostgreSQL database, by mode: inCluster (the default), external or managed "
        "(Cloud SQL on gke, RDS on eks).",
    )
    checkpoint_storage: CheckpointStorageConfig = Field(
        default_factory=lambda: {"type": "sharedFs"},
        validate_default=True,
        description="Where trials write checkpoints, by type: sharedFs (the default, testing only), s3, gcs, "
        "azure or directory.",
    )
    tls: TlsConfig = Field(
        default_factory=lambda: {"mode": "none"},
        validate_default=True,
        description="How users reach the master, by mode: none (port-forward, the default), ingress (TLS "
        "ends at the Gateway) or master (TLS ends in the master).",
    )
    resource_pools: list[ResourcePoolConfig] = Field(
        min_length=1,
        description="At least one Determined resource pool, each on a node pool and in a namespace of its "
        "own by default; names unique.",
    )
    default_compute_pool: NonEmpty | None = Field(
        None,
        description="The resource pool name compute tasks go to by default; default: the first pool on GPU "
        "nodes.",
    )
    default_aux_pool: NonEmpty | None = Field(
        None,
        description="The resource pool name auxiliary tasks go to by default; default: the first pool on CPU "
        "nodes.",
    )
    scheduler: Annotated[Literal["default", "kueue"], BeforeValidator(_refuse_coscheduler)] = Field(
        "default",
        description="default (the Kubernetes scheduler) or kueue (gang admission); coscheduler and "
        "preemption are refused. Default default.",
    )
    kueue: KueueConfig = Field(
        default_factory=KueueConfig,
        description="Kueue settings, with scheduler kueue: {podsReadyTimeoutSeconds, cohort}.",
    )
    task_container_defaults: TaskContainerDefaultsConfig = Field(
        default_factory=TaskContainerDefaultsConfig,
        description="Defaults of every task (images, env, shm size, network mode, pod specs...), written "
        "into master.yaml and every pool's task_container_defaults.",
    )
    slots: SlotsConfig = Field(
        default_factory=SlotsConfig,
        description="What a Determined slot is: {type, cpuPerSlot, maxSlotsPerPod}; default: GPU slots if a "
        "pool has GPUs.",
    )
    # Secrets (dockerconfigjson) every pod the project runs pulls images with; each must
    # exist in the master's namespace and every pool namespace.
    image_pull_secrets: list[DnsSubdomain] = Field(
        default_factory=list,
        description="Names of kubernetes.io/dockerconfigjson Secrets every pod the project runs pulls with; "
        "each must exist in the master's and every pool's namespace, and be named once. Default [].",
    )
    # Registry credentials the project turns into such a Secret in each of those namespaces.
    registry_credentials: RegistryCredentials | None = Field(
        None,
        description="{server, username, password (secret)}: the project creates the pull Secret "
        "determined-registry from them in the master's and every pool's namespace; default: none.",
    )
    # Use Determined's two PriorityClasses as another install in the cluster created them
    # (they are cluster-wide), instead of creating them.
    adopt_priority_classes: Flag = Field(
        False,
        description="true: use Determined's two (cluster-wide) PriorityClasses as another install in the "
        "cluster created them, instead of creating them. Default false.",
    )
    # NetworkPolicies fencing the Determined namespace and the task namespaces (in effect where
    # the network plugin enforces them: GKE Dataplane V2, the EKS VPC CNI; inert elsewhere).
    network_policies: Flag = Field(
        True,
        description="false removes the NetworkPolicies fencing the Determined and pool namespaces (in effect "
        "where the network plugin enforces them). Default true.",
    )

    # --- derived views used by the app -----------------------------------------------

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

    # --- rules across sections ------------------------------------------------------

    def problems(self, *, partial: bool = False) -> list[Problem]:
        """Problems across sections, every rule's. `partial`: the config holds values that
        failed validation (components.config.partial); a rule that reads one is left out, so
        that no rule judges the other keys against a value the user did not write."""
        found: list[Problem] = []
        for rule in _RULES:
            mine: list[Problem] = []
            try:
                with warnings.catch_warnings():
                    # Serializing a partial config warns of its BROKEN values.
                    warnings.simplefilter("ignore" if partial else "default")
                    rule(self, lambda path, message, mine=mine: mine.append(Problem(path, message)))
            except Unreliable:
                continue
            except Exception:
                if partial:  # a rule tripping over what is missing: its inputs failed validation
                    continue
                raise
            found += mine
        return found


class ExistingStack(StackConfig):
    cloud: Literal["existing"] = Field(description="existing: deploy onto a cluster you already run.")
    cluster: ExistingCluster = Field(
        description="Required: the existing cluster: its name, and the kubeconfig and context to reach it."
    )
    node_pools: list[ExistingNodePool] = Field(
        min_length=1,
        description="At least one set of the cluster's nodes, found by nodeSelector; one must be untainted.",
    )


class GkeStack(StackConfig):
    cloud: Literal["gke"] = Field(description="gke: create a GKE cluster on Google Cloud.")
    cluster: GkeCluster = Field(
        description="Required: the GKE cluster to create: name, region, project, release channel, network..."
    )
    node_pools: list[GkeNodePool] = Field(
        min_length=1, description="At least one GKE node pool to create; one must be untainted."
    )


class EksStack(StackConfig):
    cloud: Literal["eks"] = Field(description="eks: create an EKS cluster on AWS.")
    cluster: EksCluster = Field(
        description="Required: the EKS cluster to create: name, region, version, VPC, endpoint access..."
    )
    node_pools: list[EksNodePool] = Field(
        min_length=1, description="At least one EKS managed node group to create; one must be untainted."
    )

    @field_validator("node_pools")
    @classmethod
    def _system_pool_starts(cls, pools: list[EksNodePool], info: ValidationInfo) -> list[EksNodePool]:
        # The default depends on `environment` (validated before nodePools), so it is filled in
        # here; a minNodes the user wrote, 0 included, stays (eks_problems judges it).
        environment = info.data.get("environment", "dev")
        # Not a string where environment failed validation (components.config.partial).
        wanted = SYSTEM_MIN_NODES.get(environment, 1) if isinstance(environment, str) else 1
        first = next((i for i, pool in enumerate(pools) if _system_capable(pool)), None)
        if first is None or "min_nodes" in pools[first].model_fields_set:
            return pools
        pool = pools[first]
        started = pool.model_copy(update={"min_nodes": min(wanted, pool.max_nodes)})
        return [*pools[:first], started, *pools[first + 1 :]]


AnyStack = Annotated[ExistingStack | GkeStack | EksStack, Field(discriminator="cloud")]

Add = Callable[[str, str], None]


def _system_capable(pool: NodePool) -> bool:
    """A node pool fit for the master and the database: no taints, no GPUs, not spot."""
    return not pool.all_taints and not pool.gpu and not getattr(pool, "spot", False)


def _node_pool_problems(cfg: StackConfig, add: Add) -> None:
    names = [p.name for p in cfg.node_pools]
    for i, pool in enumerate(cfg.node_pools):
        if pool.name in names[:i]:
            add(f"nodePools[{i}].name", f"duplicate node pool name {pool.name!r}")
        if isinstance(pool, CloudNodePool) and pool.min_nodes > pool.max_nodes:
            add(f"nodePools[{i}].minNodes", f"{pool.min_nodes} is greater than maxNodes ({pool.max_nodes})")
    if not any(not p.all_taints for p in cfg.node_pools):
        add(
            "nodePools",
            "at least one untainted CPU pool is needed for system pods (CoreDNS, the master, the database)"
            + _arm_note(cfg.node_pools),
        )


def _arm_note(pools: Iterable[NodePool]) -> str:
    """Why pools without taints of their own count as tainted: GKE taints Arm nodes."""
    arm = [f"{p.name} ({p.machine_type})" for p in pools if getattr(p, "arm", False) and not p.taints]
    return f"; GKE taints Arm nodes kubernetes.io/arch=arm64:NoSchedule: {', '.join(arm)}" if arm else ""


def _reserved(namespace: str) -> bool:
    return namespace == "default" or namespace.startswith("kube-")


def _namespace_problems(cfg: StackConfig, add: Add) -> None:
    """Namespaces the stack owns: valid, not the cluster's own, one owner per derived name."""
    if _reserved(cfg.namespace):
        add(
            "namespace",
            f"{cfg.namespace!r} belongs to the cluster itself; choose a namespace of Determined's own",
        )
    derived_from: dict[str, int] = {}
    for i, rp in enumerate(cfg.resource_pools):
        path = f"resourcePools[{i}].namespace"
        name = rp.namespace_name
        if rp.namespace is None:
            message = dns_label_problem(name)
            if message or not name:
                add(
                    f"resourcePools[{i}].name",
                    f"derives the namespace {name!r}, which is not a valid DNS label; set {path}",
                )
                continue
        if _reserved(name):
            add(path, f"{name!r} belongs to the cluster itself; give the pool's tasks their own namespace")
        elif name == cfg.namespace:
            add(path, f"{name!r} is the master's namespace; give task pods their own")
        # Two pools may share a namespace they name; a derived name must not collide.
        if name in derived_from and rp.namespace is None:
            j = derived_from[name]
            add(
                f"resourcePools[{i}].name",
                f"derives the namespace {name!r}, as resourcePools[{j}] does; set {path}",
            )
        derived_from.setdefault(name, i)


# Every ResourceQuota of a namespace applies to every pod created in it, and a pod is refused
# when it would exceed any of them (https://kubernetes.io/docs/concepts/policy/resource-quotas/,
# read 2026-11; the master relies on it too: "we want to patch the smallest quota",
# master/internal/rm/kubernetesrm/jobs.go:2431 at v0.38.1). Pools sharing a namespace (one
# workspace's compute and aux pool; workspaces bound to one namespace, which the master allows:
# the primary key of workspace_namespace_bindings is (workspace_id, cluster_name, namespace),
# master/static/migrations/20240724134232_add-workspace-namespace-bindings-table.tx.up.sql at
# v0.38.1) would each get a quota that in truth caps them all together, at the smallest: so a
# quota is the namespace's, given on one of its pools.
def _addon_namespaces(cfg: StackConfig) -> dict[str, str]:
    """Namespaces the project's add-ons run in, with what installs there. Each is refused as a
    namespace of the stack's own whether or not this config turns its add-on on: the stack
    would create a second Namespace of that name (AlreadyExists on `up`: gpu-operator, which the
    project registers itself) or fence the add-on in with the Determined namespaces'
    NetworkPolicies, Pod Security level and quotas (the Helm releases, whose createNamespace
    leaves an existing namespace as it is: cert-manager's webhook, Kueue's admission webhook,
    Envoy Gateway's controller); and turning the add-on on later would have to move every task
    namespace. A cluster's own install of those add-ons lives there too."""
    # The add-ons import the config: imported here.
    from components.addons import cert_manager, envoy_gateway, gpu_operator, kueue, reloader

    return {
        cert_manager.NAMESPACE: "cert-manager (with tls certificate source certManager)",
        envoy_gateway.NAMESPACE: "Envoy Gateway (with tls mode ingress, or master without gatewayClassName)",
        gpu_operator.NAMESPACE: "the NVIDIA GPU operator (with gpuOperator.enabled)",
        kueue.NAMESPACE: "Kueue (with scheduler kueue)",
        reloader.namespace(cfg.namespace): "Reloader (with tls mode master)",
    }


def _addon_namespace_problems(cfg: StackConfig, add: Add) -> None:
    taken = _addon_namespaces(cfg)

    def check(path: str, name: str, what: str) -> None:
        if name in taken:
            add(
                path,
                f"{what}{name!r} is where the project installs {taken[name]}, kept for it whether or "
                "not this stack turns it on: the stack creates and fences its own namespaces, which would "
                "collide with that namespace or cut the add-on off; choose another",
            )

    check("namespace", cfg.namespace, "")
    if cfg.task_namespace is not None:
        check("taskNamespace", cfg.task_namespace, "")
    for i, rp in enumerate(cfg.resource_pools):
        if rp.namespace is not None:
            check(f"resourcePools[{i}].namespace", rp.namespace, "")
        else:
            check(f"resourcePools[{i}].name", rp.namespace_name, "the derived namespace ")


def _shared_quota_problems(cfg: StackConfig, add: Add) -> None:
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


def _chart_namespace_problems(cfg: StackConfig, add: Add) -> None:
    """database.fromHelmChart: the migration Job and its Secret go in the chart's namespace,
    which exists already (the chart's): the stack may not create it nor use the cluster's own."""
    chart = cfg.database.from_helm_chart
    if chart is None:
        return
    if chart.namespace.startswith("kube-"):
        add(
            "database.fromHelmChart.namespace",
            f"{chart.namespace!r} belongs to the cluster itself: the migration Job and a Secret holding the "
            "database password would be created there; give the namespace the chart was installed in",
        )
        return
    # Namespaces the stack creates (the master's is database.py's rule): creating one that
    # exists fails on `up` (AlreadyExists).
    separate = cfg.master.version_tuple >= versions.RELEASE_NAMESPACE_SINCE  # else the master's
    if separate and cfg.default_task_namespace == chart.namespace:
        add(
            "taskNamespace" if cfg.task_namespace else "namespace",
            f"the task namespace {chart.namespace!r} is the Helm chart's (database.fromHelmChart.namespace), "
            "which exists already: the stack creates its task namespace; choose another",
        )
    for i, rp in enumerate(cfg.resource_pools):
        if rp.namespace_name == chart.namespace:
            add(
                f"resourcePools[{i}].namespace" if rp.namespace else f"resourcePools[{i}].name",
                f"{'the derived namespace ' if rp.namespace is None else ''}{chart.namespace!r} is the Helm "
                "chart's (database.fromHelmChart.namespace), which exists already: the stack creates each "
                "pool's namespace; give the pool another",
            )


def _pull_secret_problems(cfg: StackConfig, add: Add) -> None:
    # The API server warns of a pod naming a pull Secret twice, and a merge (apply) may drop
    # one (kubernetes pkg/api/pod/warnings.go, "duplicate imagePullSecrets (#91629, #58477)",
    # v1.34.0, read 2026-11): every pod of the stack would carry the repeat.
    first: dict[str, int] = {}
    for i, name in enumerate(cfg.image_pull_secrets):
        j = first.setdefault(name, i)
        if j != i:
            add(f"imagePullSecrets[{i}]", f"{name!r} is already imagePullSecrets[{j}]; name each Secret once")


def _task_namespace_problems(cfg: StackConfig, add: Add) -> None:
    """taskNamespace: 0.35+ only, a namespace of the tasks' own (a pool's may be shared)."""
    if cfg.master.version_tuple < versions.RELEASE_NAMESPACE_SINCE:
        if cfg.task_namespace is not None:
            add(
                "taskNamespace",
                "needs master.version 0.35.0 or newer (older masters look for their own Service in "
                "their default namespace, so it stays the master's)",
            )
        return
    name = cfg.default_task_namespace
    if cfg.task_namespace is None:
        if dns_label_problem(name):
            add(
                "namespace",
                f"derives the task namespace {name!r}, which is not a valid DNS label (at most 63 "
                "characters); set taskNamespace",
            )
    elif _reserved(name):
        add("taskNamespace", f"{name!r} belongs to the cluster itself; give tasks a namespace of their own")
    elif name == cfg.namespace:
        add(
            "taskNamespace",
            f"{name!r} is the master's namespace; tasks get their own (the master's namespace enforces "
            "Pod Security restricted, which Determined's task pods do not meet)",
        )


def _resource_pool_problems(cfg: StackConfig, add: Add) -> None:
    node_pool_names = [p.name for p in cfg.node_pools]
    pool_names = [p.name for p in cfg.resource_pools]
    for i, rp in enumerate(cfg.resource_pools):
        if rp.name in pool_names[:i]:
            add(f"resourcePools[{i}].name", f"duplicate resource pool name {rp.name!r}")
        if rp.node_pool not in node_pool_names:
            add(
                f"resourcePools[{i}].nodePool",
                f"no node pool named {rp.node_pool!r} (node pools: {', '.join(node_pool_names)})",
            )
            continue
        node_pool = cfg.node_pool(rp.node_pool)
        if not node_pool.selector:
            j = node_pool_names.index(rp.node_pool)
            add(
                f"nodePools[{j}].nodeSelector",
                f"required on an existing cluster: resource pool {rp.name!r} is pinned to "
                "these nodes by their labels (e.g. {node.kubernetes.io/instance-type: ...})",
            )
        if rp.quota and rp.quota.gpu and not node_pool.gpu:
            add(f"resourcePools[{i}].quota.gpu", f"node pool {rp.node_pool!r} has no GPUs")
    for key, value in (
        ("defaultComputePool", cfg.default_compute_pool),
        ("defaultAuxPool", cfg.default_aux_pool),
    ):
        if value is not None and value not in pool_names:
            add(
                key,
                f"no resource pool named {value!r} (resource pools: {', '.join(dict.fromkeys(pool_names))})",
            )


def _data_problems(cfg: StackConfig, add: Add) -> None:
    if cfg.allow_data_deletion and cfg.environment == "prod":
        add("allowDataDeletion", "refused in prod: the database and checkpoint bucket are always kept")
    db = cfg.database
    if (
        isinstance(db, ExternalDatabase)
        and db.ssl_mode in ("verify-ca", "verify-full")
        and not db.ssl_root_cert
    ):
        add("database.sslRootCert", f"required for sslMode {db.ssl_mode} (the CA certificate in PEM form)")
    cs = cfg.checkpoint_storage
    creates = (GcsStorage, GkeStack), (S3Storage, EksStack)
    if (
        isinstance(cs, (S3Storage, GcsStorage))
        and not cs.bucket
        and not any(isinstance(cs, storage) and isinstance(cfg, stack) for storage, stack in creates)
    ):
        add(
            "checkpointStorage.bucket",
            f"required for {cs.type} storage on cloud {cfg.cloud} (the stack creates gcs buckets on gke "
            "and s3 buckets on eks)",
        )
    elif isinstance(cs, S3Storage) and not cs.bucket and (cs.endpoint_url or cs.access_key):
        add(
            "checkpointStorage.bucket",
            "required with endpointUrl or static keys (a bucket is created only on AWS S3, reached through "
            "Pod Identity)",
        )
    if isinstance(cs, S3Storage) and (cs.access_key is None) != (cs.secret_key is None):
        add(
            "checkpointStorage.secretKey" if cs.secret_key is None else "checkpointStorage.accessKey",
            "accessKey and secretKey go together",
        )


def _pod_specs(cfg: StackConfig) -> Iterable[tuple[str, dict[str, Any]]]:
    tcd = cfg.task_container_defaults
    for key, spec in (
        ("cpuPodSpec", tcd.cpu_pod_spec),
        ("gpuPodSpec", tcd.gpu_pod_spec),
        ("checkpointGcPodSpec", tcd.checkpoint_gc_pod_spec),
    ):
        yield f"taskContainerDefaults.{key}", spec
    for i, rp in enumerate(cfg.resource_pools):
        yield f"resourcePools[{i}].podSpec", rp.pod_spec


def _without_directives(value: Any) -> Any:
    """A pod spec without strategic-merge directives (`$patch`, `$retainKeys`, ...), which
    the merge understands and the Kubernetes schema does not."""
    if isinstance(value, dict):
        return {k: _without_directives(v) for k, v in value.items() if not str(k).startswith("$")}
    if isinstance(value, list):
        return [_without_directives(v) for v in value if not (isinstance(v, dict) and "$patch" in v)]
    return value


def _quantity_problems(pod: dict[str, Any]) -> Iterable[tuple[tuple[str | int, ...], str]]:
    """Resource amounts the Kubernetes JSON schema lets through but the API server (and the
    master, which decodes them as quantities) refuses."""
    spec = pod.get("spec") or {}
    for kind in ("containers", "initContainers"):
        # Not a list: the schema check reports it.
        listed = spec.get(kind)
        for i, container in enumerate(listed if isinstance(listed, list) else []):
            resources = container.get("resources") if isinstance(container, dict) else None
            for section in ("limits", "requests"):
                amounts = (resources or {}).get(section) if isinstance(resources, dict) else None
                for name, amount in (amounts or {}).items() if isinstance(amounts, dict) else ():
                    if isinstance(amount, str):
                        try:
                            quantity_value(amount)
                        except ValueError:
                            where = ("spec", kind, i, "resources", section, name)
                            yield where, "is not a Kubernetes quantity (examples: '2', '500m', '8Gi')"


# Priority classes task pods may not take: the cluster's own (tasks would preempt its system
# pods) and the one the project gives the master and the database.
RESERVED_PRIORITY_CLASSES = (
    "system-node-critical",
    "system-cluster-critical",
    constants.SYSTEM_PRIORITY_CLASS,
)


def _reserved_priority(pod: dict[str, Any]) -> Iterable[tuple[tuple[str, ...], str]]:
    spec = pod.get("spec")
    name = spec.get("priorityClassName") if isinstance(spec, dict) else None
    if name in RESERVED_PRIORITY_CLASSES:
        yield (
            ("spec", "priorityClassName"),
            f"{name!r} is kept for the cluster's and Determined's own pods, which tasks would preempt; "
            "use a priority class of your own",
        )


def pod_spec_problems(
    path: str, spec: dict[str, Any], provided_volumes: Iterable[str] | None = None
) -> list[tuple[str, str]]:
    """(key path, message) for a pod spec as written: the Kubernetes Pod schema, the fields
    Determined sets itself, resource quantities, and whether it merges over the defaults.
    `provided_volumes`: every volume the pod gets besides its own and the master's, when
    known; then a mount of any other volume is refused."""
    if not spec or pod_form_problem(spec):
        return []
    is_pod = bool(POD_KEYS & spec.keys())
    if is_pod and not isinstance(spec.get("spec", {}), dict):
        return [(format_path([path, "spec"]), "must be a mapping (a Kubernetes PodSpec)")]
    pod = spec if is_pod else {"spec": spec}
    if (pod.get("spec") or {}).get("$patch") == "delete" or pod.get("$patch") == "delete":
        return [
            (
                path,
                "'$patch: delete' would remove the whole pod spec Determined builds on; "
                "remove the key instead",
            )
        ]

    def at(where: tuple[str | int, ...]) -> str:
        # Paths as the user wrote them: a bare PodSpec has no leading "spec".
        if not is_pod and where[:1] == ("spec",):
            where = where[1:]
        return format_path([path, *where])

    found = [(at(where), f"not allowed: {reason}") for where, reason in determined_owned(pod)]
    found += [(at(where), f"not allowed: {reason}") for where, reason in _reserved_priority(pod)]
    found += [(at(where), message) for where, message in _quantity_problems(pod)]
    # The schema requires what a partial spec leaves to the defaults (the task container):
    # fill it in, check, and report paths as the user wrote them.
    plain = _without_directives(pod)
    body = {"containers": [{"name": constants.TASK_CONTAINER}], **(plain.get("spec") or {})}
    full = {"apiVersion": "v1", "kind": "Pod", **plain, "spec": body}
    found += [
        (at(where) if where else path, message) for where, message in validation.template_problems(full)
    ]
    # What the API server refuses beyond the schema, where the schema found nothing, on the
    # Pod the master makes: its task container always among the containers (an init
    # container of that name clashes), the pod spec's own paths kept.
    reported = {where for where, _ in found}
    pod_spec = plain.get("spec") or {}
    given = pod_spec.get("containers") if isinstance(pod_spec.get("containers"), list) else []
    if not any(isinstance(c, dict) and c.get("name") == constants.TASK_CONTAINER for c in given):
        given = [*given, {"name": constants.TASK_CONTAINER}]
    task_pod = {**plain, "spec": {**pod_spec, "containers": given}}
    for w, m in api_rules.pod_problems(task_pod, is_pod=True):
        if w[-1:] == ("name",) and repr(constants.TASK_CONTAINER) in m:
            m += " (the master runs the task in a container of that name)"
        if at(w) not in reported:
            found.append((at(w), m))
    metadata = plain.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    found += [(at(("metadata", "annotations")), m) for m in annotation_value_problems(annotations)]
    if provided_volumes is not None:
        mounts = api_rules.task_mount_problems(plain.get("spec"), provided_volumes)
        found += [(at(("spec", *w)), m) for w, m in mounts]
    if not found:
        try:
            strategic_merge.merge_pods({"spec": body}, pod)
        except ValueError as exc:
            found.append((path, f"cannot be merged over the defaults: {exc}"))
    return found


def _workspace_problems(cfg: StackConfig, add: Add) -> None:
    """0.35+: one namespace per workspace, and one default compute and aux pool each."""
    if cfg.master.version_tuple < versions.WORKSPACE_NAMESPACES_SINCE:
        for i, rp in enumerate(cfg.resource_pools):
            if rp.workspace is not None:
                add(
                    f"resourcePools[{i}].workspace",
                    "needs master.version 0.35.0 or newer (older masters run a pool's tasks in its "
                    "namespace without workspaces)",
                )
        return
    namespace_of: dict[str, int] = {}
    role_of: dict[tuple[str, str], int] = {}
    for i, rp in enumerate(cfg.resource_pools):
        workspace = rp.workspace_name
        j = namespace_of.setdefault(workspace, i)
        other = cfg.resource_pools[j]
        if other.namespace_name != rp.namespace_name:
            add(
                f"resourcePools[{i}].workspace",
                f"workspace {workspace!r} is bound to namespace {other.namespace_name!r} by "
                f"resourcePools[{j}]; a workspace runs its tasks in one namespace",
            )
            continue
        role = cfg.pool_role(rp)
        j = role_of.setdefault((workspace, role), i)
        if j != i:
            add(
                f"resourcePools[{i}].workspace",
                f"workspace {workspace!r} already takes its default {role} pool from resourcePools[{j}]; "
                "give this pool a workspace of its own",
            )


def _version_problems(cfg: StackConfig, add: Add) -> None:
    """A release the project knows, and settings the configured master version does not have."""
    version = cfg.master.version_tuple
    # The data the master.yaml check reads (components/determined/master_yaml_schema.py); the app imports
    # this module.
    from components.determined import master_yaml_schema

    newest = master_yaml_schema.known_range()[1]
    if version > newest and version[:2] != newest[:2]:
        # A newer minor is refused rather than planned with a warning: the master refuses to
        # start on a key it does not know and its Deployment is Recreate, so an unchecked
        # master.yaml could leave the cluster without a master; and no release beyond the key
        # data's is known to exist (https://hub.docker.com/r/determinedai/determined-master/tags,
        # read 2026-11). A newer patch of the newest minor is planned with the plan's warning:
        # patch releases keep their minor's configuration keys.
        known = master_yaml_schema.format_version(newest)
        add(
            "master.version",
            f"Determined {cfg.master.version} is newer than the newest release the project knows "
            f"({known}): its master.yaml keys cannot be checked (the master refuses to start on one it does "
            f"not know); pin a known release (the newest is {known})",
        )
    for key, is_set, since, why in (
        (
            "master.initialUserPassword",
            cfg.master.initial_user_password is not None,
            versions.INITIAL_PASSWORD_SINCE,
            "older masters cannot set it; set the admin password after the first login",
        ),
        (
            "taskContainerDefaults.checkpointGcPodSpec",
            bool(cfg.task_container_defaults.checkpoint_gc_pod_spec),
            versions.CHECKPOINT_GC_POD_SPEC_SINCE,
            "older masters ignore it",
        ),
        (
            "master.retention",
            cfg.master.retention is not None,
            versions.LOG_RETENTION_SINCE,
            "older masters have no log retention",
        ),
        (
            "taskContainerDefaults.startupHook",
            cfg.task_container_defaults.startup_hook is not None,
            versions.STARTUP_HOOK_SINCE,
            "older masters have no startup hook",
        ),
        (
            "taskContainerDefaults.logPolicies",
            cfg.task_container_defaults.log_policies is not None,
            versions.LOG_POLICIES_SINCE,
            "older masters have no log policies",
        ),
        *(
            (
                f"taskContainerDefaults.logPolicies[{i}].name",
                policy.name is not None,
                versions.LOG_POLICY_NAME_SINCE,
                "older masters have unnamed log policies",
            )
            for i, policy in enumerate(cfg.task_container_defaults.log_policies or [])
        ),
    ):
        if is_set and version < since:
            add(key, f"needs master.version {'.'.join(map(str, since))} or newer ({why})")


def _master_problems(cfg: StackConfig, add: Add) -> None:
    """Where the master runs, how it is reached, what it pulls with, what overrides may set."""
    if cfg.master.node_pool:
        pool = cfg.master_node_pool
        if pool is None:
            add("master.nodePool", f"no node pool named {cfg.master.node_pool!r}")
        elif not _system_capable(pool):
            add(
                "master.nodePool",
                f"node pool {pool.name!r} is tainted, has GPUs or is spot: the master and database "
                "need an untainted on-demand CPU pool" + _arm_note([pool]),
            )
    elif cfg.master_node_pool is None and any(not p.all_taints for p in cfg.node_pools):
        add(
            "master.nodePool",
            "no untainted on-demand CPU node pool for the master and database: add one "
            "(spot: false) or name one here",
        )
    if cfg.master.service.type != "ClusterIP" and not isinstance(cfg.tls, MasterTls):
        add(
            "master.service.type",
            f"{cfg.master.service.type} would expose the master without TLS: allowed only with "
            "tls.mode master (with tls.mode ingress the Gateway is the way in)",
        )
    if cfg.master.service.type == "NodePort" and isinstance(cfg.tls, ExposedTls) and cfg.tls.source_ranges:
        add(
            "master.service.type",
            "NodePort cannot restrict clients to tls.sourceRanges (any address reaching a node "
            "reaches the master): use LoadBalancer",
        )
    if cfg.master.proxy and not (cfg.master.proxy.http_proxy or cfg.master.proxy.https_proxy):
        add("master.proxy", "set httpProxy, httpsProxy or both")
    _secret_name_problems(cfg, add)
    if cfg.registry_credentials and constants.REGISTRY_SECRET in cfg.image_pull_secrets:
        add(
            "imagePullSecrets",
            f"{constants.REGISTRY_SECRET!r} is the Secret made from registryCredentials: "
            "name another Secret, or leave it out",
        )
    _override_problems(cfg, add)


def _project_secrets() -> dict[str, str]:
    """Secrets the project creates in the master's namespace, with what they hold."""
    from components.determined import workspaces  # the app imports this module

    return {
        constants.DB_SECRET_NAME: "the in-cluster database's password",
        constants.MASTER_CONFIG_SECRET: "the master's configuration",
        workspaces.PASSWORD_SECRET: "the admin password of the workspace Job",
    }


def _secret_name_problems(cfg: StackConfig, add: Add) -> None:
    """Secrets the user names must not be ones the project creates (and so replaces)."""
    named = [(f"imagePullSecrets[{i}]", name) for i, name in enumerate(cfg.image_pull_secrets)]
    if cfg.master.ca_bundle_secret:
        named.append(("master.caBundleSecret", cfg.master.ca_bundle_secret))
    if isinstance(cfg.tls, ExposedTls) and not cfg.tls.issued:
        named.append(("tls.certificate.secretName", cfg.tls.secret_name))
    owned = _project_secrets()
    for path, name in named:
        if name in owned:
            add(path, f"{name!r} is a Secret the project creates ({owned[name]}); name a Secret of your own")


def _override_problems(cfg: StackConfig, add: Add) -> None:
    # Imported here: the check lives with master.yaml, whose builders import this module.
    from components.determined import config_overrides

    overrides, version = cfg.master.config_overrides, cfg.master.version
    open_source = cfg.master.image is None
    for path, message in config_overrides.problems(overrides, version, open_source_image=open_source):
        add(f"master.configOverrides.{path}" if path else "master.configOverrides", message)


def _pod_spec_problems(cfg: StackConfig, add: Add) -> None:
    gc = "taskContainerDefaults.checkpointGcPodSpec"
    for path, spec in _pod_specs(cfg):
        provided = _gc_provided_volumes(cfg) if path == gc else None
        for where, message in pod_spec_problems(path, spec, provided):
            add(where, message)


def _merged_pod_spec_problems(cfg: StackConfig, add: Add) -> None:
    """Two layers that pass alone can fail merged (an env var given a value by the task
    container defaults and a valueFrom by a pool): every pool's podSpec merged over the
    constants, as the master gets them (components.determined.resource_pools.pool_pod_specs), checked
    again when neither layer has a problem of its own."""
    tcd = cfg.task_container_defaults
    for i, rp in enumerate(cfg.resource_pools):
        path = f"resourcePools[{i}].podSpec"
        if not rp.pod_spec or pod_spec_problems(path, rp.pod_spec):
            continue
        for key, base in (("cpuPodSpec", tcd.cpu_pod_spec), ("gpuPodSpec", tcd.gpu_pod_spec)):
            if not base or pod_spec_problems(f"taskContainerDefaults.{key}", base):
                continue
            try:
                merged = strategic_merge.merge_pods(base, rp.pod_spec)
            except ValueError:
                continue  # reported by pod_spec_problems of the layer that cannot merge
            for where, message in pod_spec_problems(path, merged):
                inner = where.removeprefix(path).lstrip(".")
                add(path, f"merged over taskContainerDefaults.{key}, {inner or 'the pod'}: {message}")
                break  # one line per pool and layer: the first problem of the merge


def _gc_provided_volumes(cfg: StackConfig) -> set[str] | None:
    """Volumes a checkpoint GC pod gets besides its spec's own and the master's: the
    project's task layer, and the default pod spec the master merges the GC spec over (the
    default aux pool's: master/pkg/tasks/task_gc.go:41-55 and internal/checkpoint_gc.go:101-114
    at v0.38.1, read 2026-11-25; every pool's and default's counted, to refuse only what none
    gives). The experiment's own pod spec is not used once checkpointGcPodSpec is set."""
    if cfg.master.version_tuple < versions.CHECKPOINT_GC_POD_SPEC_SINCE:
        return None  # not used: _version_problems reports it
    from components.determined import resource_pools  # builds the project's layer; imports this module

    tcd = cfg.task_container_defaults
    layers = [resource_pools.project_layer(cfg), tcd.cpu_pod_spec, tcd.gpu_pod_spec]
    layers += [rp.pod_spec for rp in cfg.resource_pools]
    names: set[str] = set()
    for layer in layers:
        body = layer.get("spec") if isinstance(layer, dict) and POD_KEYS & layer.keys() else layer
        volumes = body.get("volumes") if isinstance(body, dict) else None
        for volume in volumes if isinstance(volumes, list) else ():
            if isinstance(volume, dict) and isinstance(volume.get("name"), str):
                names.add(volume["name"])
    return names


def _slots_problems(cfg: StackConfig, add: Add) -> None:
    slots = cfg.slots
    gpu_counts = cfg.gpu_counts
    if cfg.slot_type == "gpu":
        if slots.cpu_per_slot is not None:
            add("slots.cpuPerSlot", "only for slots type cpu")
        if not gpu_counts:
            add("slots.type", "gpu slots need a resource pool on a node pool with GPUs")
        elif slots.max_slots_per_pod is not None:
            misfits = [c for c in gpu_counts if c % slots.max_slots_per_pod]
            if misfits:
                fits = [n for n in range(1, gpu_counts[0] + 1) if all(c % n == 0 for c in gpu_counts)]
                add(
                    "slots.maxSlotsPerPod",
                    f"{slots.max_slots_per_pod} does not divide the GPUs per node of every GPU pool "
                    f"({', '.join(map(str, gpu_counts))}); values that fit: {', '.join(map(str, fits))}",
                )
            else:
                _shared_gpu_slots(cfg, add)
    elif slots.max_slots_per_pod is None:
        add(
            "slots.maxSlotsPerPod",
            "required for cpu slots: the CPUs of the nodes are not known offline, so set how many "
            "slots (of cpuPerSlot CPUs each) one task pod may take",
        )
    else:
        _cpu_slots_fit(cfg, add)


def _shared_gpu_slots(cfg: StackConfig, add: Add) -> None:
    """On nodes whose GPUs are shared, GKE's device plugin gives a container one
    `nvidia.com/gpu` (time-sharing; MPS on nodes of several GPUs or partitions): a task pod
    asking for more fails admission (components/config/gke_gpu_sharing.py)."""
    wanted = cfg.slots.max_slots_per_pod
    for node_pool in cfg.gpu_pools_in_use:
        strategy = gke_gpu_sharing.sharing_strategy(node_pool) or (
            "MIG partitions: a CUDA process uses one" if gke_gpu_sharing.partitioned(node_pool) else None
        )
        most = gke_gpu_sharing.gpus_per_container(node_pool)
        if strategy and wanted > most:
            add(
                "slots.maxSlotsPerPod",
                f"{wanted} slots per pod cannot run on node pool {node_pool.name!r}: its GPUs are shared "
                f"({strategy}) and a container can use at most {most} of them; set {most}, or leave "
                "maxSlotsPerPod out (then derived from the pools)",
            )


def _cpu_slots_fit(cfg: StackConfig, add: Add) -> None:
    """A pod of maxSlotsPerPod CPU slots must fit the allocatable CPU of the nodes it runs on,
    where their machine type says how many CPUs they have."""
    per_slot = cfg.slots.cpu_per_slot or 1
    per_pod = per_slot * cfg.slots.max_slots_per_pod
    names = dict.fromkeys(rp.node_pool for rp in cfg.resource_pools)
    for node_pool in (cfg.node_pool(name) for name in names):
        cores = capacity.vcpus(node_pool.machine_type) if node_pool.machine_type else None
        if cores is None:
            continue
        allocatable = capacity.allocatable_cpu(cores)
        if per_pod > allocatable:
            fits = int(allocatable // per_slot)
            add(
                "slots.maxSlotsPerPod",
                f"{cfg.slots.max_slots_per_pod} slots of {per_slot:g} CPUs need {per_pod:g} CPUs per pod, "
                f"more than a {node_pool.machine_type} node of node pool {node_pool.name!r} gives pods "
                f"(about {allocatable:.2f} of its {cores} vCPUs); at most {fits} fit",
            )


def _not_supported_yet(cfg: StackConfig, add: Add) -> None:
    """Sections that are parsed and checked now but deployed by later work."""
    if isinstance(cfg.database, ManagedDatabase) and isinstance(cfg, ExistingStack):
        add(
            "database.mode",
            "managed databases are created only for cloud gke (Cloud SQL) or eks (RDS); "
            "use inCluster or external",
        )
    if cfg.gpu_operator.enabled and isinstance(cfg, ExistingStack):
        add(
            "gpuOperator.enabled",
            "the GPU operator is installed on clusters the stack creates (cloud gke or eks); set false",
        )


def _queue_problems(cfg: StackConfig, add: Add) -> None:
    """scheduler kueue: every queued pool's ClusterQueue needs a quota for what its tasks ask."""
    if cfg.scheduler != "kueue":
        if "kueue" in cfg.model_fields_set:
            add("kueue", "only with scheduler kueue (set scheduler: kueue, or remove this section)")
        return
    if cfg.master.version_tuple < versions.JOB_TASKS_SINCE:
        # master/internal/rm/kubernetesrm/pods.go (0.33.0 and older): one Pod per task
        # process, no Job; Kueue's batch/job integration would never see a task.
        add(
            "scheduler",
            f"kueue needs Determined {'.'.join(map(str, versions.JOB_TASKS_SINCE))} or newer: master "
            f"{cfg.master.version} runs tasks as bare pods, not Jobs, so Kueue would never queue them "
            "(set master.version to 0.34.0 or newer, or scheduler: default)",
        )
        return
    names = {p.name for p in cfg.node_pools}
    for i, rp in enumerate(cfg.resource_pools):
        if rp.node_pool not in names or not cfg.queued(rp):
            continue
        nominal = cfg.queue_quota(rp)
        # What tasks are admitted by: GPUs, or CPUs on a CPU-slot cluster.
        if cfg.node_pool_of(rp).gpu:
            wanted, key = "nvidia.com/gpu", "gpu"
        elif cfg.slot_type == "cpu":
            wanted, key = "cpu", "cpu"
        else:
            continue
        if nominal.get(wanted) in (None, UNLIMITED_CPU):
            add(
                f"resourcePools[{i}].quota.{key}",
                f"required with scheduler kueue: the {key.upper()}s of node pool {rp.node_pool!r} are not "
                "known offline (an existing cluster, or a machine type that does not say), and Kueue admits "
                "tasks against this quota",
            )


def _quota_limit_problems(cfg: StackConfig, add: Add) -> None:
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
    if not limited or any(rp.node_pool not in names for rp in cfg.resource_pools):
        return
    from components.determined import resource_pools  # the app imports this module

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
        (f"resourcePools[{j}].podSpec ({key})", pod, resource_pools.pool_namespaces(cfg, rp))
        for j, rp in enumerate(cfg.resource_pools)
        for key, pod in resource_pools.pool_pod_specs(cfg, rp).items()
    ]
    gc_spec = resource_pools.checkpoint_gc_pod_spec(cfg, None)
    if gc_spec:
        # Checkpoint GC runs on the default aux pool (see pool_namespaces).
        aux = next((rp for rp in cfg.resource_pools if rp.name == cfg.aux_pool), None)
        if aux is not None:
            sources.append(
                (
                    "taskContainerDefaults.checkpointGcPodSpec",
                    gc_spec,
                    resource_pools.pool_namespaces(cfg, aux),
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


def _gateway_problems(cfg: StackConfig, add: Add) -> None:
    """Source ranges and internal exposure shape the load balancer of the Envoy Gateway the
    stack installs; a cluster's own Gateway class keeps its own."""
    tls = cfg.tls
    if not isinstance(tls, ExposedTls):
        return
    certificate = tls.certificate
    if isinstance(certificate, CertManagerCertificate) and certificate.dns01 is None:
        # HTTP-01: Let's Encrypt fetches the challenge from the host over the internet.
        if tls.exposure == "internal":
            add(
                "tls.certificate.dns01",
                "required with exposure internal: Let's Encrypt cannot reach an internal load balancer "
                "for HTTP-01 (give cert-manager's DNS-01 settings, e.g. {route53: {hostedZoneID: Z...}})",
            )
        elif tls.source_ranges:
            add(
                "tls.certificate.dns01",
                "required with sourceRanges: Let's Encrypt checks HTTP-01 from addresses it does not "
                "publish, which the ranges would block (give cert-manager's DNS-01 settings)",
            )
    if tls.gateway_class_name is None:
        return
    if tls.source_ranges:
        add(
            "tls.sourceRanges",
            "applies to the Envoy Gateway this stack installs; with gatewayClassName, fence the load "
            "balancer of that class where it is configured",
        )
    if tls.exposure == "internal":
        add(
            "tls.exposure",
            "internal applies to the Envoy Gateway this stack installs, not to gatewayClassName",
        )


def _cloud_rules(cfg: StackConfig, add: Add) -> None:
    if isinstance(cfg, GkeStack):
        gke_problems(cfg, add)
    elif isinstance(cfg, EksStack):
        eks_problems(cfg, add)


def _slots_if_pools_resolve(cfg: StackConfig, add: Add) -> None:
    # Slots derive from the pools' node pools: a dangling reference is reported once.
    names = {p.name for p in cfg.node_pools}
    if all(rp.node_pool in names for rp in cfg.resource_pools):
        _slots_problems(cfg, add)


# Every cross-section rule, in the order its problems are reported. A rule that reads a value
# which failed validation is left out (StackConfig.problems).
_RULES: list[Callable[[StackConfig, Add], None]] = [
    _node_pool_problems,
    _namespace_problems,
    _addon_namespace_problems,
    _shared_quota_problems,
    _chart_namespace_problems,
    _task_namespace_problems,
    _resource_pool_problems,
    _data_problems,
    _pod_spec_problems,
    _merged_pod_spec_problems,
    _version_problems,
    _workspace_problems,
    _slots_if_pools_resolve,
    _not_supported_yet,
    _cloud_rules,
    name_problems,
    _queue_problems,
    _quota_limit_problems,
    _gateway_problems,
    dns01_problems,
    acme_problems,
    backup_problems,
    managed_tier_problems,
    _master_problems,
    _pull_secret_problems,
    directory_problems,
    master_config_size_problems,
]
