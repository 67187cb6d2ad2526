"""The composition root's mapping: a validated stack configuration to each component's Args.

Nothing below the root sees the stack configuration; these functions are the only place
where its keys meet the components' Args.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pulumi

from components.config import (
    EksStack,
    ExistingStack,
    GkeStack,
    ResourcePoolConfig,
    StackConfig,
    gcs_fuse,
    load_config,
)
from components.config.checkpoint_storage import GcsStorage, S3Storage
from components.config.cluster import GkeCluster
from components.config.shared_filesystems import GcsFuseFs
from components.determined import proxy, resource_pools
from components.determined.args import STACK_CHECKED, DeterminedArgs
from components.observability import dcgm

if TYPE_CHECKING:  # imported where used: each cluster imports its own cloud's SDK
    from components.cluster import ClusterHandle
    from components.cluster.eks.args import EksClusterArgs
    from components.cluster.existing import ExistingClusterArgs
    from components.cluster.gke.args import GkeClusterArgs

# The keys the stack configuration and DeterminedArgs share: the same models, passed on.
_SHARED = [name for name in DeterminedArgs.model_fields if name in StackConfig.model_fields]


def gpu_metrics(cfg: StackConfig) -> str:
    """Where the GPU metrics come from (components.observability.dcgm.source)."""
    return dcgm.source(cfg.cloud, cfg.gpu_operator.enabled, cfg.node_pools)


def gke_managed_dcgm(cfg: GkeStack) -> bool | None:
    """Whether GKE runs its own DCGM exporter: not beside the project's (observability on,
    NVIDIA's chart on GKE-managed-driver nodes: two exporters on one GPU); on when the
    metrics come from it; else what GKE does by default (None)."""
    if not cfg.observed:
        return None
    return {"chart": False, "gke": True}.get(gpu_metrics(cfg))


def filesystem_buckets(cfg: StackConfig) -> dict[str, str]:
    """The bucket of each gcsFuse shared filesystem: its own, else the one the GKE cluster
    component creates for it (the same derivation: components.config.gcs_fuse.bucket_name)."""
    found = {}
    for fs in cfg.shared_filesystems:
        if isinstance(fs, GcsFuseFs):
            found[fs.name] = fs.bucket or gcs_fuse.bucket_name(
                pulumi.get_stack(), getattr(cfg.cluster, "region", ""), cfg.cluster.name, fs.name
            )
    return found


def determined_args(cfg: StackConfig) -> DeterminedArgs:
    """The Determined component's Args: the stack's app sections as they are, the node
    pools, and the facts of its cluster the component reads."""
    cluster = cfg.cluster
    service_cidrs: list[str] = []
    if isinstance(cluster, GkeCluster) and not cluster.network.existing:
        service_cidrs = [cluster.network.services_cidr]
    elif cfg.cloud == "eks":
        service_cidrs = list(proxy.EKS_SERVICE_CIDRS)
    values = {name: getattr(cfg, name) for name in _SHARED}
    values |= {
        "cluster_name": cluster.name,
        "region": getattr(cluster, "region", None),
        "service_cidrs": service_cidrs,
        "gpu_metrics": gpu_metrics(cfg),
        "filesystem_buckets": filesystem_buckets(cfg),
    }
    fields = DeterminedArgs.model_fields
    checked = STACK_CHECKED.set(True)  # the stack's rules ran over these sections
    try:
        return DeterminedArgs.model_validate({fields[name].alias: value for name, value in values.items()})
    finally:
        STACK_CHECKED.reset(checked)


# --- the stack configuration, checked with what Determined renders ------------------------


class DeterminedTaskPods:
    """The task pods the Determined component renders for a stack configuration, as the
    config's rules read them (components.config.task_pods.TaskPods): the config cannot
    import the component, which imports it. Each config is mapped to DeterminedArgs once."""

    def __init__(self) -> None:
        self._args: dict[int, tuple[StackConfig, DeterminedArgs]] = {}

    def _of(self, cfg: StackConfig) -> DeterminedArgs:
        # Keyed by identity (the models are not hashable); the config is kept so its id stays its own.
        if id(cfg) not in self._args:
            self._args[id(cfg)] = (cfg, determined_args(cfg))
        return self._args[id(cfg)][1]

    def project_layer(self, cfg: StackConfig) -> dict[str, Any]:
        return resource_pools.project_layer(self._of(cfg))

    def pool_pod_specs(self, cfg: StackConfig, rp: ResourcePoolConfig) -> dict[str, dict[str, Any]]:
        return resource_pools.pool_pod_specs(self._of(cfg), rp)

    def pool_namespaces(self, cfg: StackConfig, rp: ResourcePoolConfig) -> list[str]:
        return resource_pools.pool_namespaces(self._of(cfg), rp)

    def checkpoint_gc_pod_spec(self, cfg: StackConfig) -> dict[str, Any] | None:
        return resource_pools.checkpoint_gc_pod_spec(self._of(cfg), None)


def load_stack(raw: Mapping[str, Any]) -> StackConfig:
    """The stack configuration validated (components.config.load_config), with the rules
    over the task pods the Determined component renders: ConfigError names every problem."""
    return load_config(raw, task_pods=DeterminedTaskPods())


# --- the cluster components (GkeCluster, EksCluster, ExistingCluster) ---------------------


def _created_cluster_values(cfg: GkeStack | EksStack) -> dict[str, Any]:
    """The keys of CloudClusterArgs, from the stack's sections and views."""
    return {
        "cluster": cfg.cluster,
        "nodePools": cfg.node_pools,
        "environment": cfg.environment,
        "allowDataDeletion": cfg.allow_data_deletion,
        "masterNodePool": cfg.master.node_pool,
        "gpuOperator": cfg.gpu_operator,
        "database": cfg.database,
        "tls": cfg.tls,
        "namespace": cfg.namespace,
        "taskNamespaces": cfg.task_namespaces,
        "sharedFilesystems": cfg.shared_filesystems,
        "filesystemNodePools": {
            fs.name: [pool.name for pool in cfg.filesystem_node_pools(fs)] for fs in cfg.shared_filesystems
        },
        "filesystemNamespaces": {fs.name: cfg.filesystem_namespaces(fs) for fs in cfg.shared_filesystems},
    }


def gke_cluster_args(cfg: GkeStack) -> GkeClusterArgs:
    """The GKE cluster's Args: its sections, the GCS checkpoint storage, the scheduler."""
    from components.cluster.gke.args import GkeClusterArgs

    storage = cfg.checkpoint_storage if isinstance(cfg.checkpoint_storage, GcsStorage) else None
    return GkeClusterArgs.model_validate(
        _created_cluster_values(cfg)
        | {"checkpointStorage": storage, "scheduler": cfg.scheduler, "gkeManagedDcgm": gke_managed_dcgm(cfg)}
    )


def eks_cluster_args(cfg: EksStack) -> EksClusterArgs:
    """The EKS cluster's Args: its sections and the S3 checkpoint storage."""
    from components.cluster.eks.args import EksClusterArgs

    storage = cfg.checkpoint_storage if isinstance(cfg.checkpoint_storage, S3Storage) else None
    return EksClusterArgs.model_validate(_created_cluster_values(cfg) | {"checkpointStorage": storage})


def existing_cluster_args(cfg: ExistingStack) -> ExistingClusterArgs:
    """The existing cluster's Args: its cluster section."""
    from components.cluster.existing import ExistingClusterArgs

    return ExistingClusterArgs.model_validate({"cluster": cfg.cluster})


def connect_cluster(cfg: StackConfig) -> ClusterHandle:
    """The handle of the cluster the config names, created (gke, eks) or reached (existing)
    by its component; each target imports only its own cloud's SDK."""
    if isinstance(cfg, ExistingStack):
        from components.cluster.existing import ExistingCluster

        return ExistingCluster("existing", existing_cluster_args(cfg)).handle
    if isinstance(cfg, GkeStack):
        from components.cluster.gke import GkeCluster

        return GkeCluster("gke", gke_cluster_args(cfg)).handle
    if isinstance(cfg, EksStack):
        from components.cluster.eks import EksCluster

        return EksCluster("eks", eks_cluster_args(cfg)).handle
    raise NotImplementedError(f"cloud {cfg.cloud}")  # refused by config validation first
