"""Rules for the EKS kinds of sharedFilesystems (efs, fsxLustre) beyond each entry's own
checks: where an FSx for Lustre file system goes (one zone, that of the pools that mount it),
and an S3 link that would export into the checkpoint store.

The zone choices are pure functions the cluster component uses too
(components/cluster/eks/shared_filesystems.py): what validation accepts is what is built.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from components.config.errors import Add
from components.config.shared_filesystems import FsxLustreFs

if TYPE_CHECKING:
    from components.config.node_pools import EksNodePool
    from components.config.stack import EksStack


def common_zones(pools: Sequence[EksNodePool]) -> list[str] | None:
    """The zones every pool that names zones shares, in the first such pool's order; None when
    no pool names zones (their nodes may be in any zone of the VPC)."""
    named = [pool.zones for pool in pools if pool.zones]
    if not named:
        return None
    return [zone for zone in named[0] if all(zone in zones for zones in named[1:])]


def fsx_zone(fs: FsxLustreFs, pools: Sequence[EksNodePool]) -> str | None:
    """The zone of an FSx for Lustre file system: its own, else the first zone every mounting
    pool that names zones shares; None: the zone of the VPC's first private subnet.

    An FSx for Lustre file system lives in one subnet: "File systems currently support only one
    subnet. The file server is also launched in that subnet's Availability Zone" (pulumi-aws
    7.51.1 pulumi_aws/fsx/lustre_file_system.py `subnet_ids`); nodes in other zones reach it
    across zones (slower, and billed)."""
    if fs.zone:
        return fs.zone
    shared = common_zones(pools)
    return shared[0] if shared else None


def efs_zones(pools: Sequence[EksNodePool]) -> list[str] | None:
    """The zones an EFS file system needs a mount target in: every zone of the pools that mount
    it, in order; None: every zone of the VPC (a pool that names no zones, or no pool)."""
    if not pools or any(not pool.zones for pool in pools):
        return None
    return list(dict.fromkeys(zone for pool in pools for zone in pool.zones or ()))


def _prefix(value: str) -> str:
    return value.strip("/")


def prefixes_overlap(a: str, b: str) -> bool:
    """Whether two S3 key prefixes share keys (one lies within the other; '' is the whole bucket)."""
    a, b = _prefix(a), _prefix(b)
    return not a or not b or a == b or a.startswith(b + "/") or b.startswith(a + "/")


def _fsx_zone_problems(cfg: EksStack, i: int, fs: FsxLustreFs, add: Add) -> None:
    region = cfg.cluster.region
    pools = cfg.filesystem_node_pools(fs)
    if fs.zone is not None:
        at = f"sharedFilesystems[{i}].zone"
        if not fs.zone.startswith(region):
            add(at, f"{fs.zone!r} is not a zone of cluster.region {region}")
            return
        if cfg.cluster.zones and fs.zone not in cfg.cluster.zones:
            add(
                at,
                f"{fs.zone!r} is not one of cluster.zones ({', '.join(cfg.cluster.zones)}): the VPC has no "
                "subnet there",
            )
            return
        for pool in pools:
            if pool.zones and fs.zone not in pool.zones:
                add(
                    at,
                    f"{fs.zone!r} is not a zone of node pool {pool.name!r} ({', '.join(pool.zones)}), whose "
                    "nodes mount it: FSx for Lustre serves one zone; choose one the pools share",
                )
        return
    shared = common_zones(pools)
    if shared == []:
        names = ", ".join(pool.name for pool in pools if pool.zones)
        add(
            f"sharedFilesystems[{i}]",
            f"the node pools that mount it ({names}) share no zone, and FSx for Lustre serves one: set "
            "zone, or give the pools a zone in common",
        )


def _s3_problems(cfg: EksStack, i: int, fs: FsxLustreFs, add: Add) -> None:
    storage = cfg.checkpoint_storage
    if fs.s3 is None or not fs.s3.export or getattr(storage, "type", None) != "s3":
        return
    bucket, prefix = getattr(storage, "bucket", None), getattr(storage, "prefix", "")
    if bucket == fs.s3.bucket and prefixes_overlap(fs.s3.prefix, prefix):
        add(
            f"sharedFilesystems[{i}].s3",
            "exports into checkpointStorage's bucket and prefix: files written to the file system would "
            "appear among the checkpoints, and checkpoint GC deletions would reach back; link another "
            "bucket or a prefix outside checkpointStorage.prefix",
        )


def _unbacked_problems(cfg: EksStack, i: int, fs: FsxLustreFs, add: Add) -> None:
    """Prod: files written to an FSx file system linked to S3 only for import would exist
    nowhere else. FSx backs up only Persistent file systems that "Are not linked to a data
    repository" (CreateBackup, https://docs.aws.amazon.com/fsx/latest/APIReference/
    API_CreateBackup.html, read 2026-11-26), so the stack turns backups off with `s3`."""
    if cfg.environment != "prod" or fs.s3 is None or fs.read_only or fs.s3.export:
        return
    add(
        f"sharedFilesystems[{i}].s3",
        "a writable file system linked to S3 for import only keeps what tasks write nowhere else (FSx "
        "backs up no file system linked to S3): set s3.export true, readOnly true, or drop s3 (then "
        "the stack keeps daily backups)",
    )


def eks_filesystem_problems(cfg: EksStack, add: Add) -> None:
    for i, fs in enumerate(cfg.shared_filesystems):
        if isinstance(fs, FsxLustreFs):
            _fsx_zone_problems(cfg, i, fs, add)
            _s3_problems(cfg, i, fs, add)
            _unbacked_problems(cfg, i, fs, add)
