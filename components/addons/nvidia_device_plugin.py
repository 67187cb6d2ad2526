"""NVIDIA's device plugin alone, from its official chart: what makes `nvidia.com/gpu`
schedulable on EKS GPU nodes when the GPU operator is not enabled (the AL2023 NVIDIA AMI
has the driver and container toolkit, not the device plugin).

Its default affinity admits nodes labelled `nvidia.com/gpu.present=true`, which every EKS
GPU node group carries (components/cluster/eks/node_groups.py), so no node-feature-discovery
is needed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from components import versions
from components.addons import release
from components.addons.gpu_operator import with_gpu_pool_taints
from components.config import GPU_TAINT, NodePool

NAMESPACE = "kube-system"
# The node label the chart's default affinity accepts without node-feature-discovery.
GPU_PRESENT_LABEL = "nvidia.com/gpu.present"

# The chart's own tolerations; Helm replaces lists whole, so ours repeat them.
_DEFAULT_TOLERATIONS = [
    {"key": "CriticalAddonsOnly", "operator": "Exists"},
    {"key": GPU_TAINT.key, "operator": "Exists", "effect": "NoSchedule"},
]


def values(node_pools: Sequence[NodePool]) -> dict[str, Any]:
    """Tolerating every taint of the GPU pools among `node_pools`."""
    return {"tolerations": with_gpu_pool_taints(_DEFAULT_TOLERATIONS, node_pools)}


def release_args(node_pools: Sequence[NodePool]) -> dict[str, Any]:
    return release.release_args(
        "nvidia-device-plugin",
        versions.NVIDIA_DEVICE_PLUGIN_CHART,
        versions.NVIDIA_DEVICE_PLUGIN_VERSION,
        NAMESPACE,
        values(node_pools),
        repository=versions.NVIDIA_DEVICE_PLUGIN_REPOSITORY,
    )
