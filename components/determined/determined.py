"""Determined on a Kubernetes cluster: the component that wires the others together.

Creates the master's namespace and Determined's PriorityClasses, then the database, the
master and the resource pools' namespaces, in that order.

`Determined(name, args, cluster)`: `args` (DeterminedArgs) says what to deploy, `cluster`
(components.cluster.ClusterHandle, which each cluster component offers as `.handle`) where:
its Kubernetes provider, what must be ready first, and what the cluster made for it (bucket,
managed database, cloud identities).

The master waits only for what it needs to start (`master_needs`): the cluster's `ready`
(the node pool it runs on and what that pool needs; not GPU pools, GPU drivers or device
plugins), its namespace and PriorityClasses, the database, the namespaces tasks run in with
what pods find there (registry Secret, CA bundle, checkpoint claims) and its RBAC in them,
and the dumps before it on an upgrade. Kueue, the Gateway, cert-manager and the rest of the
pools' objects come up beside it; the workspace Job waits for all of them.

No `from __future__ import annotations` here: the Pulumi SDK's schema analyzer reads the
class-level output annotations as types, not strings (pulumi 3.272.0
provider/experimental/analyzer.py: `inspect.get_annotations` without `eval_str`).
"""

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components import constants, kube
from components.addons import cert_manager, envoy_gateway, kueue, reloader
from components.cluster import ClusterHandle
from components.config import InClusterDatabase
from components.config.tls import CertManagerCertificate, ExposedTls, MasterTls
from components.determined import (
    checkpoint_volumes,
    database,
    database_backup,
    database_jobs,
    image_pre_pull,
    master,
    network_policies,
    resource_pools,
    tls,
    upgrade_dump,
    workspaces,
)
from components.determined.args import DeterminedArgs
from components.kube import pod_security
from components.observability.component import Observability


def namespace(args: DeterminedArgs) -> dict:
    """The master's namespace. Its own pods (master, database, Jobs) meet Pod Security
    `restricted`, which it enforces from 0.35 (tasks then default to a namespace of their own);
    older masters default tasks here, so it enforces what they need. Audit and warnings
    report any pod short of `restricted`."""
    meta = kube.metadata(args.namespace, "determined")
    level = resource_pools.master_namespace_pod_security(args)
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


# The type token before the components became a library: deployed stacks' URNs carry over.
OLD_TYPE = "determined:components:Determined"


class Determined(pulumi.ComponentResource):
    """Everything Determined needs on a cluster; every object goes through the cluster's
    Kubernetes provider and waits for what the cluster says must be ready first.

    Export `state_outputs` as the stack's outputs (`for k, v in det.state_outputs.items():
    pulumi.export(k, v)`): the next update reads them back from the stack to tell an upgrade
    of the master from a plain update. Without them every update is taken for an upgrade and,
    with `database.backup.beforeUpgrade` (the default), the master waits for a dump of the
    database first: safe, but slow."""

    url: pulumi.Output[str]
    """The master's URL: https://<tls.host> when a Gateway exposes it (tls mode ingress or
    master), else its Service inside the cluster (reach it with kubectl port-forward)."""
    namespace: pulumi.Output[str]
    """The namespace of the master and its database."""
    resource_pool_namespaces: pulumi.Output[dict[str, str]]
    """The namespace each resource pool's tasks run in, by pool name."""
    initial_user_password: pulumi.Output[str]
    """Secret: the password of the admin and determined users (master.initialUserPassword, or
    the one generated); masters older than 0.29 do not set it."""
    master_version: pulumi.Output[str]
    """The master version that runs, known once its Deployment is ready (the next update reads
    it back to tell an upgrade)."""
    grafana_url: pulumi.Output[str]
    """With observability on: Grafana's URL, https://<tls.host>/grafana/ with tls mode ingress,
    else its Service inside the cluster (reach it with kubectl port-forward); empty when off."""
    grafana_admin_password: pulumi.Output[str]
    """Secret: with observability on, the password of Grafana's `admin` user (generated);
    empty when off."""

    def __init__(
        self,
        name: str,
        args: DeterminedArgs,
        cluster: ClusterHandle,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__(
            "determined:index:Determined",
            name,
            None,
            pulumi.ResourceOptions.merge(
                opts,
                pulumi.ResourceOptions(
                    providers={"kubernetes": cluster.provider}, aliases=[pulumi.Alias(type_=OLD_TYPE)]
                ),
            ),
        )
        child = pulumi.ResourceOptions(parent=self, depends_on=cluster.ready)

        # The in-cluster database's volume lives in this namespace; deleting the namespace
        # would delete the volume, so it is kept like the volume itself.
        # So is a checkpoint claim provisioned in it.
        ns_opts = child
        if (
            isinstance(args.database, InClusterDatabase)
            or checkpoint_volumes.keeps_master_namespace(args)
            or database_jobs.keeps_namespace(args)
        ):
            ns_opts = pulumi.ResourceOptions.merge(
                child, pulumi.ResourceOptions(retain_on_delete=not args.data_deletion_allowed)
            )
        ns = self._namespace = kube.register(namespace(args), ns_opts)
        # Cluster-wide and possibly shared with another install: never deleted by a destroy;
        # adopted (read, which fails if they are missing) when another install owns them.
        if args.adopt_priority_classes:
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
        if args.scheduler == "kueue":
            queues_after.append(
                k8s.helm.v3.Release(
                    "kueue",
                    opts=child,
                    **kueue.release_args(kueue.VERSION, args.kueue.pods_ready_timeout_seconds),
                )
            )
        self.resource_pools = resource_pools.ResourcePools(
            "resource-pools",
            args,
            cluster.storage_identity,
            master_namespace=ns,
            queues_after=queues_after,
            opts=child,
            shared_volumes=cluster.shared_filesystems,
        )
        # Each once its namespace exists; pods that start earlier are fenced when they apply.
        network_policies.NetworkPolicies(
            "network-policies", args, {args.namespace: ns, **self.resource_pools.namespaces}, opts=child
        )
        # nodePools[].prePullImages: after the pull Secrets its pods name.
        image_pre_pull.register(args, [ns, *self.resource_pools.shared], child)
        # After the registry Secret it may pull with (made with the pools' namespaces).
        self.database = database.Database(
            "database", args, cluster, depends_on=[*base, *self.resource_pools.shared], opts=child
        )
        # What the last update left (read once: the upgrade dump and the binding Job use it).
        previous = upgrade_dump.previous_outputs()
        # Dumps before an upgrade and the Helm chart's records: the master waits for them. A
        # stack's first update has no records to dump (upgrade_dump.needed).
        upgrade = upgrade_dump.needed(args, previous)
        self.backups = database_backup.DatabaseBackups(
            "database-backups",
            args,
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
        # What routes to the Gateway wait for (its class and CRDs, cert-manager).
        self._gateway_ready: list[pulumi.Resource] = []
        if isinstance(args.tls, ExposedTls):
            self._expose(args, args.tls, cluster, child)
        if isinstance(args.tls, MasterTls):
            # The master reads its certificate when it starts: a renewal restarts it.
            k8s.helm.v3.Release(
                "reloader",
                opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[ns])),
                **reloader.release_args(args.namespace),
            )
        self.master = master.DeterminedMaster(
            "master",
            args,
            db=self.database.endpoint,
            db_password=self.database.password,
            depends_on=master_needs(base, self.database, self.resource_pools, self.backups),
            placement=placement,
            storage_identity=cluster.storage_identity,
            opts=child,
        )
        # database.restore: the master is at 0 replicas first.
        self.backups.restore_after(self.master.deployment)
        if workspaces.needed(args):
            self._bind_workspaces(args, previous, child)
        self.grafana_url = pulumi.Output.from_input("")
        self.grafana_admin_password = pulumi.Output.secret("")
        if args.observed:
            # Beside the master: nothing of it waits for metrics.
            self.observability = Observability(
                "observability",
                args,
                database=self.database.endpoint,
                database_password=self.database.password,
                admin_password=self.master.initial_user_password,
                master=self.master,
                determined_namespace=ns,
                gateway_ready=self._gateway_ready,
                previous=previous,
                opts=child,
            )
            self.grafana_url = self.observability.grafana_url
            self.grafana_admin_password = self.observability.grafana_admin_password

        self.url = pulumi.Output.from_input(
            f"https://{args.tls.host}" if isinstance(args.tls, ExposedTls) else self.master.url
        )
        self.namespace = pulumi.Output.from_input(args.namespace)
        self.resource_pool_namespaces = pulumi.Output.from_input(
            {rp.name: rp.namespace_name for rp in args.resource_pools}
        )
        self.initial_user_password = self.master.initial_user_password
        # Read back by the next update (upgrade_dump.needed): the version that ran, once its
        # master is ready, and the dump Job made for it.
        self.master_version = self.master.deployment.id.apply(lambda _: args.master.version)
        self.state_outputs: dict[str, pulumi.Input] = {upgrade_dump.VERSION_OUTPUT: self.master_version}
        if self.backups.upgrade_job is not None:
            self.state_outputs[upgrade_dump.UPGRADE_DUMP_OUTPUT] = self.backups.upgrade_job.id.apply(
                lambda _: upgrade_dump.pre_upgrade_job_name(args.master.version)
            )
        # Named as the component provider's schema names them (camelCase: the SDK's
        # pulumi/provider/experimental/component.py maps each attribute so, pulumi 3.272.0).
        self.register_outputs(
            {
                "url": self.url,
                "namespace": self.namespace,
                "resourcePoolNamespaces": self.resource_pool_namespaces,
                "initialUserPassword": self.initial_user_password,
                "masterVersion": self.master_version,
                "grafanaUrl": self.grafana_url,
                "grafanaAdminPassword": self.grafana_admin_password,
            }
        )

    def _expose(
        self, args: DeterminedArgs, exposed: ExposedTls, cluster: ClusterHandle, child: pulumi.ResourceOptions
    ) -> None:
        """The master reached through a Gateway: Envoy Gateway (unless the cluster names its
        own class) with the load balancer shaped by exposure and source ranges; cert-manager
        and an ACME issuer when the certificate comes from it (DNS-01 with the cloud identity
        the cluster gave cert-manager, if any); the Gateway and its routes (which need no
        master to exist)."""

        def after(*resources: pulumi.Resource) -> pulumi.ResourceOptions:
            return pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=list(resources)))

        ready: list[pulumi.Resource] = [self._namespace]
        class_name = exposed.gateway_class_name
        if class_name is None:
            gateway_release = k8s.helm.v3.Release("envoy-gateway", opts=child, **envoy_gateway.release_args())
            proxy = kube.register(
                envoy_gateway.envoy_proxy(
                    args.namespace, args.cloud, exposed.exposure, list(exposed.source_ranges)
                ),
                after(gateway_release, self._namespace),
            )
            gateway_class = envoy_gateway.gateway_class(args.namespace)
            ready.append(kube.register(gateway_class, after(gateway_release, proxy)))
            ready.append(gateway_release)
            class_name = envoy_gateway.GATEWAY_CLASS
        issuer = None
        if isinstance(exposed.certificate, CertManagerCertificate):
            # After the Gateway API CRDs: cert-manager looks for them when it starts.
            identity = cluster.dns01_identity
            certs = k8s.helm.v3.Release(
                "cert-manager",
                opts=after(*ready, *(identity.ready if identity else [])),
                **tls.cert_manager_release_args(identity),
            )
            issuer_obj = tls.cluster_issuer(args, identity)
            ready += [certs, kube.register(issuer_obj, after(certs))]
            issuer = cert_manager.ISSUER
        for obj in tls.objects(args, class_name, issuer):
            kube.register(obj, after(*ready))
        self._gateway_ready = ready

    def _bind_workspaces(
        self, args: DeterminedArgs, previous: dict[str, Any] | None, child: pulumi.ResourceOptions
    ) -> None:
        """0.35+: the Job that binds each pool's workspace to its namespace, through the
        master's API, once the master runs and the namespaces exist; a new mapping, a new Job."""
        in_namespace = pulumi.ResourceOptions.merge(
            child, pulumi.ResourceOptions(depends_on=[self._namespace])
        )
        script = kube.register(workspaces.script_config_map(args), in_namespace)
        password = workspaces.password_secret(args, self.master.initial_user_password)
        secret = kube.register(password, in_namespace)
        entries = workspaces.mapping(args)
        job = workspaces.job(
            args,
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
