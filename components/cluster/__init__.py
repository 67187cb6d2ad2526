"""Where Determined runs: one module per target, each giving the app a `ClusterHandle`.

`existing` connects to a cluster made elsewhere; `gke` and `eks` create one. The app
never asks which cloud it is on: whatever differs between targets is in the handle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import pulumi
import pulumi_kubernetes as k8s

from components import names
from components.config import EksStack, ExistingStack, GkeStack, StackConfig


def namer(cfg: GkeStack | EksStack) -> names.Namer:
    """The cloud names of this stack's resources (components.names)."""
    return names.Namer(pulumi.get_stack(), cfg.cluster.region, cfg.cluster.name)


def name_kept(opts: pulumi.ResourceOptions, resource: str, prop: str) -> pulumi.ResourceOptions:
    """`opts` with the resource's name fixed at creation where its derivation changed
    (names.kept_at_creation): existing stacks keep their names, nothing is replaced."""
    return pulumi.ResourceOptions.merge(
        opts, pulumi.ResourceOptions(ignore_changes=names.kept_at_creation(resource, prop))
    )


@dataclass(frozen=True)
class DatabaseServer:
    """A database the platform created (Cloud SQL), reached on a private address."""

    host: pulumi.Output[str]
    port: int
    name: str
    user: str
    password: pulumi.Output[str]  # a Pulumi secret
    ssl_mode: str


@dataclass(frozen=True)
class Dns01Identity:
    """The cloud identity a platform gave cert-manager for DNS-01 with its cloud's DNS (gke:
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


class CreatedCluster(Protocol):
    """What a cloud platform component (gke, eks) offers once it has created its cluster."""

    kubernetes: k8s.Provider
    storage_class: str | None
    ready: list[pulumi.Resource]
    storage_identity: dict[str, pulumi.Input[str]]
    bucket: pulumi.Input[str] | None
    database: DatabaseServer | None
    dns01_identity: Dns01Identity | None


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
    # The checkpoint bucket the platform created (None: the configured one, if any): the
    # bucket resource's name, which a stack deployed under an older derivation keeps.
    bucket: pulumi.Input[str] | None = None
    # The managed database the platform created (database.mode managed).
    database: DatabaseServer | None = None
    # cert-manager's cloud identity for DNS-01 (None: its solver brings its own credentials,
    # or there is none).
    dns01_identity: Dns01Identity | None = None
    # Stack outputs of the platform (cluster name, kubeconfig, bucket, database endpoint).
    exports: dict[str, pulumi.Input] = field(default_factory=dict)


def created_cluster(platform: CreatedCluster, exports: dict[str, pulumi.Input]) -> ClusterHandle:
    """The handle of a cluster a cloud platform component created."""
    return ClusterHandle(
        provider=platform.kubernetes,
        default_storage_class=platform.storage_class,
        ready=platform.ready,
        storage_identity=platform.storage_identity,
        bucket=platform.bucket,
        database=platform.database,
        dns01_identity=platform.dns01_identity,
        exports=exports,
    )


def data_exports(
    bucket_url: pulumi.Input[str] | None, database: DatabaseServer | None
) -> dict[str, pulumi.Input]:
    """Stack outputs saying where a created cluster's data lives."""
    values: dict[str, pulumi.Input] = {}
    if bucket_url:
        values["checkpointBucket"] = bucket_url
    if database:
        values["databaseEndpoint"] = pulumi.Output.format("{0}:{1}", database.host, database.port)
    return values


def connect(cfg: StackConfig) -> ClusterHandle:
    """The handle of the cluster the config names; each target imports only its own SDK."""
    if isinstance(cfg, ExistingStack):
        from components.cluster import existing

        return existing.connect(cfg)
    if isinstance(cfg, GkeStack):
        from components.cluster import gke

        return gke.connect(cfg)
    if isinstance(cfg, EksStack):
        from components.cluster import eks

        return eks.connect(cfg)
    raise NotImplementedError(f"cloud {cfg.cloud}")  # refused by config validation first
