"""GKE: a Standard cluster with GPU node pools, its network, the checkpoint bucket with
workload identity, Cloud SQL, and the GPU operator when asked; all behind one
`ClusterHandle`.

One module per concern (network, cluster, node_pools, storage, database); pure functions
give each resource's arguments, and each module's own function registers its part
(`network.network`, `node_pools.pools`, `storage.checkpoint_bucket`, `database.cloud_sql`,
`dns.dns01_identity`);
`GkeCluster` only wires them.

No `from __future__ import annotations` here: the Pulumi SDK's schema analyzer reads the
class-level output annotations as types, not strings (pulumi 3.272.0
provider/experimental/analyzer.py `analyze_type`: `inspect.get_annotations` without `eval_str`).
"""

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from components import kube
from components.addons import gpu_operator
from components.cluster import (
    DatabaseServer,
    SharedVolume,
    database_volume,
    name_kept,
    publish,
)
from components.cluster.gke import cluster as gke_cluster
from components.cluster.gke import compute_classes, database, dns, fabric, network, node_pools, storage
from components.cluster.gke import shared_filesystems as gke_filesystems
from components.cluster.gke.args import GkeClusterArgs
from components.config import ConfigError, InClusterDatabase, ManagedDatabase, Problem
from components.config.gke import volume_disk_type

__all__ = ["GkeCluster", "GkeClusterArgs"]

TYPE = "determined:index:GkeCluster"
# The type GkeCluster had before it was a public component: deployed stacks' URNs carry it.
OLD_TYPE = "determined:gke:Platform"


def project_of(args: GkeClusterArgs) -> str:
    """cluster.project, else gcp:project; a ConfigError (nothing registered) when neither."""
    project = args.cluster.project or pulumi.Config("gcp").get("project")
    if not project:
        raise ConfigError([Problem("cluster.project", "required (or set gcp:project)")])
    return project


class GkeCluster(pulumi.ComponentResource):
    """A GKE Standard cluster for Determined: its network, node pools, checkpoint bucket with
    workload identity, Cloud SQL, cert-manager's Cloud DNS identity and the GPU operator, as
    its Args ask; `handle` is what the Determined component deploys onto."""

    cluster_name: pulumi.Output[str]
    """The GKE cluster's name."""
    kubeconfig: pulumi.Output[str]
    """A kubeconfig for the cluster (secret); clients authenticate with gke-gcloud-auth-plugin."""
    checkpoint_bucket: pulumi.Output[str] | None
    """The checkpoint bucket's URL (gs://<name>): the created one, else the configured one; none
    without GCS."""
    database_endpoint: pulumi.Output[str] | None
    """host:port of the Cloud SQL instance (database mode managed); none otherwise."""

    def __init__(self, name: str, args: GkeClusterArgs, opts: pulumi.ResourceOptions | None = None):
        project = project_of(args)  # before anything is registered
        # Stacks deployed when this was "determined:gke:Platform" keep their URNs.
        aliased = pulumi.ResourceOptions(aliases=[pulumi.Alias(type_=OLD_TYPE)])
        super().__init__(TYPE, name, None, pulumi.ResourceOptions.merge(aliased, opts))
        self.provider = gcp.Provider(
            "gcp", project=project, region=args.cluster.region, opts=pulumi.ResourceOptions(parent=self)
        )
        child = pulumi.ResourceOptions(parent=self, provider=self.provider)
        keep = not args.data_deletion_allowed
        data = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(retain_on_delete=keep))
        managed_db = isinstance(args.database, ManagedDatabase)

        attached = any(fs.kind in ("filestore", "managedLustre") for fs in args.shared_filesystems)
        lustre = any(fs.kind == "managedLustre" for fs in args.shared_filesystems)
        net = network.network(
            args,
            project,
            needs_sql=managed_db,
            keep_sql=keep,
            opts=child,
            keep_filesystems=keep and attached,
            needs_lustre=lustre,
        )
        node_account = gcp.serviceaccount.Account(
            "nodes",
            opts=name_kept(child, node_pools.ACCOUNT, "accountId"),
            **node_pools.node_account_args(args),
        )
        self.cluster = gcp.container.Cluster(
            "cluster",
            opts=pulumi.ResourceOptions.merge(
                child,
                pulumi.ResourceOptions(
                    # Prod: destroy refuses up front instead of failing on deletion protection midway.
                    protect=args.environment == "prod",
                    # Describes the short-lived default pool only (read at creation).
                    ignore_changes=["nodeConfig"],
                ),
            ),
            **gke_cluster.cluster_args(args, project, net, node_account.email),
        )
        network.webhook_firewall(args, net, self.cluster, child)
        # Per configured pool its GKE node pools (several with a ComputeClass), and all of them.
        self.pool_node_pools = node_pools.pools(args, self.cluster.id, node_account, project, child)
        self.node_pools = [node_pool for group in self.pool_node_pools.values() for node_pool in group]

        self.kubeconfig = gke_cluster.kubeconfig_output(args.cluster.name, self.cluster)
        self.kubernetes = k8s.Provider(
            "gke", kubeconfig=self.kubeconfig, opts=pulumi.ResourceOptions(parent=self)
        )
        # A pool's ComputeClass after the node pools it lists (GKE installs the CRD itself).
        self.compute_classes = [
            kube.register(
                obj,
                pulumi.ResourceOptions(
                    parent=self,
                    provider=self.kubernetes,
                    depends_on=self.pool_node_pools[pool.name],
                ),
            )
            for pool in args.node_pools
            if (obj := compute_classes.compute_class(pool)) is not None
        ]
        fabric.node_agents(
            args, self.pool_node_pools, pulumi.ResourceOptions(parent=self, provider=self.kubernetes)
        )

        access = storage.BucketAccess()
        if args.checkpoint_storage is not None:
            access = storage.checkpoint_bucket(args, project, self.cluster, child, data)
        self.bucket = access.bucket
        self.storage_identity = access.identity

        self.database: DatabaseServer | None = None
        if managed_db:
            self.database = database.cloud_sql(args, net, self, data, keep)
        self.dns01_identity = dns.dns01_identity(args, project, self.cluster, child)
        files = gke_filesystems.shared_filesystems(
            args, project, net, self.cluster, access.identity, child, data
        )
        self.shared_filesystems: dict[str, SharedVolume] = files.volumes
        if files.identity and not self.storage_identity:
            # gcsFuse without a checkpoint bucket: task pods run as the account bound to it.
            self.storage_identity = files.identity

        # The node pool the master runs on (the first untainted on-demand CPU pool by default):
        # Determined waits for it, not for GPU pools or the GPU operator.
        master_pool = args.master_pool
        self.ready: list[pulumi.Resource] = [
            node_pool
            for pool in args.node_pools
            if master_pool is None or pool.name == master_pool.name
            for node_pool in self.pool_node_pools[pool.name]
        ]
        system_pools = list(self.ready)
        self.storage_class: str | None = None
        if isinstance(args.database, InClusterDatabase):
            self.storage_class = database_volume.NAME
            volume_class = database_volume.storage_class(
                "pd.csi.storage.gke.io", {"type": volume_disk_type(master_pool)}, retain=keep
            )
            self.ready.append(
                kube.register(
                    volume_class,
                    pulumi.ResourceOptions(parent=self, provider=self.kubernetes, depends_on=system_pools),
                )
            )
        if args.gpu_operator.enabled:
            gpu_operator.GpuOperator(
                "gpu-operator",
                args.gpu_operator,
                args.node_pools,
                args.cluster.kubernetes_version,
                cloud="gke",
                after=self.node_pools,
                opts=pulumi.ResourceOptions(
                    parent=self, providers={"kubernetes": self.kubernetes}, depends_on=self.node_pools
                ),
            )

        configured = args.checkpoint_storage.bucket if args.checkpoint_storage else None
        cluster = args.cluster
        credentials = (
            f"gcloud container clusters get-credentials {cluster.name} "
            f"--region {cluster.region} --project {project}"
        )
        publish(self, "gs://", configured, {"getCredentials": credentials})
