"""What the two cloud cluster components share in their Args (GkeClusterArgs, EksClusterArgs).

The fields reuse the stack configuration's section models (components.config): a program
that builds the Args itself writes the same values, camelCase keys and all, that a stack
file holds under those keys. Each field is what the cluster component reads: the node pools
it creates, where the data the cluster holds lives (bucket, managed database), cert-manager's
DNS-01 solver it gives a cloud identity, and the namespaces whose service accounts reach
the bucket. Rules across sections are the stack configuration's (components.config.stack),
which the composition root runs before it maps a stack to these Args (stack_args.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field, model_validator

from components.config import errors
from components.config.addons import GpuOperatorConfig
from components.config.args import ArgsModel
from components.config.database import DatabaseConfig
from components.config.node_pools import CloudNodePool
from components.config.shared_filesystems import SharedFilesystem
from components.config.syntax import DnsLabel, Flag
from components.config.tls import TlsConfig
from components.config.views import _system_capable


class CloudClusterArgs(ArgsModel):
    """The fields of a created cluster's Args that do not depend on the cloud."""

    environment: Literal["dev", "prod"] = Field(
        "dev",
        description="dev or prod; prod adds deletion protection to the cluster, bucket and database, a "
        "database standby and longer backups, and a versioned bucket. Default dev.",
    )
    allow_data_deletion: Flag = Field(
        False,
        description="true lets destroy delete the created bucket (when empty), the managed database and the "
        "in-cluster database's disks; dev only (ignored in prod). Default false.",
    )
    master_node_pool: DnsLabel | None = Field(
        None,
        description="The node pool the master and the in-cluster database run on (master.nodePool): the "
        "cluster is ready for Determined once it exists. Default: the first untainted on-demand CPU pool.",
    )
    gpu_operator: GpuOperatorConfig = Field(
        default_factory=GpuOperatorConfig,
        description="The NVIDIA GPU operator, {enabled, version}, installed once the node pools exist; "
        "default: not installed.",
    )
    database: DatabaseConfig = Field(
        default_factory=lambda: {"mode": "inCluster"},
        validate_default=True,
        description="The master's PostgreSQL database, by mode: managed creates Cloud SQL (gke) or RDS "
        "(eks); inCluster gets a StorageClass for its volume; backup Jobs get the bucket's identity. "
        "Default inCluster.",
    )
    tls: TlsConfig = Field(
        default_factory=lambda: {"mode": "none"},
        validate_default=True,
        description="How users reach the master (the stack's tls section): a cert-manager DNS-01 solver of "
        "the cloud's DNS that names no credentials gets a cloud identity from the cluster. Default none.",
    )
    namespace: DnsLabel = Field(
        "determined",
        description="The namespace of the master and database, whose service accounts get the checkpoint "
        "bucket's identity. Default determined.",
    )
    task_namespaces: list[DnsLabel] = Field(
        default_factory=list,
        description="The namespaces task pods run in (the default task namespace and every resource "
        "pool's), whose task service account gets the checkpoint bucket's identity. Default: none.",
    )

    shared_filesystems: list[SharedFilesystem] = Field(
        default_factory=list,
        description="The stack's sharedFilesystems: the cluster creates those of its cloud's kinds (and "
        "their CSI drivers) and hands the app how to mount them. Default [].",
    )
    filesystem_node_pools: dict[str, list[DnsLabel]] = Field(
        default_factory=dict,
        description="Per shared filesystem, the node pools whose nodes mount it (their zones place it, "
        "their networks reach it). Default: none.",
    )
    filesystem_namespaces: dict[str, list[DnsLabel]] = Field(
        default_factory=dict,
        description="Per shared filesystem, the namespaces whose pods mount it (gcsFuse: their task "
        "service accounts get the bucket). Default: none.",
    )

    if TYPE_CHECKING:  # each subclass's own field, typed for its cloud
        node_pools: list[CloudNodePool]

    @model_validator(mode="after")
    def _master_pool_exists(self) -> CloudClusterArgs:
        names = [pool.name for pool in self.node_pools]
        if self.master_node_pool is not None and self.master_node_pool not in names:
            raise errors.refuse(
                [("masterNodePool", f"{self.master_node_pool!r} is not one of the node pools {names}")]
            )
        return self

    @property
    def master_pool(self) -> CloudNodePool | None:
        """Where the master and the in-cluster database run: masterNodePool, else the first
        untainted, on-demand CPU pool (None when there is none)."""
        pools = self.node_pools
        if self.master_node_pool:
            return next((p for p in pools if p.name == self.master_node_pool), None)
        return next((p for p in pools if _system_capable(p)), None)

    @property
    def data_deletion_allowed(self) -> bool:
        """allowDataDeletion, in dev only."""
        return self.allow_data_deletion and self.environment == "dev"
