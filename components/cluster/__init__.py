"""Where Determined runs: one component per target, each giving the app a `ClusterHandle`.

`existing.ExistingCluster` connects to a cluster made elsewhere; `gke.GkeCluster` and
`eks.EksCluster` create one. Each takes its own Args (pydantic models reusing the stack
configuration's sections) and exposes its handle as `.handle`. The app never asks which
cloud it is on: whatever differs between targets is in the handle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import pulumi
import pulumi_kubernetes as k8s

from components import names
from components.config.cluster import CloudCluster


def namer(cluster: CloudCluster) -> names.Namer:
    """The cloud names of this stack's resources for `cluster` (components.names)."""
    return names.Namer(pulumi.get_stack(), cluster.region, cluster.name)


def name_kept(opts: pulumi.ResourceOptions, resource: str, prop: str) -> pulumi.ResourceOptions:
    """`opts` with the resource's name fixed at creation where its derivation changed
    (names.kept_at_creation): existing stacks keep their names, nothing is replaced."""
    return pulumi.ResourceOptions.merge(
        opts, pulumi.ResourceOptions(ignore_changes=names.kept_at_creation(resource, prop))
    )


@dataclass(frozen=True)
class DatabaseServer:
    """A database a cluster component created (Cloud SQL, RDS), reached on a private address."""

    host: pulumi.Output[str]
    port: int
    name: str
    user: str
    password: pulumi.Output[str]  # a Pulumi secret
    ssl_mode: str


@dataclass(frozen=True)
class Dns01Identity:
    """The cloud identity a cluster component gave cert-manager for DNS-01 with its cloud's DNS (gke:
    Cloud DNS, eks: Route 53), bound to cert-manager's controller service account."""

    # Solver settings the identity implies (gke: the Cloud DNS project; eks: the region),
    # under the configured ones in the ClusterIssuer.
    solver_defaults: dict[str, str]
    # Annotations on the controller's service account (gke: the Google account it acts as).
    account_annotations: dict[str, pulumi.Input[str]]
    # The identity (account email, role ARN): the controller's pods carry it, so a new one
    # restarts them.
    identity: pulumi.Input[str]
    # What cert-manager waits for: the grants and the binding (eks: the Pod Identity
    # association, which only pods created after it get credentials from).
    ready: list[pulumi.Resource] = field(default_factory=list)


@dataclass(frozen=True)
class SharedVolume:
    """How pods reach a shared filesystem a cluster component created (sharedFilesystems):
    either a PersistentVolume source the app binds in every namespace that mounts it, or a
    volume each pod carries inline."""

    # The PersistentVolume's source, one key: {"nfs": {server, path}} or {"csi": {driver,
    # volumeHandle, volumeAttributes}}; values may be Outputs. None: `inline` instead.
    persistent_volume: dict[str, Any] | None = None
    # The PersistentVolume's mountOptions.
    mount_options: list[str] = field(default_factory=list)
    # A pod volume source, without its name (gcsFuse: {"csi": {...}}), for filesystems that
    # need no PersistentVolume.
    inline: dict[str, Any] | None = None
    # Annotations on every pod that mounts it (gcsFuse: the sidecar injection).
    pod_annotations: dict[str, str] = field(default_factory=dict)
    # The PersistentVolume's capacity (informational for NFS and CSI filesystems).
    capacity: str = "1Ti"
    # What pods mounting it wait for (the filesystem, its mount targets, its CSI driver).
    ready: list[pulumi.Resource] = field(default_factory=list)


class CreatedCluster(Protocol):
    """What a cloud cluster component (GkeCluster, EksCluster) offers once it has created its cluster."""

    kubernetes: k8s.Provider
    storage_class: str | None
    ready: list[pulumi.Resource]
    storage_identity: dict[str, pulumi.Input[str]]
    bucket: pulumi.Input[str] | None
    database: DatabaseServer | None
    dns01_identity: Dns01Identity | None
    shared_filesystems: dict[str, SharedVolume]


@dataclass(frozen=True)
class ClusterHandle:
    """What the app needs to know of the cluster it deploys onto."""

    # Every Kubernetes object goes through this provider.
    provider: k8s.Provider
    # Storage class for the in-cluster database when the config names none
    # (None: the cluster's default class).
    default_storage_class: str | None = None
    # Cluster resources the app waits for (node pools, add-ons).
    ready: list[pulumi.Resource] = field(default_factory=list)
    # Annotations on the Kubernetes service accounts that reach the checkpoint bucket
    # (workload identity); empty: pods reach storage without a cloud identity.
    storage_identity: dict[str, pulumi.Input[str]] = field(default_factory=dict)
    # The checkpoint bucket the cluster component created (None: the configured one, if any): the
    # bucket resource's name, which a stack deployed under an older derivation keeps.
    bucket: pulumi.Input[str] | None = None
    # The managed database the cluster component created (database.mode managed).
    database: DatabaseServer | None = None
    # cert-manager's cloud identity for DNS-01 (None: its solver brings its own credentials,
    # or there is none).
    dns01_identity: Dns01Identity | None = None
    # The shared filesystems the cluster component created, by name (sharedFilesystems of
    # kinds other than existing).
    shared_filesystems: dict[str, SharedVolume] = field(default_factory=dict)
    # Stack outputs of the cluster component (cluster name, kubeconfig, bucket, database endpoint).
    exports: dict[str, pulumi.Input] = field(default_factory=dict)


def created_cluster(component: CreatedCluster, exports: dict[str, pulumi.Input]) -> ClusterHandle:
    """The handle of a cluster a cloud cluster component created."""
    return ClusterHandle(
        provider=component.kubernetes,
        default_storage_class=component.storage_class,
        ready=component.ready,
        storage_identity=component.storage_identity,
        bucket=component.bucket,
        database=component.database,
        dns01_identity=component.dns01_identity,
        shared_filesystems=component.shared_filesystems,
        exports=exports,
    )


def publish(
    component: pulumi.ComponentResource,
    bucket_scheme: str,
    configured_bucket: str | None,
    access: dict[str, pulumi.Input],
) -> None:
    """A created cluster's public outputs (cluster name, checkpoint bucket URL, database
    endpoint), its handle with the stack outputs (name, kubeconfig, `access`: the command that
    writes a kubeconfig, then where the data lives), and the outputs registered; the same for
    every cloud. The component holds `cluster`, `kubeconfig`, `bucket`, `database` and what
    `created_cluster` reads."""
    c: Any = component
    c.cluster_name = c.cluster.name
    bucket = c.bucket or configured_bucket
    c.checkpoint_bucket = pulumi.Output.concat(bucket_scheme, bucket) if bucket else None
    c.database_endpoint = database_endpoint(c.database)
    exports: dict[str, pulumi.Input] = {"clusterName": c.cluster_name, "kubeconfig": c.kubeconfig, **access}
    c.handle = created_cluster(c, exports | data_exports(c.checkpoint_bucket, c.database_endpoint))
    c.register_outputs(
        {
            "clusterName": c.cluster_name,
            "kubeconfig": c.kubeconfig,
            "checkpointBucket": c.checkpoint_bucket,
            "databaseEndpoint": c.database_endpoint,
        }
    )


def database_endpoint(database: DatabaseServer | None) -> pulumi.Output[str] | None:
    """host:port of a database a cluster component created."""
    return pulumi.Output.format("{0}:{1}", database.host, database.port) if database else None


def data_exports(
    bucket_url: pulumi.Input[str] | None, database_endpoint: pulumi.Input[str] | None
) -> dict[str, pulumi.Input]:
    """Stack outputs saying where a created cluster's data lives."""
    values: dict[str, pulumi.Input] = {}
    if bucket_url:
        values["checkpointBucket"] = bucket_url
    if database_endpoint:
        values["databaseEndpoint"] = database_endpoint
    return values
