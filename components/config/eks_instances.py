"""Which EC2 instance types carry which NVIDIA GPUs (EKS node groups), as data; and, below,
which of them have EFA (`fabric: efa`, `efa_interfaces`) and an NVMe instance store
(`localNvme`), each table with its sources.

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


# --- EFA (nodePools[].fabric: efa) ------------------------------------------------------------


@dataclass(frozen=True)
class EfaType:
    gpus: int
    efa_interfaces: int  # EC2 NetworkInfo.EfaInfo.MaximumEfaInterfaces: the vpc.amazonaws.com/efa capacity
    network_cards: int  # EC2 NetworkInfo.MaximumNetworkCards


# GPU instance types with EFA that fabric efa takes, and what the launch template and the task
# pods need of each. Sources (read 2026-11):
# - EFA interfaces: Karpenter's generated instance-type reference (from EC2 DescribeInstanceTypes,
#   `vpc.amazonaws.com/efa` capacity = MaximumEfaInterfaces), aws/karpenter-provider-aws
#   website/content/en/v1.14/reference/instance-types.md at 1d92708; the API field:
#   https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_EfaInfo.html.
# - Network cards: p5/p5e "support up to 32 network cards" (EC2 user guide, "Maximize network
#   bandwidth on accelerated instances with EFA", p5-efa.html); p4d/p4de 4 (4 x 100 Gbps, one
#   EFA each) and p5en 16 (AWS's p5en run-instances example: cards 0-15, one EFA each; as
#   quoted in whn09/DeepEP start_ec2.sh), p6-b200 8 (8 x 400 Gbps): taken as one card per EFA
#   interface, the layout AWS recommends ("a single EFA network interface per network card",
#   same page). A type with more cards than EFA interfaces would need a table of its EFA
#   cards; none here has.
# - GPUs: FAMILIES above.
# p6-b300.48xlarge (16 EFA) is left out: which of its network cards carry EFA (card 0 too?)
# was not verified, and an EFA-only interface on a card without EFA fails the launch.
# p6e-gb200 (Grace, Arm) and g5/g6/g6e (1-4 EFA, no NVLink fabric) are out of scope.
EFA_TYPES: dict[str, EfaType] = {
    "p4d.24xlarge": EfaType(8, 4, 4),
    "p4de.24xlarge": EfaType(8, 4, 4),
    "p5.4xlarge": EfaType(1, 1, 1),
    "p5.48xlarge": EfaType(8, 32, 32),
    "p5e.48xlarge": EfaType(8, 32, 32),
    "p5en.48xlarge": EfaType(8, 16, 16),
    "p6-b200.48xlarge": EfaType(8, 8, 8),
}


def efa_interfaces(instance_type: str) -> int:
    """The EFA devices a node of `instance_type` offers, which a task pod that takes the whole
    node requests as `vpc.amazonaws.com/efa` (the EFA device plugin advertises one per EFA
    interface: "Each EFA device is dedicated to one Pod", EKS user guide device-management-efa,
    read 2026-11). 0 for a type without EFA (or not in EFA_TYPES)."""
    known = EFA_TYPES.get(instance_type)
    return known.efa_interfaces if known else 0


# --- instance store (nodePools[].localNvme) ---------------------------------------------------

# GPU instance types with NVMe instance store, total GB (Karpenter's well-known label
# karpenter.k8s.aws/instance-local-nvme, from EC2 InstanceStorageInfo.TotalSizeInGB), from
# aws/karpenter-provider-aws website/content/en/docs/reference/instance-types.md at 692ccdd
# (read 2026-11). Of the GPU families of FAMILIES, p3 (not dn) has none; CPU instance types
# are not tabled here (a CPU pool with localNvme is refused until they are).
INSTANCE_STORE_GB: dict[str, int] = {
    "p3dn.24xlarge": 1800,
    "p4d.24xlarge": 8000,
    "p4de.24xlarge": 8000,
    "p5.4xlarge": 3800,
    "p5.48xlarge": 30400,
    "p5e.48xlarge": 30400,
    "p5en.48xlarge": 30400,
    "p6-b200.48xlarge": 30400,
    "p6-b300.48xlarge": 30400,
    "g4dn.xlarge": 125,
    "g4dn.2xlarge": 225,
    "g4dn.4xlarge": 225,
    "g4dn.8xlarge": 900,
    "g4dn.12xlarge": 900,
    "g4dn.16xlarge": 900,
    "g4dn.metal": 1800,
    "g5.xlarge": 250,
    "g5.2xlarge": 450,
    "g5.4xlarge": 600,
    "g5.8xlarge": 900,
    "g5.12xlarge": 3800,
    "g5.16xlarge": 1900,
    "g5.24xlarge": 3800,
    "g5.48xlarge": 7600,
    "g6.xlarge": 250,
    "g6.2xlarge": 450,
    "g6.4xlarge": 600,
    "g6.8xlarge": 900,
    "g6.12xlarge": 3760,
    "g6.16xlarge": 1880,
    "g6.24xlarge": 3760,
    "g6.48xlarge": 7520,
    "g6e.xlarge": 250,
    "g6e.2xlarge": 450,
    "g6e.4xlarge": 600,
    "g6e.8xlarge": 900,
    "g6e.12xlarge": 3800,
    "g6e.16xlarge": 1900,
    "g6e.24xlarge": 3800,
    "g6e.48xlarge": 7600,
    "g7e.2xlarge": 1900,
    "g7e.4xlarge": 1900,
    "g7e.8xlarge": 1900,
    "g7e.12xlarge": 3800,
    "g7e.24xlarge": 7600,
    "g7e.48xlarge": 15200,
}


def instance_store_gb(instance_type: str) -> int:
    """The instance type's NVMe instance store in GB, 0 when it has none (or is not tabled)."""
    return INSTANCE_STORE_GB.get(instance_type, 0)
