"""What the GKE cluster component needs: GkeClusterArgs (fields shared with EKS in
components/cluster/args.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from components.cluster.args import CloudClusterArgs
from components.config.checkpoint_storage import GcsStorage
from components.config.cluster import GkeCluster
from components.config.node_pools import GkeNodePool
from components.config.syntax import Flag


class GkeClusterArgs(CloudClusterArgs):
    """A GKE Standard cluster with its node pools, network, checkpoint bucket and managed
    database, as the stack's sections describe them."""

    cluster: GkeCluster = Field(
        description="The GKE cluster to create: name, region, project (else gcp:project), release channel, "
        "network, private nodes, tags..."
    )
    node_pools: list[GkeNodePool] = Field(
        min_length=1, description="The GKE node pools to create (at least one); one must be untainted."
    )
    checkpoint_storage: GcsStorage | None = Field(
        None,
        description="Checkpoints on GCS: the bucket is created unless named, and the master's, tasks' and "
        "backup Jobs' service accounts reach it through workload identity. Default: none.",
    )
    gke_managed_dcgm: Flag | None = Field(
        None,
        description="GKE's managed DCGM metrics (a dcgm-exporter GKE runs on GPU pools whose drivers GKE "
        "manages, read through Managed Service for Prometheus): true turns the package and managed "
        "collection on, false turns the package off; both send GKE's default monitoring components with or "
        "without DCGM. Default: unset, the cluster's own setting (new clusters have it on).",
    )
    scheduler: Literal["default", "kueue"] = Field(
        "default",
        description="default or kueue: with kueue a private cluster's control plane may call Kueue's "
        "webhook and visibility API (a firewall rule on a created network). Default default.",
    )
