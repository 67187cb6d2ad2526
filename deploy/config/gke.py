"""Rules a GKE stack must meet beyond each section's own checks: GPUs the machine types can
carry, settings that only GKE-managed drivers honour, and a coherent network section."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from deploy.config import gke_machines
from deploy.config.database import ManagedDatabase
from deploy.config.node_pools import GkeNodePool
from deploy.config.syntax import shown

if TYPE_CHECKING:
    from deploy.config.stack import GkeStack

Add = Callable[[str, str], None]

# GPUs GKE can partition with MIG.
MIG_ACCELERATORS = {
    "nvidia-tesla-a100",
    "nvidia-a100-80gb",
    "nvidia-h100-80gb",
    "nvidia-h100-mega-80gb",
    "nvidia-h200-141gb",
    "nvidia-b200",
}
_PARTITION = re.compile(r"[1-7]g\.[0-9]+gb")

_GPU_SERIES = "n1 with an attached GPU, or an accelerator-optimized series (a2, a3, a4, a4x, g2, g4)"
# A Compute Engine machine type: series, then its shape (e2-standard-8, n2-custom-4-16384).
_MACHINE_TYPE = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)+")


def _choices(values: list[str] | tuple[str, ...]) -> str:
    return ", ".join(map(str, values))


def _gpu_problems(i: int, pool: GkeNodePool, operator: bool, add: Add) -> None:
    at = f"nodePools[{i}]"
    machine = gke_machines.gpu_machine(pool.machine_type)
    gpu = pool.gpu
    if gpu is None:
        if machine is not None and machine.fixed:
            add(
                f"{at}.gpu",
                f"required: {pool.machine_type} comes with {machine.counts[0]} {machine.accelerators[0]} "
                f"GPU(s); set gpu {{type: {machine.accelerators[0]}, count: {machine.counts[0]}}} so that "
                "the pool is tainted for GPU tasks",
            )
        return
    if machine is None:
        add(f"{at}.machineType", f"{pool.machine_type!r} cannot take GPUs; use {_GPU_SERIES}")
    elif gpu.type not in machine.accelerators:
        what = f"{pool.machine_type} comes with" if machine.fixed else "N1 machines take"
        add(f"{at}.gpu.type", f"{gpu.type!r} does not fit: {what} {_choices(machine.accelerators)}")
    elif machine.fixed and gpu.count != machine.counts[0]:
        add(f"{at}.gpu.count", f"{pool.machine_type} has {machine.counts[0]} GPU(s), not {gpu.count}")
    elif not machine.fixed and gpu.count not in gke_machines.N1_ACCELERATORS[gpu.type]:
        counts = gke_machines.N1_ACCELERATORS[gpu.type]
        add(
            f"{at}.gpu.count", f"an N1 machine attaches {_choices(counts)} {gpu.type} GPU(s), not {gpu.count}"
        )
    if gpu.partition_size is not None:
        if gpu.type not in MIG_ACCELERATORS:
            add(f"{at}.gpu.partitionSize", f"MIG needs one of {_choices(sorted(MIG_ACCELERATORS))}")
        elif not _PARTITION.fullmatch(gpu.partition_size):
            add(f"{at}.gpu.partitionSize", "must be a MIG profile such as 1g.10gb or 3g.40gb")
    if operator:
        for key in ("partition_size", "sharing", "driver_version"):
            if key in gpu.model_fields_set:
                name = type(gpu).model_fields[key].alias
                add(
                    f"{at}.gpu.{name}",
                    "applies to GKE-managed drivers only; with gpuOperator.enabled the operator manages "
                    "the GPUs (remove it, or set gpuOperator.enabled false)",
                )


def _disk_problems(i: int, pool: GkeNodePool, add: Add) -> None:
    if gke_machines.series(pool.machine_type) in gke_machines.HYPERDISK_ONLY and pool.disk_type not in (
        None,
        "hyperdisk-balanced",
    ):
        add(f"nodePools[{i}].diskType", f"{pool.machine_type} boots from hyperdisk-balanced only")


def _network_problems(cfg: GkeStack, add: Add) -> None:
    net = cfg.cluster.network
    at = "cluster.network"
    if (net.name is None) != (net.subnetwork is None):
        add(f"{at}.name" if net.name is None else f"{at}.subnetwork", "name and subnetwork go together")
    if (net.pods_range is None) != (net.services_range is None):
        missing = "podsRange" if net.pods_range is None else "servicesRange"
        add(f"{at}.{missing}", "podsRange and servicesRange go together")
    if net.existing:
        for key in ("nodes_cidr", "pods_cidr", "services_cidr"):
            if key in net.model_fields_set:
                alias = type(net).model_fields[key].alias
                add(f"{at}.{alias}", "only for a created network (without network.name)")
        return
    for key in ("pods_range", "services_range"):
        if getattr(net, key) is not None:
            alias = type(net).model_fields[key].alias
            add(f"{at}.{alias}", "only for an existing network (network.name)")
    ranges = {
        "nodesCidr": ipaddress.ip_network(net.nodes_cidr),
        "podsCidr": ipaddress.ip_network(net.pods_cidr),
        "servicesCidr": ipaddress.ip_network(net.services_cidr),
    }
    names = list(ranges)
    for a, first in enumerate(names):
        for second in names[a + 1 :]:
            if ranges[first].overlaps(ranges[second]):
                add(f"{at}.{second}", f"overlaps {first} ({ranges[first]})")


def _taint_problems(i: int, pool: GkeNodePool, add: Add) -> None:
    for j, taint in enumerate(pool.taints):
        if not taint.value:
            add(
                f"nodePools[{i}].taints[{j}].value", "required on GKE (node taints there always have a value)"
            )


def _operator_image_types(cfg: GkeStack, add: Add) -> None:
    # One driver installer DaemonSet (kube-system/nvidia-driver-installer) serves every
    # GPU pool, and it exists per image type.
    gpu_pools = [(i, p) for i, p in enumerate(cfg.node_pools) if p.gpu]
    if cfg.gpu_operator.enabled and gpu_pools:
        first = gpu_pools[0][1].image_type
        for i, pool in gpu_pools[1:]:
            if pool.image_type != first:
                add(
                    f"nodePools[{i}].imageType",
                    f"with gpuOperator.enabled every GPU pool uses one image type (the first is {first}): "
                    "Google's driver installer is one DaemonSet per image type",
                )


def _zone_problems(cfg: GkeStack, add: Add) -> None:
    region = cfg.cluster.region
    for i, zone in enumerate(cfg.cluster.zones):
        if not zone.startswith(region + "-"):
            add(f"cluster.zones[{i}]", f"{zone!r} is not a zone of cluster.region {region}")


def _database_problems(cfg: GkeStack, add: Add) -> None:
    db = cfg.database
    if isinstance(db, ManagedDatabase) and db.tier.startswith("db."):
        add(
            "database.tier",
            f"{db.tier!r} is an RDS instance class; Cloud SQL tiers start with 'db-' "
            "(example: db-custom-2-8192)",
        )


def gke_problems(cfg: GkeStack, add: Add) -> None:
    _zone_problems(cfg, add)
    _database_problems(cfg, add)
    operator = cfg.gpu_operator.enabled
    for i, pool in enumerate(cfg.node_pools):
        if not _MACHINE_TYPE.fullmatch(pool.machine_type):
            add(
                f"nodePools[{i}].machineType",
                f"{shown(pool.machine_type)} is not a GKE machine type (example: e2-standard-8)",
            )
            continue
        _gpu_problems(i, pool, operator, add)
        _disk_problems(i, pool, add)
        _taint_problems(i, pool, add)
    _operator_image_types(cfg, add)
    _network_problems(cfg, add)
