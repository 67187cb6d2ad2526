"""Determined on a Kubernetes cluster: the component that wires the others together.

Creates the master's namespace and Determined's PriorityClasses, then the database, the
master and the resource pools' namespaces, in that order.

The master waits only for what it needs to start (`master_needs`): the cluster's `ready`
(the node pool it runs on and what that pool needs; not GPU pools, GPU drivers or device
plugins), its namespace and PriorityClasses, the database, the namespaces tasks run in with
what pods find there (registry Secret, CA bundle, checkpoint claims) and its RBAC in them,
and the dumps before it on an upgrade. Kueue, the Gateway, cert-manager and the rest of the
pools' objects come up beside it; the workspace Job waits for all of them.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components import constants, kube
from components.addons import cert_manager, envoy_gateway, kueue, reloader
from components.cluster import ClusterHandle
from components.config import InClusterDatabase, StackConfig
from components.config.tls import CertManagerCertificate, ExposedTls, MasterTls
from components.determined import (
    checkpoint_volumes,
    database,
    database_backup,
    exposure,
    master,
    network_policies,
    resource_pools,
    workspaces,
)
from components.kube import pod_security


def namespace(cfg: StackConfig) -> dict:
    """The master's namespace. Its own pods (master, database, Jobs) meet Pod Security
    `restricted`, which it enforces from 0.35 (tasks then default to a namespace of their own);
    older masters default tasks here, so it enforces what they need. Audit and warnings
    report any pod short of `restricted`."""
    meta = kube.metadata(cfg.namespace, "determined")
    level = resource_pools.master_namespace_pod_security(cfg)
    meta["labels"] |= pod_security.namespace_labels(level, audit="restricted", warn="restricted")
    return kube.manifest("v1", "Namespace", meta)


def master_needs(
    base: list[pulumi.Resource],
    db: pulumi.Resource,
    pools: resource_pools.ResourcePools,
    backups: database_backup.DatabaseBackups,
) -> list[pulumi.Resource]:
    """What the master's objects wait for: the namespace and PriorityClasses (`base`), the
    database, the namespaces tasks run in (its Roles go there) and what pods find in them,
    and the dumps before it. Not the pools' queues, quotas or service accounts, Kueue, or the
    Gateway: the master starts without them."""
    return [*base, db, *pools.namespaces.values(), *pools.shared, *backups.before_master]


class Determined(pulumi.ComponentResource):
    """Everything Determined needs on a cluster; every object goes through the cluster's
    Kubernetes provider and waits for what the cluster says must be ready first."""

    def __init__(
        self,
        name: str,
        cfg: StackConfig,
        cluster: ClusterHandle,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__(
            "determined:components:Determined",
            name,
            None,
            pulumi.ResourceOptions.merge(
                opts, pulumi.ResourceOptions(providers={"kubernetes": cluster.provider})
            ),
        )
        child = pulumi.ResourceOptions(parent=self, depends_on=cluster.ready)

        # The in-cluster database's volume lives in this namespace; deleting the namespace
        # would delete the volume, so it is kept like the volume itself.
        # So is a checkpoint claim provisioned in it.
        ns_opts = child
        if (
            isinstance(cfg.database, InClusterDatabase)
            or checkpoint_volumes.keeps_master_namespace(cfg)
            or database_backup.keeps_namespace(cfg)
        ):
            ns_opts = pulumi.ResourceOptions.merge(
                child, pulumi.ResourceOptions(retain_on_delete=not cfg.data_deletion_allowed)
            )
        ns = self.namespace = kube.register(namespace(cfg), ns_opts)
        # Cluster-wide and possibly shared with another install: never deleted by a destroy;
        # adopted (read, which fails if they are missing) when another install owns them.
        if cfg.adopt_priority_classes:
            priority_classes = [
                k8s.scheduling.v1.PriorityClass.get(name, name, opts=child)
                for name in (constants.SYSTEM_PRIORITY_CLASS, constants.MEDIUM_PRIORITY_CLASS)
            ]
        else:
            priority_classes = [
                kube.register(
                    obj, pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(retain_on_delete=True))
                )
                for obj in master.priority_classes()
            ]
        base = [ns, *priority_classes]

        queues_after: list[pulumi.Resource] = []
        if cfg.scheduler == "kueue":
            queues_after.append(
                k8s.helm.v3.Release(
                    "kueue",
                    opts=child,
                    **kueue.release_args(kueue.VERSION, cfg.kueue.pods_ready_timeout_seconds),
                )
            )
        self.resource_pools = resource_pools.ResourcePools(
            "resource-pools",
            cfg,
            cluster.storage_identity,
            master_namespace=ns,
            queues_after=queues_after,
            opts=child,
        )
        # Each once its namespace exists; pods that start earlier are fenced when they apply.
        network_policies.NetworkPolicies(
            "network-policies", cfg, {cfg.namespace: ns, **self.resource_pools.namespaces}, opts=child
        )
        # After the registry Secret it may pull with (made with the pools' namespaces).
        self.database = database.Database(
            "database", cfg, cluster, depends_on=[*base, *self.resource_pools.shared], opts=child
        )
        # What the last update left (read once: the upgrade dump and the binding Job use it).
        previous = database_backup.previous_outputs()
        # Dumps before an upgrade and the Helm chart's records: the master waits for them. A
        # stack's first update has no records to dump (database_backup.upgrade_dump).
        upgrade = database_backup.upgrade_dump(cfg, previous)
        self.backups = database_backup.DatabaseBackups(
            "database-backups",
            cfg,
            cluster,
            self.database,
            depends_on=[*base, *self.resource_pools.shared],
            upgrade=upgrade,
            opts=child,
        )
        placement = master.Placement(
            bucket=cluster.bucket,
            task_service_account=constants.TASK_SERVICE_ACCOUNT if cluster.storage_identity else None,
        )
        # Beside the master, not before it: with tls.mode master its pod waits for the
        # certificate's Secret by itself (and `up` does not wait for it then).
        if isinstance(cfg.tls, ExposedTls):
            self._expose(cfg, cfg.tls, cluster, child)
        if isinstance(cfg.tls, MasterTls):
            # The master reads its certificate when it starts: a renewal restarts it.
            k8s.helm.v3.Release(
                "reloader",
                opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[ns])),
                **reloader.release_args(cfg.namespace),
            )
        self.master = master.DeterminedMaster(
            "master",
            cfg,
            db=self.database.endpoint,
            db_password=self.database.password,
            depends_on=master_needs(base, self.database, self.resource_pools, self.backups),
            placement=placement,
            storage_identity=cluster.storage_identity,
            opts=child,
        )
        # database.restore: the master is at 0 replicas first.
        self.backups.restore_after(self.master.deployment)
        if workspaces.needed(cfg):
            self._bind_workspaces(cfg, previous, child)
        # Read back by the next update (database_backup.upgrade_dump): the version that ran,
        # once its master is ready, and the dump Job made for it.
        self.outputs: dict[str, pulumi.Input] = {
            database_backup.VERSION_OUTPUT: self.master.deployment.id.apply(lambda _: cfg.master.version)
        }
        if self.backups.upgrade_job is not None:
            self.outputs[database_backup.UPGRADE_DUMP_OUTPUT] = self.backups.upgrade_job.id.apply(
                lambda _: database_backup.pre_upgrade_job_name(cfg.master.version)
            )
        self.register_outputs({"url": self.master.url})

    def _expose(
        self, cfg: StackConfig, tls: ExposedTls, cluster: ClusterHandle, child: pulumi.ResourceOptions
    ) -> None:
        """The master reached through a Gateway: Envoy Gateway (unless the cluster names its
        own class) with the load balancer shaped by exposure and source ranges; cert-manager
        and an ACME issuer when the certificate comes from it (DNS-01 with the cloud identity
        the cluster gave cert-manager, if any); the Gateway and its routes (which need no
        master to exist)."""

        def after(*resources: pulumi.Resource) -> pulumi.ResourceOptions:
            return pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=list(resources)))

        ready: list[pulumi.Resource] = [self.namespace]
        class_name = tls.gateway_class_name
        if class_name is None:
            gateway_release = k8s.helm.v3.Release("envoy-gateway", opts=child, **envoy_gateway.release_args())
            proxy = kube.register(
                envoy_gateway.envoy_proxy(cfg.namespace, cfg.cloud, tls.exposure, list(tls.source_ranges)),
                after(gateway_release, self.namespace),
            )
            gateway_class = envoy_gateway.gateway_class(cfg.namespace)
            ready.append(kube.register(gateway_class, after(gateway_release, proxy)))
            ready.append(gateway_release)
            class_name = envoy_gateway.GATEWAY_CLASS
        issuer = None
        if isinstance(tls.certificate, CertManagerCertificate):
            # After the Gateway API CRDs: cert-manager looks for them when it starts.
            identity = cluster.dns01_identity
            certs = k8s.helm.v3.Release(
                "cert-manager",
                opts=after(*ready, *(identity.ready if identity else [])),
                **exposure.cert_manager_release_args(identity),
            )
            issuer_obj = exposure.cluster_issuer(cfg, identity)
            ready += [certs, kube.register(issuer_obj, after(certs))]
            issuer = cert_manager.ISSUER
        for obj in exposure.objects(cfg, class_name, issuer):
            kube.register(obj, after(*ready))

    def _bind_workspaces(
        self, cfg: StackConfig, previous: dict[str, Any] | None, child: pulumi.ResourceOptions
    ) -> None:
        """0.35+: the Job that binds each pool's workspace to its namespace, through the
        master's API, once the master runs and the namespaces exist; a new mapping, a new Job."""
        in_namespace = pulumi.ResourceOptions.merge(
            child, pulumi.ResourceOptions(depends_on=[self.namespace])
        )
        script = kube.register(workspaces.script_config_map(cfg), in_namespace)
        password = workspaces.password_secret(cfg, self.master.initial_user_password)
        secret = kube.register(password, in_namespace)
        entries = workspaces.mapping(cfg)
        job = workspaces.job(
            cfg,
            workspaces.PASSWORD_SECRET,
            workspaces.PASSWORD_KEY,
            workspaces.mapping_hash(entries),
            previous,
        )
        kube.register(
            job,
            pulumi.ResourceOptions.merge(
                child,
                pulumi.ResourceOptions(
                    # The master with its Roles (every namespace it lists at start) and the
                    # pools' namespaces: removed ones are deleted only after this Job ran
                    # (tests/determined/test_pool_removal.py).
                    depends_on=[self.master, self.resource_pools, script, secret],
                    # A finished Job's spec cannot change: a new mapping is a new Job.
                    delete_before_replace=True,
                ),
            ),
        )
