"""The GKE cluster (Standard mode) and the kubeconfig the Kubernetes provider uses.

Standard, not Autopilot: the GPU operator does not support Autopilot, and node pools with
their own taints, accelerators and service account are what Determined's pools pin to.
"""

from __future__ import annotations

from typing import Any

import pulumi

from components.cluster.gke.args import GkeClusterArgs
from components.cluster.gke.filesystem_addons import addons_config
from components.cluster.gke.monitoring import monitoring_config
from components.cluster.gke.network import Network
from components.cluster.gke.node_pools import NODE_SCOPES
from components.kube.kubeconfig import kubeconfig as kube_kubeconfig


def workload_pool(project: str) -> str:
    return f"{project}.svc.id.goog"


def cluster_args(
    args: GkeClusterArgs, project: str, net: Network, node_service_account: pulumi.Input[str]
) -> dict[str, Any]:
    cluster = args.cluster
    result: dict[str, Any] = {
        "name": cluster.name,
        "project": project,
        "location": cluster.region,
        # Node pools are managed one by one; the default pool only exists while creating.
        "remove_default_node_pool": True,
        "initial_node_count": 1,
        # Even the default pool, while it exists, runs as the nodes' account (organisations
        # may disable the Compute Engine default one).
        "node_config": {"service_account": node_service_account, "oauth_scopes": list(NODE_SCOPES)},
        # The provider defaults it to true, which makes a dev stack impossible to destroy.
        "deletion_protection": args.environment == "prod",
        "release_channel": {"channel": cluster.release_channel},
        "networking_mode": "VPC_NATIVE",
        "network": net.network,
        "subnetwork": net.subnetwork,
        "ip_allocation_policy": (
            {
                "cluster_secondary_range_name": net.pods_range,
                "services_secondary_range_name": net.services_range,
            }
            if net.pods_range
            else {}
        ),
        "workload_identity_config": {"workload_pool": workload_pool(project)},
        # Dataplane V2: NetworkPolicy enforcement (set at creation only).
        "datapath_provider": "ADVANCED_DATAPATH",
        "resource_labels": dict(cluster.tags),
    }
    if any(pool.fabric for pool in args.node_pools):  # fabric pools' Device networks (gke/fabric.py)
        result["enable_multi_networking"] = True
    addons = addons_config(args)
    if addons:
        result["addons_config"] = addons
    monitoring = monitoring_config(args)
    if monitoring is not None:
        result["monitoring_config"] = monitoring
    if cluster.zones:
        result["node_locations"] = list(cluster.zones)
    if cluster.kubernetes_version:
        result["min_master_version"] = cluster.kubernetes_version
    if cluster.private_nodes:
        # The control plane keeps its public endpoint (behind authorized networks).
        result["private_cluster_config"] = {"enable_private_nodes": True, "enable_private_endpoint": False}
    if cluster.authorized_networks:
        result["master_authorized_networks_config"] = {
            "cidr_blocks": [
                {"cidr_block": cidr, "display_name": f"authorized-{i}"}
                for i, cidr in enumerate(cluster.authorized_networks)
            ]
        }
    return result


def kubeconfig(name: str, endpoint: str, ca_certificate: str) -> str:
    """A kubeconfig for the cluster that authenticates with gke-gcloud-auth-plugin (each
    client gets a short-lived token from its own gcloud login)."""
    return kube_kubeconfig(
        f"gke-{name}",
        f"https://{endpoint}",
        ca_certificate,
        {
            "command": "gke-gcloud-auth-plugin",
            "installHint": "Install gke-gcloud-auth-plugin: gcloud components install gke-gcloud-auth-plugin",
            "provideClusterInfo": True,
        },
    )


def kubeconfig_output(name: str, cluster: Any) -> pulumi.Output[str]:
    return pulumi.Output.secret(
        pulumi.Output.all(cluster.endpoint, cluster.master_auth.cluster_ca_certificate).apply(
            lambda values: kubeconfig(name, values[0], values[1])
        )
    )
