"""Rules a GKE stack must meet beyond each section's own checks: GPUs the machine types can
carry, settings that only GKE-managed drivers honour, and a coherent network section."""

from __future__ import annotations

import ipaddress
import re
from typing import TYPE_CHECKING

from components import versions
from components.config import capacity_rules, gke_gpu_sharing, gke_gpu_zones, gke_machines
from components.config.database import InClusterDatabase, ManagedDatabase, cloud_sql_tier_problem
from components.config.errors import Add
from components.config.node_pools import ARM_TAINT, GkeNodePool
from components.config.shared_filesystem_cloud import gke_filesystem_problems
from components.config.syntax import quantity_value, shown

if TYPE_CHECKING:
    from components.config.stack import GkeStack


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
        sizes = gke_gpu_sharing.MIG_PARTITIONS.get(gpu.type)
        if sizes is None:
            mig = _choices(sorted(gke_gpu_sharing.MIG_ACCELERATORS))
            add(f"{at}.gpu.partitionSize", f"MIG needs one of {mig} ({gpu.type} cannot be partitioned)")
        elif gpu.partition_size not in sizes:
            add(
                f"{at}.gpu.partitionSize",
                f"{shown(gpu.partition_size)} is not a MIG partition size of {gpu.type}; it offers "
                f"{_choices(tuple(sizes))}",
            )
    if operator:
        for key in ("partition_size", "sharing", "driver_version"):
            if key in gpu.model_fields_set:
                name = type(gpu).model_fields[key].alias
                add(
                    f"{at}.gpu.{name}",
                    "applies to GKE-managed drivers only; with gpuOperator.enabled the operator manages "
                    "the GPUs (remove it, or set gpuOperator.enabled false)",
                )


def _n1_size_problems(i: int, pool: GkeNodePool, add: Add) -> None:
    """An N1 machine with GPUs attached has at most so many vCPUs and so much memory per GPU
    count (gke_machines.N1_GPU_LIMITS)."""
    gpu, shape = pool.gpu, gke_machines.n1_shape(pool.machine_type)
    limits = gke_machines.N1_GPU_LIMITS.get(gpu.type if gpu else "", {})
    if shape is None or gpu is None or gpu.count not in limits:
        return
    vcpus, memory = shape
    most_vcpus, most_memory = limits[gpu.count]
    if vcpus <= most_vcpus and memory <= most_memory:
        return
    kind = pool.machine_type.split("-")[1]
    smaller = [
        f"n1-{kind}-{n}"
        for n in (1, 2, 4, 8, 16, 32, 64, 96)
        if kind in gke_machines.N1_GB_PER_VCPU
        and n <= most_vcpus
        and n * gke_machines.N1_GB_PER_VCPU[kind] <= most_memory
    ]
    more = [n for n, (v, m) in limits.items() if v >= vcpus and m >= memory]
    ways = ([f"use {smaller[-1]} or smaller"] if smaller else []) + (
        [f"attach {more[0]} GPUs"] if more else []
    )
    add(
        f"nodePools[{i}].machineType",
        f"{pool.machine_type} has {vcpus} vCPUs and {memory:g} GB of memory; with {gpu.count} {gpu.type} "
        f"GPU(s) an N1 machine takes at most {most_vcpus} vCPUs and {most_memory:g} GB (Compute Engine's "
        f"N1 GPU limits)" + (f": {', or '.join(ways)}" if ways else ""),
    )


def _on_demand_problems(i: int, pool: GkeNodePool, add: Add) -> None:
    # A pool with `capacity`: capacity_rules checks each purchase option.
    if pool.spot or pool.capacity is not None or gke_machines.sold_on_demand(pool.machine_type):
        return
    series = gke_machines.series(pool.machine_type)
    least = gke_machines.NOT_ON_DEMAND[series]
    bigger = f", or {series}-{least}g, sold on demand" if least else ""
    add(
        f"nodePools[{i}].spot",
        f"required for {pool.machine_type}: Compute Engine does not sell it on demand, only as Spot "
        f"VMs, through flex-start or from a reservation (this project configures neither); set spot: "
        f"true{bigger}",
    )


def _disk_problems(i: int, pool: GkeNodePool, add: Add) -> None:
    types = gke_machines.disk_types(pool.machine_type)
    if pool.disk_type is not None and types is not None and pool.disk_type not in types:
        add(
            f"nodePools[{i}].diskType",
            f"{pool.machine_type} cannot boot from {pool.disk_type}; its series takes {_choices(types)}",
        )


# A created subnet's primary range (nodesCidr) is IPv4, from /8 to /29: every subnet keeps
# four addresses of its primary range (network, gateway, second-to-last, broadcast), so a /29
# leaves four for nodes and a /30 none. Source: VPC docs, "Subnets", "IPv4 subnet ranges" and
# "Reserved IP addresses in IPv4 subnets", https://cloud.google.com/vpc/docs/subnets (read
# 2026-11; the stored copy did not show the size sentence, the four reserved addresses are
# quoted by several copies of the page found by the code search, read 2026-11).
GCE_SUBNET_SMALLEST_PREFIX = 29


def _nodes_cidr_problem(cidr: str) -> str | None:
    network = ipaddress.ip_network(cidr)
    if network.version != 4:
        return "must be an IPv4 range (a subnet's primary range is IPv4)"
    if network.prefixlen > GCE_SUBNET_SMALLEST_PREFIX:
        return (
            f"a /{network.prefixlen} is smaller than a subnet's primary range may be: "
            f"/{GCE_SUBNET_SMALLEST_PREFIX} at the smallest, of whose addresses Google Cloud keeps four "
            "(one node each for the rest)"
        )
    return None


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
        host = shared_vpc_host(cfg)
        if host is not None and net.pods_range is None and net.services_range is None:
            add(
                f"{at}.podsRange",
                f"required with a Shared VPC network (its project, {host}, is not cluster.project): GKE "
                "cannot create secondary ranges on the host project's subnet; name the subnet's secondary "
                "ranges for pods and Services (podsRange, servicesRange), which the host project's admin "
                "creates",
            )
        return
    for key in ("pods_range", "services_range"):
        if getattr(net, key) is not None:
            alias = type(net).model_fields[key].alias
            add(f"{at}.{alias}", "only for an existing network (network.name)")
    if message := _nodes_cidr_problem(net.nodes_cidr):
        add(f"{at}.nodesCidr", message)
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
        elif (
            pool.arm and (taint.key, taint.effect) == (ARM_TAINT.key, ARM_TAINT.effect) and taint != ARM_TAINT
        ):
            add(
                f"nodePools[{i}].taints[{j}]",
                f"{pool.machine_type} is Arm: GKE taints its nodes {ARM_TAINT.key}={ARM_TAINT.value}:"
                f"{ARM_TAINT.effect}, and a node takes one taint per key and effect",
            )


def shared_vpc_host(cfg: GkeStack) -> str | None:
    """The project of an existing network named by path (projects/<p>/...) when it is not
    cluster.project: a Shared VPC host project. None otherwise, or when cluster.project is
    not set (gcp:project is not read at validation)."""
    net, project = cfg.cluster.network, cfg.cluster.project
    for path in (net.name, net.subnetwork):
        parts = (path or "").split("/")
        if len(parts) > 1 and parts[0] == "projects" and project and parts[1] != project:
            return parts[1]
    return None


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


def _gpu_fits(pool: GkeNodePool) -> bool:
    """Whether the pool's GPU is one its machine type takes (else _gpu_problems says so)."""
    machine = gke_machines.gpu_machine(pool.machine_type)
    return pool.gpu is not None and machine is not None and pool.gpu.type in machine.accelerators


def _offered(pool: GkeNodePool, region: str) -> tuple[str, ...] | None:
    """The zones of `region` that offer the pool's GPU on its machine type (None: the zone
    table does not know the GPU)."""
    return gke_gpu_zones.zones(pool.gpu.type, region, pool.machine_type)


def pool_zones(cfg: GkeStack, pool: GkeNodePool) -> list[str] | None:
    """The pool's node locations: its zones; else, on GPU pools, the zones of the region
    that offer its GPU (within cluster.zones when given); else cluster.zones; None leaves
    them to GKE (the cluster's zones)."""
    cluster = cfg.cluster
    if pool.zones:
        return list(pool.zones)
    offered = _offered(pool, cluster.region) if pool.gpu else None
    if offered is None:
        return list(cluster.zones) or None
    if cluster.zones:
        return [z for z in cluster.zones if z in offered]
    return list(offered)


def _reservation_zone_problems(i: int, pool: GkeNodePool, cfg: GkeStack, add: Add) -> None:
    """A pool's reservation (capacity.reservation, one zone: components/config/capacity_rules.py)
    is in one of the pool's zones, where its node pool is placed."""
    reservation = pool.capacity.reservation if pool.capacity is not None else None
    if reservation is None or reservation.zone is None:
        return
    zones = pool_zones(cfg, pool)
    inside = reservation.zone in zones if zones else reservation.zone.startswith(f"{cfg.cluster.region}-")
    if not inside:
        add(f"nodePools[{i}].capacity.reservation.zone", f"{reservation.zone} is not one of the pool's zones")


def _pool_zone_problems(i: int, pool: GkeNodePool, cfg: GkeStack, add: Add) -> None:
    cluster = cfg.cluster
    region = cluster.region
    at = f"nodePools[{i}].zones"
    given = pool.zones
    placeable: list[tuple[int, str]] = []  # (index, zone) of given zones in the region
    if given is not None and not given:
        add(at, "names no zone (leave it out for the default)")
    for j, zone in enumerate(given or []):
        if zone in given[:j]:
            add(f"{at}[{j}]", f"{zone!r} is listed twice")
        elif not zone.startswith(region + "-"):
            add(f"{at}[{j}]", f"{zone!r} is not a zone of cluster.region {region}")
        elif cluster.zones and zone not in cluster.zones:
            add(f"{at}[{j}]", f"{zone!r} is not one of cluster.zones ({_choices(cluster.zones)})")
        else:
            placeable.append((j, zone))
    if not _gpu_fits(pool):
        return
    accelerator = pool.gpu.type
    offered = _offered(pool, region)
    if offered is None:
        if not given and not cluster.zones:
            add(
                at,
                f"required for {accelerator}: the project's GPU zone table (read {gke_gpu_zones.READ}) "
                f"does not list its zones; name the zones of {region} that offer it (gcloud compute "
                f"accelerator-types list --filter=name={accelerator})",
            )
        return
    where = f"{accelerator} ({pool.machine_type})"
    if not offered:
        others = gke_gpu_zones.regions(accelerator, pool.machine_type)
        series = gke_machines.series(pool.machine_type)
        sizes = gke_gpu_zones.zones(accelerator, region, series)
        other_sizes = f"; other {series} sizes are, in {_choices(sizes)}" if sizes else ""
        add(
            f"nodePools[{i}].gpu.type",
            f"{where} is not offered in {region}{other_sizes}; regions that have it: {_choices(others)} "
            f"(GPU zone table of {gke_gpu_zones.READ})",
        )
        return
    that_do = f"zones of {region} that do: {_choices(offered)}"
    if given:
        for j, zone in placeable:
            if zone not in offered:
                add(f"{at}[{j}]", f"{zone!r} does not offer {where}; {that_do}")
    elif cluster.zones and not set(cluster.zones) & set(offered):
        add(
            "cluster.zones",
            f"none of them offers {where}, which nodePools[{i}] ({pool.name}) needs; {that_do}",
        )


def database_disk_type(cfg: GkeStack) -> str:
    """The disk type of the in-cluster database's volume (volume_disk_type of its pool)."""
    return volume_disk_type(cfg.master_node_pool)


def volume_disk_type(pool: GkeNodePool | None) -> str:
    """The disk type of a volume on `pool`'s nodes: pd-balanced, or hyperdisk-balanced where
    the pool cannot attach pd-balanced (C4, N4, ...)."""
    return gke_machines.default_disk_type(pool.machine_type) if pool is not None else "pd-balanced"


def _database_problems(cfg: GkeStack, add: Add) -> None:
    db = cfg.database
    if isinstance(db, ManagedDatabase) and db.tier.startswith("db."):
        add(
            "database.tier",
            f"{db.tier!r} is an RDS instance class; Cloud SQL tiers start with 'db-' "
            "(example: db-custom-2-8192)",
        )
    elif isinstance(db, ManagedDatabase) and (problem := cloud_sql_tier_problem(db.tier)):
        add("database.tier", problem)
    if isinstance(db, InClusterDatabase) and database_disk_type(cfg) == "hyperdisk-balanced":
        least = gke_machines.HYPERDISK_BALANCED_MIN_GIB
        if quantity_value(db.storage_size) < least * 1024**3:
            add(
                "database.storageSize",
                f"at least {least}Gi: the database's node pool ({cfg.master_node_pool.name}) attaches "
                f"hyperdisk-balanced volumes only, which start at {least} GiB",
            )


def _version_problems(cfg: GkeStack, add: Add) -> None:
    """cluster.kubernetesVersion becomes the cluster's initial (minimum) control plane version:
    GKE creates clusters only on minors a channel still offers (versions.GKE_VERSIONS). One in
    extended support only is accepted, as on EKS."""
    version = cfg.cluster.kubernetes_version
    today = versions.today()
    if version is None or versions.gke_support(version, today):
        return
    by_support = versions.offered(versions.GKE_VERSIONS, versions.gke_support, today)
    offered = ", ".join(by_support["standard"]) + " (every channel)"
    if by_support["extended"]:
        offered += "; " + ", ".join(by_support["extended"]) + " (releaseChannel EXTENDED)"
    why = versions.not_offered(
        "GKE",
        version,
        versions.GKE_VERSIONS,
        versions.GKE_VERSIONS_READ,
        "GKE no longer offers it (each minor for 24 months after it reaches the Regular channel)",
    )
    if version in versions.GKE_VERSIONS:
        why += ": no channel creates it"
    add("cluster.kubernetesVersion", f"{version}: {why}; choose one of {offered}")


def image_streaming(pool: GkeNodePool) -> bool:
    """Whether the pool's nodes stream images (node_config.gcfs_config): `fastImagePulls`, by
    default on for GPU pools on COS_CONTAINERD, the only image GKE streams on ("When enabling
    this feature you must specify image_type = "COS_CONTAINERD"": hashicorp/
    terraform-provider-google@e03b762 website/docs/r/container_cluster.html.markdown:1156-1160)."""
    if pool.fast_image_pulls is not None:
        return pool.fast_image_pulls
    return pool.gpu is not None and pool.image_type == "COS_CONTAINERD"


def _fast_pull_problems(i: int, pool: GkeNodePool, add: Add) -> None:
    if pool.fast_image_pulls and pool.image_type != "COS_CONTAINERD":
        add(
            f"nodePools[{i}].fastImagePulls",
            f"image streaming runs on COS_CONTAINERD nodes only (imageType is {pool.image_type}); "
            "set false or use COS_CONTAINERD",
        )


def _local_ssd_problems(i: int, pool: GkeNodePool, add: Add) -> None:
    nvme = pool.local_nvme
    if nvme is None:
        return
    at = f"nodePools[{i}].localNvme.count"
    for machine_type in pool.machine_types:
        bundled = gke_machines.bundled_local_ssds(machine_type)
        own = gke_machines.BUNDLED_SSD_COUNTS.get(machine_type)
        if nvme.count == 0 and not bundled:
            add(
                at,
                f"required for {machine_type}: only machine types that come with local SSDs (the A2 Ultra, "
                "A3, A4, A4X, Z3 series and -lssd types) take 0 for their own; give the number of local "
                "SSDs to attach",
            )
        elif nvme.count and own is not None and nvme.count != own:
            add(at, f"{machine_type} comes with {own} local SSDs: leave count out (0) or set {own}")
    # Each task pod asks for `size` of the node's ephemeral storage, which the local SSDs hold
    # (375 GiB each: gke_machines.BUNDLED_SSD_COUNTS' sources); more than they hold is never
    # scheduled. Types whose bundled number is not known here are not judged.
    counts = [nvme.count or gke_machines.BUNDLED_SSD_COUNTS.get(m, 0) for m in pool.machine_types]
    if all(counts):
        smallest = min(counts) * gke_machines.LOCAL_SSD_GIB
        if quantity_value(nvme.size) > smallest * 2**30:
            add(
                f"nodePools[{i}].localNvme.size",
                f"{nvme.size} is more than the {smallest}Gi of local SSD a node of the pool has: a task pod "
                "asking for it could never be scheduled",
            )


def _fabric_machines() -> str:
    return "; ".join(f"{f} on {_choices(m)}" for f, m in gke_machines.FABRIC_MACHINES.items())


def _fabric_problems(i: int, pool: GkeNodePool, cfg: GkeStack, add: Add) -> None:
    fabric = pool.fabric
    if fabric is None:
        return
    at = f"nodePools[{i}]"
    for machine_type in pool.machine_types:
        if machine_type not in gke_machines.FABRIC_MACHINES[fabric]:
            add(f"{at}.fabric", f"{machine_type} has no {fabric}; GPU fabrics on GKE: {_fabric_machines()}")
    if cfg.gpu_operator.enabled:
        add(
            f"{at}.fabric",
            "needs GKE-managed GPU drivers: the NCCL plugin installer writes into GKE's driver directory "
            "(/home/kubernetes/bin/nvidia); set gpuOperator.enabled false",
        )
    if pool.image_type != "COS_CONTAINERD":
        # gVNIC: "GKE nodes must use a Container-Optimized OS node image" (https://cloud.google.com/
        # kubernetes-engine/docs/how-to/using-gvnic, read 2026-11); multi-network needs COS m101+.
        add(
            f"{at}.imageType",
            f"fabric {fabric} runs on COS_CONTAINERD nodes (gVNIC and multi-networking need it)",
        )
    if fabric_zone(cfg, pool) is None:
        offered = _offered(pool, cfg.cluster.region) if _gpu_fits(pool) else None
        where = f"; zones of {cfg.cluster.region} that offer it: {_choices(offered)}" if offered else ""
        add(
            f"{at}.zones",
            f"fabric {fabric} places the pool compactly in one zone: name exactly one (zones: [<zone>])"
            + where,
        )


def fabric_zone(cfg: GkeStack, pool: GkeNodePool) -> str | None:
    """The one zone of a fabric pool (None: it has no single zone, which the rules refuse). Its
    pool_zones, not a reservation's zone: every node pool of the pool (a spot fallback too) is
    placed there; a reservation must be in the pool's zones (_reservation_zone_problems)."""
    zones = pool_zones(cfg, pool)
    return zones[0] if zones and len(zones) == 1 else None


def _fabric_stack_problems(cfg: GkeStack, add: Add) -> None:
    fabric_pools = [(i, p) for i, p in enumerate(cfg.node_pools) if p.fabric]
    if not fabric_pools:
        return
    # The RoCE VPC is zonal: "All instances that have network interfaces in the VPC network must be
    # created in the zone that matches the zone of the RDMA network profile"
    # (https://cloud.google.com/vpc/docs/rdma-network-profiles, read 2026-11); the stack makes one.
    rdma = [(i, fabric_zone(cfg, p)) for i, p in fabric_pools if p.fabric == "rdma"]
    first = rdma[0][1] if rdma else None
    for i, zone in rdma[1:]:
        if first and zone and zone != first:
            add(
                f"nodePools[{i}].zones",
                f"every rdma pool is in {first}: the cluster's one RoCE network is bound to one zone",
            )
    net = cfg.cluster.network
    if net.existing:
        return
    fabric_range = ipaddress.ip_network(gke_machines.FABRIC_RANGE)
    for key, cidr in (
        ("nodesCidr", net.nodes_cidr),
        ("podsCidr", net.pods_cidr),
        ("servicesCidr", net.services_cidr),
    ):
        if ipaddress.ip_network(cidr).overlaps(fabric_range):
            add(
                f"cluster.network.{key}",
                f"overlaps {fabric_range}, where the fabric networks of nodePools[{fabric_pools[0][0]}] "
                "take their ranges (the nodes route both)",
            )


def gke_problems(cfg: GkeStack, add: Add) -> None:
    _zone_problems(cfg, add)
    _version_problems(cfg, add)
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
        _n1_size_problems(i, pool, add)
        _on_demand_problems(i, pool, add)
        _pool_zone_problems(i, pool, cfg, add)
        _reservation_zone_problems(i, pool, cfg, add)
        _disk_problems(i, pool, add)
        _taint_problems(i, pool, add)
        _fast_pull_problems(i, pool, add)
        _local_ssd_problems(i, pool, add)
        _fabric_problems(i, pool, cfg, add)
    _operator_image_types(cfg, add)
    capacity_rules.gke_capacity_problems(cfg, add)
    capacity_rules.bounded_fallback_problems(cfg, add)
    _network_problems(cfg, add)
    _fabric_stack_problems(cfg, add)
    gke_filesystem_problems(cfg, add)
