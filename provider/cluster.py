"""The cluster handle across languages: what the provider's Determined deploys onto.

In Python, the Determined component takes a cluster component's `handle`
(components.cluster.ClusterHandle): a Kubernetes provider, resources to wait for, a managed
database with its password. Those are Python objects; a program in another language holds
only the cluster component's outputs. So the provider's cluster components output the
handle's values (`HandleOutputs`), and the provider's Determined takes them back as its
`cluster` input (`ClusterHandle`), from which it makes the Kubernetes provider and the handle.

What the handle holds that does not cross: the resources to wait for (pass the cluster
component in `dependsOn`: a resource that depends on a remote component waits for all its
children, https://github.com/pulumi/pulumi/pull/7541), and
cert-manager's DNS-01 cloud identity (give the solver its own credentials in tls).
"""

# No `from __future__ import annotations`: the SDK's analyzer reads these classes'
# annotations unevaluated (inspect.get_annotations), so they must be real types.

from typing import Any, NotRequired, TypedDict

import pulumi
import pulumi_kubernetes as k8s

from components import cluster as clusters


class DatabaseServer(TypedDict):
    """A database server the cluster component created (database mode managed)."""

    host: pulumi.Input[str]
    """Its private address."""
    port: int
    """Its port."""
    name: str
    """The database's name."""
    user: str
    """The user the master connects as."""
    password: pulumi.Input[str]
    """Secret: the user's password."""
    ssl_mode: str
    """The master's sslMode with it."""


class ClusterHandle(TypedDict):
    """Where Determined runs: a cluster component's outputs (kubeconfig, defaultStorageClass,
    storageIdentity, bucket, databaseServer), or a kubeconfig alone for a cluster made elsewhere."""

    kubeconfig: pulumi.Input[str]
    """A kubeconfig for the cluster (its contents): every Kubernetes object goes through it."""
    default_storage_class: NotRequired[str]
    """The in-cluster database volume's class when database.storageClass names none."""
    storage_identity: NotRequired[dict[str, pulumi.Input[str]]]
    """Annotations on the service accounts that reach the checkpoint bucket (cloud identity)."""
    bucket: NotRequired[pulumi.Input[str]]
    """The checkpoint bucket the cluster component created (its name); default: the configured one."""
    database_server: NotRequired[DatabaseServer]
    """The database server the cluster component created (database mode managed)."""


class HandleOutputs:
    """The outputs a provider's cluster component adds: its handle's values, which a program
    passes on as Determined's `cluster` (with `kubeconfig`)."""

    default_storage_class: pulumi.Output[str] | None
    """The storage class of the in-cluster database's volume (database mode inCluster); none otherwise."""
    storage_identity: pulumi.Output[dict[str, str]] | None
    """Annotations that give a service account the checkpoint bucket's identity."""
    bucket: pulumi.Output[str] | None
    """The checkpoint bucket's name, when the component created it."""
    database_server: pulumi.Output[DatabaseServer] | None
    """The database server the component created (database mode managed)."""


def set_handle_outputs(component: Any, handle: clusters.ClusterHandle) -> None:
    """Set a cluster component's `HandleOutputs` from its handle (the provider reads them as
    attributes once the constructor returns)."""
    component.default_storage_class = handle.default_storage_class
    component.storage_identity = handle.storage_identity
    component.bucket = handle.bucket
    component.database_server = None
    if handle.database is not None:
        server = handle.database
        component.database_server = pulumi.Output.all(server.host, server.password).apply(
            lambda values: {
                "host": values[0],
                "port": server.port,
                "name": server.name,
                "user": server.user,
                "password": values[1],
                "ssl_mode": server.ssl_mode,
            }
        )


def handle(name: str, cluster: ClusterHandle, opts: pulumi.ResourceOptions | None) -> clusters.ClusterHandle:
    """The library's handle from the provider's `cluster` input: a Kubernetes provider of
    the kubeconfig (beside the component, as the cluster components' providers are), and
    the values passed on."""
    provider = k8s.Provider(
        f"{name}-cluster",
        kubeconfig=cluster["kubeconfig"],
        opts=pulumi.ResourceOptions(parent=opts.parent if opts else None),
    )
    database = None
    if "database_server" in cluster:
        server = cluster["database_server"]
        database = clusters.DatabaseServer(
            host=pulumi.Output.from_input(server["host"]),
            port=int(server["port"]),
            name=server["name"],
            user=server["user"],
            password=pulumi.Output.secret(server["password"]),
            ssl_mode=server["ssl_mode"],
        )
    return clusters.ClusterHandle(
        provider=provider,
        default_storage_class=cluster.get("default_storage_class"),
        storage_identity=dict(cluster.get("storage_identity") or {}),
        bucket=cluster.get("bucket"),
        database=database,
    )
