"""Shared filesystems on GKE (sharedFilesystems of kinds filestore, gcsFuse, managedLustre):
the instance or bucket, what reaches it (export ranges, private services access, firewall,
bucket IAM through workload identity), the cluster's CSI add-ons, and the `SharedVolume`
each gives the app (components/cluster/__init__.py).

- filestore: a Filestore instance, mounted with in-tree `nfs:` PersistentVolumes (one per
  namespace, made by the app): no CSI driver, so no add-on. Why not the Filestore CSI
  driver: its handle must be the same in every PV (4 tokens,
  kubernetes-sigs/gcp-filestore-csi-driver@v1.13.1:pkg/csi_driver/volume_id.go:70-74) and it
  stages, while plain NFS mounts `<ip>:/<share>` the same way without either
  (/work/research26/shared-fs.md §1 "Recipe A").
- gcsFuse: a bucket (created like the checkpoint bucket unless named), mounted as a CSI
  ephemeral inline volume in each pod (no PV, no namespace problem), the gcsfuse sidecar
  injected by GKE's webhook on pods annotated `gke-gcsfuse/volumes: "true"`
  (GoogleCloudPlatform/gcs-fuse-csi-driver@v1.24.4:pkg/webhook/mutatingwebhook.go:49-63).
- managedLustre: a Managed Lustre instance on the VPC through private services access, the
  Lustre CSI driver add-on, a CSI PV per namespace (made by the app from this handle).

Everything that holds data is kept on destroy unless allowDataDeletion (dev), and protected
in prod, as the checkpoint bucket and Cloud SQL are (checkpoints.bucket_options).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_gcp as gcp

from components import constants
from components.cluster import SharedVolume, checkpoints, name_kept, namer
from components.cluster.gke import network as gke_network
from components.cluster.gke import storage
from components.cluster.gke.args import GkeClusterArgs
from components.cluster.gke.network import Network
from components.cluster.gke.node_pools import ACCOUNT, account_id
from components.config import ConfigError, Problem, gcs_fuse
from components.config.gke import pool_zones
from components.config.shared_filesystem_cloud import (
    filesystem_zone,
    lustre_filesystem,
    mounting_zones,
    zonal,
)
from components.config.shared_filesystems import FilestoreFs, GcsFuseFs, ManagedLustreFs

FILESTORE = "gcp:filestore/instance:Instance"
LUSTRE = "gcp:lustre/instance:Instance"
FIREWALL = "gcp:compute/firewall:Firewall"

# Each Filestore instance has one share (its only one: "For this version, only a single file
# share is supported", pulumi-gcp 10.2.0 pulumi_gcp/filestore/instance.py InstanceArgs
# .file_shares); its name is "16 characters or less" (filestore/_inputs.py
# InstanceFileSharesArgs.name), so a fixed one rather than the filesystem's (up to 20).
SHARE = "share"
# "NFSv4.1 can be used with HIGH_SCALE_SSD, ZONAL, REGIONAL and ENTERPRISE. The default is
# NFSv3" (pulumi-gcp 10.2.0 pulumi_gcp/filestore/instance.py InstanceArgs.protocol).
NFS_V4_TIERS = ("ZONAL", "REGIONAL", "ENTERPRISE")

# Read-only datasets need object reads and listing; read-write adds writes and deletes. Either
# role is what the driver's docs bind on the bucket
# (GoogleCloudPlatform/gcs-fuse-csi-driver@v1.24.4:docs/authentication.md:94-110, 158-167).
READ_ROLE = "roles/storage.objectViewer"
WRITE_ROLE = storage.STORAGE_ROLE  # roles/storage.objectUser

LUSTRE_DRIVER = "lustre.csi.storage.gke.io"
# The firewall rule that lets the Lustre servers, in their private services range
# (network.lustre_range_args), reach the nodes' LNet on TCP 988
# (GoogleCloudPlatform/cluster-toolkit@v1.95.0: examples/gke-managed-lustre.yaml:66-76; the
# port the driver uses on GKE 1.33.2-gke.4780000 and later, /work/research26/shared-fs.md §3).
LUSTRE_PORT = "988"


# --- Filestore ---------------------------------------------------------------------------


def pools_zones(args: GkeClusterArgs, fs_name: str) -> list[str]:
    """The zones of the node pools that mount a filesystem (args.filesystem_node_pools), first
    pool first."""
    wanted = args.filesystem_node_pools.get(fs_name, [])
    pools = [pool for name in wanted for pool in args.node_pools if pool.name == name]
    return mounting_zones([pool_zones(args, pool) for pool in pools], list(args.cluster.zones))


def location(args: GkeClusterArgs, fs: FilestoreFs | ManagedLustreFs) -> str:
    """A zonal filesystem's zone (its own, else the first of its pools'), else the region."""
    if not zonal(fs):
        return args.cluster.region
    zone = filesystem_zone(fs, pools_zones(args, fs.name))
    if zone is None:
        index = next(i for i, other in enumerate(args.shared_filesystems) if other is fs)
        at = f"sharedFilesystems[{index}].zone"
        raise ConfigError([Problem(at, "required: the node pools that mount it name no zones")])
    return zone


def network_name(network: pulumi.Input[str]) -> pulumi.Input[str]:
    """The VPC's name, which Filestore's `networks[].network` takes ("The name of the GCE VPC
    network", pulumi-gcp 10.2.0 filestore/_inputs.py InstanceNetworkArgs.network)."""
    if isinstance(network, str):
        return network.rsplit("/", 1)[-1]
    return pulumi.Output.from_input(network).apply(lambda path: path.rsplit("/", 1)[-1])


def shared_vpc(args: GkeClusterArgs, project: str) -> bool:
    """An existing network of another project (a Shared VPC host)."""
    name = args.cluster.network.name or ""
    parts = name.split("/")
    return len(parts) > 1 and parts[0] == "projects" and parts[1] != project


def filestore_network(
    args: GkeClusterArgs, project: str, network: pulumi.Input[str], fs: FilestoreFs | None = None
) -> dict[str, Any]:
    if shared_vpc(args, project):
        # "To provision Filestore instances with shared-vpc from service project,
        # PRIVATE_SERVICE_ACCESS mode must be used" (gcp-filestore-csi-driver docs via
        # /work/research26/shared-fs.md §1); the host project owns the network's PSA.
        return {"network": network, "modes": ["MODE_IPV4"], "connect_mode": "PRIVATE_SERVICE_ACCESS"}
    result = {"network": network_name(network), "modes": ["MODE_IPV4"], "connect_mode": "DIRECT_PEERING"}
    if fs is not None:
        # Beside a GPU fabric: out of 192.168.0.0/16, where the tier's range size is documented
        # (gke_network.filestore_range).
        names = [other.name for other in args.shared_filesystems if isinstance(other, FilestoreFs)]
        if reserved := gke_network.filestore_range(args, fs.name, fs.tier, names):
            result["reserved_ip_range"] = reserved
    return result


def export_options(args: GkeClusterArgs) -> list[dict[str, Any]]:
    """Who may mount the share: the nodes' range of a created network (the kubelet mounts from
    the node's address). An existing network's node range is not known here: the share stays
    open to the VPC, Filestore's default ("All internal IP addresses in the selected VPC
    network can connect", https://cloud.google.com/filestore/docs/architecture, read 2026-11)."""
    net = args.cluster.network
    if net.existing:
        return []
    return [
        {
            "ip_ranges": [net.nodes_cidr],
            "access_mode": "READ_WRITE",
            # Determined's task containers run as root unless agent_user_group says otherwise.
            "squash_mode": "NO_ROOT_SQUASH",
        }
    ]


def filestore_args(
    args: GkeClusterArgs, fs: FilestoreFs, project: str, network: pulumi.Input[str]
) -> dict[str, Any]:
    prod = args.environment == "prod"
    share: dict[str, Any] = {"name": SHARE, "capacity_gb": fs.capacity_gb}
    exports = export_options(args)
    if exports:
        share["nfs_export_options"] = exports
    result: dict[str, Any] = {
        "name": namer(args.cluster).name(FILESTORE, "name", fs.name),
        "location": location(args, fs),
        "tier": fs.tier,
        "file_shares": share,
        "networks": [filestore_network(args, project, network, fs)],
        "description": f"Determined shared filesystem {fs.name} of {args.cluster.name}",
        # The API's own guard besides Pulumi's protect (pulumi-gcp 10.2.0 InstanceArgs
        # .deletion_protection_enabled).
        "deletion_protection_enabled": prod,
        "labels": dict(args.cluster.tags),
    }
    if prod:
        result["deletion_protection_reason"] = "Determined data (sharedFilesystems); environment prod"
    if fs.tier in NFS_V4_TIERS:
        result["protocol"] = "NFS_V4_1"
    return result


def mount_options(fs: FilestoreFs) -> list[str]:
    """The NFS version the instance serves (basic tiers: v3 only)."""
    return ["nfsvers=4.1"] if fs.tier in NFS_V4_TIERS else ["nfsvers=3"]


def _first_ip(networks: Any) -> str:
    network = networks[0]
    addresses = network["ip_addresses"] if isinstance(network, dict) else network.ip_addresses
    return addresses[0]


def filestore_volume(fs: FilestoreFs, instance: Any) -> SharedVolume:
    """How pods reach the share: an NFS PersistentVolume on the instance's address."""
    server = instance.networks.apply(_first_ip)
    return SharedVolume(
        persistent_volume={"nfs": {"server": server, "path": f"/{SHARE}"}},
        mount_options=mount_options(fs),
        capacity=f"{fs.capacity_gb}Gi",
        ready=[instance],
    )


# --- Cloud Storage FUSE --------------------------------------------------------------------


def gcs_fuse_volume(fs: GcsFuseFs, bucket: pulumi.Input[str], ready: list[pulumi.Resource]) -> SharedVolume:
    """A CSI ephemeral inline volume and the annotation that brings the sidecar: the ones the
    Determined side writes into pod specs from the configuration (components.config.gcs_fuse),
    here with the bucket resource's name and what mounting it waits for."""
    return SharedVolume(
        inline=gcs_fuse.gcs_fuse_volume(fs, bucket),  # type: ignore[arg-type]  # an Output is fine
        pod_annotations=dict(gcs_fuse.POD_ANNOTATIONS),
        ready=ready,
    )


def bucket_role(fs: GcsFuseFs) -> str:
    return READ_ROLE if fs.read_only else WRITE_ROLE


def fuse_accounts(args: GkeClusterArgs) -> list[tuple[str, str]]:
    """(namespace, Kubernetes service account) of the pods that mount a gcsFuse filesystem:
    the task service account in each of their namespaces, and the master's where its
    namespace is one (a gcsFuse checkpoint filesystem)."""
    namespaces = [
        ns
        for fs in args.shared_filesystems
        if isinstance(fs, GcsFuseFs)
        for ns in args.filesystem_namespaces.get(fs.name, [])
    ]
    accounts = [(ns, constants.TASK_SERVICE_ACCOUNT) for ns in dict.fromkeys(namespaces)]
    if args.namespace in namespaces:
        accounts.insert(0, (args.namespace, constants.MASTER_NAME))
    return accounts


@dataclass(frozen=True)
class FuseIdentity:
    """The Google account gcsFuse pods act as: the checkpoint bucket's when there is one (its
    Kubernetes accounts are already bound), else one made for the shared filesystems."""

    member: pulumi.Input[str]
    # Annotations for the Kubernetes service accounts (empty: the checkpoint storage's are used).
    annotations: dict[str, pulumi.Input[str]] = field(default_factory=dict)
    ready: list[pulumi.Resource] = field(default_factory=list)


def fuse_identity(
    args: GkeClusterArgs,
    project: str,
    checkpoint_identity: dict[str, pulumi.Input[str]],
    cluster: pulumi.Resource,
    opts: pulumi.ResourceOptions,
) -> FuseIdentity:
    if checkpoint_identity:
        # The master's and every task namespace's accounts act as it already
        # (storage.checkpoint_bucket, checkpoints.kubernetes_accounts).
        email = checkpoint_identity[storage.ANNOTATION]
        return FuseIdentity(member=pulumi.Output.concat("serviceAccount:", email))
    account = gcp.serviceaccount.Account(
        "shared-files",
        opts=name_kept(opts, ACCOUNT, "accountId"),
        account_id=account_id(args, "files"),
        display_name=f"Determined shared filesystems of {args.cluster.name}",
    )
    bindings = [
        gcp.serviceaccount.IAMMember(
            f"shared-files-{namespace}-{ksa}",
            service_account_id=account.name,
            role=storage.WORKLOAD_IDENTITY_ROLE,
            member=storage.workload_identity_member(project, namespace, ksa),
            # The identity pool <project>.svc.id.goog exists once a cluster uses it.
            opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[cluster])),
        )
        for namespace, ksa in fuse_accounts(args)
    ]
    return FuseIdentity(account.member, {storage.ANNOTATION: account.email}, bindings)


# --- Managed Lustre ------------------------------------------------------------------------


def lustre_firewall_args(
    args: GkeClusterArgs, network: pulumi.Input[str], address: pulumi.Input[str]
) -> dict[str, Any]:
    return {
        "name": namer(args.cluster).name(FIREWALL, "name", "lustre"),
        "network": network,
        "direction": "INGRESS",
        "description": f"Managed Lustre servers reach the LNet of {args.cluster.name}'s nodes",
        "source_ranges": [pulumi.Output.concat(address, f"/{gke_network.LUSTRE_RANGE_PREFIX}")],
        "allows": [{"protocol": "tcp", "ports": [LUSTRE_PORT]}],
    }


def lustre_args(
    args: GkeClusterArgs, fs: ManagedLustreFs, project: str, network: pulumi.Input[str]
) -> dict[str, Any]:
    return {
        "instance_id": namer(args.cluster).name(LUSTRE, "instanceId", fs.name),
        "location": location(args, fs),
        "filesystem": lustre_filesystem(fs),
        # Strings in the API (pulumi-gcp 10.2.0 pulumi_gcp/lustre/instance.py InstanceArgs).
        "capacity_gib": str(fs.capacity_gib),
        "per_unit_storage_throughput": str(fs.throughput),
        # "projects/{project_id}/global/networks/{network_name}" (same docstring).
        "network": network,
        # Left unset: instances created with gke_support_enabled need the legacy LNet port 6988
        # on the nodes whatever the cluster version (/work/research26/shared-fs.md §3).
        "description": f"Determined shared filesystem {fs.name} of {args.cluster.name}",
        "labels": dict(args.cluster.tags),
        "project": project,
    }


def lustre_volume(fs: ManagedLustreFs, project: str, instance: Any) -> SharedVolume:
    """A CSI PersistentVolume source: handle <project>/<zone>/<instance>
    (GoogleCloudPlatform/lustre-csi-driver@v0.6.11:pkg/util/util.go:134-149 requires those 3
    tokens) and the instance's address and filesystem
    (…@v0.6.11:examples/pre-prov/preprov-pvc-pv.yaml:15-38)."""
    # mount_point is "IP_ADDRESS@tcp:/FILESYSTEM" (pulumi-gcp 10.2.0 lustre/instance.py).
    ip = instance.mount_point.apply(lambda point: point.split("@", 1)[0])
    handle = pulumi.Output.format("{0}/{1}/{2}", project, instance.location, instance.instance_id)
    return SharedVolume(
        persistent_volume={
            "csi": {
                "driver": LUSTRE_DRIVER,
                "volumeHandle": handle,
                "volumeAttributes": {"ip": ip, "filesystem": lustre_filesystem(fs)},
            }
        },
        capacity=f"{fs.capacity_gib}Gi",
        ready=[instance],
    )


# --- registration --------------------------------------------------------------------------


@dataclass(frozen=True)
class SharedFilesystems:
    volumes: dict[str, SharedVolume]
    # Annotations for the task service accounts when no checkpoint storage gives them one.
    identity: dict[str, pulumi.Input[str]] = field(default_factory=dict)


def data_options(args: GkeClusterArgs, data: pulumi.ResourceOptions) -> pulumi.ResourceOptions:
    """Kept unless allowDataDeletion (`data`), protected in prod (as the checkpoint bucket)."""
    return checkpoints.bucket_options(args, data)


def shared_filesystems(
    args: GkeClusterArgs,
    project: str,
    net: Network,
    cluster: pulumi.Resource,
    checkpoint_identity: dict[str, pulumi.Input[str]],
    opts: pulumi.ResourceOptions,
    data: pulumi.ResourceOptions,
) -> SharedFilesystems:
    """Every gke-kind shared filesystem with what reaches it; `data`: options of data."""
    volumes: dict[str, SharedVolume] = {}
    kept = data_options(args, data)
    identity: FuseIdentity | None = None
    lustre_ready: list[pulumi.Resource] | None = None
    for fs in args.shared_filesystems:
        if isinstance(fs, FilestoreFs):
            instance = gcp.filestore.Instance(
                f"fs-{fs.name}",
                opts=gke_network.range_kept(kept, FILESTORE),
                **filestore_args(args, fs, project, net.network),
            )
            volumes[fs.name] = filestore_volume(fs, instance)
        elif isinstance(fs, GcsFuseFs):
            if identity is None:
                identity = fuse_identity(args, project, checkpoint_identity, cluster, opts)
            ready: list[pulumi.Resource] = [*identity.ready]
            if fs.bucket:
                name: pulumi.Input[str] = fs.bucket
            else:
                # The name the Determined side derives too (stack_args.filesystem_buckets).
                derived = gcs_fuse.bucket_name(
                    pulumi.get_stack(), args.cluster.region, args.cluster.name, fs.name
                )
                bucket = gcp.storage.Bucket(
                    f"fs-{fs.name}",
                    # Bucket names are fixed at creation (components/names.py, kept).
                    opts=name_kept(kept, storage.BUCKET, "name"),
                    **storage.bucket_args(args, derived),
                )
                name = bucket.name
                ready.append(bucket)
            ready.append(
                gcp.storage.BucketIAMMember(
                    f"fs-{fs.name}-objects",
                    bucket=name,
                    role=bucket_role(fs),
                    member=identity.member,
                    opts=opts,
                )
            )
            volumes[fs.name] = gcs_fuse_volume(fs, name, ready)
        elif isinstance(fs, ManagedLustreFs):
            if lustre_ready is None:
                lustre_ready = lustre_network(args, net, opts)
            instance = gcp.lustre.Instance(
                f"fs-{fs.name}",
                opts=pulumi.ResourceOptions.merge(kept, pulumi.ResourceOptions(depends_on=lustre_ready)),
                **lustre_args(args, fs, project, net.network),
            )
            volumes[fs.name] = lustre_volume(fs, project, instance)
    return SharedFilesystems(volumes, identity.annotations if identity else {})


def lustre_network(args: GkeClusterArgs, net: Network, opts: pulumi.ResourceOptions) -> list[pulumi.Resource]:
    """What Lustre instances wait for on a created network: its private services access (the
    range and connection network.network makes, shared with Cloud SQL) and the LNet firewall
    rule. An existing network's owner provides both (docs/clouds/gke.md, Shared VPC)."""
    if args.cluster.network.existing or net.lustre_range is None:
        return []
    firewall = gcp.compute.Firewall(
        "lustre-lnet", opts=opts, **lustre_firewall_args(args, net.network, net.lustre_range.address)
    )
    return [*net.lustre_ready, firewall]
