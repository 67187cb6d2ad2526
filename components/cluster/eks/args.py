"""What the EKS cluster component needs: EksClusterArgs (fields shared with GKE in
components/cluster/args.py)."""

from __future__ import annotations

from pydantic import Field

from components.cluster.args import CloudClusterArgs
from components.config.checkpoint_storage import S3Storage
from components.config.cluster import EksCluster
from components.config.node_pools import EksNodePool


class EksClusterArgs(CloudClusterArgs):
    """An EKS cluster with its managed node groups, VPC, checkpoint bucket and managed
    database, as the stack's sections describe them."""

    cluster: EksCluster = Field(
        description="The EKS cluster to create: name, region, Kubernetes version, VPC, endpoint access, "
        "admins, tags..."
    )
    node_pools: list[EksNodePool] = Field(
        min_length=1,
        description="The EKS managed node groups to create (at least one); one must be untainted.",
    )
    checkpoint_storage: S3Storage | None = Field(
        None,
        description="Checkpoints on S3: unless it names an endpointUrl or access keys, the bucket is "
        "created unless named, and the master's, tasks' and backup Jobs' service accounts reach it "
        "through EKS Pod Identity. Default: none.",
    )
