"""Rules a GKE stack's shared filesystems (sharedFilesystems of kinds filestore, gcsFuse,
managedLustre) must meet beyond each entry's own checks: where the instance lives (a zone of
the pools that mount it, in the cluster's region), what Managed Lustre asks of the nodes and
the network, and the cloud names derived from them.

The placement helpers here (`filesystem_zone`, `lustre_filesystem`, `mounting_zones`) are
the ones the cluster component uses too (components/cluster/gke/shared_filesystems.py), so
that what validation accepts is what gets created. The rule that a kind exists on the
stack's cloud at all is the generic one (the Determined side's); this module does GKE only.
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING

from components import versions
from components.config import gcs_fuse
from components.config import gke as gke_rules  # which calls this module: read at call time
from components.config.errors import Add
from components.config.shared_filesystems import (
    FILESTORE_ZONAL_TIERS,
    FilestoreFs,
    GcsFuseFs,
    ManagedLustreFs,
    SharedFilesystemBase,
)

if TYPE_CHECKING:
    from components.config.stack import GkeStack

# Managed Lustre's GKE requirements: "GKE version 1.33.2-gke.1111000 or later", "Container-
# Optimized OS with containerd node images only", x86_64 nodes only
# (https://cloud.google.com/kubernetes-engine/docs/concepts/managed-lustre, read 2026-11 via
# /work/research26/shared-fs.md §3). The driver's default LNet port 988 needs
# 1.33.2-gke.4780000 or later; older clusters need the legacy port 6988
# (https://docs.cloud.google.com/managed-lustre/docs/lustre-csi-driver-new-volume, "Lustre
# communication ports", read 2026-11). A minor is all a stack names, so 1.33 is the floor.
LUSTRE_MIN_MINOR = (1, 33)
LUSTRE_IMAGE_TYPE = "COS_CONTAINERD"
# "Must be eight characters or less and can only contain letters and numbers" (pulumi-gcp
# 10.2.0 pulumi_gcp/lustre/instance.py InstanceArgs.filesystem).
LUSTRE_FILESYSTEM_MAX = 8
# "Clients with an IP address in the range 172.17.0.0/16 cannot connect to basic-tier Filestore
# instances" (https://cloud.google.com/filestore/docs/network-ip-requirements, known issues,
# read 2026-11 via /work/research26/shared-fs.md §1).
BASIC_TIER_UNREACHABLE = ipaddress.ip_network("172.17.0.0/16")


def lustre_filesystem(fs: ManagedLustreFs) -> str:
    """The Lustre filesystem name (what clients mount, <ip>@tcp:/<name>): the entry's name
    without '-', cut to 8 characters."""
    return fs.name.replace("-", "")[:LUSTRE_FILESYSTEM_MAX]


def zonal(fs: SharedFilesystemBase) -> bool:
    """Whether the filesystem lives in one zone (Filestore's zonal and basic tiers, Managed
    Lustre) rather than in the region."""
    if isinstance(fs, FilestoreFs):
        return fs.tier in FILESTORE_ZONAL_TIERS
    return isinstance(fs, ManagedLustreFs)


def mounting_zones(pool_zones: list[list[str] | None], cluster_zones: list[str]) -> list[str]:
    """The zones the mounting node pools run in (a pool whose zones are left to GKE counts as
    cluster.zones): first those every one of them runs in, where all reach the filesystem
    without crossing zones (a GPU pool often runs in one zone only), then the others, first
    pool first."""
    lists = [zones if zones is not None else cluster_zones for zones in pool_zones]
    found = list(dict.fromkeys(zone for zones in lists for zone in zones))
    common = [zone for zone in found if all(zone in zones for zones in lists)]
    return common + [zone for zone in found if zone not in common]


def filesystem_zone(fs: SharedFilesystemBase, zones: list[str]) -> str | None:
    """Where a zonal filesystem goes: its zone, else the first zone of the pools that mount it
    (None when neither is known: a config error)."""
    zone = getattr(fs, "zone", None)
    return zone or (zones[0] if zones else None)


def _zones_of(cfg: GkeStack, fs: SharedFilesystemBase) -> list[str]:
    pools = cfg.filesystem_node_pools(fs)
    return mounting_zones([gke_rules.pool_zones(cfg, pool) for pool in pools], list(cfg.cluster.zones))


def _zone_problems(i: int, fs: SharedFilesystemBase, cfg: GkeStack, add: Add) -> None:
    at = f"sharedFilesystems[{i}]"
    region = cfg.cluster.region
    zone = getattr(fs, "zone", None)
    if not zonal(fs):
        if zone is not None:
            add(f"{at}.zone", f"the {fs.tier} tier lives in the region ({region}); leave zone out")
        return
    zones = _zones_of(cfg, fs)
    if zone is None:
        if not zones:
            add(
                f"{at}.zone",
                "required: the node pools that mount it name no zones (nodePools[].zones, cluster.zones); "
                f"name a zone of {region}",
            )
        return
    if not zone.startswith(region + "-"):
        add(f"{at}.zone", f"{zone!r} is not a zone of cluster.region {region}")
    elif zones and zone not in zones:
        add(
            f"{at}.zone",
            f"{zone!r} is not a zone of the node pools that mount it ({', '.join(zones)}): their nodes "
            "would mount across zones",
        )


def _lustre_problems(i: int, fs: ManagedLustreFs, cfg: GkeStack, add: Add) -> None:
    for pool in cfg.filesystem_node_pools(fs):
        j = next(k for k, p in enumerate(cfg.node_pools) if p is pool)
        if pool.image_type != LUSTRE_IMAGE_TYPE:
            add(
                f"nodePools[{j}].imageType",
                f"{pool.image_type}: {fs.name} (managedLustre) is mounted by Container-Optimized OS nodes "
                f"only ({LUSTRE_IMAGE_TYPE})",
            )
        if pool.arm:
            add(
                f"nodePools[{j}].machineType",
                f"{pool.machine_type} is Arm: Managed Lustre mounts on x86 nodes only",
            )
    version = cfg.cluster.kubernetes_version
    if version is not None and versions.minor_tuple(version) < LUSTRE_MIN_MINOR:
        least = ".".join(map(str, LUSTRE_MIN_MINOR))
        add("cluster.kubernetesVersion", f"{version}: {fs.name} (managedLustre) needs GKE {least} or later")


def _basic_tier_problems(i: int, fs: FilestoreFs, cfg: GkeStack, add: Add) -> None:
    if fs.tier not in ("BASIC_HDD", "BASIC_SSD") or cfg.cluster.network.existing:
        return
    nodes = ipaddress.ip_network(cfg.cluster.network.nodes_cidr, strict=False)
    if nodes.overlaps(BASIC_TIER_UNREACHABLE):
        add(
            f"sharedFilesystems[{i}].tier",
            f"{fs.tier}: nodes in {nodes} cannot reach basic-tier Filestore instances from 172.17.0.0/16; "
            "choose ZONAL or another cluster.network.nodesCidr",
        )


def _bucket_problems(i: int, fs: GcsFuseFs, cfg: GkeStack, add: Add) -> None:
    if fs.bucket is not None:
        return
    # The stack's name only picks the digest (hex), which no bucket rule refuses.
    try:
        gcs_fuse.bucket_name("stack", cfg.cluster.region, cfg.cluster.name, fs.name)
    except ValueError as error:
        add(f"sharedFilesystems[{i}].bucket", f"required: the derived bucket name is refused ({error})")


def gke_filesystem_problems(cfg: GkeStack, add: Add) -> None:
    """The GKE rules of sharedFilesystems (called from components.config.gke.gke_problems)."""
    lustre_names: dict[str, int] = {}
    for i, fs in enumerate(cfg.shared_filesystems):
        if isinstance(fs, (FilestoreFs, ManagedLustreFs)):
            _zone_problems(i, fs, cfg, add)
        if isinstance(fs, FilestoreFs):
            _basic_tier_problems(i, fs, cfg, add)
        if isinstance(fs, GcsFuseFs):
            _bucket_problems(i, fs, cfg, add)
        if isinstance(fs, ManagedLustreFs):
            _lustre_problems(i, fs, cfg, add)
            short = lustre_filesystem(fs)
            if short in lustre_names:
                # "Mounting multiple volumes from different Managed Lustre instances that have the
                # same filesystem name on a single node is not supported" (GKE Managed Lustre
                # concepts page, read 2026-11 via /work/research26/shared-fs.md §3).
                add(
                    f"sharedFilesystems[{i}].name",
                    f"its Lustre filesystem name {short!r} (the name without '-', 8 characters) is also "
                    f"sharedFilesystems[{lustre_names[short]}]'s; a node mounts one filesystem per name",
                )
            lustre_names.setdefault(short, i)
