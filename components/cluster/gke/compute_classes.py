"""GKE ComputeClasses: a pool whose nodes may come from several purchase options or machine
types (`nodePools[].capacity`) becomes one GKE node pool per (purchase option x machine type),
and a ComputeClass that lists them in the user's order.

Why node pools made here and not node auto-provisioning: a ComputeClass falls back across
node pools it names (`priorities[].nodepools`) on GKE Standard without node pool auto-
creation; such pools keep everything this project sets on a pool (GPU driver or the GPU
operator's labels, taints, zones, secure boot, the node service account) and their min/max
sizes, where auto-created pools take GKE's defaults and need cluster-wide NAP limits.
Google's own GPU platform does the same: one node pool per purchase option, reservation,
on-demand, spot and flex-start (GoogleCloudPlatform/accelerated-platforms@5bb3d69
platforms/gke/base/core/container_node_pool/gpu/region/us-central1/container_node_pool_gpu_l4.tf,
read 2026-11-26); the ComputeClass reference: https://docs.cloud.google.com/kubernetes-engine/
docs/reference/crds/computeclass (read 2026-11-26).

The class is cluster-scoped and named after the pool (COMPUTE_CLASS_PREFIX + name): a GKE
stack creates its own cluster, so one stack owns every class in it.
"""

from __future__ import annotations

from typing import Any

from components import kube
from components.config.gke_sub_pools import SubPool, node_pool_names, sub_pools
from components.config.node_pools import GkeNodePool

__all__ = ["SubPool", "node_pool_names", "sub_pools"]

API_VERSION = "cloud.google.com/v1"
KIND = "ComputeClass"
COMPONENT = "compute-class"

# Reservation affinity by name: the key GKE reads a specific reservation's name from (pulumi-gcp
# 10.2.0 NodePoolNodeConfigReservationAffinityArgs.key: "To target a SPECIFIC_RESERVATION by
# name, specify "compute.googleapis.com/reservation-name" as the key").
RESERVATION_NAME_KEY = "compute.googleapis.com/reservation-name"

# Pods that no priority can place stay pending (DoNotScaleUp, the CRD's default), never on
# nodes outside the class: ScaleUpAnyway makes GKE create nodes of its default machine series
# for them, which needs node pool auto-creation and carries no GPUs (the CRD's
# spec.whenUnsatisfiable; https://docs.cloud.google.com/kubernetes-engine/docs/concepts/
# about-custom-compute-classes, "Define scaling behavior when no priority rules apply", read
# 2026-11-26). A pending task is what Determined shows and retries.
WHEN_UNSATISFIABLE = "DoNotScaleUp"


def reservation_affinity(pool: GkeNodePool, capacity_type: str) -> dict[str, Any] | None:
    """node_config.reservation_affinity for one purchase option (None: GKE's default).

    reservation: the named reservation only (SPECIFIC_RESERVATION); a shared one by its path
    projects/OWNER/reservations/NAME (https://cloud.google.com/kubernetes-engine/docs/how-to/
    consuming-reservations, "Consuming a shared reservation", read 2026-11-26). flexStart: no
    reservation: "enable_flex_start only works with reservation_affinity consume_reservation_type
    NO_RESERVATION", and never with spot (GoogleCloudPlatform/cluster-toolkit@01a7a3e
    modules/compute/gke-node-pool/main.tf, preconditions, read 2026-11-26); a class's spot node
    pools no reservation either. onDemand (and single spot pools) keep GKE's default (unchanged
    for pools created before).
    """
    if capacity_type == "reservation":
        reservation = pool.capacity.reservation
        value = reservation.name
        if reservation.project:
            value = f"projects/{reservation.project}/reservations/{reservation.name}"
        return {
            "consume_reservation_type": "SPECIFIC_RESERVATION",
            "key": RESERVATION_NAME_KEY,
            "values": [value],
        }
    if capacity_type == "flexStart":
        return {"consume_reservation_type": "NO_RESERVATION"}
    if capacity_type == "spot" and pool.compute_class is not None:
        # Spot VMs consume no reservation; Google's module requires NO_RESERVATION with spot
        # (cluster-toolkit@01a7a3e, as above). Only on a class's node pools: a changed
        # affinity replaces a node pool, and single spot pools keep what they were made with.
        return {"consume_reservation_type": "NO_RESERVATION"}
    return None


def capacity_node_config(pool: GkeNodePool, sub: SubPool) -> dict[str, Any]:
    """The node_config inputs that say how `sub`'s VMs are bought (pulumi-gcp 10.2.0
    NodePoolNodeConfigArgs: spot, flex_start "Enables Flex Start provisioning model for the
    node pool", reservation_affinity)."""
    config: dict[str, Any] = {"spot": sub.capacity_type == "spot"}
    if sub.capacity_type == "flexStart":
        config["flex_start"] = True
    affinity = reservation_affinity(pool, sub.capacity_type)
    if affinity is not None:
        config["reservation_affinity"] = affinity
    return config


# Where the autoscaler looks for capacity: ANY takes any zone that has it (spot, flex-start)
# and "prioritizes utilization of unused reservations"; BALANCED spreads on-demand nodes
# (https://cloud.google.com/kubernetes-engine/docs/concepts/cluster-autoscaler, "Location
# policy", read 2026-11-26).
def location_policy(capacity_type: str) -> str:
    return "BALANCED" if capacity_type == "onDemand" else "ANY"


def compute_class(pool: GkeNodePool) -> dict[str, Any] | None:
    """The pool's ComputeClass (None: the pool has no fallback). One priority per node pool,
    in order: a priority that names node pools may hold nothing else (the CRD's CEL rule
    "Nodepool field cannot be set along with other fields")."""
    name = pool.compute_class
    if name is None:
        return None
    spec = {
        "priorities": [{"nodepools": [sub.name]} for sub in sub_pools(pool)],
        # Only the node pools above: no auto-created pools, no cluster-wide NAP needed.
        "nodePoolAutoCreation": {"enabled": False},
        # Running trials are never moved to a preferred pool that frees up (active migration
        # drains the nodes they run on): a trial moves only when it restarts.
        "activeMigration": {"optimizeRulePriority": False},
        "whenUnsatisfiable": WHEN_UNSATISFIABLE,
    }
    return kube.manifest(API_VERSION, KIND, kube.metadata(name, COMPONENT), spec=spec)


def compute_classes(pools: list[GkeNodePool]) -> list[dict[str, Any]]:
    return [obj for pool in pools if (obj := compute_class(pool)) is not None]
