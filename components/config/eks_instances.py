"""Which EC2 instance types carry which NVIDIA GPUs (EKS node groups), as data.

GPU node groups run the EKS-optimized AL2023 NVIDIA AMI (x86_64), so only x86 instance
families with whole NVIDIA GPUs qualify. GPU-named families (p*, g*, gr*) this table does not
know are refused, not taken for CPU families: a newer GPU family planned as a CPU group would
get the standard AMI, no GPU taint and no device plugin.

Sources (read 2026-11-25):
- GPUs per size: the cluster-autoscaler's table of EC2 instance types, generated from EC2
  DescribeInstanceTypes (kubernetes/autoscaler cluster-autoscaler/cloudprovider/aws/
  ec2_instance_types.go, `GPU` per type, snapshot of 2026-08-22), for every family below but
  p5e and p6-b300, which it does not list: 8 GPUs per 48xlarge for both, from AWS's launch
  announcements as republished (p5e.48xlarge 8 x H200; p6-b300.48xlarge 8 x B300, "GPU: 8x
  B300"), not from an AWS page read directly.
- GPU model and CPU architecture: eksctl's table generated from the same API (eksctl-io/eksctl
  pkg/utils/instance/instance_types.go, `NvidiaGPUType`, `CPUArch`, snapshot of 2026-08-21):
  p5e "H200", p6-b300 "B300", g7e "RTX PRO Server 6000", g6f and gr6f "L4", all x86-64.
- Sizes: the EC2 API's InstanceType enum (botocore 1.43.11, ec2 2016-11-15 service model).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class GpuFamily:
    accelerator: str  # the GPU every size carries, named as GPU_SHORT_NAMES knows it
    gpus: dict[str, int]  # size -> GPUs per instance


# The sizes of g5, g6 and g6e, and their GPUs (one each but 12xlarge and 24xlarge: 4, 48xlarge: 8).
_G_SIZES = {
    "xlarge": 1,
    "2xlarge": 1,
    "4xlarge": 1,
    "8xlarge": 1,
    "12xlarge": 4,
    "16xlarge": 1,
    "24xlarge": 4,
    "48xlarge": 8,
}

FAMILIES: dict[str, GpuFamily] = {
    "p3": GpuFamily("nvidia-tesla-v100", {"2xlarge": 1, "8xlarge": 4, "16xlarge": 8}),
    "p3dn": GpuFamily("nvidia-tesla-v100", {"24xlarge": 8}),
    "p4d": GpuFamily("nvidia-tesla-a100", {"24xlarge": 8}),
    "p4de": GpuFamily("nvidia-a100-80gb", {"24xlarge": 8}),
    "p5": GpuFamily("nvidia-h100-80gb", {"4xlarge": 1, "48xlarge": 8}),
    "p5e": GpuFamily("nvidia-h200-141gb", {"48xlarge": 8}),
    "p5en": GpuFamily("nvidia-h200-141gb", {"48xlarge": 8}),
    "p6-b200": GpuFamily("nvidia-b200", {"48xlarge": 8}),
    "p6-b300": GpuFamily("nvidia-b300", {"48xlarge": 8}),
    "g4dn": GpuFamily(
        "nvidia-tesla-t4",
        {"xlarge": 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 1, "12xlarge": 4, "16xlarge": 1, "metal": 8},
    ),
    "g5": GpuFamily(
        "nvidia-a10g",
        _G_SIZES,
    ),
    "g6": GpuFamily(
        "nvidia-l4",
        _G_SIZES,
    ),
    "gr6": GpuFamily("nvidia-l4", {"4xlarge": 1, "8xlarge": 1}),
    "g6e": GpuFamily(
        "nvidia-l40s",
        _G_SIZES,
    ),
    # NVIDIA RTX PRO 6000 Blackwell Server Edition, as on GKE's G4; the 12xlarge has 2.
    "g7e": GpuFamily(
        "nvidia-rtx-pro-6000",
        {"2xlarge": 1, "4xlarge": 1, "8xlarge": 1, "12xlarge": 2, "24xlarge": 4, "48xlarge": 8},
    ),
}
# Family -> the GPU every size of it carries.
FAMILY_ACCELERATOR: dict[str, str] = {name: family.accelerator for name, family in FAMILIES.items()}

# GPU-named families refused, with why. Sources (read 2026-11-25): EKS user guide, "Create
# nodes with optimized Amazon Linux AMIs": "Amazon EC2 P2 instances aren't supported on Amazon
# EKS because they require NVIDIA driver version 470 or earlier"
# (https://docs.aws.amazon.com/eks/latest/userguide/eks-optimized-ami.html); g6f/gr6f carry a
# part of one L4 (EC2 GpuDeviceInfo `gpuPartitionSize`,
# https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_GpuDeviceInfo.html), which the
# cluster-autoscaler counts as 0 GPUs (ec2_instance_types.go above: g6f.* and gr6f.4xlarge
# `GPU: 0`), so it never scales such a group up for a GPU task, and quotas here count whole
# GPUs; GB200/GB300 superchips pair the GPUs with an Arm (Grace) CPU (AWS Containers blog,
# "Unlocking next-generation AI performance with Dynamic Resource Allocation on Amazon EKS and
# Amazon EC2 P6e-GB200"), and node groups here run the x86_64 AMIs.
NOT_NVIDIA_X86 = {
    "g4ad": "AMD GPUs",
    "g5g": "ARM (Graviton) CPUs",
    "inf2": "Inferentia",
    "trn1": "Trainium",
    "p2": "NVIDIA K80 GPUs, which need NVIDIA driver 470 or earlier: EKS does not support P2",
    "g6f": "a fraction of one NVIDIA L4 (1/8 to 1/2): the cluster-autoscaler counts it as no GPU and "
    "quotas here count whole GPUs; use g6 (whole L4s)",
    "gr6f": "a fraction of one NVIDIA L4: the cluster-autoscaler counts it as no GPU and quotas here "
    "count whole GPUs; use gr6 (whole L4s)",
}
# NVIDIA Grace (Arm) superchip families: p6e-gb200, and any later -gb family.
_GRACE = re.compile(r"[a-z]+[0-9]+[a-z]*-gb[0-9]+")
# What EC2 names its GPU families: p3, g4dn, gr6, p6-b200 (a letter group, a generation).
_GPU_NAMED = re.compile(r"(p|g|gr)[0-9]+[a-z]*(-[a-z0-9]+)?")
TABLE_READ = "2026-11-25"


def family(instance_type: str) -> str:
    """'p4d.24xlarge' -> 'p4d'; 'p6-b200.48xlarge' -> 'p6-b200'."""
    return instance_type.split(".", 1)[0]


def size(instance_type: str) -> str:
    return instance_type.split(".", 1)[1] if "." in instance_type else ""


def accelerator(instance_type: str) -> str | None:
    """The NVIDIA GPU of the instance type, or None when it has none."""
    return FAMILY_ACCELERATOR.get(family(instance_type))


def gpu_count(instance_type: str) -> int:
    """GPUs per instance of a GPU instance type (1 for a size the table does not list; config
    validation refuses those: `sizes`)."""
    known = FAMILIES.get(family(instance_type))
    return known.gpus.get(size(instance_type), 1) if known else 1


def sizes(instance_type: str) -> list[str]:
    """The sizes of the instance type's GPU family (empty for other families)."""
    known = FAMILIES.get(family(instance_type))
    return [f"{family(instance_type)}.{s}" for s in known.gpus] if known else []


def grace(instance_type: str) -> bool:
    """NVIDIA Grace superchip families (p6e-gb200): Arm CPUs."""
    return bool(_GRACE.fullmatch(family(instance_type)))


def refused_gpu_family(instance_type: str) -> str | None:
    """Why a GPU-named family cannot make a node group, or None (a GPU family of the table, or
    not a GPU-named family)."""
    name = family(instance_type)
    if name in FAMILIES:
        return None
    if grace(instance_type):
        return "NVIDIA Grace superchips, whose CPUs are Arm (the node groups run the x86_64 AMIs)"
    if name in NOT_NVIDIA_X86 and _GPU_NAMED.fullmatch(name):
        return NOT_NVIDIA_X86[name]
    if _GPU_NAMED.fullmatch(name):
        return f"GPUs of a family this release does not know (its table was read on {TABLE_READ})"
    return None


def arm(instance_type: str) -> bool:
    """Graviton (ARM) instance types: a `g` after the generation (m7g, c6gn, r6gd, t4g, x2gd);
    and Grace superchips (p6e-gb200)."""
    name = family(instance_type)
    return bool(re.fullmatch(r"[a-z]+[0-9]+g[a-z]*", name)) or name == "a1" or grace(instance_type)
