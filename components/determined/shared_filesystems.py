"""Shared filesystems (sharedFilesystems) in task pods: the volumes and claims that carry
them into every namespace that mounts them, and the pod layer of each resource pool."""

from __future__ import annotations

from typing import Any

from components.config import ResourcePoolConfig
from components.determined.args import DeterminedArgs


def pool_layer(cfg: DeterminedArgs, rp: ResourcePoolConfig) -> dict[str, Any]:
    """The pod layer that mounts the pool's shared filesystems in its task container. {}
    when it mounts none."""
    return {}
