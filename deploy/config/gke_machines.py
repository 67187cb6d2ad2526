"""Which Compute Engine machine types take which GPUs and which boot disks (GKE node
pools), as data.

GPUs attach only to N1 machines (T4, V100, P100, P4, chosen per pool) or come built into
the accelerator-optimized series (A2, A3, A4, A4X, G2, G4), whose machine type fixes the
GPU model and count. General-purpose families (e2, n2, n4, c3, ...) cannot take GPUs.
Source: Compute Engine "GPU machine types" documentation (2026).
"""

from __future__ import annotations

from dataclasses import dataclass

# N1: accelerator type -> GPU counts one VM may attach.
N1_ACCELERATORS: dict[str, tuple[int, ...]] = {
    "nvidia-tesla-t4": (1, 2, 4),
    "nvidia-tesla-v100": (1, 2, 4, 8),
    "nvidia-tesla-p100": (1, 2, 4),
    "nvidia-tesla-p4": (1, 2, 4),
}

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
