"""What the pods the project runs itself (master, database, its Jobs) share: where they
run and what they pull images with."""

from __future__ import annotations

from typing import Any

from components.determined import registry
from components.determined.args import DeterminedArgs


def placement(cfg: DeterminedArgs) -> dict[str, Any]:
    """The pod spec field that keeps a system pod on the master's node pool (an untainted
    on-demand CPU pool: see DeploymentViews.master_node_pool); empty when it has no selector.
    Also what the observability charts' pods are given (as chart values)."""
    pool = cfg.master_node_pool
    return {"nodeSelector": dict(pool.selector)} if pool is not None and pool.selector else {}


def pod_fields(cfg: DeterminedArgs) -> dict[str, Any]:
    """Pod spec fields that keep a system pod on the master's node pool (`placement`) and let
    it pull from private registries."""
    return placement(cfg) | registry.pod_field(cfg)
