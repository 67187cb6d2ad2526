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

from deploy.config import GkeStack, gke_machines
from deploy.config.gke import pool_zones
from deploy.config.node_pools import GkeNodePool
from deploy.platform import namer

NODE_ROLES = ("roles/container.defaultNodeServiceAccount", "roles/artifactregistry.reader")

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


def account_id(cfg: GkeStack, purpose: str) -> str:
    """A service account ID for `purpose`, unique in the project (deploy.names)."""
    return namer(cfg).name(ACCOUNT, "accountId", purpose)


def node_account_args(cfg: GkeStack) -> dict[str, Any]:
    return {
        "account_id": account_id(cfg, "nodes"),
        "display_name": f"GKE nodes of {cfg.cluster.name}",
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


def secure_boot(cfg: GkeStack, pool: GkeNodePool) -> bool:
    """Secure boot loads only signed kernel modules. GKE-managed drivers are signed; with the
    GPU operator the GPU pools' drivers come another way, so secure boot is off there. CPU
    pools load no GPU driver and keep it."""
    return not (cfg.gpu_operator.enabled and pool.gpu)


def ignored_changes(pool: GkeNodePool) -> list[str]:
    """Inputs an update leaves as they are on an existing pool: the initial size (the
    autoscaler owns the size; a new one would replace the pool), and on CPU pools the
    shielded instance options. Changing those replaces the pool (node_config's
    shielded_instance_config is ForceNew in the provider: hashicorp/terraform-provider-google
    google/services/container/node_config.go, read 2026-11-25); CPU pools created while
    secure boot was off on every pool of a GPU-operator stack keep it off until they are
    replaced for another reason, new CPU pools get it on."""
    return ["initialNodeCount"] if pool.gpu else ["initialNodeCount", "nodeConfig.shieldedInstanceConfig"]


def node_pool_args(cfg: GkeStack, pool: GkeNodePool, cluster: Any, service_account: Any) -> dict[str, Any]:
    operator = cfg.gpu_operator.enabled
    node_config: dict[str, Any] = {
        "machine_type": pool.machine_type,
        "image_type": pool.image_type,
        "disk_size_gb": pool.disk_size_gb,
        "disk_type": disk_type(pool),
        "labels": node_labels(pool, operator),
        "taints": [t.node_taint for t in pool.all_taints],
        "spot": pool.spot,
        "service_account": service_account,
        "oauth_scopes": list(NODE_SCOPES),
        "workload_metadata_config": {"mode": "GKE_METADATA"},
        "shielded_instance_config": {
            "enable_secure_boot": secure_boot(cfg, pool),
            "enable_integrity_monitoring": True,
        },
        "metadata": {"disable-legacy-endpoints": "true"},
        "resource_labels": dict(cfg.cluster.tags),
    }
    if pool.gpu:
        node_config["guest_accelerators"] = [_accelerator(pool, operator)]
    zones = pool_zones(cfg, pool)
    return {
        "name": pool.name,
        "cluster": cluster,
        "location": cfg.cluster.region,
        # Updated in place when it changes: node_locations is not ForceNew, an update calls
        # NodePools.update with the new locations (hashicorp/terraform-provider-google
        # google/services/container/resource_container_node_pool.go, read 2026-11-25).
        "node_locations": zones,
        # Per zone; only read at creation (later sizes are the autoscaler's).
        "initial_node_count": math.ceil(pool.min_nodes / (len(zones) if zones else DEFAULT_ZONE_COUNT)),
        "autoscaling": {
            "total_min_node_count": pool.min_nodes,
            "total_max_node_count": pool.max_nodes,
            # Spot capacity is found wherever it is; on-demand pools stay spread.
            "location_policy": "ANY" if pool.spot else "BALANCED",
        },
        "management": {"auto_repair": True, "auto_upgrade": True},
        "node_config": node_config,
    }
