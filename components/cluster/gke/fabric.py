"""The GPU fabric of GKE pools with `fabric` (tcpxo on A3 Mega, rdma on A3 Ultra and A4): the
extra VPC networks the nodes' GPU NICs sit in, the node pools' additional node networks, and in
the cluster the multi-networking objects (GKENetworkParamSet + Network per node network) and
Google's NCCL plugin installers.

One set of networks per fabric serves every pool of it: task pods name the Network objects in
their `networking.gke.io/interfaces` annotation (components/config/gke_machines.py
fabric_networks), the same names on every pool. The node networks' layout (names, ranges, device
modes) is data in gke_machines (fabric_node_networks); here it becomes resources.

Sources: GoogleCloudPlatform/container-engine-accelerators@992db81 (2026-06-11)
gpudirect-tcpxo/, gpudirect-rdma/, nri_device_injector/; GoogleCloudPlatform/cluster-toolkit
@1047080 modules/network/{multivpc,gpu-rdma-vpc}, modules/scheduler/gke-cluster; GKE "Maximize
GPU network bandwidth in Standard mode clusters" (https://cloud.google.com/kubernetes-engine/docs/
how-to/gpu-bandwidth-gpudirect-tcpx, read 2026-11).
"""

from __future__ import annotations

import copy
from typing import Any

import pulumi
import pulumi_gcp as gcp

from components import constants, kube
from components.addons import provisioning
from components.cluster import name_kept, namer
from components.cluster.gke.args import GkeClusterArgs
from components.config import gke_machines
from components.config.gke import fabric_zone
from components.config.gke_machines import NodeNetwork
from components.config.node_pools import GkeNodePool
from components.kube.manifests import PART_OF

NETWORK = "gcp:compute/network:Network"
SUBNETWORK = "gcp:compute/subnetwork:Subnetwork"
FIREWALL = "gcp:compute/firewall:Firewall"
COMPONENT = "gpu-fabric"
NAMESPACE = "kube-system"
GKE_NETWORKING = "networking.gke.io/v1"

# The RoCE VPC's network profile, one per zone that has it: "projects/<p>/global/networkProfiles/
# <zone>-vpc-roce" (https://cloud.google.com/vpc/docs/rdma-network-profiles, read 2026-11;
# cluster-toolkit@1047080 examples/gke-a3-ultragpu `network_profile`).
ROCE_PROFILE = "projects/{project}/global/networkProfiles/{zone}-vpc-roce"

# Upstream's images, pinned (container-engine-accelerators@992db81).
# gpudirect-tcpxo/nccl-tcpxo-installer.yaml (last changed 685dca2, "Release Jan 9, 2026"): the
# plugin v1.0.15, coupled with the tcpxo-daemon v1.0.21 task pods run (README "Jan 9, 2026").
TCPXO_INSTALLER_IMAGE = "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.15"
# Upstream runs its pre-installation step in `ubuntu` (a floating tag); the step only nsenters
# into the node (its own tools), so any Ubuntu with nsenter does: pinned to the current LTS.
PRE_INSTALLATION_IMAGE = "ubuntu:24.04"
# nri_device_injector/nri-device-injector.yaml (last changed 3491157, #612).
NRI_INJECTOR_IMAGE = (
    "gcr.io/gke-release/nri-device-injector"
    "@sha256:6e79483d52abdc28454bf186320b10a56b0f117a10e8d65d5c74dbb821a76970"
)
# gpudirect-rdma/nccl-rdma-installer.yaml (last changed 2da1c92, 2026-05-06): gIB plugin v1.1.1.
RDMA_INSTALLER_IMAGE = "us-docker.pkg.dev/gce-ai-infra/gpudirect-gib/nccl-plugin-gib:v1.1.1"
# The pause container of all three files (as components/addons/gke_driver_installer.py has it).
PAUSE_IMAGE = "gke.gcr.io/pause:3.8@sha256:880e63f94b145e46f1b1082bb71b85e21f16b99b180b9996407d61240ceb9830"


def fabrics(args: GkeClusterArgs) -> list[str]:
    """The fabrics the stack's pools use, in the order the pools first name them."""
    return list(dict.fromkeys(p.fabric for p in args.node_pools if p.fabric))


def fabric_pools(args: GkeClusterArgs, fabric: str) -> list[GkeNodePool]:
    return [p for p in args.node_pools if p.fabric == fabric]


# --- cloud names and resources -------------------------------------------------------------------


def network_name(args: GkeClusterArgs, purpose: str) -> str:
    """A fabric VPC's name: project-wide, so with the stack's digest (components.names)."""
    return namer(args.cluster).name(NETWORK, "name", purpose)


def subnetwork_name(args: GkeClusterArgs, purpose: str) -> str:
    return namer(args.cluster).name(SUBNETWORK, "name", purpose)


def firewall_name(args: GkeClusterArgs, purpose: str) -> str:
    return namer(args.cluster).name(FIREWALL, "name", f"{purpose}-internal")


def node_network_configs(args: GkeClusterArgs, fabric: str) -> list[dict[str, str]]:
    """The node pool's network_config.additional_node_network_configs, in order (the nodes'
    eth1, eth2, ...): names, which GKE resolves in the cluster's project (cluster-toolkit@1047080
    modules/compute/gke-node-pool/main.tf passes network and subnetwork names the same way)."""
    return [
        {"network": network_name(args, n.vpc), "subnetwork": subnetwork_name(args, n.subnet)}
        for n in gke_machines.fabric_node_networks(fabric)
    ]


def vpcs(fabric: str) -> dict[str, list[NodeNetwork]]:
    """VPC purpose -> its node networks (subnetworks), in order."""
    found: dict[str, list[NodeNetwork]] = {}
    for n in gke_machines.fabric_node_networks(fabric):
        found.setdefault(n.vpc, []).append(n)
    return found


def network_args(
    args: GkeClusterArgs, project: str, fabric: str, vpc: str, zone: str | None
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "name": network_name(args, vpc),
        "auto_create_subnetworks": False,
        "routing_mode": "REGIONAL",
        "mtu": gke_machines.FABRIC_MTU[fabric],
        "description": f"GPU fabric ({fabric}) of Determined cluster {args.cluster.name}",
    }
    if any(n.device_mode == "RDMA" for n in vpcs(fabric)[vpc]):
        result["network_profile"] = ROCE_PROFILE.format(project=project, zone=zone)
    return result


def subnetwork_args(
    args: GkeClusterArgs, node_network: NodeNetwork, network: pulumi.Input[str]
) -> dict[str, Any]:
    # Device networks give pods no addresses from ranges: no secondary ranges (research26
    # fabric.md 2.2, cluster-toolkit's multivpc and gpu-rdma-vpc subnets have none).
    return {
        "name": subnetwork_name(args, node_network.subnet),
        "network": network,
        "region": args.cluster.region,
        "ip_cidr_range": node_network.cidr,
    }


def firewall_args(
    args: GkeClusterArgs, vpc: str, node_networks: list[NodeNetwork], network: pulumi.Input[str]
) -> dict[str, Any]:
    """NCCL's traffic between the nodes inside one gVNIC fabric VPC, from its own ranges only
    (cluster-toolkit@1047080's vpc module `enable_internal_traffic`: tcp, udp, icmp from the
    VPC's ranges). RoCE VPCs get none: cluster-toolkit's gpu-rdma-vpc sets `firewall_rules = []`
    (modules/network/gpu-rdma-vpc/main.tf@193d0f9)."""
    return {
        "name": firewall_name(args, vpc),
        "network": network,
        "direction": "INGRESS",
        "description": f"GPU fabric traffic between the nodes of {args.cluster.name}",
        "source_ranges": [n.cidr for n in node_networks],
        "allows": [
            {"protocol": "tcp", "ports": ["0-65535"]},
            {"protocol": "udp", "ports": ["0-65535"]},
            {"protocol": "icmp"},
        ],
    }


def networks(args: GkeClusterArgs, project: str, opts: pulumi.ResourceOptions) -> list[pulumi.Resource]:
    """The fabric VPCs, subnetworks and firewall rules of the stack's fabrics; the subnetworks
    (what node pools wait for). None without a fabric pool."""
    ready: list[pulumi.Resource] = []
    for fabric in fabrics(args):
        zone = next((z for p in fabric_pools(args, fabric) if (z := fabric_zone(args, p))), None)
        for vpc, node_networks in vpcs(fabric).items():
            # Network names are fixed at creation (components.names: kept), as the cluster's own.
            net = gcp.compute.Network(
                f"fabric-{vpc}",
                opts=name_kept(opts, NETWORK, "name"),
                **network_args(args, project, fabric, vpc, zone),
            )
            for n in node_networks:
                ready.append(
                    gcp.compute.Subnetwork(
                        f"fabric-{n.subnet}", opts=opts, **subnetwork_args(args, n, net.id)
                    )
                )
            if all(n.device_mode == "NetDevice" for n in node_networks):
                gcp.compute.Firewall(
                    f"fabric-{vpc}-internal", opts=opts, **firewall_args(args, vpc, node_networks, net.id)
                )
    return ready


# The node agents above run privileged in kube-system as Google ships them (host network and
# PID, hostPath, root): what the project's hardening checks and outside scans must excuse, with
# why, once a stack has a fabric pool (tests/invariants/test_pod_hardening.py PRIVILEGED_BY_NATURE,
# components/kube/scan_exceptions.py).
NODE_AGENTS = {
    "nccl-tcpxo-installer": "Google's TCPXO installer loads a kernel module, binds PCI devices on the node",
    "device-injector": "Google's NRI device injector enables NRI and injects devices into containers",
    "nccl-rdma-installer": "Google's gIB installer writes the NCCL plugin into the node's driver directory",
}


# --- Kubernetes objects --------------------------------------------------------------------------


def param_set(args: GkeClusterArgs, node_network: NodeNetwork) -> dict[str, Any]:
    """The GKENetworkParamSet of one node network (cluster-toolkit@1047080
    modules/scheduler/gke-cluster/templates: vpc, vpcSubnet, deviceMode)."""
    return kube.manifest(
        GKE_NETWORKING,
        "GKENetworkParamSet",
        kube.metadata(node_network.name, COMPONENT),
        spec={
            "vpc": network_name(args, node_network.vpc),
            "vpcSubnet": subnetwork_name(args, node_network.subnet),
            "deviceMode": node_network.device_mode,
        },
    )


def network_object(node_network: NodeNetwork) -> dict[str, Any]:
    """The Network pods name in `networking.gke.io/interfaces`: a Device network with its
    parameters."""
    return kube.manifest(
        GKE_NETWORKING,
        "Network",
        kube.metadata(node_network.name, COMPONENT),
        spec={
            "type": "Device",
            "parametersRef": {
                "group": "networking.gke.io",
                "kind": "GKENetworkParamSet",
                "name": node_network.name,
            },
        },
    )


def _on_pools(pools: list[GkeNodePool]) -> dict[str, Any]:
    """Affinity to `pools`' nodes and tolerations of their taints (upstream: the GPU's
    accelerator label and `operator: Exists`; here only the fabric pools, as they are tainted)."""
    tolerations: list[dict[str, str]] = []
    for pool in pools:
        # The pool's taints, and on queued pools the one GKE puts on their nodes itself.
        wanted = [t.toleration for t in pool.all_taints] + provisioning.flavor_tolerations(pool)
        tolerations += [t for t in wanted if t not in tolerations]
    return {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {
                                    "key": constants.NODE_POOL_LABEL,
                                    "operator": "In",
                                    "values": [p.name for p in pools],
                                }
                            ]
                        }
                    ]
                }
            }
        },
        "tolerations": tolerations,
    }


def _daemonset(name: str, pools: list[GkeNodePool], pod_spec: dict[str, Any]) -> dict[str, Any]:
    """Upstream's DaemonSet frame: kube-system, selector k8s-app, system-node-critical, host
    network and PID (what every one of the three files has), on `pools`."""
    spec = {"priorityClassName": "system-node-critical", **_on_pools(pools), **copy.deepcopy(pod_spec)}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "labels": {
                "k8s-app": name,
                "app.kubernetes.io/managed-by": "pulumi",
                "app.kubernetes.io/part-of": PART_OF,
            },
        },
        "spec": {
            "selector": {"matchLabels": {"k8s-app": name}},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {"metadata": {"labels": {"name": name, "k8s-app": name}}, "spec": spec},
        },
    }


# gpudirect-tcpxo/nccl-tcpxo-installer.yaml@992db81, unchanged but for images and placement.
_TCPXO_PRE_INSTALLATION = """/sbin/iptables -I INPUT -p tcp -m tcp -j ACCEPT && modprobe import-helper
sudo mkdir -p /dev/aperture_devices
while IFS= read -r line; do
  BDF=$( echo "$line" | awk '{print $1}' );
  target_aperture_path="/dev/aperture_devices/$BDF"
  host_aperture_device=$(readlink -f "/sys/bus/pci/devices/$BDF");
  sudo mkdir -p $target_aperture_path;
  sudo umount -R $target_aperture_path;
  sudo mount --bind $host_aperture_device $target_aperture_path;
done < <(lspci -nn -D | grep '1ae0:0084')
if [ -d /dev/aperture_devices ]; then
    chmod -R a+r /dev/aperture_devices/
    chmod a+rw /dev/aperture_devices/*/resource*
fi
"""
_TCPXO_INSTALL = """set -ex
chmod 755 /scripts/container_entry.sh
/scripts/container_entry.sh install --install-nccl
mkdir -p /usr/local/nvidia/lib64
cp -r /var/lib/tcpxo/lib64/. /usr/local/nvidia/lib64
echo "installation finishes"
"""
TCPXO_INSTALLER = "nccl-tcpxo-installer"


def tcpxo_installer(pools: list[GkeNodePool]) -> dict[str, Any]:
    """Installs the TCPXO NCCL plugin (and NCCL) into /home/kubernetes/bin/nvidia/lib64 and
    binds the aperture devices task pods mount."""
    return _daemonset(
        TCPXO_INSTALLER,
        pools,
        {
            "hostNetwork": True,
            "hostPID": True,
            "volumes": [
                {"name": "var-lib", "hostPath": {"path": "/var/lib"}},
                {"name": "tcpxo", "hostPath": {"path": "/var/lib/tcpxo"}},
                {"name": "library-dir-host", "hostPath": {"path": "/home/kubernetes/bin"}},
            ],
            "initContainers": [
                {
                    "image": PRE_INSTALLATION_IMAGE,
                    "name": "pre-installation",
                    "securityContext": {"privileged": True},
                    "command": ["nsenter", "-at", "1", "--", "sh", "-c", _TCPXO_PRE_INSTALLATION],
                },
                {
                    "name": "nccl-tcpxo-installer",
                    "image": TCPXO_INSTALLER_IMAGE,
                    "resources": {"requests": {"cpu": "150m"}},
                    "securityContext": {"privileged": True},
                    "volumeMounts": [
                        {"name": "var-lib", "mountPath": "/var/lib"},
                        {"name": "library-dir-host", "mountPath": "/usr/local"},
                    ],
                    "command": ["/bin/sh", "-c"],
                    "args": [_TCPXO_INSTALL],
                },
            ],
            "containers": [{"image": PAUSE_IMAGE, "name": "pause"}],
        },
    )


NRI_INJECTOR = "device-injector"


def nri_device_injector(pools: list[GkeNodePool]) -> dict[str, Any]:
    """Enables NRI on the node and injects the devices a pod's `devices.gke.io/container.<name>`
    annotation lists: how the unprivileged tcpxo-daemon sidecar gets /dev/nvidia* (cluster-toolkit
    installs it with the TCPXO installer: modules/compute/gke-node-pool/gpu_direct.tf)."""
    return _daemonset(
        NRI_INJECTOR,
        pools,
        {
            "hostNetwork": True,
            "hostPID": True,
            "containers": [
                {
                    "image": NRI_INJECTOR_IMAGE,
                    "name": "device-injector",
                    "resources": {"requests": {"cpu": "150m"}},
                    "securityContext": {"privileged": True},
                    "volumeMounts": [
                        {"name": "dev", "mountPath": "/dev"},
                        {"name": "nri", "mountPath": "/var/run/nri"},
                    ],
                }
            ],
            "volumes": [
                {"name": "root", "hostPath": {"path": "/"}},
                {"name": "nri", "hostPath": {"path": "/var/run/nri"}},
                {"name": "dev", "hostPath": {"path": "/dev"}},
            ],
        },
    )


_RDMA_INSTALL = """set -ex
/scripts/container_entry.sh install
cp -r /var/lib/gib/lib64/. /usr/local/home/kubernetes/bin/nvidia/lib64
cp -r /var/lib/gib/. /usr/local/home/kubernetes/bin/gib
echo "installation finishes"
"""
RDMA_INSTALLER = "nccl-rdma-installer"


def rdma_installer(pools: list[GkeNodePool]) -> dict[str, Any]:
    """Installs the gIB NCCL plugin into /home/kubernetes/bin/nvidia/lib64 and its scripts
    (set_nccl_env.sh) into /home/kubernetes/bin/gib, which task pods mount."""
    return _daemonset(
        RDMA_INSTALLER,
        pools,
        {
            "hostNetwork": True,
            "hostPID": True,
            "volumes": [
                {
                    "name": "library-dir-host",
                    "hostPath": {"path": "/home/kubernetes/bin/nvidia/lib64", "type": "DirectoryOrCreate"},
                },
                {"name": "gib", "hostPath": {"path": "/home/kubernetes/bin/gib"}},
            ],
            "initContainers": [
                {
                    "image": RDMA_INSTALLER_IMAGE,
                    "name": "nccl-rdma-installer",
                    "resources": {"requests": {"cpu": "150m"}},
                    "securityContext": {"privileged": True},
                    "volumeMounts": [
                        {
                            "name": "library-dir-host",
                            "mountPath": "/usr/local/home/kubernetes/bin/nvidia/lib64",
                        },
                        {"name": "gib", "mountPath": "/usr/local/home/kubernetes/bin/gib"},
                    ],
                    "command": ["/bin/sh", "-c"],
                    "args": [_RDMA_INSTALL],
                }
            ],
            "containers": [{"image": PAUSE_IMAGE, "name": "pause"}],
        },
    )


def cluster_objects(args: GkeClusterArgs) -> list[dict[str, Any]]:
    """Per fabric: a GKENetworkParamSet and a Network per node network, then its node agents
    (TCPXO: the plugin installer and the NRI device injector; RDMA: the gIB installer)."""
    objects: list[dict[str, Any]] = []
    for fabric in fabrics(args):
        for n in gke_machines.fabric_node_networks(fabric):
            objects += [param_set(args, n), network_object(n)]
        pools = fabric_pools(args, fabric)
        if fabric == "tcpxo":
            objects += [tcpxo_installer(pools), nri_device_injector(pools)]
        else:
            objects.append(rdma_installer(pools))
    return objects


def node_agents(
    args: GkeClusterArgs, pool_node_pools: dict[str, list[Any]], opts: pulumi.ResourceOptions
) -> list[pulumi.Resource]:
    """Registers cluster_objects after the fabric pools' node pools (which wait for the
    networks the parameter sets name; GKE serves the networking.gke.io kinds once the cluster has
    multi-networking)."""
    node_pools = [np for p in args.node_pools if p.fabric for np in pool_node_pools[p.name]]
    after = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=node_pools))
    return [kube.register(obj, after) for obj in cluster_objects(args)]
