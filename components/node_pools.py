"""Node pools: how task pods are pinned to them.

On GKE and EKS the project creates the node pools and labels their nodes with
`determined.ai/node-pool=<name>`; on an existing cluster the pools are described, and
their `nodeSelector` (or `labels`) names labels the nodes already carry.
"""

from __future__ import annotations

from typing import Any

from components import defaults
from components.config import NodePool


def node_labels(pool: NodePool) -> dict[str, str]:
    """Labels the project puts on the nodes of a pool it creates."""
    return {**pool.labels, defaults.NODE_POOL_LABEL: pool.name}


def node_selector(cloud: str, pool: NodePool) -> dict[str, str]:
    """Labels that select exactly the nodes of `pool`."""
    if cloud == "existing":
        return dict(pool.node_selector or pool.labels)
    return {defaults.NODE_POOL_LABEL: pool.name}


def tolerations(pool: NodePool) -> list[dict[str, Any]]:
    """Tolerations for every taint of `pool` (GPU pools: nvidia.com/gpu first)."""
    result = []
    for taint in pool.all_taints:
        toleration: dict[str, Any] = {"key": taint.key}
        if taint.value:
            toleration |= {"operator": "Equal", "value": taint.value}
        else:
            toleration["operator"] = "Exists"
        result.append({**toleration, "effect": taint.effect})
    return result
