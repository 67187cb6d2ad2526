"""Which EC2 instance types carry which NVIDIA GPUs (EKS node groups), as data.

GPU node groups run the EKS-optimized AL2023 NVIDIA AMI (x86_64), so only x86 instance
families with NVIDIA GPUs qualify. Source: EC2 "Accelerated computing" instance types (2026).
"""

from __future__ import annotations

import re

# Family -> the GPU every size of it carries.
FAMILY_ACCELERATOR: dict[str, str] = {
    "p3": "nvidia-tesla-v100",
    "p3dn": "nvidia-tesla-v100",
    "p4d": "nvidia-tesla-a100",
    "p4de": "nvidia-a100-80gb",
    "p5": "nvidia-h100-80gb",
    "p5e": "nvidia-h200-141gb",
    "p5en": "nvidia-h200-141gb",
    "p6-b200": "nvidia-b200",
    "g4dn": "nvidia-tesla-t4",
    "g5": "nvidia-a10g",
    "g6": "nvidia-l4",
    "gr6": "nvidia-l4",
    "g6e": "nvidia-l40s",
}

# Sizes with more than one GPU (every other size of these families has one).
_MULTI_GPU: dict[str, dict[str, int]] = {
    "p3": {"8xlarge": 4, "16xlarge": 8},
    "p3dn": {"24xlarge": 8},
    "p4d": {"24xlarge": 8},
    "p4de": {"24xlarge": 8},
    "p5": {"48xlarge": 8},
    "p5e": {"48xlarge": 8},
    "p5en": {"48xlarge": 8},
    "p6-b200": {"48xlarge": 8},
    "g4dn": {"12xlarge": 4, "metal": 8},
    "g5": {"12xlarge": 4, "24xlarge": 4, "48xlarge": 8},
    "g6": {"12xlarge": 4, "24xlarge": 4, "48xlarge": 8},
    "g6e": {"12xlarge": 4, "24xlarge": 4, "48xlarge": 8},
}

# Families named like GPU families that carry other accelerators or ARM CPUs (refused as GPU pools).
NOT_NVIDIA_X86 = {"g4ad": "AMD GPUs", "g5g": "ARM (Graviton) CPUs", "inf2": "Inferentia", "trn1": "Trainium"}


def family(instance_type: str) -> str:
    """'p4d.24xlarge' -> 'p4d'; 'p6-b200.48xlarge' -> 'p6-b200'."""
    return instance_type.split(".", 1)[0]


def size(instance_type: str) -> str:
    return instance_type.split(".", 1)[1] if "." in instance_type else ""


def accelerator(instance_type: str) -> str | None:
    """The NVIDIA GPU of the instance type, or None when it has none."""
    return FAMILY_ACCELERATOR.get(family(instance_type))


def gpu_count(instance_type: str) -> int:
    """GPUs per instance of a GPU instance type."""
    return _MULTI_GPU.get(family(instance_type), {}).get(size(instance_type), 1)


def arm(instance_type: str) -> bool:
    """Graviton (ARM) instance types: a `g` after the generation (m7g, c6gn, r6gd, t4g, x2gd)."""
    return bool(re.fullmatch(r"[a-z]+[0-9]+g[a-z]*", family(instance_type))) or family(instance_type) == "a1"
