"""The GPU fabric of a pool's nodes (nodePools[].fabric: efa, tcpxo, rdma) in its task pods:
the devices, networks, libraries and NCCL settings a distributed trial needs."""

from __future__ import annotations

from typing import Any

from components.config import ResourcePoolConfig
from components.determined.args import DeterminedArgs


def pool_layer(cfg: DeterminedArgs, rp: ResourcePoolConfig) -> dict[str, Any]:
    """The pod layer of a pool on a fabric node pool. {} on other pools."""
    return {}


def pool_settings(cfg: DeterminedArgs, rp: ResourcePoolConfig) -> dict[str, Any]:
    """task_container_defaults keys (besides pod specs) a pool on a fabric node pool needs
    over the stack's (dtrain_network_interface, environment_variables, startup_hook). {} on
    other pools."""
    return {}
