"""How many CPUs a node of a known machine type offers to pods, as data and a formula.

vCPUs come from the machine type's name where it says them (GKE `e2-standard-8`, EC2
`m6i.2xlarge`) or from a table (accelerator-optimized GKE series). What pods may use is less:
GKE and the EKS AL2023 AMIs reserve CPU for the kubelet and system daemons by the same
tiered formula, so an 8-core node gives about 7.9 (the seeds' warning).
"""

from __future__ import annotations

import re

# GKE series whose vCPUs follow the GPU count (per GPU), or are fixed per machine type.
_GKE_VCPUS_PER_GPU = {"a2-highgpu": 12, "a2-ultragpu": 12, "a3-highgpu": 26}
_GKE_VCPUS = {
    "a2-megagpu-16g": 96,
    "a3-megagpu-8g": 208,
    "a3-edgegpu-8g": 208,
    "a3-ultragpu-8g": 224,
    "a4-highgpu-8g": 224,
    "a4x-highgpu-4g": 140,
    "e2-micro": 2,
    "e2-small": 2,
    "e2-medium": 2,
}
# EC2 sizes without a multiplier.
_EC2_SIZES = {"medium": 1, "large": 2, "xlarge": 4}

# (up to this many cores, share reserved of each core in this tier)
_RESERVED_TIERS = ((1, 0.06), (2, 0.01), (4, 0.005), (float("inf"), 0.0025))


def vcpus(machine_type: str) -> int | None:
    """vCPUs of a GKE machine type or EC2 instance type; None when the name does not say."""
    if "." in machine_type:  # EC2: family.size
        size = machine_type.split(".", 1)[1]
        if size in _EC2_SIZES:
            return _EC2_SIZES[size]
        match = re.fullmatch(r"([0-9]+)xlarge", size)
        return 4 * int(match[1]) if match else None
    if machine_type in _GKE_VCPUS:
        return _GKE_VCPUS[machine_type]
    series = "-".join(machine_type.split("-")[:2])
    if series in _GKE_VCPUS_PER_GPU:
        match = re.fullmatch(r"[0-9]+g", machine_type.split("-")[-1])
        return _GKE_VCPUS_PER_GPU[series] * int(match[0][:-1]) if match else None
    match = re.fullmatch(r"[a-z0-9]+-(standard|highmem|highcpu|megamem|ultramem)-([0-9]+)", machine_type)
    return int(match[2]) if match else None


def allocatable_cpu(cores: int) -> float:
    """CPUs left to pods on a node with `cores` vCPUs after the kubelet's reservation."""
    reserved, below = 0.0, 0
    for limit, share in _RESERVED_TIERS:
        in_tier = max(0.0, min(cores, limit) - below)
        reserved += in_tier * share
        below = limit if limit != float("inf") else below
        if cores <= limit:
            break
    return cores - reserved
