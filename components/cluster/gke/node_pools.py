"""GKE node pools from `determined:nodePools`, and the least-privilege service account
their nodes run as.

Nodes run as a dedicated account holding only what a node needs (writing logs and
metrics, pulling from Artifact Registry), never the Compute Engine default account. Pods
get no cloud access from the node: GKE_METADATA hides the node's identity from them, and
workload identity gives the pods that need it their own.
"""

from __future__ import annotations

import math
from typing import Any

import pulumi
import pulumi_gcp as gcp

from components.addons.provisioning import queued_provisioning
from components.cluster import namer
from components.cluster.gke import compute_classes, fabric, queued
from components.cluster.gke.args import GkeClusterArgs
from components.cluster.gke.compute_classes import SubPool
from components.config import gke_machines
from components.config.gke import image_streaming, pool_zones
from components.config.node_pools import ARM_TAINT, GkeNodePool

NODE_ROLES = ("roles/container.defaultNodeServiceAccount", "roles/artifactregistry.reader")
# Image streaming with a node account other than the default: "you must make sure the custom
# service account has the Service Usage Consumer (roles/serviceusage.serviceUsageConsumer) IAM
# role in the project that hosts the container image" (GKE image streaming, Requirements:
# https://docs.cloud.google.com/kubernetes-engine/docs/how-to/image-streaming, quoted in
# /work/review26/gke.md §4, read 2026-11); without it pulls silently fall back to full downloads.
STREAMING_ROLE = "roles/serviceusage.serviceUsageConsumer"


def node_roles(args: GkeClusterArgs) -> tuple[str, ...]:
    """The node account's project roles: NODE_ROLES, and STREAMING_ROLE when a pool streams."""
    if any(image_streaming(pool) for pool in args.node_pools):
        return (*NODE_ROLES, STREAMING_ROLE)
    return NODE_ROLES


# GKE's default scopes, not cloud-platform: what the node's own agents use (image pulls,
# logging, monitoring); IAM on the account above limits them further.
NODE_SCOPES = (
    "https://www.googleapis.com/auth/devstorage.read_only",
    "https://www.googleapis.com/auth/logging.write",
    "https://www.googleapis.com/auth/monitoring",
    "https://www.googleapis.com/auth/service.management.readonly",
    "https://www.googleapis.com/auth/servicecontrol",
    "https://www.googleapis.com/auth/trace.append",
)

# GKE's label for pools whose GPUs the GPU operator's device plugin serves instead of GKE's.
NO_GKE_DEVICE_PLUGIN = "gke-no-default-nvidia-gpu-device-plugin"


ACCOUNT = "gcp:serviceaccount/account:Account"


def account_id(args: GkeClusterArgs, purpose: str) -> str:
    """A service account ID for `purpose`, unique in the project (components.names)."""
    return namer(args.cluster).name(ACCOUNT, "accountId", purpose)


def node_account_args(args: GkeClusterArgs) -> dict[str, Any]:
    return {
        "account_id": account_id(args, "nodes"),
        "display_name": f"GKE nodes of {args.cluster.name}",
    }


def _accelerator(pool: GkeNodePool, operator: bool) -> dict[str, Any]:
    gpu = pool.gpu
    accelerator: dict[str, Any] = {
        "type": gpu.type,
        "count": gpu.count,
        # With the operator, Google's driver installer DaemonSet installs drivers instead.
        "gpu_driver_installation_config": {
            "gpu_driver_version": "INSTALLATION_DISABLED" if operator else gpu.driver_version
        },
    }
    if gpu.partition_size:
        accelerator["gpu_partition_size"] = gpu.partition_size
    if gpu.sharing:
        accelerator["gpu_sharing_config"] = {
            "gpu_sharing_strategy": gpu.sharing.strategy,
            "max_shared_clients_per_gpu": gpu.sharing.max_shared_clients_per_gpu,
        }
    return accelerator


def node_labels(pool: GkeNodePool, operator: bool) -> dict[str, str]:
    labels = dict(pool.node_labels)
    if pool.gpu and operator:
        labels[NO_GKE_DEVICE_PLUGIN] = "true"
    return labels


def disk_type(pool: GkeNodePool) -> str:
    return pool.disk_type or gke_machines.default_disk_type(pool.machine_type)


# Zones GKE spreads a regional cluster's pool over when neither the pool nor the cluster
# names them. Source: https://cloud.google.com/kubernetes-engine/docs/concepts/regional-clusters
# (read 2026-11-25): with the default configuration a regional cluster in us-east1
# "provisions nodes in three us-east1 zones".
DEFAULT_ZONE_COUNT = 3


def initial_node_count(pool: GkeNodePool | SubPool, zones: list[str] | None) -> int:
    """Nodes per zone at creation (GKE creates that many in every zone): enough for minNodes
    over the pool's zones, unless that passes maxNodes; then as many as maxNodes allows, maybe
    0. Such a pool reaches minNodes once pods wait for it: the autoscaler adds nodes for
    pending pods and does not grow a pool to its minimum by itself (kubernetes/autoscaler issue
    #2288, a maintainer: "This is not specific to GKE, it's in general how CA works", read
    2026-11-25). Read at creation only (ignore_changes)."""
    count = len(zones) if zones else DEFAULT_ZONE_COUNT
    per_zone = math.ceil(pool.min_nodes / count)
    return per_zone if per_zone * count <= pool.max_nodes else pool.max_nodes // count


# GPU pools upgrade one node at a time without a surge node: a surge upgrade first creates an
# extra node, and "upgrades can fail if your project does not have enough resources" (GPU quota,
# reservations, capacity): https://cloud.google.com/kubernetes-engine/docs/how-to/
# node-upgrades-quota, "Resources for surge upgrades": "if maxSurge is set to more than zero",
# else none; without spare capacity it points to upgrading in a resource-constrained
# environment (read 2026-11-25). maxUnavailable 1: one node drained at a time. Updated in place:
# upgrade_settings is not ForceNew, a change calls NodePools.update (hashicorp/
# terraform-provider-google google/services/container/resource_container_node_pool.go at
# e03b762, 2026-08-21, read 2026-11-25). CPU pools keep GKE's default (maxSurge 1).
GPU_UPGRADE_SETTINGS = {"strategy": "SURGE", "max_surge": 0, "max_unavailable": 1}


def node_taints(pool: GkeNodePool) -> list[dict[str, str]]:
    """The taints the node pool API is given: the pool's, without the Arm taint GKE puts on Arm
    nodes itself (ARM_TAINT: the API's default architecture taint behaviour). node_config's
    taint_config is not sent: GKE versions that lack it refuse it (hashicorp/
    terraform-provider-google issue #28418, 2026-07-21, read 2026-11-25)."""
    return [t.node_taint for t in pool.all_taints if t != ARM_TAINT]


def secure_boot(args: GkeClusterArgs, pool: GkeNodePool) -> bool:
    """Secure boot loads only signed kernel modules. GKE-managed drivers are signed; with the
    GPU operator the GPU pools' drivers come another way, so secure boot is off there. CPU
    pools load no GPU driver and keep it."""
    return not (args.gpu_operator.enabled and pool.gpu)


def ignored_changes(pool: GkeNodePool) -> list[str]:
    """Inputs an update leaves as they are on an existing pool: the initial size (the
    autoscaler owns the size; a new one would replace the pool), and on CPU pools the
    shielded instance options. Changing those replaces the pool (node_config's
    shielded_instance_config is ForceNew in the provider: hashicorp/terraform-provider-google
    google/services/container/node_config.go, read 2026-11-25); CPU pools created while
    secure boot was off on every pool of a GPU-operator stack keep it off until they are
    replaced for another reason, new CPU pools get it on."""
    return ["initialNodeCount"] if pool.gpu else ["initialNodeCount", "nodeConfig.shieldedInstanceConfig"]


# Node auto-repair recreates a node that reports NotReady, or nothing, for about 10 minutes, or
# whose boot disk is full for about 30 (https://cloud.google.com/kubernetes-engine/docs/how-to/
# node-auto-repair, "Repair criteria", read 2026-11-26). GPU pools get it like every pool, but none
# of its checks looks at the GPUs: a GPU that fails while the kubelet stays Ready (XID 79 "fallen
# off the bus", double-bit ECC) is not repaired; the GPU alerts of the observability stack see it
# (docs/clouds/gke.md, node health). Changed in place (management is not ForceNew:
# hashicorp/terraform-provider-google google/services/container/resource_container_node_pool.go at
# e03b762, :485-508, read 2026-11-26). Auto-upgrade stays on: with a release
# channel (every cluster of this stack has one) "Node auto-upgrade defaults to true and cannot be
# disabled" (https://cloud.google.com/kubernetes-engine/docs/reference/rest/Shared.Types/ReleaseChannel,
# read 2026-11-26).
def management(args: GkeClusterArgs, capacity_type: str = "onDemand") -> dict[str, bool]:
    """Every pool's node management: auto-repair as `cluster.nodeRepair` says, auto-upgrade on;
    flex-start node pools without auto-repair: "enable_flex_start needs node auto_repair set to
    false" (Google's node pool module, GoogleCloudPlatform/cluster-toolkit@01a7a3e
    modules/compute/gke-node-pool/main.tf, its preconditions, read 2026-11-26; Google's
    flex-start gcloud examples pass `--no-enable-autorepair`)."""
    repair = args.cluster.node_repair and capacity_type != "flexStart"
    return {"auto_repair": repair, "auto_upgrade": True}


def local_ssd_config(pool: GkeNodePool, machine_type: str | None = None) -> dict[str, Any]:
    """Local SSDs as the nodes' ephemeral storage (emptyDirs, images), RAID0 when several:
    `ephemeral_storage_local_ssd_config` (pulumi-gcp 10.2.0 container/_inputs.py
    NodePoolNodeConfigEphemeralStorageLocalSsdConfigArgs) for `machine_type` (default: the
    pool's). The count is gke_machines.ephemeral_ssd_count: 0 only where the API documents it
    as the machine's own number (Gen3 series). ForceNew (terraform-provider-google@e03b762
    node_config.go:454): adding or changing it replaces the pool. Nothing on pools without
    localNvme."""
    if pool.local_nvme is None:
        return {}
    count = gke_machines.ephemeral_ssd_count(machine_type or pool.machine_type, pool.local_nvme.count)
    return {"ephemeral_storage_local_ssd_config": {"local_ssd_count": count}}


def image_streaming_config(pool: GkeNodePool) -> dict[str, Any]:
    """Image streaming (`gcfs_config`), updated in place (not ForceNew; a change calls
    NodePools.update: terraform-provider-google@e03b762 node_config.go:241-258, :4300-4330). Sent
    when on, and when fastImagePulls is false, to turn it off; pools that neither stream nor say
    false keep their node_config as it was."""
    if image_streaming(pool):
        return {"gcfs_config": {"enabled": True}}
    if pool.fast_image_pulls is False:
        return {"gcfs_config": {"enabled": False}}
    return {}


# Fabrics whose machines GKE's compact placement documents: its Standard limitations list the
# GPUs "A100, L4 and H100" (https://cloud.google.com/kubernetes-engine/docs/how-to/
# compact-placement, read 2026-11; /work/research26/fabric.md §2.4), i.e. A3 Mega (tcpxo). A3
# Ultra/A4 (rdma, H200/B200) are not listed; their capacity comes from dense reservations that
# place the VMs themselves (cluster-toolkit@1047080 examples/gke-a3-ultragpu: a reservation, no
# placement policy).
COMPACT_FABRICS = ("tcpxo",)


def compact_placement(pool: GkeNodePool, sub: SubPool) -> bool:
    """A tcpxo pool's nodes close together (placement_policy COMPACT, single zone), except where
    GKE refuses it or the capacity is already placed: queued provisioning and flex-start
    (GoogleCloudPlatform/cluster-toolkit@1047080 modules/compute/gke-node-pool/main.tf
    preconditions :383-460: COMPACT not with queued provisioning, with flex-start only on A3
    Ultra/A4), and a specific reservation, whose VMs exist where the reservation put them
    (cluster-toolkit@v1.95.0 examples/gke-a3-megagpu/gke-a3-megagpu.yaml:127-141 consumes a
    SPECIFIC_RESERVATION and sets no placement policy). ForceNew, like the additional node
    networks ("you cannot add or remove node network or Pod network interfaces after creating a
    node pool": https://cloud.google.com/kubernetes-engine/docs/how-to/setup-multinetwork-support-
    for-pods, read 2026-11)."""
    if pool.fabric not in COMPACT_FABRICS or queued_provisioning(pool):
        return False
    return sub.capacity_type not in ("flexStart", "reservation")


def node_pool_args(
    args: GkeClusterArgs,
    pool: GkeNodePool,
    cluster: Any,
    service_account: Any,
    sub: SubPool | None = None,
) -> dict[str, Any]:
    """One GKE node pool of `pool`: `sub` (compute_classes.sub_pools), by default its first
    (the only one of a pool without a ComputeClass). Every node pool of a pool gets the same
    GPUs, driver settings, labels and taints; they differ in machine type and how it is bought."""
    sub = sub or compute_classes.sub_pools(pool)[0]
    operator = args.gpu_operator.enabled
    # The pool as this node pool's machine type sees it (its default boot disk type).
    as_built = pool.model_copy(update={"machine_type": sub.machine_type})
    node_config: dict[str, Any] = {
        "machine_type": sub.machine_type,
        "image_type": pool.image_type,
        "disk_size_gb": pool.disk_size_gb,
        "disk_type": disk_type(as_built),
        "labels": node_labels(pool, operator),
        "taints": node_taints(pool),
        **compute_classes.capacity_node_config(pool, sub),
        "service_account": service_account,
        "oauth_scopes": list(NODE_SCOPES),
        "workload_metadata_config": {"mode": "GKE_METADATA"},
        "shielded_instance_config": {
            "enable_secure_boot": secure_boot(args, pool),
            "enable_integrity_monitoring": True,
        },
        "metadata": {"disable-legacy-endpoints": "true"},
        "resource_labels": dict(args.cluster.tags),
    }
    if pool.gpu:
        node_config["guest_accelerators"] = [_accelerator(pool, operator)]
    node_config.update(local_ssd_config(pool, sub.machine_type))
    node_config.update(image_streaming_config(pool))
    if pool.fabric:
        node_config["gvnic"] = {"enabled": True}
    zones = pool_zones(args, pool)
    reservation = pool.capacity.reservation if pool.capacity is not None else None
    if sub.capacity_type == "reservation" and reservation is not None and reservation.zone:
        # A specific reservation holds VMs of one zone: its node pool scales there only.
        zones = [reservation.zone]
    result: dict[str, Any] = {
        "name": sub.name,
        "cluster": cluster,
        "location": args.cluster.region,
        # Updated in place when it changes: node_locations is not ForceNew, an update calls
        # NodePools.update with the new locations (hashicorp/terraform-provider-google
        # google/services/container/resource_container_node_pool.go, read 2026-11-25).
        "node_locations": zones,
        "initial_node_count": initial_node_count(sub, zones),
        "autoscaling": {
            "total_min_node_count": sub.min_nodes,
            "total_max_node_count": sub.max_nodes,
            # Spot, flex-start and reserved capacity is found wherever it is; on-demand pools
            # stay spread.
            "location_policy": compute_classes.location_policy(sub.capacity_type),
        },
        "management": management(args, sub.capacity_type),
        # Set on every pool, so that turning cluster.privateNodes on (or off) reaches pools that
        # exist: unset, a pool keeps what the cluster said when it was created. Updated in place
        # (network_config.enable_private_nodes is not ForceNew; a change calls NodePools.update:
        # resource_container_node_pool.go at e03b762, read 2026-11-25). Pools of a public cluster
        # already report false (the API derives an unset value from the cluster's private
        # nodes setting: NodeNetworkConfig.enablePrivateNodes, https://pub.dev/documentation/
        # googleapis/latest/container_v1/NodeNetworkConfig/enablePrivateNodes.html, read
        # 2026-11-25).
        "network_config": {"enable_private_nodes": args.cluster.private_nodes},
        "node_config": node_config,
    }
    if pool.gpu:
        result["upgrade_settings"] = dict(GPU_UPGRADE_SETTINGS)
    if pool.fabric:
        result["network_config"]["additional_node_network_configs"] = fabric.node_network_configs(
            args, pool.fabric
        )
        if compact_placement(pool, sub):
            result["placement_policy"] = {"type": "COMPACT"}
    # Queued provisioning (capacity.queued): GKE's settings for such pools over the rest.
    return queued.merged(result, queued.node_pool_settings(pool))


def pools(
    args: GkeClusterArgs,
    cluster_id: pulumi.Input[str],
    account: gcp.serviceaccount.Account,
    project: str,
    opts: pulumi.ResourceOptions,
) -> dict[str, list[gcp.container.NodePool]]:
    """The nodes' grants (node_roles for `account`) and the node pools: per configured pool (in
    the Args' order) its GKE node pools (several for a pool with a ComputeClass); before them
    the networks of the pools' GPU fabrics (components/cluster/gke/fabric.py), which fabric
    pools wait for."""
    grants = [
        gcp.projects.IAMMember(
            f"nodes-{role.rsplit('/', 1)[-1]}", project=project, role=role, member=account.member, opts=opts
        )
        for role in node_roles(args)
    ]
    fabric_networks = fabric.networks(args, project, opts)
    return {
        pool.name: [
            gcp.container.NodePool(
                sub.name,
                opts=pulumi.ResourceOptions.merge(
                    opts,
                    pulumi.ResourceOptions(
                        depends_on=grants + (fabric_networks if pool.fabric else []),
                        # The autoscaler owns the size; CPU pools keep their secure boot.
                        ignore_changes=ignored_changes(pool),
                        # The pool's name is fixed: a change that replaces it (GPUs, spot,
                        # service account, scopes, local SSDs, a fabric's node networks and
                        # placement) must delete the old pool first. The machine
                        # type, boot disk and image type are updated in place (not ForceNew:
                        # terraform-provider-google node_config.go at e03b762, read 2026-11-25).
                        delete_before_replace=True,
                    ),
                ),
                **node_pool_args(args, pool, cluster_id, account.email, sub),
            )
            for sub in compute_classes.sub_pools(pool)
        ]
        for pool in args.node_pools
    }
