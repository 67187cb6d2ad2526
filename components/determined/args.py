"""What the Determined component needs: its Args.

The fields reuse the stack configuration's section models (components.config): a program
that builds `DeterminedArgs` itself writes the same values, camelCase keys and all, that a
stack file holds under those keys. The views the parts derive from them (default pools,
slot type, task namespaces, pull Secrets, Kueue quotas) come from
components.config.views.DeploymentViews, the one copy the stack configuration uses too.

Args are checked key by key as the stack's sections are, and the references the parts
follow (a resource pool's node pool, the default pools) must resolve; the other rules
across sections (slots fitting the GPUs, namespaces not colliding, ...) are the stack
configuration's (components.config.stack), which the composition root runs before it maps
a stack to these Args (stack_args.determined_args).
"""

from __future__ import annotations

import contextvars
from typing import Literal

from pydantic import Field, model_validator

from components.config import errors, rules
from components.config.addons import KueueConfig
from components.config.args import ArgsModel
from components.config.checkpoint_storage import CheckpointStorageConfig
from components.config.database import DatabaseConfig
from components.config.master import MasterConfig
from components.config.node_pools import EksNodePool, ExistingNodePool, GkeNodePool
from components.config.observability import ObservabilityConfig
from components.config.resource_pools import ResourcePoolConfig, SlotsConfig, TaskContainerDefaultsConfig
from components.config.shared_filesystems import SharedFilesystem
from components.config.stack import RegistryCredentials
from components.config.syntax import DnsLabel, DnsSubdomain, Flag, NonEmpty
from components.config.tls import TlsConfig
from components.config.views import DeploymentViews

# True while Args are mapped from a stack configuration its rules have checked (a context
# variable: pydantic hands a model with its own __init__ no validation context).
STACK_CHECKED: contextvars.ContextVar[bool] = contextvars.ContextVar("stack_checked", default=False)


class DeterminedArgs(DeploymentViews, ArgsModel):
    """Determined on a Kubernetes cluster: the master and its database, the resource pools'
    namespaces, how users reach the master, and the few facts of the cluster it reads."""

    # --- the cluster it runs on ----------------------------------------------------------
    cloud: Literal["existing", "gke", "eks"] = Field(
        description="Where the cluster runs: existing, gke or eks; shapes the load balancer annotations of "
        "an exposed master and the object-storage settings of database backups."
    )
    cluster_name: NonEmpty = Field(
        description="The cluster's name, written to master.yaml (cluster_name) and shown by the web UI."
    )
    region: NonEmpty | None = Field(
        None,
        description="The cloud region of the cluster (gke/eks); on eks the region database backups reach "
        "S3 in. Default: none.",
    )
    service_cidrs: list[NonEmpty] = Field(
        default_factory=list,
        description="The cluster's Service address ranges: with master.proxy they go to NO_PROXY, so that "
        "pods reach Services directly. Default: none.",
    )
    environment: Literal["dev", "prod"] = Field(
        "dev", description="dev or prod; prod protects the in-cluster database's volume. Default dev."
    )
    allow_data_deletion: Flag = Field(
        False,
        description="true lets a destroy delete the database volume and the namespaces holding data; dev "
        "only. Default false.",
    )
    node_pools: list[GkeNodePool | EksNodePool | ExistingNodePool] = Field(
        min_length=1,
        description="The cluster's node pools (as the stack's nodePools): resource pools are pinned to them "
        "and the master runs on the first untainted CPU pool, or master.nodePool.",
    )
    # --- Determined ----------------------------------------------------------------------
    namespace: DnsLabel = Field(
        "determined", description="The namespace of the master and the database. Default determined."
    )
    task_namespace: DnsLabel | None = Field(
        None,
        description="0.35+: the master's default namespace, where tasks of workspaces bound to none and "
        "checkpoint GC run. Default <namespace>-tasks.",
    )
    master: MasterConfig = Field(
        default_factory=MasterConfig,
        description="The Determined master: version, image, resources, service and master.yaml settings.",
    )
    database: DatabaseConfig = Field(
        default_factory=lambda: {"mode": "inCluster"},
        validate_default=True,
        description="The master's PostgreSQL database, by mode: inCluster (the default), external or managed "
        "(the server the cluster component created).",
    )
    checkpoint_storage: CheckpointStorageConfig = Field(
        default_factory=lambda: {"type": "sharedFs"},
        validate_default=True,
        description="Where trials write checkpoints, by type: sharedFs (the default), s3, gcs, azure or "
        "directory.",
    )
    tls: TlsConfig = Field(
        default_factory=lambda: {"mode": "none"},
        validate_default=True,
        description="How users reach the master, by mode: none (port-forward, the default), ingress or "
        "master.",
    )
    resource_pools: list[ResourcePoolConfig] = Field(
        min_length=1, description="The Determined resource pools, each on one of nodePools."
    )
    default_compute_pool: NonEmpty | None = Field(
        None, description="The default compute pool; default: the first pool on GPU nodes."
    )
    default_aux_pool: NonEmpty | None = Field(
        None, description="The default auxiliary pool; default: the first pool on CPU nodes."
    )
    scheduler: Literal["default", "kueue"] = Field(
        "default",
        description="default (the Kubernetes scheduler) or kueue (gang admission). Default default.",
    )
    kueue: KueueConfig = Field(
        default_factory=KueueConfig, description="Kueue settings, with scheduler kueue."
    )
    task_container_defaults: TaskContainerDefaultsConfig = Field(
        default_factory=TaskContainerDefaultsConfig,
        description="Defaults of every task (images, env, pod specs...).",
    )
    slots: SlotsConfig = Field(
        default_factory=SlotsConfig,
        description="What a Determined slot is: {type, cpuPerSlot, maxSlotsPerPod}.",
    )
    image_pull_secrets: list[DnsSubdomain] = Field(
        default_factory=list,
        description="Names of image pull Secrets every pod pulls with; each exists in every namespace of the "
        "deployment. Default [].",
    )
    registry_credentials: RegistryCredentials | None = Field(
        None,
        description="{server, username, password (secret)}: made into the pull Secret determined-registry in "
        "every namespace of the deployment. Default: none.",
    )
    adopt_priority_classes: Flag = Field(
        False,
        description="true: use Determined's two PriorityClasses another install created instead of creating "
        "them. Default false.",
    )
    network_policies: Flag = Field(
        True, description="false: no NetworkPolicies fencing the deployment's namespaces. Default true."
    )
    gpu_metrics: Literal["operator", "chart", "gke", "none"] = Field(
        "chart",
        description="With observability on, where GPU metrics come from: operator (the NVIDIA GPU operator's "
        "DCGM exporter, which the cluster runs), chart (NVIDIA's dcgm-exporter chart, installed here), gke "
        "(GKE's managed DCGM exporter) or none (no GPU nodes). Default chart.",
    )
    shared_filesystems: list[SharedFilesystem] = Field(
        default_factory=list,
        description="Shared filesystems (the stack's sharedFilesystems), mounted into the task pods of the "
        "resource pools that name them. Default [].",
    )
    filesystem_buckets: dict[NonEmpty, NonEmpty] = Field(
        default_factory=dict,
        description="The bucket each gcsFuse shared filesystem mounts, by filesystem name: the one the "
        "cluster component created (components.config.gcs_fuse.bucket_name) when the filesystem names "
        "none. Default: each filesystem's own bucket.",
    )
    observability: ObservabilityConfig = Field(
        default_factory=ObservabilityConfig,
        description="Metrics, dashboards and alerts: `{enabled, retention, storageSize, storageClass, "
        "alerts}`; on by default in prod.",
    )

    @model_validator(mode="after")
    def _references_resolve(self) -> DeterminedArgs:
        # The parts look these up (node_pool_of, compute_pool, aux_pool): a dangling name
        # is refused here, not met as a lookup failure while resources register.
        node_pools = [pool.name for pool in self.node_pools]
        problems: list[tuple[str | tuple[str | int, ...], str]] = [
            (
                ("resourcePools", i, "nodePool"),
                f"no node pool named {rp.node_pool!r} (nodePools: {', '.join(node_pools)})",
            )
            for i, rp in enumerate(self.resource_pools)
            if rp.node_pool not in node_pools
        ]
        pools = [rp.name for rp in self.resource_pools]
        problems += [
            (key, f"no resource pool named {value!r} (resourcePools: {', '.join(pools)})")
            for key, value in (
                ("defaultComputePool", self.default_compute_pool),
                ("defaultAuxPool", self.default_aux_pool),
            )
            if value is not None and value not in pools
        ]
        if problems:
            raise errors.refuse(problems)
        return self

    @model_validator(mode="after")
    def _section_rules(self) -> DeterminedArgs:
        # The rules a stack file's sections meet, over these sections (components.config.rules);
        # Args mapped from a stack configuration met them there (with every other problem).
        if STACK_CHECKED.get():
            return self
        found: list[errors.Problem] = []
        for rule in rules.DETERMINED_RULES:
            rule(self, lambda path, message: found.append(errors.Problem(path, message)))
        if found:
            raise errors.ConfigError(dict.fromkeys(found))
        return self
