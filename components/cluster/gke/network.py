"""The cluster's VPC: a created network and subnetwork (VPC-native secondary ranges), Cloud
NAT for private nodes, private services access for Cloud SQL, and the firewall rule that
lets a private cluster's control plane call the stack's admission webhooks and aggregated APIs;
or an existing network.

Pure functions give each resource's arguments; `network` registers them.
"""

from __future__ import annotations

import hashlib
import ipaddress
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_gcp as gcp

from components.cluster import name_kept, namer
from components.cluster.gke.args import GkeClusterArgs
from components.config import gke_machines
from components.config.tls import ExposedTls

PODS_RANGE = "pods"
SERVICES_RANGE = "services"
# Private services access: the range Cloud SQL's private IPs come from.
SQL_RANGE_PREFIX = 20


# --- Ranges Google would otherwise pick, kept out of the fabric's 192.168.0.0/16 ----------------
#
# Unset, Google picks private services access ranges and Filestore's reserved range from all of
# RFC 1918, 192.168.0.0/16 included ("If not provided, the service will choose an unused /29
# block, for example, 10.0.0.0/29 or 192.168.0.0/29": Filestore v1 NetworkConfig
# .reserved_ip_range, https://cloud.google.com/php/docs/reference/cloud-filestore/1.0.3/
# V1.NetworkConfig, read 2026-11), avoiding only the cluster VPC's own ranges. A fabric node has
# connected routes for the fabric subnets on its GPU NICs (gke_machines.FABRIC_RANGE), so an
# instance there would be reached out of the wrong NIC. With a fabric pool on a created network
# the stack therefore places these ranges itself, in a /16 of 172.16.0.0/12 that the cluster's
# ranges leave free (172.17.0.0/16 skipped: "Clients with an IP address in 172.17.0.0/16 can't
# connect to basic-tier Filestore", https://cloud.google.com/filestore/docs/network-ip-requirements).
SERVICE_SPACE = "172.16.0.0/12"
SKIPPED_BLOCKS = ("172.17.0.0/16",)
# Within that /16: Cloud SQL's /20 at .0.0, Managed Lustre's /22 at .16.0, and Filestore
# instances in slots of /26 from .64.0 (256 slots), chosen by a digest of the filesystem's name
# so that adding or removing another filesystem moves none (ForceNew on the instance).
SQL_OFFSET, LUSTRE_OFFSET, FILESTORE_OFFSET, FILESTORE_SLOTS = 0, 16 * 256, 64 * 256, 256
FILESTORE_SLOT_PREFIX = 26
# The reserved range's size per tier, where Google documents it: "a /29 CIDR block for Basic
# tier, a /24 CIDR block for High Scale tier, or a /26 CIDR block for Enterprise tier" (Filestore
# v1 NetworkConfig.reserved_ip_range, googleapis filestore/v1/cloud_filestore_service.proto,
# read 2026-11). ZONAL and REGIONAL are not listed: Google picks their range (docs/
# gpu-fabric.md says so).
FILESTORE_RANGE_PREFIX = {"BASIC_HDD": 29, "BASIC_SSD": 29, "ENTERPRISE": 26}


def service_block(args: GkeClusterArgs) -> ipaddress.IPv4Network | None:
    """The /16 where the stack puts the ranges above: only with a fabric pool on a created
    network (None otherwise, and when 172.16.0.0/12 has no /16 the cluster's ranges leave free)."""
    net = args.cluster.network
    if net.existing or not any(pool.fabric for pool in args.node_pools):
        return None
    taken = [ipaddress.ip_network(c) for c in (net.nodes_cidr, net.pods_cidr, net.services_cidr)]
    taken += [ipaddress.ip_network(c) for c in SKIPPED_BLOCKS]
    taken.append(ipaddress.ip_network(gke_machines.FABRIC_RANGE))
    for block in ipaddress.ip_network(SERVICE_SPACE).subnets(new_prefix=16):
        if not any(block.overlaps(other) for other in taken):
            return block  # type: ignore[return-value]
    return None


ADDRESS = "gcp:compute/globalAddress:GlobalAddress"

# A service range is fixed when it is made: a stack made before its ranges were pinned (no
# fabric pool then) keeps the one Google chose, rather than replacing a range in use (a
# global address cannot be changed in place, nor a Filestore instance's network).
RANGE_KEPT = {
    ADDRESS: "address",
    "gcp:filestore/instance:Instance": "networks[0].reservedIpRange",
}


def range_kept(opts: pulumi.ResourceOptions, resource: str) -> pulumi.ResourceOptions:
    """`opts` with the resource's pinned range fixed at creation (RANGE_KEPT)."""
    return pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(ignore_changes=[RANGE_KEPT[resource]]))


def pinned_address(args: GkeClusterArgs, offset: int) -> str | None:
    """The first address of a range at `offset` in service_block (None: Google picks)."""
    block = service_block(args)
    return None if block is None else str(block.network_address + offset)


def filestore_range(args: GkeClusterArgs, name: str, tier: str, names: list[str]) -> str | None:
    """The reserved range of Filestore `name` (`names`: every Filestore of the stack, in order)
    where the stack places it (None: Google picks)."""
    block = service_block(args)
    prefix = FILESTORE_RANGE_PREFIX.get(tier)
    if block is None or prefix is None:
        return None
    used: set[int] = set()
    slot = 0
    for other in names:
        slot = int(hashlib.sha256(other.encode()).hexdigest(), 16) % FILESTORE_SLOTS
        while slot in used:
            slot = (slot + 1) % FILESTORE_SLOTS
        used.add(slot)
        if other == name:
            break
    start = block.network_address + FILESTORE_OFFSET + slot * 2 ** (32 - FILESTORE_SLOT_PREFIX)
    return f"{start}/{prefix}"


@dataclass(frozen=True)
class Network:
    """What the cluster and Cloud SQL attach to."""

    network: pulumi.Input[str]  # self link or name
    subnetwork: pulumi.Input[str]
    pods_range: str | None
    services_range: str | None
    # Resources that must exist before Cloud SQL gets a private IP (private services access).
    sql_ready: list[pulumi.Resource]
    # Managed Lustre's private services range, and what its instances wait for (the one
    # connection of the network's private services access, shared with Cloud SQL).
    lustre_range: gcp.compute.GlobalAddress | None = None
    lustre_ready: list[pulumi.Resource] = field(default_factory=list)


def network_args(args: GkeClusterArgs) -> dict[str, Any]:
    return {
        "name": namer(args.cluster).name("gcp:compute/network:Network", "name", "net"),
        "auto_create_subnetworks": False,
        "routing_mode": "REGIONAL",
        "description": f"Determined cluster {args.cluster.name}",
    }


def subnetwork_args(args: GkeClusterArgs, network: pulumi.Input[str]) -> dict[str, Any]:
    net = args.cluster.network
    return {
        "name": namer(args.cluster).name("gcp:compute/subnetwork:Subnetwork", "name", "nodes"),
        "network": network,
        "region": args.cluster.region,
        "ip_cidr_range": net.nodes_cidr,
        # Nodes without public IPs still reach Google APIs (Artifact Registry, GCS).
        "private_ip_google_access": True,
        "secondary_ip_ranges": [
            {"range_name": PODS_RANGE, "ip_cidr_range": net.pods_cidr},
            {"range_name": SERVICES_RANGE, "ip_cidr_range": net.services_cidr},
        ],
    }


def router_args(args: GkeClusterArgs, network: pulumi.Input[str]) -> dict[str, Any]:
    return {
        "name": namer(args.cluster).name("gcp:compute/router:Router", "name", "router"),
        "network": network,
        "region": args.cluster.region,
    }


def nat_args(args: GkeClusterArgs, router: pulumi.Input[str]) -> dict[str, Any]:
    # Private nodes pull public images (nvcr.io, quay.io, registry.k8s.io) through it.
    return {
        "name": f"{args.cluster.name}-nat",
        "router": router,
        "region": args.cluster.region,
        "nat_ip_allocate_option": "AUTO_ONLY",
        "source_subnetwork_ip_ranges_to_nat": "ALL_SUBNETWORKS_ALL_IP_RANGES",
        "log_config": {"enable": True, "filter": "ERRORS_ONLY"},
    }


def _service_range_args(
    args: GkeClusterArgs, network: pulumi.Input[str], purpose: str, prefix: int, offset: int
) -> dict[str, Any]:
    """A range reserved for the network's private services access (`purpose`: what uses it)."""
    result = {
        "name": namer(args.cluster).name(ADDRESS, "name", purpose),
        "network": network,
        "purpose": "VPC_PEERING",
        "address_type": "INTERNAL",
        "prefix_length": prefix,
    }
    if address := pinned_address(args, offset):
        # Beside a GPU fabric: outside its range (service_block); `address` is the range's
        # first address (pulumi-gcp 10.2.0 compute/global_address.py: "the IP address or
        # beginning of the address range represented by this resource").
        result["address"] = address
    return result


def sql_range_args(args: GkeClusterArgs, network: pulumi.Input[str]) -> dict[str, Any]:
    return _service_range_args(args, network, "sql", SQL_RANGE_PREFIX, SQL_OFFSET)


# Managed Lustre's private services range: "each Managed Lustre instance requires a contiguous
# CIDR block with prefix length 23 or shorter" (https://docs.cloud.google.com/managed-lustre/docs/vpc,
# read 2026-11); a /22 as Google's example (cluster-toolkit@v1.95.0 examples/gke-managed-lustre.yaml).
LUSTRE_RANGE_PREFIX = 22


def lustre_range_args(args: GkeClusterArgs, network: pulumi.Input[str]) -> dict[str, Any]:
    return _service_range_args(args, network, "lustre", LUSTRE_RANGE_PREFIX, LUSTRE_OFFSET)


def peering_args(
    network: pulumi.Input[str], reserved_ranges: list[pulumi.Input[str]], keep: bool
) -> dict[str, Any]:
    """The network's one private services access connection (one per network and service:
    https://cloud.google.com/vpc/docs/configure-private-services-access, "Creating a private
    connection"), over every range reserved for it."""
    return {
        "network": network,
        "service": "servicenetworking.googleapis.com",
        "reserved_peering_ranges": reserved_ranges,
        # Kept (with a kept Cloud SQL instance and the network): left as it is. Otherwise
        # removed even while Google still counts a just-deleted instance as using it, so
        # that the network can go.
        "deletion_policy": "ABANDON" if keep else "REMOVE_PEERING",
    }


def existing_paths(args: GkeClusterArgs, project: str) -> tuple[str, str]:
    """The existing network and subnetwork as resource paths (Cloud SQL takes no bare
    names); paths given in the config are kept as written."""
    net = args.cluster.network
    network = net.name if "/" in net.name else f"projects/{project}/global/networks/{net.name}"
    subnetwork = (
        net.subnetwork
        if "/" in net.subnetwork
        else f"projects/{project}/regions/{args.cluster.region}/subnetworks/{net.subnetwork}"
    )
    return network, subnetwork


def network(
    args: GkeClusterArgs,
    project: str,
    needs_sql: bool,
    keep_sql: bool,
    opts: pulumi.ResourceOptions,
    keep_filesystems: bool = False,
    needs_lustre: bool = False,
) -> Network:
    """`keep_sql`: a kept Cloud SQL instance stays peered with the network, so the network and
    its reserved range are kept with it (Google refuses to delete them while it lives).
    `keep_filesystems`: a kept Filestore or Managed Lustre instance is attached to the network
    (peered, or through private services access) in the same way: the network is kept too."""
    net = args.cluster.network
    if net.existing:
        # The network's owner provides NAT and private services access (docs/clouds/gke.md, Shared VPC).
        network_path, subnetwork_path = existing_paths(args, project)
        return Network(network_path, subnetwork_path, net.pods_range, net.services_range, sql_ready=[])
    keeps = (needs_sql and keep_sql) or keep_filesystems
    kept = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(retain_on_delete=keeps))
    vpc = gcp.compute.Network(
        "network", opts=name_kept(kept, "gcp:compute/network:Network", "name"), **network_args(args)
    )
    subnet = gcp.compute.Subnetwork("nodes", opts=opts, **subnetwork_args(args, vpc.id))
    if args.cluster.private_nodes:
        router = gcp.compute.Router("router", opts=opts, **router_args(args, vpc.id))
        gcp.compute.RouterNat("nat", opts=opts, **nat_args(args, router.name))
    # Cloud SQL and Managed Lustre reach the network through its one private services access
    # connection, over a range each: named for Cloud SQL where it has one (what stacks made
    # before Lustre have), else for Lustre.
    ranges: list[pulumi.Input[str]] = []
    sql_range = lustre_range = None
    if needs_sql:
        sql_range = gcp.compute.GlobalAddress(
            "sql-range",
            opts=range_kept(name_kept(kept, ADDRESS, "name"), ADDRESS),
            **sql_range_args(args, vpc.id),
        )
        ranges.append(sql_range.name)
    if needs_lustre:
        lustre_kept = pulumi.ResourceOptions.merge(
            opts, pulumi.ResourceOptions(retain_on_delete=keep_filesystems)
        )
        lustre_range = gcp.compute.GlobalAddress(
            "lustre-range",
            opts=range_kept(name_kept(lustre_kept, ADDRESS, "name"), ADDRESS),
            **lustre_range_args(args, vpc.id),
        )
        ranges.append(lustre_range.name)
    ready: list[pulumi.Resource] = []
    if ranges:
        keep = (needs_sql and keep_sql) or (needs_lustre and keep_filesystems)
        name = "sql-peering" if needs_sql else "lustre-peering"
        ready.append(gcp.servicenetworking.Connection(name, opts=opts, **peering_args(vpc.id, ranges, keep)))
    return Network(
        vpc.id,
        subnet.id,
        PODS_RANGE,
        SERVICES_RANGE,
        sql_ready=ready if needs_sql else [],
        lustre_range=lustre_range,
        lustre_ready=ready if needs_lustre else [],
    )


# What GKE's own firewall rule (gke-<cluster>-<hash>-master) lets the control plane of a
# private cluster reach on its nodes: TCP 443 (metrics-server) and 10250 (kubelet), from the
# control plane's /28. Source: https://cloud.google.com/kubernetes-engine/docs/concepts/firewall-rules
# (read 2026-11-25).
CONTROL_PLANE_PORTS = (443, 10250)

# The port each server the control plane calls (admission webhooks, aggregated APIs) that the
# stack may install listens on in its pods (the control plane calls the pod, whatever the
# Service's port). Sources (read 2026-11-25):
# - Kueue 0.19.2: `webhook.port: 9443` in the controller manager configuration (the chart's
#   default, kept in components/addons/kueue.py) behind Service port 443 -> targetPort 9443
#   (kubernetes-sigs/kueue charts/kueue/values.yaml); failurePolicy Fail: Jobs are refused
#   while the control plane cannot reach it.
# - Kueue's visibility API: the chart registers APIService v1beta2.visibility.kueue.x-k8s.io
#   (charts/kueue/templates/visibility/apiservice_v1beta2.yaml) on Service
#   kueue-visibility-server, port 443 -> targetPort 8082 (.../visibility/service.yaml), the
#   controller manager's visibility server (pkg/visibility/server.go: BindPort = 8082). An
#   APIService the control plane cannot reach breaks API discovery (kubectl, namespace
#   deletion, controllers that list every API group).
# - Envoy Gateway v1.9.0: the topology injector's MutatingWebhookConfiguration calls Service
#   envoy-gateway on 9443 (envoyproxy/gateway charts/gateway-helm/templates/
#   envoy-proxy-topology-injector-webhook.yaml); failurePolicy Ignore.
# - cert-manager v1.21.1: `webhook.securePort` 10250, the chart's default, chosen because "in
#   GKE private clusters, by default kubernetes apiservers are allowed to talk to the cluster
#   nodes only on 443 and 10250" (cert-manager chart README).
WEBHOOK_PORTS = {"kueue": 9443, "kueue-visibility": 8082, "envoy-gateway": 9443, "cert-manager": 10250}


def webhook_servers(args: GkeClusterArgs) -> list[str]:
    """The servers the control plane calls in pods of add-ons the stack installs."""
    servers = ["kueue", "kueue-visibility"] if args.scheduler == "kueue" else []
    if isinstance(args.tls, ExposedTls):
        if args.tls.gateway_class_name is None:
            servers.append("envoy-gateway")
        if args.tls.issued:
            servers.append("cert-manager")
    return servers


def webhook_ports(args: GkeClusterArgs) -> list[int]:
    """The webhook ports the control plane cannot reach on private nodes without a rule."""
    return sorted({WEBHOOK_PORTS[s] for s in webhook_servers(args)} - set(CONTROL_PLANE_PORTS))


def firewall_name(args: GkeClusterArgs) -> str:
    return namer(args.cluster).name("gcp:compute/firewall:Firewall", "name", "webhooks")


def webhook_sources(control_plane_range: str | None, nodes_cidr: str) -> list[str]:
    """Who may call the webhooks: the control plane's range when the cluster has one (a
    VPC-peering private cluster reports its /28, masterIpv4CidrBlock). The stack sets no
    master_ipv4_cidr_block, so new private clusters use Private Service Connect and report
    none: their control plane's private endpoint takes an address of the nodes' subnet (no
    privateEndpointSubnetwork is set), so the nodes' range, as Google's own Terraform module
    chooses for such clusters (terraform-google-modules/terraform-google-kubernetes-engine
    modules/private-cluster/main.tf `cluster_endpoint_for_nodes`: private endpoint subnetwork's
    range, else master_ipv4_cidr_block, else the cluster's subnet range; since #2354,
    2025-06-06, read 2026-11-25). Never an empty list, which Compute Engine would read as any
    address."""
    return [control_plane_range] if control_plane_range else [nodes_cidr]


def control_plane_range(private_cluster_config: Any) -> str | None:
    """privateClusterConfig.masterIpv4CidrBlock of the cluster (None when it has none)."""
    if hasattr(private_cluster_config, "master_ipv4_cidr_block"):  # the SDK's output type
        return private_cluster_config.master_ipv4_cidr_block
    if isinstance(private_cluster_config, dict):
        return private_cluster_config.get("master_ipv4_cidr_block")
    return None


def webhook_firewall_args(
    args: GkeClusterArgs,
    network: pulumi.Input[str],
    control_plane: pulumi.Input[str | None],
    ports: list[int],
) -> dict[str, Any]:
    nodes_cidr = args.cluster.network.nodes_cidr
    return {
        "name": firewall_name(args),
        "network": network,
        "direction": "INGRESS",
        "description": f"The control plane of {args.cluster.name} calls the webhooks and APIs of "
        f"{', '.join(webhook_servers(args))}",
        "source_ranges": pulumi.Output.from_input(control_plane).apply(
            lambda cidr: webhook_sources(cidr, nodes_cidr)
        ),
        # No target tags: every instance of the created network, which holds this cluster's
        # nodes only.
        "allows": [{"protocol": "tcp", "ports": [str(port) for port in ports]}],
    }


def webhook_firewall(
    args: GkeClusterArgs, net: Network, cluster: Any, opts: pulumi.ResourceOptions
) -> gcp.compute.Firewall | None:
    """The rule for a created network with private nodes when a webhook listens on a port
    GKE's own rule leaves closed (an existing network's owner opens it: docs/clouds/gke.md)."""
    ports = webhook_ports(args)
    if not args.cluster.private_nodes or args.cluster.network.existing or not ports:
        return None
    control_plane = cluster.private_cluster_config.apply(control_plane_range)
    return gcp.compute.Firewall(
        "webhooks", opts=opts, **webhook_firewall_args(args, net.network, control_plane, ports)
    )
