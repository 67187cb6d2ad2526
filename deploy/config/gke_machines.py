"""Which Compute Engine machine types take which GPUs (GKE node pools), as data.

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

# Series that only take Hyperdisk boot disks.
HYPERDISK_ONLY = {"a3-ultragpu", "a4-highgpu", "a4x-highgpu", "g4-standard"}


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
