"""The cluster's VPC: a created network and subnetwork (VPC-native secondary ranges), Cloud
NAT for private nodes, and private services access for Cloud SQL; or an existing network.

Pure functions give each resource's arguments; `network` registers them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_gcp as gcp

from deploy.config import GkeStack
from deploy.platform import name_kept, namer

PODS_RANGE = "pods"
SERVICES_RANGE = "services"
# Private services access: the range Cloud SQL's private IPs come from.
SQL_RANGE_PREFIX = 20


@dataclass(frozen=True)
class Network:
    """What the cluster and Cloud SQL attach to."""

    network: pulumi.Input[str]  # self link or name
    subnetwork: pulumi.Input[str]
    pods_range: str | None
    services_range: str | None
    # Resources that must exist before Cloud SQL gets a private IP (private services access).
    sql_ready: list[pulumi.Resource]


def network_args(cfg: GkeStack) -> dict[str, Any]:
    return {
        "name": namer(cfg).name("gcp:compute/network:Network", "name", "net"),
        "auto_create_subnetworks": False,
        "routing_mode": "REGIONAL",
        "description": f"Determined cluster {cfg.cluster.name}",
    }


def subnetwork_args(cfg: GkeStack, network: pulumi.Input[str]) -> dict[str, Any]:
    net = cfg.cluster.network
    return {
        "name": namer(cfg).name("gcp:compute/subnetwork:Subnetwork", "name", "nodes"),
        "network": network,
        "region": cfg.cluster.region,
        "ip_cidr_range": net.nodes_cidr,
        # Nodes without public IPs still reach Google APIs (Artifact Registry, GCS).
        "private_ip_google_access": True,
        "secondary_ip_ranges": [
            {"range_name": PODS_RANGE, "ip_cidr_range": net.pods_cidr},
            {"range_name": SERVICES_RANGE, "ip_cidr_range": net.services_cidr},
        ],
    }


def router_args(cfg: GkeStack, network: pulumi.Input[str]) -> dict[str, Any]:
    return {
        "name": namer(cfg).name("gcp:compute/router:Router", "name", "router"),
        "network": network,
        "region": cfg.cluster.region,
    }


def nat_args(cfg: GkeStack, router: pulumi.Input[str]) -> dict[str, Any]:
    # Private nodes pull public images (nvcr.io, quay.io, registry.k8s.io) through it.
    return {
        "name": f"{cfg.cluster.name}-nat",
        "router": router,
        "region": cfg.cluster.region,
        "nat_ip_allocate_option": "AUTO_ONLY",
        "source_subnetwork_ip_ranges_to_nat": "ALL_SUBNETWORKS_ALL_IP_RANGES",
        "log_config": {"enable": True, "filter": "ERRORS_ONLY"},
    }


def sql_range_args(cfg: GkeStack, network: pulumi.Input[str]) -> dict[str, Any]:
    return {
        "name": namer(cfg).name("gcp:compute/globalAddress:GlobalAddress", "name", "sql"),
        "network": network,
        "purpose": "VPC_PEERING",
        "address_type": "INTERNAL",
        "prefix_length": SQL_RANGE_PREFIX,
    }


def peering_args(network: pulumi.Input[str], reserved_range: pulumi.Input[str], keep: bool) -> dict[str, Any]:
    return {
        "network": network,
        "service": "servicenetworking.googleapis.com",
        "reserved_peering_ranges": [reserved_range],
        # Kept (with a kept Cloud SQL instance and the network): left as it is. Otherwise
        # removed even while Google still counts a just-deleted instance as using it, so
        # that the network can go.
        "deletion_policy": "ABANDON" if keep else "REMOVE_PEERING",
    }


def existing_paths(cfg: GkeStack, project: str) -> tuple[str, str]:
    """The existing network and subnetwork as resource paths (Cloud SQL takes no bare
    names); paths given in the config are kept as written."""
    net = cfg.cluster.network
    network = net.name if "/" in net.name else f"projects/{project}/global/networks/{net.name}"
    subnetwork = (
        net.subnetwork
        if "/" in net.subnetwork
        else f"projects/{project}/regions/{cfg.cluster.region}/subnetworks/{net.subnetwork}"
    )
    return network, subnetwork


def network(
    cfg: GkeStack, project: str, needs_sql: bool, keep_sql: bool, opts: pulumi.ResourceOptions
) -> Network:
    """`keep_sql`: a kept Cloud SQL instance stays peered with the network, so the network and
    its reserved range are kept with it (Google refuses to delete them while it lives)."""
    net = cfg.cluster.network
    if net.existing:
        # The network's owner provides NAT and private services access (see the README).
        network_path, subnetwork_path = existing_paths(cfg, project)
        return Network(network_path, subnetwork_path, net.pods_range, net.services_range, sql_ready=[])
    kept = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(retain_on_delete=needs_sql and keep_sql))
    vpc = gcp.compute.Network(
        "network", opts=name_kept(kept, "gcp:compute/network:Network", "name"), **network_args(cfg)
    )
    subnet = gcp.compute.Subnetwork("nodes", opts=opts, **subnetwork_args(cfg, vpc.id))
    if cfg.cluster.private_nodes:
        router = gcp.compute.Router("router", opts=opts, **router_args(cfg, vpc.id))
        gcp.compute.RouterNat("nat", opts=opts, **nat_args(cfg, router.name))
    sql_ready: list[pulumi.Resource] = []
    if needs_sql:
        reserved = gcp.compute.GlobalAddress(
            "sql-range",
            opts=name_kept(kept, "gcp:compute/globalAddress:GlobalAddress", "name"),
            **sql_range_args(cfg, vpc.id),
        )
        sql_ready.append(
            gcp.servicenetworking.Connection(
                "sql-peering", opts=opts, **peering_args(vpc.id, reserved.name, keep_sql)
            )
        )
    return Network(vpc.id, subnet.id, PODS_RANGE, SERVICES_RANGE, sql_ready)
