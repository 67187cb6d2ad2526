"""GKE: a Standard cluster with GPU node pools, its network, the checkpoint bucket with
workload identity, Cloud SQL, and the GPU operator when asked; all behind one
`ClusterHandle`.

One module per concern (network, cluster, node_pools, storage, database); pure functions
give each resource's arguments, `GkePlatform` only registers and wires them.
"""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from components import constants, kube, passwords
from components.addons import gpu_operator
from components.cluster import (
    ClusterHandle,
    DatabaseServer,
    Dns01Identity,
    checkpoints,
    created_cluster,
    data_exports,
    database_volume,
    name_kept,
)
from components.cluster.gke import cluster as gke_cluster
from components.cluster.gke import database, dns, network, node_pools, storage
from components.config import ConfigError, GcsStorage, GkeStack, InClusterDatabase, ManagedDatabase, Problem
from components.config import gke as gke_config
from components.config.tls import cloud_identity


def project_of(cfg: GkeStack) -> str:
    """cluster.project, else gcp:project; a ConfigError (nothing registered) when neither."""
    project = cfg.cluster.project or pulumi.Config("gcp").get("project")
    if not project:
        raise ConfigError([Problem("cluster.project", "required (or set gcp:project)")])
    return project


class GkePlatform(pulumi.ComponentResource):
    """Everything Google Cloud holds for one Determined install."""

    def __init__(self, name: str, cfg: GkeStack, project: str, opts: pulumi.ResourceOptions | None = None):
        super().__init__("determined:gke:Platform", name, None, opts)
        self.provider = gcp.Provider(
            "gcp", project=project, region=cfg.cluster.region, opts=pulumi.ResourceOptions(parent=self)
        )
        child = pulumi.ResourceOptions(parent=self, provider=self.provider)
        keep = not cfg.data_deletion_allowed
        data = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(retain_on_delete=keep))
        managed_db = isinstance(cfg.database, ManagedDatabase)

        net = network.network(cfg, project, needs_sql=managed_db, keep_sql=keep, opts=child)
        node_account = gcp.serviceaccount.Account(
            "nodes",
            opts=name_kept(child, node_pools.ACCOUNT, "accountId"),
            **node_pools.node_account_args(cfg),
        )
        self.cluster = gcp.container.Cluster(
            "cluster",
            opts=pulumi.ResourceOptions.merge(
                child,
                pulumi.ResourceOptions(
                    # Prod: destroy refuses up front instead of failing on deletion protection midway.
                    protect=cfg.environment == "prod",
                    # Describes the short-lived default pool only (read at creation).
                    ignore_changes=["nodeConfig"],
                ),
            ),
            **gke_cluster.cluster_args(cfg, project, net, node_account.email),
        )
        network.webhook_firewall(cfg, net, self.cluster, child)
        grants = [
            gcp.projects.IAMMember(
                f"nodes-{role.rsplit('/', 1)[-1]}",
                project=project,
                role=role,
                member=node_account.member,
                opts=child,
            )
            for role in node_pools.NODE_ROLES
        ]
        self.node_pools = [
            gcp.container.NodePool(
                pool.name,
                opts=pulumi.ResourceOptions.merge(
                    child,
                    pulumi.ResourceOptions(
                        depends_on=grants,
                        # The autoscaler owns the size; CPU pools keep their secure boot.
                        ignore_changes=node_pools.ignored_changes(pool),
                        # The pool's name is fixed: a change that replaces it (GPUs, spot,
                        # service account, scopes) must delete the old pool first. The machine
                        # type, boot disk and image type are updated in place (not ForceNew:
                        # terraform-provider-google node_config.go at e03b762, read 2026-11-25).
                        delete_before_replace=True,
                    ),
                ),
                **node_pools.node_pool_args(cfg, pool, self.cluster.id, node_account.email),
            )
            for pool in cfg.node_pools
        ]

        self.kubeconfig = gke_cluster.kubeconfig_output(cfg.cluster.name, self.cluster)
        self.kubernetes = k8s.Provider(
            "gke", kubeconfig=self.kubeconfig, opts=pulumi.ResourceOptions(parent=self)
        )

        self.bucket: pulumi.Output[str] | None = None
        self.storage_identity: dict[str, pulumi.Input[str]] = {}
        if isinstance(cfg.checkpoint_storage, GcsStorage):
            self._checkpoint_bucket(cfg, project, child, data)

        self.database: DatabaseServer | None = None
        if managed_db:
            self._cloud_sql(cfg, net, child, data, keep)
        self.dns01_identity = self._dns01_identity(cfg, project, child)

        # The node pool the master runs on (the first untainted on-demand CPU pool by default):
        # Determined waits for it, not for GPU pools or the GPU operator.
        self.ready: list[pulumi.Resource] = [
            node_pool
            for pool, node_pool in zip(cfg.node_pools, self.node_pools, strict=True)
            if cfg.master_node_pool is None or pool.name == cfg.master_node_pool.name
        ]
        system_pools = list(self.ready)
        self.storage_class: str | None = None
        if isinstance(cfg.database, InClusterDatabase):
            self.storage_class = database_volume.NAME
            volume_class = database_volume.storage_class(
                "pd.csi.storage.gke.io", {"type": gke_config.database_disk_type(cfg)}, retain=keep
            )
            self.ready.append(
                kube.register(
                    volume_class,
                    pulumi.ResourceOptions(parent=self, provider=self.kubernetes, depends_on=system_pools),
                )
            )
        if cfg.gpu_operator.enabled:
            gpu_operator.GpuOperator(
                "gpu-operator",
                cfg,
                platform="gke",
                after=self.node_pools,
                opts=pulumi.ResourceOptions(
                    parent=self, providers={"kubernetes": self.kubernetes}, depends_on=self.node_pools
                ),
            )
        self.register_outputs({"clusterName": self.cluster.name, "kubeconfig": self.kubeconfig})

    def _checkpoint_bucket(
        self, cfg: GkeStack, project: str, child: pulumi.ResourceOptions, data: pulumi.ResourceOptions
    ) -> None:
        configured = cfg.checkpoint_storage.bucket
        if configured:
            name: pulumi.Input[str] = configured
        else:
            derived = storage.bucket_name(project, pulumi.get_stack(), cfg.cluster.name, cfg.cluster.region)
            # The bucket's own name, not the derived one: a stack made before the derivation
            # changed keeps its bucket (components/cluster/checkpoints.py), and everything names
            # that one.
            name = self.bucket = gcp.storage.Bucket(
                "checkpoints",
                opts=name_kept(checkpoints.bucket_options(cfg, data), storage.BUCKET, "name"),
                **storage.bucket_args(cfg, derived),
            ).name
        account = gcp.serviceaccount.Account(
            "storage",
            opts=name_kept(child, node_pools.ACCOUNT, "accountId"),
            **storage.storage_account_args(cfg),
        )
        gcp.storage.BucketIAMMember(
            "storage-objects", bucket=name, role=storage.STORAGE_ROLE, member=account.member, opts=child
        )
        for namespace, ksa in checkpoints.kubernetes_accounts(cfg):
            gcp.serviceaccount.IAMMember(
                f"storage-{namespace}-{ksa}",
                service_account_id=account.name,
                role=storage.WORKLOAD_IDENTITY_ROLE,
                member=storage.workload_identity_member(project, namespace, ksa),
                # The identity pool <project>.svc.id.goog exists once a cluster uses it.
                opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[self.cluster])),
            )
        self.storage_identity = {storage.ANNOTATION: account.email}

    def _dns01_identity(
        self, cfg: GkeStack, project: str, child: pulumi.ResourceOptions
    ) -> Dns01Identity | None:
        """cert-manager's Google account for Cloud DNS (DNS-01), when its solver names no key."""
        if cloud_identity(cfg.cloud, cfg.tls) is None:
            return None
        zone_project = dns.dns_project(cfg, project)
        account = gcp.serviceaccount.Account(
            "dns", opts=name_kept(child, node_pools.ACCOUNT, "accountId"), **dns.account_args(cfg)
        )
        grant = gcp.projects.IAMMember(
            "dns-admin", opts=child, **dns.grant_args(zone_project, account.member)
        )
        binding = gcp.serviceaccount.IAMMember(
            "dns-cert-manager",
            # The identity pool <project>.svc.id.goog exists once a cluster uses it.
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[self.cluster])),
            **dns.workload_identity_args(project, account.name),
        )
        return Dns01Identity(
            solver_defaults=dns.solver_defaults(zone_project),
            account_annotations={storage.ANNOTATION: account.email},
            identity=account.email,
            ready=[grant, binding],
        )

    def _cloud_sql(
        self,
        cfg: GkeStack,
        net: network.Network,
        child: pulumi.ResourceOptions,
        data: pulumi.ResourceOptions,
        keep: bool,
    ) -> None:
        instance = gcp.sql.DatabaseInstance(
            "database",
            opts=name_kept(
                pulumi.ResourceOptions.merge(
                    data,
                    pulumi.ResourceOptions(
                        depends_on=net.sql_ready,
                        protect=cfg.environment == "prod",
                        # The disk grows by itself; the configured size is where it starts.
                        ignore_changes=["settings.diskSize"],
                    ),
                ),
                database.INSTANCE,
                "name",
            ),
            **database.instance_args(cfg, net.network),
        )
        secret = passwords.configured_or_generated("database-password", None, self)
        db = gcp.sql.Database("determined", opts=data, **database.database_args(instance.name, keep))
        user = gcp.sql.User("determined", opts=data, **database.user_args(instance.name, secret, keep))
        # The address, carrying the database and user as dependencies: the master's config
        # (built from it) is only applied once it can log in.
        host = pulumi.Output.all(instance.private_ip_address, db.name, user.name).apply(lambda v: v[0])
        self.database = DatabaseServer(
            host=host,
            port=constants.DB_PORT,
            name=constants.DB_DATABASE,
            user=constants.DB_USER,
            password=secret,
            ssl_mode="require",
        )


def exports(cfg: GkeStack, project: str, platform: GkePlatform) -> dict[str, pulumi.Input]:
    """What a user needs next: the cluster, how to reach it, where data lives."""
    cluster = cfg.cluster
    values: dict[str, pulumi.Input] = {
        "clusterName": platform.cluster.name,
        "kubeconfig": platform.kubeconfig,
        "getCredentials": f"gcloud container clusters get-credentials {cluster.name} "
        f"--region {cluster.region} --project {project}",
    }
    bucket = platform.bucket or getattr(cfg.checkpoint_storage, "bucket", None)
    return values | data_exports(pulumi.Output.concat("gs://", bucket) if bucket else None, platform.database)


def connect(cfg: GkeStack) -> ClusterHandle:
    project = project_of(cfg)
    platform = GkePlatform("gke", cfg, project)
    return created_cluster(platform, exports(cfg, project, platform))
