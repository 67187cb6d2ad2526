"""What each cloud can do with `nodePools[].capacity` (components/config/pool_capacity.py).

EKS: a managed node group has one capacity type and no reservation fallback, so anything
beyond one type (or other instance types, or a reservation) needs `cluster.autoscaler:
karpenter`; the system pool (the first untainted CPU pool) stays a managed node group; flex-
start and queued provisioning are GKE's. GKE: reservations are named Compute Engine
reservations; flex-start and queued provisioning are for GPU pools, queued provisioning
through Kueue (`scheduler: kueue`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from components import names, versions
from components.config import eks_instances, gke_machines
from components.config.errors import Add
from components.config.gke_sub_pools import node_pool_names
from components.config.node_pools import gpu_names
from components.config.syntax import entry_at, shown

if TYPE_CHECKING:
    from components.config.node_pools import EksNodePool, GkeNodePool
    from components.config.stack import EksStack, GkeStack


def _system_index(cfg: EksStack | GkeStack) -> int | None:
    """The pool the system add-ons and the master run on (DeploymentViews.master_node_pool)."""
    pool = cfg.master_node_pool
    return None if pool is None else next(i for i, p in enumerate(cfg.node_pools) if p.name == pool.name)


# --- EKS -----------------------------------------------------------------------------------

# Karpenter (cluster.autoscaler karpenter) and `capacity.types`: the capacity-type values
# (kubernetes-sigs/karpenter pkg/apis/v1/labels.go at 6e7eab7, the core of
# aws/karpenter-provider-aws v1.14.1) and Karpenter's own preference among them, first to last:
# "Karpenter will prioritize `reserved` capacity, followed by `spot`, then finally `on-demand`"
# (aws/karpenter-provider-aws@v1.14.1 website/content/en/docs/concepts/nodepools.md:276).
KARPENTER_CAPACITY_TYPES = {"reservation": "reserved", "spot": "spot", "onDemand": "on-demand"}
KARPENTER_ORDER = ("reservation", "spot", "onDemand")
# NodePool names are the value of the `karpenter.sh/nodepool` label on its nodes: at most 63.
NODE_POOL_NAME_MAX = 63
# EC2NodeClass capacityReservationSelectorTerms: at most 30 terms, 20 tags per term, no empty tag
# values ("empty tag keys or values aren't supported"), and tags it refuses on `spec.tags`
# (karpenter.k8s.aws_v1_EC2NodeClass schema at v1.14.1, tests/data/crd-schemas).
RESERVATION_TERMS_MAX = 30
SELECTOR_TAGS_MAX = 20
NODE_CLASS_RESTRICTED_TAGS = (
    "eks:eks-cluster-name",
    "karpenter.sh/nodepool",
    "karpenter.sh/nodeclaim",
    "karpenter.k8s.aws/ec2nodeclass",
)
NODE_CLASS_RESTRICTED_TAG_PREFIX = "kubernetes.io/cluster"
# Label domains a NodePool's template refuses (its schema's CEL rules on template.metadata.labels:
# `label domain "karpenter.sh" is restricted`, `... "karpenter.k8s.aws" ...`).
KARPENTER_LABEL_DOMAINS = ("karpenter.sh", "karpenter.k8s.aws")
# family.size, as components/config/eks.py checks machineType.
_EC2_INSTANCE_TYPE = re.compile(r"[a-z][a-z0-9-]*\.[a-z0-9-]+")


def karpenter_runs(types: list[str]) -> list[list[str]]:
    """`capacity.types` cut where Karpenter's own order disagrees with the user's: each run is
    one NodePool, within which Karpenter's order is the user's."""
    runs: list[list[str]] = []
    for capacity_type in types:
        if runs and KARPENTER_ORDER.index(runs[-1][-1]) < KARPENTER_ORDER.index(capacity_type):
            runs[-1].append(capacity_type)
        else:
            runs.append([capacity_type])
    return runs


def karpenter_node_pool_names(pool: EksNodePool) -> list[str]:
    """The pool's NodePools, in the user's order: the pool's name, then `<name>-<type>` for each
    further run, named by its first capacity type (`a100-on-demand`)."""
    runs = karpenter_runs(pool.capacity_types)
    return [pool.name] + [f"{pool.name}-{KARPENTER_CAPACITY_TYPES[run[0]]}" for run in runs[1:]]


def karpenter_serves(cfg: EksStack, index: int) -> bool:
    """Karpenter makes this pool's nodes: every pool but the system one (a managed node group)."""
    return cfg.cluster.autoscaler == "karpenter" and index != _system_index(cfg)


def _same_gpu(accelerator: str, pool_gpu: str) -> bool:
    """The same GPU model: one accelerator, or two that share a usual name (`a100`: the A100
    40GB of p4d and the 80GB of p4de; `h100`), which a task asking for GPUs by count runs on alike."""
    return accelerator == pool_gpu or bool(set(gpu_names(accelerator)) & set(gpu_names(pool_gpu)))


def _eks_instance_type_problems(at: str, pool: EksNodePool, add: Add) -> None:
    """`instanceTypes` of an EKS pool: EC2 types that carry the pool's GPUs, type and count (or
    none on a CPU pool), x86 like every node here (components/config/eks_instances.py)."""
    gpu = pool.gpu
    for j, machine in enumerate(pool.capacity.instance_types):
        key = f"{at}.instanceTypes[{j}]"
        if not _EC2_INSTANCE_TYPE.fullmatch(machine):
            add(key, f"{shown(machine)} is not an EC2 instance type such as g6.12xlarge")
            continue
        accelerator = eks_instances.accelerator(machine)
        refused = eks_instances.refused_gpu_family(machine)
        if refused:
            add(key, f"{machine} has {refused}")
        elif eks_instances.arm(machine):
            add(key, f"{machine} has Arm CPUs; nodes here run x86_64 (amd64) images")
        elif accelerator and machine not in eks_instances.sizes(machine):
            add(key, f"{machine} is not a size EC2 offers: {', '.join(eks_instances.sizes(machine))}")
        elif gpu is None and accelerator:
            add(key, f"{machine} carries {accelerator} GPUs; a CPU pool's instance types carry none")
        elif gpu is not None and not (
            accelerator and _same_gpu(accelerator, gpu.type) and eks_instances.gpu_count(machine) == gpu.count
        ):
            carries = f"{eks_instances.gpu_count(machine)} {accelerator}" if accelerator else "no"
            add(key, f"{machine} carries {carries} GPU(s), not the pool's {gpu.count} {gpu.type}")


def _eks_reservation_problems(at: str, pool: EksNodePool, add: Add) -> None:
    reservation = pool.capacity.reservation
    if reservation.name or reservation.project:
        add(
            f"{at}.reservation",
            "eks: name EC2 capacity reservations by `ids` or `tags`, not `name`/`project`",
        )
    elif not reservation.ids and not reservation.tags:
        add(f"{at}.reservation", "eks: give the reservations' `ids` or `tags`")
    for key, value in reservation.tags.items():
        if not value:
            where, start = entry_at(f"{at}.reservation.tags", key)
            add(where, f"{start}Karpenter selects reservations by non-empty tag values ('*': any value)")
    if len(reservation.tags) > SELECTOR_TAGS_MAX:
        add(f"{at}.reservation.tags", f"Karpenter matches at most {SELECTOR_TAGS_MAX} tags")
    if len(reservation.ids) + (1 if reservation.tags else 0) > RESERVATION_TERMS_MAX:
        add(
            f"{at}.reservation.ids",
            f"Karpenter takes at most {RESERVATION_TERMS_MAX} reservations (tags: one)",
        )
    if len(set(reservation.ids)) != len(reservation.ids):
        add(f"{at}.reservation.ids", "a reservation is listed twice")


def _karpenter_pool_problems(
    cfg: EksStack, i: int, pool: EksNodePool, seen: dict[str, int], add: Add
) -> None:
    """What a pool Karpenter serves needs beyond its capacity section."""
    at = f"nodePools[{i}]"
    if pool.min_nodes:
        add(
            f"{at}.minNodes",
            "Karpenter keeps no idle nodes (a NodePool has no minimum: nodes come for pending pods and "
            "go when empty); set 0, or make it the system pool",
        )
    for key in pool.labels:
        domain = key.split("/", 1)[0]
        if domain.endswith(KARPENTER_LABEL_DOMAINS):  # as the CEL rule: the prefix's end
            where, start = entry_at(f"{at}.labels", key)
            add(
                where,
                f"{start}Karpenter keeps the karpenter.sh and karpenter.k8s.aws label domains for itself",
            )
    for name in karpenter_node_pool_names(pool):
        if len(name) > NODE_POOL_NAME_MAX:
            add(
                f"{at}.name",
                f"its Karpenter NodePool {name!r} has {len(name)} characters (its nodes' "
                f"karpenter.sh/nodepool label); at most {NODE_POOL_NAME_MAX}: shorten the pool's name",
            )
        elif seen.setdefault(name, i) != i:
            add(f"{at}.name", f"its Karpenter NodePool {name!r} is also nodePools[{seen[name]}]'s")


def _karpenter_tag_problems(cfg: EksStack, add: Add) -> None:
    """cluster.tags go on every EC2NodeClass (so on Karpenter's instances), which refuses some."""
    for key in cfg.cluster.tags:
        if key in NODE_CLASS_RESTRICTED_TAGS or key.startswith(NODE_CLASS_RESTRICTED_TAG_PREFIX):
            where, start = entry_at("cluster.tags", key)
            add(
                where,
                f"{start}Karpenter sets this tag on its instances itself and refuses it in an EC2NodeClass",
            )


def eks_capacity_problems(cfg: EksStack, add: Add) -> None:
    karpenter = cfg.cluster.autoscaler == "karpenter"
    system = _system_index(cfg)
    seen: dict[str, int] = {}
    if karpenter:
        _karpenter_tag_problems(cfg, add)
    for i, pool in enumerate(cfg.node_pools):
        if karpenter_serves(cfg, i):
            _karpenter_pool_problems(cfg, i, pool, seen, add)
        capacity = pool.capacity
        if capacity is None:
            continue
        at = f"nodePools[{i}].capacity"
        if "flexStart" in capacity.types:
            add(f"{at}.types", "flexStart is GKE's (flex-start VMs); EKS offers reservation, onDemand, spot")
        if capacity.queued:
            add(f"{at}.queued", "queued provisioning is GKE's; on EKS use Karpenter with reservations")
        reservation = capacity.reservation
        if reservation is not None:
            _eks_reservation_problems(at, pool, add)
        _eks_instance_type_problems(at, pool, add)
        beyond_one = len(capacity.types) > 1 or capacity.instance_types or reservation is not None
        if i == system and beyond_one:
            add(
                at,
                "the system pool stays a managed node group (CoreDNS, the add-ons and Karpenter itself run "
                "there before anything scales): one type, onDemand or spot, and its machineType only",
            )
        elif beyond_one and not karpenter:
            add(
                at,
                "a managed node group has one capacity type, one instance type list and no reservation "
                "fallback: set cluster.autoscaler: karpenter for this pool's fallback",
            )


def _gke_instance_type_problems(at: str, pool: GkeNodePool, add: Add) -> None:
    """`instanceTypes` of a GKE pool: each carries the pool's GPUs (type and count), or none on a
    CPU pool, on the pool's architecture (one image and taint set for every node pool), and
    boots from the pool's disk type (components/config/gke_machines.py, with its sources)."""
    gpu = pool.gpu
    for j, machine in enumerate(pool.capacity.instance_types):
        key = f"{at}.instanceTypes[{j}]"
        offered = gke_machines.gpu_machine(machine)
        if gpu is not None:
            fits = offered is not None and gpu.type in offered.accelerators and gpu.count in offered.counts
            if not fits:
                add(key, f"{machine} does not carry {gpu.count} {gpu.type} GPU(s), as the pool's nodes do")
        elif offered is not None and offered.fixed:
            add(key, f"{machine} comes with GPUs; a CPU pool's instance types carry none")
        if gke_machines.is_arm(machine) != pool.arm:
            add(key, f"{machine} is {'' if gke_machines.is_arm(machine) else 'not '}Arm, unlike machineType")
        disks = gke_machines.disk_types(machine)
        if pool.disk_type is not None and disks is not None and pool.disk_type not in disks:
            add(key, f"{machine} cannot boot from diskType {pool.disk_type}")
        if "onDemand" in pool.capacity_types and not gke_machines.sold_on_demand(machine):
            add(key, f"{machine} is not sold on demand: drop it or take onDemand out of types")


def _gke_node_pool_name_problems(cfg: GkeStack, add: Add) -> None:
    """The GKE node pools a pool becomes (compute_classes.sub_pools): names within GKE's limit
    (components/names.py GKE_NODE_POOL) and unique in the cluster."""
    limit = names.rule("gcp:container/nodePool:NodePool", "name").max_length
    seen = {pool.name: i for i, pool in enumerate(cfg.node_pools) if pool.compute_class is None}
    for i, pool in enumerate(cfg.node_pools):
        if pool.compute_class is None:
            continue
        pool_names = node_pool_names(pool)
        longest = max(pool_names, key=len)
        if len(longest) > limit:
            most = limit - (len(longest) - len(pool.name))
            add(
                f"nodePools[{i}].name",
                f"its node pool {longest!r} has {len(longest)} characters; GKE takes at most {limit}: "
                f"a pool with this capacity takes a name of at most {most}",
            )
        for name in pool_names:
            if name in seen and seen[name] != i:
                add(f"nodePools[{i}].name", f"its node pool {name!r} is also nodePools[{seen[name]}]'s")
            seen.setdefault(name, i)


def gke_capacity_problems(cfg: GkeStack, add: Add) -> None:
    _gke_node_pool_name_problems(cfg, add)
    for i, pool in enumerate(cfg.node_pools):
        capacity = pool.capacity
        if capacity is None:
            continue
        at = f"nodePools[{i}].capacity"
        _gke_instance_type_problems(at, pool, add)
        if capacity.queued and capacity.instance_types:
            add(f"{at}.instanceTypes", "a queued pool is one node pool of machineType: no instanceTypes")
        # The first purchase option keeps minNodes (compute_classes.sub_pools). Flex-start nodes
        # exist only for pods that wait for them and end within 7 days, so a flex-start node pool
        # keeps none (autoscaling from 0: https://cloud.google.com/kubernetes-engine/docs/
        # concepts/dws, "How flex-start provisioning mode works", read 2026-11-26).
        if capacity.types[0] == "flexStart" and pool.min_nodes:
            add(f"nodePools[{i}].minNodes", "must be 0 when flexStart comes first: flex-start keeps no nodes")
        machine = pool.machine_type
        if "onDemand" in capacity.types and not gke_machines.sold_on_demand(machine):
            add(
                f"{at}.types",
                f"{machine} is not sold on demand, only as Spot VMs, through flex-start or from a "
                "reservation: take onDemand out",
            )
        reservation = capacity.reservation
        if reservation is not None:
            if reservation.ids or reservation.tags or reservation.capacity_block:
                add(f"{at}.reservation", "gke: name the Compute Engine reservation by `name` (and `project`)")
            elif not reservation.name:
                add(f"{at}.reservation", "gke: give the specific reservation's `name`")
            if reservation.zone is None:
                # A specific reservation holds VMs of one zone ("in the same zone":
                # https://cloud.google.com/compute/docs/instances/reservations-consume, read
                # 2026-11): the reservation's node pool goes there only.
                add(f"{at}.reservation.zone", "gke: give the zone the reservation is in")
            # Whether it is one of the pool's zones: components/config/gke.py, with the zones.
        if "flexStart" in capacity.types and not pool.gpu:
            add(f"{at}.types", "flexStart is for GPU pools (flex-start VMs carry accelerators)")
        if capacity.queued:
            if not pool.gpu:
                add(f"{at}.queued", "queued provisioning is for GPU pools")
            if cfg.scheduler != "kueue":
                add(
                    f"{at}.queued",
                    "queued provisioning admits tasks through Kueue: set scheduler: kueue",
                )
            _gke_queued_problems(cfg, i, pool, add)


def _gke_queued_problems(cfg: GkeStack, i: int, pool: GkeNodePool, add: Add) -> None:
    """A queued pool's tasks must be Jobs Kueue can hold, and never the zero-GPU tasks of the
    aux pool: GKE adds its nodes only for ProvisioningRequests, which Kueue makes only for
    Jobs asking for GPUs (components/addons/provisioning.py MANAGED_RESOURCES)."""
    at = f"nodePools[{i}].capacity.queued"
    if cfg.master.version_tuple < versions.JOB_TASKS_SINCE:
        # Determined creates a Job per task from 0.34.0 (components/addons/kueue.py MIN_DETERMINED).
        since = ".".join(map(str, versions.JOB_TASKS_SINCE))
        add(
            at,
            f"queued provisioning needs Determined {since} or newer (a Job per task, which Kueue holds "
            f"until GKE has its nodes): master {cfg.master.version} runs tasks as bare pods",
        )
    aux = next((rp for rp in cfg.resource_pools if rp.name == cfg.aux_pool), None)
    if aux is not None and aux.node_pool == pool.name:
        add(
            at,
            f"resource pool {aux.name!r} (the aux pool: TensorBoards, zero-slot commands, checkpoint GC) "
            "is on this pool, whose nodes GKE adds only for tasks asking for GPUs: put it on another "
            "node pool",
        )


def bounded_fallback_problems(cfg: EksStack | GkeStack, add: Add) -> None:
    """A GPU pool split into several cloud node pools (a ComputeClass's node pools on GKE,
    several Karpenter NodePools on EKS) is capped node pool by node pool, `maxNodes` each:
    neither GKE nor Karpenter caps their sum (GKE moves to the next priority when one is at
    its maximum; Karpenter to the next NodePool by weight when one reached its limits). What
    bounds the pool together is its resource pools' GPU quota, which every one must then set."""
    for i, pool in enumerate(cfg.node_pools):
        if not pool.gpu:
            continue
        if cfg.cloud == "gke":
            parts = len(node_pool_names(pool))
        elif karpenter_serves(cfg, i):
            parts = len(karpenter_node_pool_names(pool))
        else:
            continue
        if parts < 2:
            continue
        for j, rp in enumerate(cfg.resource_pools):
            if rp.node_pool == pool.name and (rp.quota is None or rp.quota.gpu is None):
                add(
                    f"resourcePools[{j}].quota.gpu",
                    f"node pool {pool.name!r} falls back over {parts} cloud node pools of up to "
                    f"{pool.max_nodes} nodes each, capped one by one: give the pool's tasks a GPU quota "
                    f"(at most {pool.max_nodes * pool.gpu.count}: maxNodes x GPUs) to bound them together",
                )
