"""Which Compute Engine machine types take which GPUs and which boot disks (GKE node
pools), as data.

GPUs attach only to N1 machines (T4, V100, P100, P4, chosen per pool) or come built into
the accelerator-optimized series (A2, A3, A4, A4X, G2, G4), whose machine type fixes the
GPU model and count. General-purpose families (e2, n2, n4, c3, ...) cannot take GPUs.
Source: Compute Engine "GPU machine types" documentation (2026).
"""

from __future__ import annotations

from dataclasses import dataclass

# N1: accelerator type -> GPU count one VM may attach -> the most vCPUs and memory (GB) an N1
# machine may have with that many GPUs attached.
# Source: Compute Engine's N1 GPU table, https://cloud.google.com/compute/docs/gpus (the table
# itself could not be read from where this was written, 2026-11-25); the numbers are as two
# secondary sources copy it, which agree: SkyPilot's sky/clouds/catalog/gcp_catalog.py
# `_NUM_ACC_TO_MAX_CPU_AND_MEMORY` ("Refer to: https://cloud.google.com/compute/docs/gpus") and
# dstackai/gpuhunt src/gpuhunt/providers/gcp.py `accelerator_limits` (both read 2026-11-25).
N1_GPU_LIMITS: dict[str, dict[int, tuple[int, float]]] = {
    "nvidia-tesla-t4": {1: (48, 312), 2: (48, 312), 4: (96, 624)},
    "nvidia-tesla-v100": {1: (12, 78), 2: (24, 156), 4: (48, 312), 8: (96, 624)},
    "nvidia-tesla-p100": {1: (16, 104), 2: (32, 208), 4: (96, 624)},
    "nvidia-tesla-p4": {1: (24, 156), 2: (48, 312), 4: (96, 624)},
}
# N1: accelerator type -> GPU counts one VM may attach.
N1_ACCELERATORS: dict[str, tuple[int, ...]] = {gpu: tuple(limits) for gpu, limits in N1_GPU_LIMITS.items()}
# N1 predefined shapes: memory (GB) per vCPU. Source: https://cloud.google.com/compute/docs/
# general-purpose-machines#n1_machines (read 2026-11-25): n1-standard 3.75 GB, n1-highmem 6.5 GB,
# n1-highcpu 0.9 GB per vCPU (also the memory of every n1 row of the SkyPilot catalog above).
N1_GB_PER_VCPU = {"standard": 3.75, "highmem": 6.5, "highcpu": 0.9}

# Accelerator-optimized series (machine type without its size suffix) -> built-in GPU.
SERIES_ACCELERATOR: dict[str, str] = {
    "a2-highgpu": "nvidia-tesla-a100",
    "a2-megagpu": "nvidia-tesla-a100",
    "a2-ultragpu": "nvidia-a100-80gb",
    "a3-highgpu": "nvidia-h100-80gb",
    "a3-edgegpu": "nvidia-h100-80gb",
    "a3-megagpu": "nvidia-h100-mega-80gb",
    "a3-ultragpu": "nvidia-h200-141gb",
    "a4-highgpu": "nvidia-b200",
    "a4x-highgpu": "nvidia-gb200",
    "g2-standard": "nvidia-l4",
    "g4-standard": "nvidia-rtx-pro-6000",
}

# G2/G4 sizes are named by vCPUs, not GPUs: vCPUs -> GPUs.
_BY_VCPUS: dict[str, dict[int, int]] = {
    "g2-standard": {4: 1, 8: 1, 12: 1, 16: 1, 24: 2, 32: 1, 48: 4, 96: 8},
    "g4-standard": {48: 1, 96: 2, 192: 4, 384: 8},
}

# The boot disk types GKE node pools take (`node_config.disk_type`).
# Source: https://cloud.google.com/kubernetes-engine/docs/how-to/custom-boot-disks (read
# 2026-11-25): pd-balanced (the default since 1.24), pd-standard, pd-ssd, hyperdisk-balanced.
BOOT_DISK_TYPES = ("pd-balanced", "pd-ssd", "pd-standard", "hyperdisk-balanced")
PD = ("pd-balanced", "pd-ssd", "pd-standard")
HD = ("hyperdisk-balanced",)

# Machine series (or family, when every series of it agrees) -> the boot disk types it can
# use, first the Persistent Disk types, then Hyperdisk Balanced. Persistent Disk is not
# offered on the newest series (C4, C4A, C4D, N4, N4A, N4D, H4D, M4, X4, A3 Ultra, A4, A4X,
# G4), whose boot disk is Hyperdisk Balanced.
# Source: Compute Engine's per-series "Supported disk types" (https://cloud.google.com/compute/
# docs/general-purpose-machines, .../compute-optimized-machines, .../memory-optimized-machines,
# .../accelerator-optimized-machines, .../storage-optimized-machines) and the machine series
# lists of https://cloud.google.com/compute/docs/disks/persistent-disks and .../hyperdisks.
# Checked 2026-11-25 against what could be read of them then: Persistent Disk "isn't
# available with the latest machine series" (.../compute/docs/disks); N1, E2, C2, C2D, T2A
# take no Hyperdisk (.../disks/hyperdisks table); C3 and N4 take hyperdisk-balanced (Red
# Hat's GCP PD CSI driver docs); Google's cluster-toolkit checks (C4 takes no pd-ssd; C2
# boots from no Hyperdisk). The other rows were not re-read then: compare them with those
# pages when updating.
DISK_TYPES: dict[str, tuple[str, ...]] = {
    # General purpose.
    "e2": PD,
    "n1": PD,
    "n2": PD,
    "n2d": PD,
    "t2d": PD,
    "t2a": PD,
    "c3": ("pd-balanced", "pd-ssd", *HD),
    "c3d": ("pd-balanced", "pd-ssd", *HD),
    "c4": HD,
    "c4a": HD,
    "c4d": HD,
    "n4": HD,
    "n4a": HD,
    "n4d": HD,
    # Compute optimized.
    "c2": PD,
    "c2d": PD,
    "h3": ("pd-balanced", *HD),
    "h4d": HD,
    # Memory optimized.
    "m1": (*PD, *HD),
    "m2": (*PD, *HD),
    "m3": ("pd-balanced", "pd-ssd", *HD),
    "m4": HD,
    "x4": HD,
    # Storage optimized.
    "z3": ("pd-balanced", "pd-ssd", *HD),
    # Accelerator optimized.
    "a2": PD,
    "a3-highgpu": ("pd-balanced", "pd-ssd", *HD),
    "a3-megagpu": ("pd-balanced", "pd-ssd", *HD),
    "a3-edgegpu": ("pd-balanced", "pd-ssd", *HD),
    "a3-ultragpu": HD,
    "a4": HD,
    "a4x": HD,
    "g2": ("pd-balanced", "pd-ssd"),
    "g4": HD,
}

# Machine types Compute Engine does not sell on demand: only as Spot VMs, through flex-start or
# from reservations. Series -> None (no machine type of it) or the GPU count from which it is
# sold on demand (A3 High: the 8-GPU machine only).
# Source: "Consumption option availability by machine type", https://cloud.google.com/compute/
# docs/accelerator-optimized-machines#consumption_option_availability_by_machine_type (not
# readable from where this was written, 2026-11-25). Secondary, each citing that table: Google's
# cluster-toolkit PR #6279 ("On Demand is not supported for A4", 2026-09-11) and
# dstackai/gpuhunt src/gpuhunt/providers/gcp.py at 3584151 (2026-08-19; since PR #176,
# 2025-09-29), which drops on-demand offers of a4x-*, a4-*, a3-ultragpu-* and a3-highgpu-* with
# fewer than 8 GPUs (read 2026-11-25).
NOT_ON_DEMAND: dict[str, int | None] = {
    "a3-ultragpu": None,
    "a4-highgpu": None,
    "a4x-highgpu": None,
    "a3-highgpu": 8,
}

# Arm machine families. GKE taints every Arm node kubernetes.io/arch=arm64:NoSchedule unless
# the node pool's taint_config says otherwise (its default, ARCHITECTURE_TAINT_BEHAVIOR_
# UNSPECIFIED, "defaults to ARM": "Taints all the nodes in the node pool with the default ARM
# taint"). Sources (read 2026-11-25): https://cloud.google.com/kubernetes-engine/docs/how-to/
# prepare-arm-workloads-for-deployment ("placing a taint (kubernetes.io/arch=arm64:NoSchedule)
# on all Arm nodes"); the GKE API's TaintConfig.ArchitectureTaintBehavior
# (https://docs.cloud.google.com/php/docs/reference/cloud-container/latest/V1.TaintConfig.
# ArchitectureTaintBehavior). The families: T2A (Ampere Altra), C4A and N4A (Google Axion),
# A4X (NVIDIA Grace CPUs), per https://cloud.google.com/compute/docs/machine-resource and
# .../accelerator-optimized-machines (read 2026-11-25).
ARM_FAMILIES = ("t2a", "c4a", "n4a", "a4x")

# Disk sizes. A node boot disk takes at least 10 GB whatever its type (the GKE node pool
# API: node_config.disk_size_gb "The smallest allowed disk size is 10GB", hashicorp/
# terraform-provider-google google/services/container/node_config.go, read 2026-11-25; the
# `diskSizeGb` bounds hold it). A Hyperdisk Balanced volume takes 4 GiB to 64 TiB
# (https://cloud.google.com/compute/docs/disks/hd-types/hyperdisk-balanced, read
# 2026-11-25): below GKE's floor for boot disks, a bound for the database's volume.
HYPERDISK_BALANCED_MIN_GIB = 4


@dataclass(frozen=True)
class GpuMachine:
    """What a machine type allows: the accelerator types and, where the machine type fixes
    it, the GPU count (None: chosen per pool, as on N1)."""

    accelerators: tuple[str, ...]
    counts: tuple[int, ...]
    fixed: bool


def series(machine_type: str) -> str:
    """'a2-highgpu-4g' -> 'a2-highgpu'; 'n1-standard-8' -> 'n1-standard'."""
    return "-".join(machine_type.split("-")[:2])


def disk_types(machine_type: str) -> tuple[str, ...] | None:
    """The boot disk types `machine_type` can use (None: a series the table does not know)."""
    name = series(machine_type)
    return DISK_TYPES.get(name, DISK_TYPES.get(name.split("-")[0]))


def default_disk_type(machine_type: str) -> str:
    """pd-balanced (GKE's default) where the series takes it, else hyperdisk-balanced."""
    types = disk_types(machine_type)
    return "pd-balanced" if types is None or "pd-balanced" in types else "hyperdisk-balanced"


def gpu_machine(machine_type: str) -> GpuMachine | None:
    """The GPUs `machine_type` can carry; None when it cannot carry any (or is unknown)."""
    if machine_type.startswith("n1-"):
        counts = sorted({n for c in N1_ACCELERATORS.values() for n in c})
        return GpuMachine(tuple(N1_ACCELERATORS), tuple(counts), fixed=False)
    name = series(machine_type)
    accelerator = SERIES_ACCELERATOR.get(name)
    if accelerator is None:
        return None
    size = machine_type.split("-")[2] if machine_type.count("-") >= 2 else ""
    if name in _BY_VCPUS:
        count = _BY_VCPUS[name].get(int(size)) if size.isdigit() else None
    else:
        count = int(size[:-1]) if size.endswith("g") and size[:-1].isdigit() else None
    if count is None:
        return None
    return GpuMachine((accelerator,), (count,), fixed=True)


def family(machine_type: str) -> str:
    """'c4a-standard-8' -> 'c4a'."""
    return machine_type.split("-")[0]


def is_arm(machine_type: str) -> bool:
    """Whether `machine_type` is an Arm machine (GKE taints its nodes)."""
    return family(machine_type) in ARM_FAMILIES


def gpu_count(machine_type: str) -> int | None:
    """The GPUs an accelerator-optimized machine type comes with (None: not one)."""
    machine = gpu_machine(machine_type)
    return machine.counts[0] if machine is not None and machine.fixed else None


def sold_on_demand(machine_type: str) -> bool:
    """Whether Compute Engine sells `machine_type` on demand (NOT_ON_DEMAND)."""
    name = series(machine_type)
    if name not in NOT_ON_DEMAND:
        return True
    least = NOT_ON_DEMAND[name]
    count = gpu_count(machine_type)
    return least is not None and count is not None and count >= least


def n1_shape(machine_type: str) -> tuple[int, float] | None:
    """vCPUs and memory (GB) of an N1 machine type, from its name (n1-standard-8,
    n1-custom-4-16384); None when the name does not say."""
    parts = machine_type.split("-")
    if parts[0] != "n1" or len(parts) < 3 or not parts[2].isdigit():
        return None
    vcpus = int(parts[2])
    if parts[1] == "custom" and len(parts) == 4 and parts[3].isdigit():
        return vcpus, int(parts[3]) / 1024
    if parts[1] in N1_GB_PER_VCPU and len(parts) == 3:
        return vcpus, vcpus * N1_GB_PER_VCPU[parts[1]]
    return None


# --- GPU fabrics (nodePools[].fabric) ------------------------------------------------------------

# The machine types each fabric runs on: GPUDirect-TCPXO on A3 Mega, GPUDirect RDMA (RoCE,
# ConnectX-7) on A3 Ultra and A4. Sources: GKE "Maximize GPU network bandwidth in Standard mode
# clusters", https://cloud.google.com/kubernetes-engine/docs/how-to/gpu-bandwidth-gpudirect-tcpx
# (read 2026-11); the installers' node affinity at GoogleCloudPlatform/container-engine-
# accelerators@992db81 gpudirect-tcpxo/nccl-tcpxo-installer.yaml (nvidia-h100-mega-80gb) and
# gpudirect-rdma/nccl-rdma-installer.yaml (nvidia-h200-141gb, nvidia-b200).
FABRIC_MACHINES: dict[str, tuple[str, ...]] = {
    "tcpxo": ("a3-megagpu-8g",),
    "rdma": ("a3-ultragpu-8g", "a4-highgpu-8g"),
}

# MTU of the fabric VPCs: "A3 Ultra and A4: MTU 8896; A3 Mega: 8244" (https://cloud.google.com/
# vertex-ai/docs/training/managed-training/networking, read 2026-11; cluster-toolkit@1047080
# examples/gke-a3-megagpu `mtu: 8244`).
FABRIC_MTU = {"tcpxo": 8244, "rdma": 8896}


@dataclass(frozen=True)
class NodeNetwork:
    """One additional node network of a fabric pool, in the order the node pool lists them
    (network_config.additional_node_network_configs; the nodes' eth1, eth2, ...)."""

    name: str  # the GKENetworkParamSet and Network objects' name (cluster-scoped)
    vpc: str  # purpose of its VPC in the stack's cloud names (components.names)
    subnet: str  # purpose of its subnetwork
    cidr: str  # the subnetwork's range
    device_mode: str  # GKENetworkParamSet spec.deviceMode: NetDevice or RDMA
    pod: bool  # attached to task pods (networking.gke.io/interfaces)


def _tcpxo_networks() -> tuple[NodeNetwork, ...]:
    # A3 Mega: eight gVNIC VPCs with one subnet each, a /20 of 192.168.0.0/16 per VPC
    # (cluster-toolkit@1047080 modules/network/multivpc: global_ip_address_range 192.168.0.0/16,
    # subnetwork_cidr_suffix 20). Named vpc1..vpc8 as Google's A3 Mega example and test pods
    # (container-engine-accelerators@992db81 gpudirect-tcpxo/nccl-test-latest.yaml annotations).
    # No gVNIC network beyond these: it would take a GPU NIC's PCI slot and leave 7 of 8 GPUs
    # with TCPXO (https://docs.nvidia.com/aicr/integrator-guide/gke-tcpxo-networking, read 2026-11).
    return tuple(
        NodeNetwork(f"vpc{i}", f"tcpxo-{i}", f"tcpxo-{i}", f"192.168.{16 * (i - 1)}.0/20", "NetDevice", True)
        for i in range(1, 9)
    )


def _rdma_networks() -> tuple[NodeNetwork, ...]:
    # A3 Ultra / A4: the second Titanium gVNIC in its own VPC, then one RoCE VPC with eight
    # subnets, one per ConnectX-7 NIC; ranges and names as cluster-toolkit@1047080
    # examples/gke-a3-ultragpu/gke-a3-ultragpu.yaml (gVNIC 192.168.64.0/18; RoCE 192.168.128.0/18
    # in 8) and modules/scheduler/gke-cluster (Networks gvnic-<i> from 1, rdma-<i> from 0). Pods
    # attach the eight RDMA networks only (container-engine-accelerators@992db81
    # gpudirect-rdma/nccl-test.yaml).
    gvnic = NodeNetwork("gvnic-1", "rdma-gvnic", "rdma-gvnic", "192.168.64.0/18", "NetDevice", False)
    roce = tuple(
        NodeNetwork(f"rdma-{i}", "rdma-roce", f"rdma-roce-{i}", f"192.168.{128 + 8 * i}.0/21", "RDMA", True)
        for i in range(8)
    )
    return (gvnic, *roce)


def fabric_node_networks(fabric: str) -> tuple[NodeNetwork, ...]:
    """The additional node networks of a `fabric` pool, in the node pool's order."""
    if fabric == "tcpxo":
        return _tcpxo_networks()
    if fabric == "rdma":
        return _rdma_networks()
    raise ValueError(f"no GKE fabric {fabric!r}; GKE has {', '.join(FABRIC_MACHINES)}")


# What every fabric network range lies in: the cluster's own ranges must stay out of it.
FABRIC_RANGE = "192.168.0.0/16"


def fabric_networks(machine_type: str, fabric: str) -> list[str]:
    """The Network objects a task pod on a `fabric` pool of `machine_type` lists in its
    `networking.gke.io/interfaces` annotation, in order (after eth0 on `default`): TCPXO the
    eight NIC networks vpc1..vpc8 (the pod's eth1..eth8), RDMA the eight RoCE networks
    rdma-0..rdma-7 (Google's samples name them eth2..eth9 in the pod, after the node's second
    gVNIC, which pods do not attach). The names of the objects components/cluster/gke/fabric.py
    creates."""
    if machine_type not in FABRIC_MACHINES.get(fabric, ()):
        raise ValueError(f"{machine_type} has no {fabric} fabric")
    return [n.name for n in fabric_node_networks(fabric) if n.pod]


# --- Local SSDs (nodePools[].localNvme) ----------------------------------------------------------

# Series whose every machine type comes with local SSDs: GKE's ephemeral storage config then
# takes count 0 as "the machine's own number". Sources (read 2026-11): Compute Engine "Add Local
# SSD", https://docs.cloud.google.com/compute/docs/disks/add-local-ssd: "Z4D, Z4M, Z3, A5X, A4X
# Max, A4X, A4, A3, and A2 Ultra machine series: every machine type comes with Local SSD
# storage" (C3, C3D, C4* and H4D: their `-lssd` types only); the API's
# EphemeralStorageLocalSsdConfig.local_ssd_count: "For Gen3 machines which dictate a specific
# number of local ssds, zero (or unset) means to use the default number of local ssds that goes
# with that machine type" (https://cloud.google.com/ruby/docs/reference/google-cloud-container-v1/
# 0.32.0/Google-Cloud-Container-V1-EphemeralStorageLocalSsdConfig).
BUNDLED_SSD_SERIES = ("z4d", "z4m", "z3", "a5x", "a4x", "a4", "a3", "a2-ultragpu")

# The local SSDs (375 GiB each) of machine types known to carry them, as GKE's ephemeral storage
# count: cluster-toolkit@1047080 modules/compute/gke-node-pool/disk_definitions.tf:24-29 (A3,
# A4) and dstackai/gpuhunt@3584151 src/gpuhunt/providers/gcp.py:65-93 (A2 Ultra).
LOCAL_SSD_GIB = 375
BUNDLED_SSD_COUNTS = {
    "a3-highgpu-8g": 16,
    "a3-megagpu-8g": 16,
    "a3-ultragpu-8g": 32,
    "a4-highgpu-8g": 32,
    "a2-ultragpu-1g": 1,
    "a2-ultragpu-2g": 2,
    "a2-ultragpu-4g": 4,
    "a2-ultragpu-8g": 8,
}


# Bundled series older than Gen3, where the API reads count 0 as no local SSDs: "For pre-Gen3
# machines, which support flexible numbers of local ssds, zero (or unset) means to disable using
# local SSDs as ephemeral storage" (container v1 EphemeralStorageLocalSsdConfig.local_ssd_count,
# https://cloud.google.com/ruby/docs/reference/google-cloud-container-v1/0.32.0/Google-Cloud-
# Container-V1-EphemeralStorageLocalSsdConfig, read 2026-11). A2 Ultra's count is fixed by its
# type, so GKE is sent that number, as Google's node pool module does for every type it knows
# (cluster-toolkit@v1.95.0 modules/compute/gke-node-pool/disk_definitions.tf:24-29).
PRE_GEN3_BUNDLED_SERIES = ("a2-ultragpu",)


def ephemeral_ssd_count(machine_type: str, count: int) -> int:
    """The local_ssd_count GKE is sent for localNvme `count` on `machine_type`: the count given,
    else (0) the machine's own number where 0 would mean none (PRE_GEN3_BUNDLED_SERIES), else 0
    (Gen3 series: "zero ... means to use the default number of local ssds that goes with that
    machine type", same API page)."""
    if count:
        return count
    if series(machine_type) in PRE_GEN3_BUNDLED_SERIES:
        return BUNDLED_SSD_COUNTS.get(machine_type, 0)
    return 0


def bundled_local_ssds(machine_type: str) -> bool:
    """Whether `machine_type` comes with its own local SSDs (BUNDLED_SSD_SERIES, `-lssd`
    types), so that GKE takes count 0 as all of them. `-nolssd` types (a3-ultragpu-8g-nolssd)
    have none."""
    if machine_type.endswith("-nolssd"):
        return False
    if machine_type.endswith("-lssd"):
        return True
    name = series(machine_type)
    return name in BUNDLED_SSD_SERIES or family(machine_type) in BUNDLED_SSD_SERIES
