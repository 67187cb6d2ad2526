"""Node pools and resource pools read together: names unique, references that resolve, an
untainted pool for the system pods, one namespace and one default pool of each role per
workspace."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from components import versions
from components.config.errors import Add
from components.config.node_pools import CloudNodePool, NodePool

if TYPE_CHECKING:
    from components.config.stack import StackConfig


def node_pool_problems(cfg: StackConfig, add: Add) -> None:
    """Node pool names unique, minNodes within maxNodes, images pre-pulled only where tasks run,
    an untainted pool for the system pods."""
    names = [p.name for p in cfg.node_pools]
    for i, pool in enumerate(cfg.node_pools):
        if pool.name in names[:i]:
            add(f"nodePools[{i}].name", f"duplicate node pool name {pool.name!r}")
        if isinstance(pool, CloudNodePool) and pool.min_nodes > pool.max_nodes:
            add(f"nodePools[{i}].minNodes", f"{pool.min_nodes} is greater than maxNodes ({pool.max_nodes})")
    used = {rp.node_pool for rp in cfg.resource_pools}
    for i, pool in enumerate(cfg.node_pools):
        if getattr(pool, "pre_pull_images", False) and pool.name not in used:
            add(
                f"nodePools[{i}].prePullImages",
                f"no resource pool runs on node pool {pool.name!r}, so no task image would be pulled "
                "there; remove it or give the node pool a resource pool",
            )
    if not any(not p.all_taints for p in cfg.node_pools):
        add(
            "nodePools",
            "at least one untainted CPU pool is needed for system pods (CoreDNS, the master, the database)"
            + arm_note(cfg.node_pools),
        )


def arm_note(pools: Iterable[NodePool]) -> str:
    """Why pools without taints of their own count as tainted: GKE taints Arm nodes."""
    arm = [f"{p.name} ({p.machine_type})" for p in pools if getattr(p, "arm", False) and not p.taints]
    return f"; GKE taints Arm nodes kubernetes.io/arch=arm64:NoSchedule: {', '.join(arm)}" if arm else ""


def resource_pool_problems(cfg: StackConfig, add: Add) -> None:
    """Resource pool names unique, each on a node pool that exists (selected by labels on an
    existing cluster), GPU quotas on GPU nodes, default pools that exist."""
    node_pool_names = [p.name for p in cfg.node_pools]
    pool_names = [p.name for p in cfg.resource_pools]
    for i, rp in enumerate(cfg.resource_pools):
        if rp.name in pool_names[:i]:
            add(f"resourcePools[{i}].name", f"duplicate resource pool name {rp.name!r}")
        if rp.node_pool not in node_pool_names:
            add(
                f"resourcePools[{i}].nodePool",
                f"no node pool named {rp.node_pool!r} (node pools: {', '.join(node_pool_names)})",
            )
            continue
        node_pool = cfg.node_pool(rp.node_pool)
        if not node_pool.selector:
            j = node_pool_names.index(rp.node_pool)
            add(
                f"nodePools[{j}].nodeSelector",
                f"required on an existing cluster: resource pool {rp.name!r} is pinned to "
                "these nodes by their labels (e.g. {node.kubernetes.io/instance-type: ...})",
            )
        if rp.quota and rp.quota.gpu and not node_pool.gpu:
            add(f"resourcePools[{i}].quota.gpu", f"node pool {rp.node_pool!r} has no GPUs")
    for key, value in (
        ("defaultComputePool", cfg.default_compute_pool),
        ("defaultAuxPool", cfg.default_aux_pool),
    ):
        if value is not None and value not in pool_names:
            add(
                key,
                f"no resource pool named {value!r} (resource pools: {', '.join(dict.fromkeys(pool_names))})",
            )


def workspace_problems(cfg: StackConfig, add: Add) -> None:
    """0.35+: one namespace per workspace, and one default compute and aux pool each."""
    if cfg.master.version_tuple < versions.WORKSPACE_NAMESPACES_SINCE:
        for i, rp in enumerate(cfg.resource_pools):
            if rp.workspace is not None:
                add(
                    f"resourcePools[{i}].workspace",
                    "needs master.version 0.35.0 or newer (older masters run a pool's tasks in its "
                    "namespace without workspaces)",
                )
        return
    namespace_of: dict[str, int] = {}
    role_of: dict[tuple[str, str], int] = {}
    for i, rp in enumerate(cfg.resource_pools):
        workspace = rp.workspace_name
        j = namespace_of.setdefault(workspace, i)
        other = cfg.resource_pools[j]
        if other.namespace_name != rp.namespace_name:
            add(
                f"resourcePools[{i}].workspace",
                f"workspace {workspace!r} is bound to namespace {other.namespace_name!r} by "
                f"resourcePools[{j}]; a workspace runs its tasks in one namespace",
            )
            continue
        role = cfg.pool_role(rp)
        j = role_of.setdefault((workspace, role), i)
        if j != i:
            add(
                f"resourcePools[{i}].workspace",
                f"workspace {workspace!r} already takes its default {role} pool from resourcePools[{j}]; "
                "give this pool a workspace of its own",
            )
