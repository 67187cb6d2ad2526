"""The GKE node pool inputs of a queued-provisioning pool (`capacity: {types: [flexStart],
queued: true}`): flex-start VMs that GKE creates only for Kueue's ProvisioningRequests
(components/addons/provisioning.py), all of a request's nodes at once.

What GKE requires of such a pool, from Google's own Terraform module for it
(GoogleCloudPlatform/cluster-toolkit modules/compute/gke-node-pool/main.tf at 1047080375,
2026-06-25, its preconditions: `QUEUED_SOURCE`) and the GKE guide
(https://cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest, read 2026-11-26:
"you have to add the --flex-start and --enable-queued-provisioning flags when you create the
node pool"). Input names: pulumi-gcp 10.2.0 (gcp.container.NodePool: `queued_provisioning`,
`node_config.flex_start`, `node_config.reservation_affinity`, `autoscaling`, `management`).

GKE puts the taint `cloud.google.com/gke-queued=true:NoSchedule` on the nodes itself
(provisioning.QUEUED_TAINT): it is not sent here.
"""

from __future__ import annotations

import copy
from typing import Any

from components.addons.provisioning import queued_provisioning
from components.config.node_pools import GkeNodePool

QUEUED_SOURCE = "GoogleCloudPlatform/cluster-toolkit@1047080375:modules/compute/gke-node-pool/main.tf"


def node_pool_settings(pool: GkeNodePool) -> dict[str, Any]:
    """The inputs a queued pool needs over the ones every pool gets (nested dicts to merge
    into components/cluster/gke/node_pools.py node_pool_args with `merged`); nothing for
    other pools."""
    if not queued_provisioning(pool):
        return {}
    return {
        # Nodes only through ProvisioningRequests (gcloud `--enable-queued-provisioning`).
        "queued_provisioning": {"enabled": True},
        # No node outside a request: a minimum must be 0 (main.tf:399-401), and none at creation
        # (a node made then would belong to no request; whether GKE refuses one: unverified).
        "initial_node_count": 0,
        "autoscaling": {
            "total_min_node_count": 0,
            "total_max_node_count": pool.max_nodes,
            # A request's nodes come from whichever zone has them (main.tf:113-121 sets ANY on
            # every pool it makes, queued ones included).
            "location_policy": "ANY",
        },
        # Flex-start needs auto-repair off (main.tf:415-417); auto-upgrade stays as every pool
        # has it (a release channel cannot turn it off: node_pools.management).
        "management": {"auto_repair": False},
        "node_config": {
            "flex_start": True,
            # Neither spot (main.tf:427-433) nor reservations (main.tf:395-397, :423-425).
            "spot": False,
            "reservation_affinity": {"consume_reservation_type": "NO_RESERVATION"},
        },
    }


def merged(args: dict[str, Any], settings: dict[str, Any]) -> dict[str, Any]:
    """`args` with `settings` over them: nested dicts merged key by key, anything else
    replaced. `args` is left as it was. Not config_overrides.merge: that deep-copies its
    input, and node pool args hold Pulumi Outputs (the cluster's id), which refuse to be
    copied."""
    out = copy.copy(args)
    for key, value in settings.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merged(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out
