"""`determined:sharedFilesystems`: shared (ReadWriteMany) filesystems for datasets and
checkpoints, created per cloud and mounted into the task pods of the resource pools that
name them.

Each entry has a `kind`:

- gke: `filestore` (a Filestore instance, mounted over NFS), `gcsFuse` (a Cloud Storage
  bucket mounted by the Cloud Storage FUSE CSI driver through Workload Identity),
  `managedLustre` (a Managed Lustre instance, Lustre CSI driver);
- eks: `efs` (an EFS file system with a mount target per zone and an access point, EFS CSI
  add-on), `fsxLustre` (an FSx for Lustre file system, optionally linked to S3, FSx CSI
  driver);
- every cloud: `existing` (an NFS export, or a claim of that name in every namespace that
  mounts it).

The cloud limits behind each bound are cited where they are defined.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator

from components.config.base import ConfigModel
from components.config.checkpoint_storage import (
    ContainerPath,
    GcsBucket,
    NfsShare,
    Prefix,
    S3Bucket,
    _refuse,
)
from components.config.cluster import AwsZone, GcpZone
from components.config.syntax import DnsSubdomain, Flag, NonEmpty, pattern_check, whole_number

# A short DNS label: it becomes part of cloud names (Filestore instance IDs are at most 63
# characters, its share names at most 16; Managed Lustre filesystem names at most 8), of
# PersistentVolume names and of pod volume names.
NAME_MAX = 20
SharedFilesystemName = Annotated[
    str,
    AfterValidator(
        pattern_check(
            re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?"),
            f"a name of lower-case letters, digits and '-', starting with a letter, at most {NAME_MAX} "
            "characters (example: datasets)",
            NAME_MAX,
        )
    ),
]

# Where tasks see a filesystem by default: /mnt/<name>.
DEFAULT_MOUNT_ROOT = "/mnt"

# Filestore tiers and their capacity ranges in GiB (pulumi-gcp 10.2.0
# pulumi_gcp/filestore/_inputs.py InstanceFileSharesArgs.capacity_gb; the service tiers
# page https://cloud.google.com/filestore/docs/service-tiers, read 2026-11-26).
FILESTORE_CAPACITY_GB: dict[str, tuple[int, int]] = {
    "BASIC_HDD": (1024, 65433),
    "BASIC_SSD": (2560, 65433),
    "ZONAL": (1024, 102400),
    "REGIONAL": (1024, 102400),
    "ENTERPRISE": (1024, 10240),
}
# ZONAL and REGIONAL have two capacity ranges: 1-9.75 TiB in 256 GiB units and 10-100 TiB in
# 2.5 TiB units, and "The capacity range cannot be changed once selected"
# (https://docs.cloud.google.com/filestore/docs/service-tiers-zonal and .../service-tiers-regional,
# "Minimum scaling units", read 2026-11-26); ENTERPRISE 1-10 TiB in 256 GiB units (pulumi-gcp
# 10.2.0 pulumi_gcp/filestore/_inputs.py InstanceFileSharesArgs.capacity_gb: "ENTERPRISE ...
# 256 GiB increments", /work/research26/shared-fs.md §1).
FILESTORE_HIGH_RANGE_GB = 10240
FILESTORE_STEP_GB = 256
FILESTORE_HIGH_STEP_GB = 2560
FILESTORE_STEPPED_TIERS = ("ZONAL", "REGIONAL", "ENTERPRISE")
# Tiers served from one zone; the others from the region.
FILESTORE_ZONAL_TIERS = ("BASIC_HDD", "BASIC_SSD", "ZONAL")

# Managed Lustre: capacity "from 9000 to 7632000, depending on the perUnitStorageThroughput",
# throughput "125, 250, 500, 1000" MBps per TiB (pulumi-gcp 10.2.0 pulumi_gcp/lustre/instance.py).
MANAGED_LUSTRE_CAPACITY_GIB = (9000, 7632000)
LUSTRE_THROUGHPUTS = (125, 250, 500, 1000)
# Per throughput (MB/s per TiB): (minimum GiB, step GiB, threshold GiB up to which that step
# holds, step above it). "The updated capacity must be a multiple of the step size"; an instance
# made at or below the threshold cannot grow past it
# (https://docs.cloud.google.com/managed-lustre/docs/performance-tiers and
# https://docs.cloud.google.com/managed-lustre/docs/increase-capacity, read 2026-11-26). The
# 125 tier has one step. The SDK's bound above (7632000) stays the overall maximum.
LUSTRE_TIERS: dict[int, tuple[int, int, int, int]] = {
    1000: (9000, 9000, 1530000, 72000),
    500: (18000, 18000, 3060000, 144000),
    250: (36000, 36000, 6120000, 288000),
    125: (72000, 72000, 12240000, 72000),
}


def lustre_capacity_problem(capacity_gib: int, throughput: int) -> str | None:
    """Why Managed Lustre refuses `capacity_gib` at `throughput` (None: it takes it)."""
    minimum, step, threshold, high_step = LUSTRE_TIERS[throughput]
    if capacity_gib < minimum:
        return f"at throughput {throughput} Managed Lustre takes at least {minimum} GiB"
    unit = step if capacity_gib <= threshold else high_step
    if capacity_gib % unit:
        above = f" above {threshold}" if capacity_gib > threshold else ""
        return f"at throughput {throughput} Managed Lustre takes multiples of {unit} GiB{above}"
    return None


def filestore_capacity_problem(tier: str, capacity_gb: int) -> str | None:
    """Why Filestore refuses `capacity_gb` in `tier` beyond its range (None: it takes it)."""
    if tier not in FILESTORE_STEPPED_TIERS:
        return None
    if tier != "ENTERPRISE" and capacity_gb >= FILESTORE_HIGH_RANGE_GB:
        if capacity_gb % FILESTORE_HIGH_STEP_GB:
            return (
                f"the {tier} tier takes multiples of {FILESTORE_HIGH_STEP_GB} GiB from "
                f"{FILESTORE_HIGH_RANGE_GB}"
            )
        return None
    if capacity_gb % FILESTORE_STEP_GB:
        below = f" below {FILESTORE_HIGH_RANGE_GB}" if tier != "ENTERPRISE" else ""
        return f"the {tier} tier takes multiples of {FILESTORE_STEP_GB} GiB{below}"
    return None


# FSx for Lustre PERSISTENT_2 SSD: "1200 GiB, 2400 GiB, and increments of 2400 GiB"
# (https://docs.aws.amazon.com/fsx/latest/APIReference/API_CreateFileSystem.html
# StorageCapacity), throughput 125/250/500/1000 MB/s/TiB (pulumi-aws 7.51.1
# pulumi_aws/fsx/lustre_file_system.py per_unit_storage_throughput).
FSX_CAPACITY_STEP_GIB = 2400
FSX_CAPACITY_MAX_GIB = 2400 * 1000


class SharedFilesystemBase(ConfigModel):
    name: SharedFilesystemName = Field(
        description="Required: the filesystem's name, unique among sharedFilesystems: lower-case letters, "
        f"digits and '-', at most {NAME_MAX} characters; part of its cloud and Kubernetes names."
    )
    mount_path: ContainerPath | None = Field(
        None,
        description="Where task containers see it: an absolute path outside /etc, /proc, /sys, /dev, /run "
        "and the system directories. Default /mnt/<name>.",
    )
    resource_pools: list[NonEmpty] | None = Field(
        None,
        description="The resource pools whose task pods mount it (names of resourcePools). Default: every "
        "pool.",
    )
    read_only: Flag = Field(
        False, description="true mounts it read-only in task pods (datasets). Default false."
    )

    @property
    def path(self) -> str:
        """Where task containers see it."""
        return self.mount_path or f"{DEFAULT_MOUNT_ROOT}/{self.name}"

    @property
    def clouds(self) -> tuple[str, ...]:
        """The targets this kind exists on."""
        raise NotImplementedError

    @property
    def volume(self) -> str:
        """The pod volume name (strategic merge matches volumes by name)."""
        return f"shared-{self.name}"


class FilestoreFs(SharedFilesystemBase):
    kind: Literal["filestore"] = Field(description="filestore (gke): a Filestore instance mounted over NFS.")
    tier: Literal["ZONAL", "REGIONAL", "ENTERPRISE", "BASIC_HDD", "BASIC_SSD"] = Field(
        "ZONAL",
        description="filestore: the service tier, ZONAL (default), REGIONAL, ENTERPRISE, BASIC_HDD or "
        "BASIC_SSD.",
    )
    capacity_gb: whole_number(1024, 102400) = Field(
        1024,
        description="filestore: the share's size in GiB, within the tier's range (BASIC_HDD 1024-65433, "
        "BASIC_SSD 2560-65433, ZONAL/REGIONAL 1024-102400: multiples of 256 below 10240, of 2560 from "
        "10240, and a size never moves across 10240 later; ENTERPRISE 1024-10240 in multiples of 256). "
        "Default 1024.",
    )
    zone: GcpZone | None = Field(
        None,
        description="filestore, zonal tiers: the instance's zone, one of the zones of the pools that mount "
        "it. Default: the first such zone.",
    )

    @model_validator(mode="after")
    def _capacity_in_tier(self) -> FilestoreFs:
        low, high = FILESTORE_CAPACITY_GB[self.tier]
        if not low <= self.capacity_gb <= high:
            raise _refuse(("capacityGb", f"the {self.tier} tier takes {low} to {high} GiB"))
        if problem := filestore_capacity_problem(self.tier, self.capacity_gb):
            raise _refuse(("capacityGb", problem))
        return self

    @property
    def clouds(self) -> tuple[str, ...]:
        return ("gke",)


class GcsFuseFs(SharedFilesystemBase):
    kind: Literal["gcsFuse"] = Field(
        description="gcsFuse (gke): a Cloud Storage bucket mounted by the Cloud Storage FUSE CSI driver."
    )
    bucket: GcsBucket | None = Field(
        None,
        description="gcsFuse: an existing bucket to mount. Default: the stack creates "
        "<cluster>-<name>-<digest> (the digest of stack, region and cluster tells installs apart).",
    )
    only_dir: Prefix | None = Field(
        None, description="gcsFuse: mount only this directory of the bucket. Default: the whole bucket."
    )

    @property
    def clouds(self) -> tuple[str, ...]:
        return ("gke",)


class ManagedLustreFs(SharedFilesystemBase):
    kind: Literal["managedLustre"] = Field(
        description="managedLustre (gke): a Google Cloud Managed Lustre instance (Lustre CSI driver)."
    )
    capacity_gib: whole_number(*MANAGED_LUSTRE_CAPACITY_GIB) = Field(
        18000,
        description="managedLustre: capacity in GiB, at most 7632000, from the throughput's minimum in its "
        "steps: 1000 from 9000 in 9000s, 500 from 18000 in 18000s, 250 from 36000 in 36000s, 125 from "
        "72000 in 72000s (larger steps above 1530000, 3060000 and 6120000). Default 18000.",
    )
    throughput: Literal[125, 250, 500, 1000] = Field(
        500, description="managedLustre: MB/s per TiB, 125, 250, 500 (default) or 1000."
    )
    zone: GcpZone | None = Field(
        None,
        description="managedLustre: the instance's zone, one of the zones of the pools that mount it. "
        "Default: the first such zone.",
    )

    @model_validator(mode="after")
    def _capacity_in_tier(self) -> ManagedLustreFs:
        if problem := lustre_capacity_problem(self.capacity_gib, self.throughput):
            raise _refuse(("capacityGib", problem))
        return self

    @property
    def clouds(self) -> tuple[str, ...]:
        return ("gke",)


class PosixOwner(ConfigModel):
    uid: whole_number(0, 4294967295) = Field(
        1000, description="The user id every file operation runs as. Default 1000."
    )
    gid: whole_number(0, 4294967295) = Field(
        1000, description="The group id every file operation runs as. Default 1000."
    )


class EfsFs(SharedFilesystemBase):
    kind: Literal["efs"] = Field(
        description="efs (eks): an encrypted EFS file system, a mount target in each zone of the nodes, "
        "reached through an access point (TLS in transit)."
    )
    throughput_mode: Literal["elastic", "bursting"] = Field(
        "elastic", description="efs: elastic (default, what AWS recommends) or bursting."
    )
    owner: PosixOwner = Field(
        default_factory=PosixOwner,
        description="efs: the POSIX user the access point maps every request to, owner of its root "
        "directory (mode 0770). Default {uid: 1000, gid: 1000}.",
    )

    @property
    def clouds(self) -> tuple[str, ...]:
        return ("eks",)


class S3Import(ConfigModel):
    bucket: S3Bucket = Field(description="Required: the S3 bucket linked to the file system.")
    prefix: Prefix = Field("", description="A key prefix within the bucket. Default: the whole bucket.")
    export: Flag = Field(
        False, description="true also writes new and changed files back to S3. Default false (import only)."
    )


class FsxLustreFs(SharedFilesystemBase):
    kind: Literal["fsxLustre"] = Field(
        description="fsxLustre (eks): an FSx for Lustre file system (PERSISTENT_2, SSD), FSx CSI driver."
    )
    capacity_gib: whole_number(1200, FSX_CAPACITY_MAX_GIB) = Field(
        1200, description="fsxLustre: storage in GiB, 1200, 2400 or a multiple of 2400. Default 1200."
    )
    throughput: Literal[125, 250, 500, 1000] = Field(
        250, description="fsxLustre: MB/s per TiB, 125, 250 (default), 500 or 1000."
    )
    zone: AwsZone | None = Field(
        None,
        description="fsxLustre: the file system's zone (it lives in one subnet), one of the zones of the "
        "pools that mount it. Default: the first such zone.",
    )
    s3: S3Import | None = Field(
        None,
        description="fsxLustre: an S3 bucket linked as a data repository, {bucket, prefix, export}, in the "
        "stack's region and account; FSx then takes no backups (the bucket is the durable copy). Default: "
        "none.",
    )

    @model_validator(mode="after")
    def _capacity_step(self) -> FsxLustreFs:
        if self.capacity_gib != 1200 and self.capacity_gib % FSX_CAPACITY_STEP_GIB:
            raise _refuse(("capacityGib", "FSx for Lustre takes 1200, 2400 or a multiple of 2400 GiB"))
        return self

    @property
    def clouds(self) -> tuple[str, ...]:
        return ("eks",)


class ExistingFs(SharedFilesystemBase):
    kind: Literal["existing"] = Field(
        description="existing: a filesystem made elsewhere, as an NFS export or a claim in every namespace "
        "that mounts it."
    )
    nfs: NfsShare | None = Field(
        None,
        description="existing: an NFS export {server, path, mountOptions}; the stack binds it with a "
        "PersistentVolume and a claim in every namespace that mounts it.",
    )
    claim_name: DnsSubdomain | None = Field(
        None,
        description="existing: a ReadWriteMany claim that must exist, bound to the same share, in every "
        "namespace the mounting pools' tasks may run in (0.35+: every task namespace); the stack creates "
        "nothing.",
    )

    @model_validator(mode="after")
    def _one_source(self) -> ExistingFs:
        if (self.nfs is None) == (self.claim_name is None):
            raise _refuse((None, "kind existing needs one of nfs {server, path} or claimName"))
        return self

    @property
    def clouds(self) -> tuple[str, ...]:
        return ("existing", "gke", "eks")


SharedFilesystem = Annotated[
    FilestoreFs | GcsFuseFs | ManagedLustreFs | EfsFs | FsxLustreFs | ExistingFs,
    Field(discriminator="kind"),
]
