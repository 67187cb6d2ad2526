"""User-given names that become cloud names (the cluster's, each node pool's) checked against
what the cloud's API takes (components.names): refused here, with the key path, rather than by
the cloud halfway through `pulumi up`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from components import names
from components.config.errors import Add

if TYPE_CHECKING:
    from components.config.stack import StackConfig


# cloud -> (cluster name rule, node pool name rule)
_RULES = {
    "gke": (("gcp:container/cluster:Cluster", "name"), ("gcp:container/nodePool:NodePool", "name")),
    "eks": (("aws:eks/cluster:Cluster", "name"), ("aws:eks/nodeGroup:NodeGroup", "nodeGroupName")),
}
_WHAT = {"gke": "GKE", "eks": "EKS"}


def _problem(rule: names.NameRule, value: str, what: str) -> str | None:
    problems = rule.problems(value)
    if not problems:
        return None
    if len(value) > rule.max_length:
        return f"{len(value)} characters; {what} takes at most {rule.max_length}"
    return f"{value!r} is not {what}: {rule.what}"


def name_problems(cfg: StackConfig, add: Add) -> None:
    if cfg.cloud not in _RULES:
        return
    cluster_rule, pool_rule = (names.rule(*r) for r in _RULES[cfg.cloud])
    cloud = _WHAT[cfg.cloud]
    message = _problem(cluster_rule, cfg.cluster.name, f"a {cloud} cluster name")
    if message:
        add("cluster.name", message)
    for i, pool in enumerate(cfg.node_pools):
        message = _problem(pool_rule, pool.name, f"a {cloud} node pool name")
        if message:
            add(f"nodePools[{i}].name", message)
