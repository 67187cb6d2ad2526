"""The whole stack configuration: its sections and per-target variants.

`StackConfig` holds what every target shares and the views derived from it
(components.config.views); the variants (`ExistingStack`, `GkeStack`, `EksStack`) are chosen
by `cloud` and type the cluster and node pools of their target. Each section checks its own
values; the rules that relate sections are components.config.rules'.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, ValidationInfo, field_validator

from components.config.addons import GpuOperatorConfig, KueueConfig
from components.config.base import ConfigModel
from components.config.checkpoint_storage import CheckpointStorageConfig
from components.config.cluster import ClusterConfig, EksCluster, ExistingCluster, GkeCluster
from components.config.database import DatabaseConfig
from components.config.eks import SYSTEM_MIN_NODES
from components.config.master import MasterConfig
from components.config.node_pools import EksNodePool, ExistingNodePool, GkeNodePool, NodePool
from components.config.observability import ObservabilityConfig
from components.config.resource_pools import ResourcePoolConfig, SlotsConfig, TaskContainerDefaultsConfig
from components.config.secrets import Secret
from components.config.shared_filesystems import SharedFilesystem
from components.config.syntax import DnsLabel, DnsSubdomain, Flag, NonEmpty, RegistryServerPort, pattern_check
from components.config.tls import TlsConfig
from components.config.views import DeploymentViews, _system_capable


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


class StackConfig(DeploymentViews, ConfigModel):
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
    shared_filesystems: list[SharedFilesystem] = Field(
        default_factory=list,
        description="Shared filesystems for datasets and checkpoints, by kind: filestore, gcsFuse, "
        "managedLustre (gke), efs, fsxLustre (eks) or existing; each mounted into the task pods of the "
        "resource pools that name it. Default [].",
    )
    observability: ObservabilityConfig = Field(
        default_factory=ObservabilityConfig,
        description="Metrics, dashboards and alerts: `{enabled, retention, storageSize, storageClass, "
        "alerts}`; on by default in prod.",
    )


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
