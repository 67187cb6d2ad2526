"""What the pods the project runs itself (master, database, its Jobs) share: where they
run and what they pull images with."""

from __future__ import annotations

from typing import Any

from components.determined import registry
from components.determined.args import DeterminedArgs


def pod_fields(cfg: DeterminedArgs) -> dict[str, Any]:
    """Pod spec fields that keep a system pod on the master's node pool (an untainted
    on-demand CPU pool: see DeploymentViews.master_node_pool) and let it pull from private
    registries."""
    spec: dict[str, Any] = {}
    pool = cfg.master_node_pool
    if pool is not None and pool.selector:
        spec["nodeSelector"] = dict(pool.selector)
    return spec | registry.pod_field(cfg)
