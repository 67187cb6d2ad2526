"""Slots (slots.type, cpuPerSlot, maxSlotsPerPod) against the node pools tasks run on."""

from __future__ import annotations

from typing import TYPE_CHECKING

from components.config import capacity, gke_gpu_sharing
from components.config.errors import Add

if TYPE_CHECKING:
    from components.config.stack import StackConfig


def _slot_type_problems(cfg: StackConfig, add: Add) -> None:
    slots = cfg.slots
    gpu_counts = cfg.gpu_counts
    if cfg.slot_type == "gpu":
        if slots.cpu_per_slot is not None:
            add("slots.cpuPerSlot", "only for slots type cpu")
        if not gpu_counts:
            add("slots.type", "gpu slots need a resource pool on a node pool with GPUs")
        elif slots.max_slots_per_pod is not None:
            misfits = [c for c in gpu_counts if c % slots.max_slots_per_pod]
            if misfits:
                fits = [n for n in range(1, gpu_counts[0] + 1) if all(c % n == 0 for c in gpu_counts)]
                add(
                    "slots.maxSlotsPerPod",
                    f"{slots.max_slots_per_pod} does not divide the GPUs per node of every GPU pool "
                    f"({', '.join(map(str, gpu_counts))}); values that fit: {', '.join(map(str, fits))}",
                )
            else:
                _shared_gpu_slots(cfg, add)
    elif slots.max_slots_per_pod is None:
        add(
            "slots.maxSlotsPerPod",
            "required for cpu slots: the CPUs of the nodes are not known offline, so set how many "
            "slots (of cpuPerSlot CPUs each) one task pod may take",
        )
    else:
        _cpu_slots_fit(cfg, add)


def _shared_gpu_slots(cfg: StackConfig, add: Add) -> None:
    """On nodes whose GPUs are shared, GKE's device plugin gives a container one
    `nvidia.com/gpu` (time-sharing; MPS on nodes of several GPUs or partitions): a task pod
    asking for more fails admission (components/config/gke_gpu_sharing.py)."""
    wanted = cfg.slots.max_slots_per_pod
    for node_pool in cfg.gpu_pools_in_use:
        strategy = gke_gpu_sharing.sharing_strategy(node_pool) or (
            "MIG partitions: a CUDA process uses one" if gke_gpu_sharing.partitioned(node_pool) else None
        )
        most = gke_gpu_sharing.gpus_per_container(node_pool)
        if strategy and wanted > most:
            add(
                "slots.maxSlotsPerPod",
                f"{wanted} slots per pod cannot run on node pool {node_pool.name!r}: its GPUs are shared "
                f"({strategy}) and a container can use at most {most} of them; set {most}, or leave "
                "maxSlotsPerPod out (then derived from the pools)",
            )


def _cpu_slots_fit(cfg: StackConfig, add: Add) -> None:
    """A pod of maxSlotsPerPod CPU slots must fit the allocatable CPU of the nodes it runs on,
    where their machine type says how many CPUs they have."""
    per_slot = cfg.slots.cpu_per_slot or 1
    per_pod = per_slot * cfg.slots.max_slots_per_pod
    names = dict.fromkeys(rp.node_pool for rp in cfg.resource_pools)
    for node_pool in (cfg.node_pool(name) for name in names):
        cores = capacity.vcpus(node_pool.machine_type) if node_pool.machine_type else None
        if cores is None:
            continue
        allocatable = capacity.allocatable_cpu(cores)
        if per_pod > allocatable:
            fits = int(allocatable // per_slot)
            add(
                "slots.maxSlotsPerPod",
                f"{cfg.slots.max_slots_per_pod} slots of {per_slot:g} CPUs need {per_pod:g} CPUs per pod, "
                f"more than a {node_pool.machine_type} node of node pool {node_pool.name!r} gives pods "
                f"(about {allocatable:.2f} of its {cores} vCPUs); at most {fits} fit",
            )


def slots_problems(cfg: StackConfig, add: Add) -> None:
    """Slots against the GPUs or CPUs of the node pools the resource pools run on."""
    # Slots derive from the pools' node pools: a dangling reference is reported once.
    names = {p.name for p in cfg.node_pools}
    if all(rp.node_pool in names for rp in cfg.resource_pools):
        _slot_type_problems(cfg, add)
