"""Rules for what an EKS pool asks of its nodes beyond the instance type: `fabric: efa`,
`localNvme` and `fastImagePulls` (components/config/eks.py calls `node_feature_problems`).

All three give the pool's managed node group a launch template of its own
(components/cluster/eks/launch_templates.py). EKS cannot add a launch template to a group made
without one ("Existing node groups that don't use a custom launch template can't be updated
directly. Instead, you must create a new node group with a custom launch template": EKS user
guide, launch-templates.adoc at 4d52b4d, read 2026-11), so turning one of them on for a pool
that already runs replaces its group: its nodes are drained and made anew. With
`cluster.autoscaler: karpenter` they change the pool's EC2NodeClass, and Karpenter replaces
idle nodes through drift instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from components.config import eks_instances
from components.config.errors import Add
from components.config.node_pools import EksNodePool
from components.kube import api_rules

if TYPE_CHECKING:
    from components.config.stack import EksStack


def _listed(types: list[str]) -> str:
    return ", ".join(types)


def _efa_problems(i: int, pool: EksNodePool, add: Add) -> None:
    at = f"nodePools[{i}]"
    supported = _listed([f"{t} ({e.efa_interfaces} EFA)" for t, e in eks_instances.EFA_TYPES.items()])
    without = [t for t in pool.machine_types if t not in eks_instances.EFA_TYPES]
    if without:
        add(
            f"{at}.fabric",
            f"efa needs an instance type with EFA this release supports; {_listed(without)} is not one: "
            f"choose among {supported}",
        )
        return
    # One launch template / EC2NodeClass per pool: one interface layout for all its types.
    counts = {eks_instances.efa_interfaces(t) for t in pool.machine_types}
    if len(counts) > 1:
        add(
            f"{at}.capacity.instanceTypes",
            f"with fabric efa every instance type of the pool needs the same EFA interfaces (one launch "
            f"template for all); {_listed(pool.machine_types)} have "
            f"{', '.join(str(eks_instances.efa_interfaces(t)) for t in pool.machine_types)}",
        )
    # A cluster placement group lies in one Availability Zone (EC2 user guide, "Placement
    # strategies", read 2026-11), and so does the pool (EKS user guide node-efa pins the EFA
    # node group to one zone). The zone is the user's to choose: capacity for these types (and
    # their reservations or Capacity Blocks) is in particular zones.
    if pool.zones is None or len(pool.zones) != 1:
        given = "none" if pool.zones is None else _listed(list(pool.zones))
        add(
            f"{at}.zones",
            f"fabric efa needs exactly one zone (its cluster placement group lies in one Availability "
            f"Zone); given: {given}: name the one zone where the instance type (and its capacity) is",
        )


def _local_nvme_problems(i: int, pool: EksNodePool, add: Add) -> None:
    at = f"nodePools[{i}]"
    assert pool.local_nvme is not None
    without = [t for t in pool.machine_types if not eks_instances.instance_store_gb(t)]
    if without:
        tabled = _listed(sorted(eks_instances.INSTANCE_STORE_GB))
        add(
            f"{at}.localNvme",
            f"{_listed(without)} has no NVMe instance store this release knows of; localNvme takes: {tabled}",
        )
        return
    smallest = min(eks_instances.instance_store_gb(t) for t in pool.machine_types)
    wanted = api_rules.quantity(pool.local_nvme.size)
    if wanted is not None and wanted > smallest * 10**9:
        add(
            f"{at}.localNvme.size",
            f"{pool.local_nvme.size} is more than the {smallest} GB of instance store a node of the pool "
            "has: a task pod asking for it could never be scheduled",
        )


def node_feature_problems(cfg: EksStack, add: Add) -> None:
    for i, pool in enumerate(cfg.node_pools):
        if pool.fabric == "efa":
            _efa_problems(i, pool, add)
        if pool.local_nvme is not None:
            _local_nvme_problems(i, pool, add)
