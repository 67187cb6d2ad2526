"""Local NVMe scratch space (nodePools[].localNvme) in task pods: an emptyDir on the nodes'
NVMe-backed ephemeral storage, asked for as ephemeral-storage."""

from __future__ import annotations

from typing import Any

from components.config import ResourcePoolConfig
from components.determined.args import DeterminedArgs


def pool_layer(cfg: DeterminedArgs, rp: ResourcePoolConfig) -> dict[str, Any]:
    """The scratch volume of a pool on a node pool with localNvme. {} on other pools."""
    return {}
