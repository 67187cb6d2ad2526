"""Policies: data. The checkpoint buckets (private, encrypted, without ACLs, versioned and
protected in prod, never force-destroyed), the databases (private, encrypted, TLS, deletion
protection and backups in prod, a retained in-cluster volume), the shared filesystems
(encrypted, not readable by everyone, protected in prod) and where the master keeps
checkpoints.

Buckets and databases the stack does not create (a named existing bucket, an external
database) are not resources of the stack: only master.yaml says anything about them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from components import constants
from policies import facts
from policies.rule import Context, Report, Rule

GCS_BUCKET = "gcp:storage/bucket:Bucket"
GCS_BUCKET_IAM = (
    "gcp:storage/bucketIAMMember:BucketIAMMember",
    "gcp:storage/bucketIAMBinding:BucketIAMBinding",
)
S3_BUCKETS = ("aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2")
S3_PUBLIC_ACCESS_BLOCK = "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock"
S3_ENCRYPTION = (
    "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
    "aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2",
)
S3_OWNERSHIP = "aws:s3/bucketOwnershipControls:BucketOwnershipControls"
S3_VERSIONING = ("aws:s3/bucketVersioning:BucketVersioning", "aws:s3/bucketVersioningV2:BucketVersioningV2")
CLOUD_SQL = "gcp:sql/databaseInstance:DatabaseInstance"
RDS = "aws:rds/instance:Instance"
RDS_PARAMETER_GROUP = "aws:rds/parameterGroup:ParameterGroup"

# Shared filesystems (determined:sharedFilesystems) and how pods mount them.
EFS = "aws:efs/fileSystem:FileSystem"
EFS_ACCESS_POINT = "aws:efs/accessPoint:AccessPoint"
FSX_LUSTRE = "aws:fsx/lustreFileSystem:LustreFileSystem"
FILESTORE = "gcp:filestore/instance:Instance"
GCP_LUSTRE = "gcp:lustre/instance:Instance"
PERSISTENT_VOLUME = "kubernetes:core/v1:PersistentVolume"
# The EFS CSI driver mounts over TLS unless a volume's `encryptInTransit` attribute is "false"
# (kubernetes-sigs/aws-efs-csi-driver@a4fc676 docs/parameters.md:55, pkg/driver/node.go:102-111).
EFS_CSI_DRIVER = "efs.csi.aws.com"
WORLD = ("0.0.0.0/0", "::/0")

# The StorageClass the project creates for the in-cluster database's volume on gke/eks
# (components/cluster/database_volume.py NAME; not imported: that module needs the Kubernetes
# provider, which the pack does not install).
DB_STORAGE_CLASS = "determined-db"
PUBLIC_MEMBERS = ("allUsers", "allAuthenticatedUsers")
PUBLIC_ACCESS_FLAGS = ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets")
SSE_ALGORITHMS = ("aws:kms", "aws:kms:dsse", "AES256")
CLOUD_SQL_TLS = ("ENCRYPTED_ONLY", "TRUSTED_CLIENT_CERTIFICATE_REQUIRED")
# RDS for PostgreSQL 15 and later defaults rds.force_ssl to 1 (AWS's default parameter groups).
RDS_FORCE_SSL_DEFAULT_SINCE = 15
MIN_BACKUP_DAYS = 7
# libpq/pgx modes that never fall back to plain text.
DB_TLS_MODES = ("require", "verify-ca", "verify-full")


def _s3_name(bucket: Any) -> str:
    return facts.describe(bucket, "S3 bucket", "bucket")


def _gcs_name(bucket: Any) -> str:
    return facts.describe(bucket, "GCS bucket", "name")


def _attached(resources: Sequence[Any], bucket: Any, *types: str) -> list[Any]:
    """The resources of `types` configuring S3 `bucket`: those whose `bucket` comes from it
    (its id, as the project passes it) or, when given as plain text, names it."""
    name = facts.known(bucket.props, "bucket")
    found = []
    for r in facts.of_type(resources, *types):
        sources = facts.depends_on(r, "bucket")
        if sources:
            if any(s.urn == bucket.urn for s in sources):
                found.append(r)
        elif name and facts.known(r.props, "bucket") == name:
            found.append(r)
    return found


def _true(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


# --- buckets ----------------------------------------------------------------------------------


def buckets_private(context: Context, resources: Sequence[Any], report: Report) -> None:
    for bucket in facts.of_type(resources, GCS_BUCKET):
        prevention = facts.get(bucket.props, "publicAccessPrevention")
        if prevention != "enforced":
            report(
                f"{_gcs_name(bucket)}: publicAccessPrevention is {prevention or 'not set'!r}, not 'enforced'",
                bucket.urn,
            )
    for grant in facts.of_type(resources, *GCS_BUCKET_IAM):
        # Members from other resources (service accounts) are unknown in a first preview;
        # allUsers and allAuthenticatedUsers are always written as such.
        members = [facts.known(grant.props, "member"), *facts.known_items(grant.props, "members")]
        for member in members:
            if member in PUBLIC_MEMBERS:
                report(
                    f"GCS bucket IAM grant {grant.name!r} gives {facts.known(grant.props, 'role')!r} "
                    f"to {member}",
                    grant.urn,
                )
    for bucket in facts.of_type(resources, *S3_BUCKETS):
        blocks = _attached(resources, bucket, S3_PUBLIC_ACCESS_BLOCK)
        if not blocks:
            report(f"{_s3_name(bucket)} has no BucketPublicAccessBlock", bucket.urn)
            continue
        if not any(all(_true(facts.get(b.props, f)) for f in PUBLIC_ACCESS_FLAGS) for b in blocks):
            off = [f for f in PUBLIC_ACCESS_FLAGS if not _true(facts.get(blocks[0].props, f))]
            report(
                f"{_s3_name(bucket)}: its BucketPublicAccessBlock {blocks[0].name!r} leaves "
                f"{', '.join(off)} off",
                blocks[0].urn,
            )


def buckets_encrypted(context: Context, resources: Sequence[Any], report: Report) -> None:
    # GCS encrypts every object at rest (Google-managed keys unless a CMEK is set).
    for bucket in facts.of_type(resources, *S3_BUCKETS):
        configs = _attached(resources, bucket, *S3_ENCRYPTION)
        algorithms = [
            facts.get(rule, "applyServerSideEncryptionByDefault", "sseAlgorithm")
            for config in configs
            for rule in facts.items(facts.get(config.props, "rules"))
        ]
        if not configs:
            report(f"{_s3_name(bucket)} has no BucketServerSideEncryptionConfiguration", bucket.urn)
        elif not any(a in SSE_ALGORITHMS for a in algorithms):
            report(
                f"{_s3_name(bucket)}: its server-side encryption names no algorithm of "
                f"{', '.join(SSE_ALGORITHMS)} (found {algorithms or 'no rule'})",
                bucket.urn,
            )


def buckets_uniform_access(context: Context, resources: Sequence[Any], report: Report) -> None:
    for bucket in facts.of_type(resources, GCS_BUCKET):
        if facts.get(bucket.props, "uniformBucketLevelAccess") is not True:
            report(
                f"{_gcs_name(bucket)}: uniformBucketLevelAccess is not true (object ACLs apply)", bucket.urn
            )
    for bucket in facts.of_type(resources, *S3_BUCKETS):
        controls = _attached(resources, bucket, S3_OWNERSHIP)
        ownership = [facts.get(c.props, "rule", "objectOwnership") for c in controls]
        if not ownership:
            report(f"{_s3_name(bucket)} has no BucketOwnershipControls (ACLs stay on)", bucket.urn)
        elif "BucketOwnerEnforced" not in ownership:
            report(
                f"{_s3_name(bucket)}: objectOwnership is {ownership[0]!r}, not BucketOwnerEnforced "
                "(ACLs stay on)",
                bucket.urn,
            )


def buckets_versioned(context: Context, resources: Sequence[Any], report: Report) -> None:
    for bucket in facts.of_type(resources, GCS_BUCKET):
        if facts.get(bucket.props, "versioning", "enabled") is not True:
            report(f"{_gcs_name(bucket)}: versioning is not enabled", bucket.urn)
    for bucket in facts.of_type(resources, *S3_BUCKETS):
        configs = _attached(resources, bucket, *S3_VERSIONING)
        statuses = [facts.get(c.props, "versioningConfiguration", "status") for c in configs]
        if not statuses:
            report(f"{_s3_name(bucket)} has no BucketVersioning", bucket.urn)
        elif "Enabled" not in statuses:
            report(f"{_s3_name(bucket)}: versioning status is {statuses[0]!r}, not Enabled", bucket.urn)


def buckets_not_force_destroyed(context: Context, resource: Any, report: Report) -> None:
    if resource.resource_type == GCS_BUCKET:
        name = _gcs_name(resource)
    elif resource.resource_type in S3_BUCKETS:
        name = _s3_name(resource)
    else:
        return
    if _true(facts.get(resource.props, "forceDestroy")):
        report(f"{name}: forceDestroy is true (a destroy would delete every checkpoint in it)")


# --- protection of what holds data ----------------------------------------------------------


def _data_holder(resource: Any) -> str | None:
    """What a resource that holds the install's data is, for messages (None: another)."""
    kind = resource.resource_type
    if kind == GCS_BUCKET:
        return _gcs_name(resource)
    if kind in S3_BUCKETS:
        return _s3_name(resource)
    if kind == CLOUD_SQL:
        return facts.describe(resource, "Cloud SQL instance", "name")
    if kind == RDS:
        return facts.describe(resource, "RDS instance", "identifier")
    if kind == EFS:
        return facts.describe(resource, "EFS file system")
    if kind == FSX_LUSTRE:
        return facts.describe(resource, "FSx for Lustre file system")
    if kind == FILESTORE:
        return facts.describe(resource, "Filestore instance", "name")
    if kind == GCP_LUSTRE:
        return facts.describe(resource, "Managed Lustre instance", "instanceId")
    if kind == facts.PVC and facts.metadata(resource).get("name") == constants.DB_VOLUME_CLAIM:
        return f"the database's PersistentVolumeClaim {facts.object_name(resource)}"
    return None


def data_protected(context: Context, resource: Any, report: Report) -> None:
    holder = _data_holder(resource)
    if holder is not None and not resource.opts.protect:
        report(f"{holder} is not protected (protect: true), so a destroy or replacement may delete it")


def database_volume_retained(context: Context, resource: Any, report: Report) -> None:
    if (
        resource.resource_type != facts.STORAGE_CLASS
        or facts.metadata(resource).get("name") != DB_STORAGE_CLASS
    ):
        return
    if context.allow_data_deletion:
        return
    policy = facts.get(resource.props, "reclaimPolicy")
    if policy != "Retain":
        report(
            f"StorageClass {DB_STORAGE_CLASS} (the in-cluster database's volumes) has reclaimPolicy "
            f"{policy or 'unset (Delete)'!r}: deleting the claim would delete the disk"
        )


# --- shared filesystems -----------------------------------------------------------------------


def shared_filesystems_encrypted(context: Context, resource: Any, report: Report) -> None:
    # FSx for Lustre, Filestore and Managed Lustre encrypt at rest always, with a provider-managed
    # key unless one is given (pulumi-aws 7.51.1 fsx/lustre_file_system.py `kms_key_id`: "Defaults
    # to an AWS managed KMS Key"; https://cloud.google.com/filestore/docs/architecture: "encrypted
    # with system-defined keys"; pulumi-gcp 10.2.0 lustre/instance.py `kms_key`: "If not set, the
    # instance will use Google-managed encryption keys"): nothing to check. EFS encrypts only
    # when asked (AWS Config efs-encrypted-check, https://docs.aws.amazon.com/config/latest/
    # developerguide/efs-encrypted-check.html, read 2026-11).
    if resource.resource_type == EFS:
        if not _true(facts.get(resource.props, "encrypted")):
            report(
                f"{facts.describe(resource, 'EFS file system')}: encrypted is not true (its files and "
                "backups are stored unencrypted; only a new file system can change that)"
            )
    elif resource.resource_type == PERSISTENT_VOLUME:
        csi = facts.mapping(facts.get(resource.props, "spec", "csi"))
        attributes = facts.mapping(csi.get("volumeAttributes"))
        if (
            csi.get("driver") == EFS_CSI_DRIVER
            and str(attributes.get("encryptInTransit", "")).lower() == "false"
        ):
            report(
                f"PersistentVolume {facts.object_name(resource)}: encryptInTransit is false, so nodes "
                "mount the EFS file system over plain NFS"
            )


def _mode(value: Any) -> int | None:
    """An octal file mode given as text ("0770", "750") or a number, else None."""
    text = facts.shown(value).strip() if value is not None else ""
    try:
        return int(text, 8) if text else None
    except ValueError:
        return None


def shared_filesystems_not_world_readable(context: Context, resource: Any, report: Report) -> None:
    # GCS buckets mounted with Cloud Storage FUSE are checked as buckets (buckets-private:
    # public access prevention enforced, no public grants).
    if resource.resource_type == EFS_ACCESS_POINT:
        name = facts.describe(resource, "EFS access point")
        root = facts.mapping(facts.get(resource.props, "rootDirectory"))
        path = root.get("path") or "/"
        info = facts.mapping(root.get("creationInfo"))
        if not info:
            # The directory must then exist already (the file system's root is root:root 0755).
            report(
                f"{name}: its root directory {path} has no creationInfo, so the stack does not set its mode"
            )
            return
        if facts.is_unknown(info, "permissions"):
            return
        mode = _mode(info.get("permissions"))
        if mode is None:
            report(
                f"{name}: creationInfo.permissions {facts.shown(info.get('permissions'))!r} is no octal mode"
            )
        elif mode & 0o007:
            report(
                f"{name}: its root directory {path} is created with mode {mode:04o}, which lets every user "
                "of a node or task read it (others' bits should be 0)"
            )
    elif resource.resource_type == FILESTORE:
        exports = facts.items(facts.get(resource.props, "fileShares", "nfsExportOptions"))
        for option in exports:
            ranges = [str(r) for r in facts.known_items(facts.mapping(option), "ipRanges") if r]
            open_to = [r for r in ranges if r in WORLD]
            if open_to:
                report(
                    f"{facts.describe(resource, 'Filestore instance', 'name')}: an NFS export option admits "
                    f"{', '.join(open_to)} (any address may mount the share)"
                )


# --- databases ------------------------------------------------------------------------------


def databases_private(context: Context, resource: Any, report: Report) -> None:
    if resource.resource_type == CLOUD_SQL:
        ip = facts.mapping(facts.get(resource.props, "settings", "ipConfiguration"))
        # The provider's default is a public IPv4 address.
        if ip.get("ipv4Enabled", True) is not False:
            networks = [
                facts.get(n, "value")
                for n in facts.items(ip.get("authorizedNetworks"))
                if isinstance(n, Mapping)
            ]
            world = " and authorizes 0.0.0.0/0" if "0.0.0.0/0" in networks else ""
            report(
                f"{facts.describe(resource, 'Cloud SQL instance', 'name')} has a public IPv4 address "
                f"(settings.ipConfiguration.ipv4Enabled is not false){world}"
            )
    elif resource.resource_type == RDS and _true(facts.get(resource.props, "publiclyAccessible")):
        report(f"{facts.describe(resource, 'RDS instance', 'identifier')} is publicly accessible")


def _force_ssl(group: Any) -> bool:
    return any(
        facts.get(p, "name") == "rds.force_ssl"
        and facts.shown(facts.get(p, "value", default="")).strip() == "1"
        for p in facts.items(facts.get(group.props, "parameters"))
    )


def _major(version: Any) -> int | None:
    head = facts.shown(version or "").split(".", 1)[0]
    return int(head) if head.isdigit() else None


def databases_encrypted(context: Context, resources: Sequence[Any], report: Report) -> None:
    for db in facts.of_type(resources, CLOUD_SQL):
        mode = facts.get(db.props, "settings", "ipConfiguration", "sslMode")
        if mode not in CLOUD_SQL_TLS:
            report(
                f"{facts.describe(db, 'Cloud SQL instance', 'name')}: settings.ipConfiguration.sslMode is "
                f"{mode or 'not set'!r}, so it accepts unencrypted connections",
                db.urn,
            )
    groups = facts.of_type(resources, RDS_PARAMETER_GROUP)
    for db in facts.of_type(resources, RDS):
        name = facts.describe(db, "RDS instance", "identifier")
        if not _true(facts.get(db.props, "storageEncrypted")):
            report(
                f"{name}: storageEncrypted is not true (its storage and snapshots are unencrypted)", db.urn
            )
        if facts.get(db.props, "engine") != "postgres":
            continue
        sources = [
            g for g in facts.depends_on(db, "parameterGroupName") if g.resource_type == RDS_PARAMETER_GROUP
        ]
        if not sources and "parameterGroupName" in db.props:
            group_name = facts.get(db.props, "parameterGroupName")
            sources = [g for g in groups if facts.known(g.props, "name") == group_name]
            if not sources:
                report(
                    f"{name}: parameter group {group_name!r} is not created by the stack, so nothing shows "
                    "that it sets rds.force_ssl = 1",
                    db.urn,
                )
                continue
        if sources:
            if not any(_force_ssl(g) for g in sources):
                report(
                    f"{name}: its parameter group {sources[0].name!r} does not set rds.force_ssl = 1, "
                    "so clients may connect without TLS",
                    db.urn,
                )
        elif (_major(facts.get(db.props, "engineVersion")) or 0) < RDS_FORCE_SSL_DEFAULT_SINCE:
            report(
                f"{name}: the default parameter group of PostgreSQL before {RDS_FORCE_SSL_DEFAULT_SINCE} "
                "does not force TLS (rds.force_ssl = 0)",
                db.urn,
            )


def databases_deletion_protected(context: Context, resource: Any, report: Report) -> None:
    props = resource.props
    if resource.resource_type == CLOUD_SQL:
        name = facts.describe(resource, "Cloud SQL instance", "name")
        # The provider's own deletionProtection defaults to true; the API's to false.
        if facts.get(props, "deletionProtection") is False:
            report(f"{name}: deletionProtection is false (the provider may delete it)")
        if facts.get(props, "settings", "deletionProtectionEnabled") is not True:
            report(f"{name}: settings.deletionProtectionEnabled is not true (the API may delete it)")
    elif resource.resource_type == RDS:
        name = facts.describe(resource, "RDS instance", "identifier")
        if not _true(facts.get(props, "deletionProtection")):
            report(f"{name}: deletionProtection is not true")
        if _true(facts.get(props, "skipFinalSnapshot")):
            report(f"{name}: skipFinalSnapshot is true (deleting it keeps no final snapshot)")
        elif not facts.get(props, "finalSnapshotIdentifier"):
            report(f"{name}: no finalSnapshotIdentifier (deleting it cannot take a final snapshot)")


def databases_backed_up(context: Context, resource: Any, report: Report) -> None:
    props = resource.props
    if resource.resource_type == CLOUD_SQL:
        name = facts.describe(resource, "Cloud SQL instance", "name")
        backups = facts.mapping(facts.get(props, "settings", "backupConfiguration"))
        if backups.get("enabled") is not True:
            report(f"{name}: settings.backupConfiguration.enabled is not true (no daily backups)")
        if backups.get("pointInTimeRecoveryEnabled") is not True:
            report(f"{name}: settings.backupConfiguration.pointInTimeRecoveryEnabled is not true")
    elif resource.resource_type == RDS:
        days = facts.get(props, "backupRetentionPeriod")
        if not isinstance(days, int | float) or days < MIN_BACKUP_DAYS:
            report(
                f"{facts.describe(resource, 'RDS instance', 'identifier')}: backupRetentionPeriod is "
                f"{facts.shown(days) if days is not None else 'not set'}, fewer than {MIN_BACKUP_DAYS} days"
            )


# --- master.yaml ----------------------------------------------------------------------------


def cluster_internal(host: str) -> bool:
    """A Service of the cluster: a bare name (the namespace's Service, as the in-cluster
    database's `determined-db`) or a name under .svc / .svc.cluster.local. Its traffic never
    leaves the cluster's network."""
    host = host.strip().rstrip(".").lower()
    return bool(host) and ("." not in host or host.endswith((".svc", ".svc.cluster.local")))


def database_tls(context: Context, resource: Any, report: Report) -> None:
    master = facts.master_config_of(resource)
    if master is None:
        return
    db = facts.mapping(master.config.get("db"))
    host = db.get("host")
    if not isinstance(host, str) or cluster_internal(host):
        return
    mode = db.get("ssl_mode")
    if mode in DB_TLS_MODES:
        return
    said = f"is {mode!r}" if mode else "is not set (the driver's default, prefer, falls back to plain text)"
    report(
        f"master.yaml db.ssl_mode {said}: the master may reach the database at {host} without TLS, "
        "its password and data in the clear"
    )


def no_sharedfs_checkpoints(context: Context, resource: Any, report: Report) -> None:
    master = facts.master_config_of(resource)
    if master is None:
        return
    if facts.get(master.config, "checkpoint_storage", "type") == "shared_fs":
        report(
            "master.yaml checkpoint_storage.type is shared_fs: checkpoints land on one node's disk (a "
            "hostPath), lost with the node and unseen by tasks on other nodes"
        )


_BUCKET_KEYS = "determined:checkpointStorage"

RULES: list[Rule] = [
    Rule(
        name="buckets-private",
        description="Checkpoint buckets are private: GCS public access prevention enforced and no bucket "
        "IAM grant to allUsers/allAuthenticatedUsers; every S3 bucket has a public access block with all "
        "four settings on.",
        remediation=f"use a bucket the project creates ({_BUCKET_KEYS} without .bucket: private as created); "
        f"for an existing bucket named in {_BUCKET_KEYS}.bucket, make it private outside the stack",
        dev="mandatory",
        prod="mandatory",
        area="data",
        stack=buckets_private,
        why="Checkpoints are the models and their training state; a public bucket gives them to anyone.",
    ),
    Rule(
        name="buckets-encrypted",
        description="Every S3 bucket has a server-side encryption configuration (aws:kms, aws:kms:dsse or "
        "AES256). GCS encrypts every object at rest.",
        remediation=f"use a bucket the project creates ({_BUCKET_KEYS} without .bucket: SSE-KMS); for an "
        f"existing bucket named in {_BUCKET_KEYS}.bucket, configure its encryption outside the stack",
        dev="mandatory",
        prod="mandatory",
        area="data",
        stack=buckets_encrypted,
        why="The encryption a bucket promises should be stated by the stack, not left to an account default.",
    ),
    Rule(
        name="buckets-uniform-access",
        description="Access to checkpoint buckets is decided by IAM alone: GCS uniform bucket-level access; "
        "S3 object ownership BucketOwnerEnforced (ACLs disabled).",
        remediation=f"use a bucket the project creates ({_BUCKET_KEYS} without .bucket); for an existing "
        f"bucket named in {_BUCKET_KEYS}.bucket, turn ACLs off outside the stack",
        dev="mandatory",
        prod="mandatory",
        area="data",
        stack=buckets_uniform_access,
        why="Object ACLs are a second, per-object way in that IAM reviews do not see.",
    ),
    Rule(
        name="buckets-versioned-in-prod",
        description="In prod, checkpoint buckets keep object versions: GCS versioning enabled, S3 "
        "BucketVersioning Enabled.",
        remediation=f"determined:environment prod versions the buckets the project creates ({_BUCKET_KEYS}); "
        "for an existing bucket, enable versioning outside the stack",
        dev="off",
        prod="mandatory",
        area="data",
        stack=buckets_versioned,
        why="A versioned bucket is the way back from a checkpoint overwritten or deleted by mistake.",
    ),
    Rule(
        name="buckets-not-force-destroyed",
        description="No GCS or S3 bucket sets forceDestroy (a destroy would delete the objects in it).",
        remediation="do not set forceDestroy on a bucket; determined:allowDataDeletion (dev only) lets a "
        "destroy delete a bucket the project created once it is empty",
        dev="mandatory",
        prod="mandatory",
        area="data",
        resource=buckets_not_force_destroyed,
        why="Checkpoints outlive a stack; emptying a bucket should be a deliberate act, not a side effect.",
    ),
    Rule(
        name="data-protected-in-prod",
        description="In prod, what holds the install's data is protected: checkpoint buckets, Cloud SQL and "
        "RDS instances, shared filesystems (EFS, FSx for Lustre, Filestore, Managed Lustre) and the "
        "in-cluster database's PersistentVolumeClaim.",
        remediation="nothing to set: with determined:environment prod the project protects them, and "
        "determined:allowDataDeletion is refused; do not unprotect them",
        dev="off",
        prod="mandatory",
        area="data",
        resource=data_protected,
        why="Protection makes `pulumi destroy` and replacements stop before deleting the data of a prod "
        "install.",
    ),
    Rule(
        name="database-volume-retained",
        description="The StorageClass the stack creates for the in-cluster database's volume "
        f"({DB_STORAGE_CLASS}) has reclaimPolicy Retain, unless allowDataDeletion.",
        remediation="keep determined:allowDataDeletion false (the project then creates the class with "
        "reclaimPolicy Retain)",
        dev="mandatory",
        prod="mandatory",
        area="data",
        resource=database_volume_retained,
        why="With Delete, a deleted claim or namespace deletes the disk and every experiment's record.",
    ),
    Rule(
        name="databases-private",
        description="Managed databases have no public address: Cloud SQL ipv4Enabled false (private IP "
        "only), RDS not publicly accessible.",
        remediation="use determined:database.mode managed as the project creates it (private address only); "
        "do not change its network settings",
        dev="mandatory",
        prod="mandatory",
        area="data",
        resource=databases_private,
        why="Only the master talks to the database; a public address only adds ways in.",
    ),
    Rule(
        name="databases-encrypted",
        description="Managed databases are encrypted at rest and in transit: RDS storageEncrypted and a "
        "parameter group with rds.force_ssl = 1; Cloud SQL sslMode ENCRYPTED_ONLY or "
        "TRUSTED_CLIENT_CERTIFICATE_REQUIRED.",
        remediation="use determined:database.mode managed as the project creates it (encrypted storage, TLS "
        "required); do not change its encryption or parameter group",
        dev="mandatory",
        prod="mandatory",
        area="data",
        stack=databases_encrypted,
        why="The database holds users, tokens and experiment metadata; neither disks nor wires should "
        "carry it in the clear.",
    ),
    Rule(
        name="databases-deletion-protected-in-prod",
        description="In prod, managed databases refuse deletion: Cloud SQL deletionProtection and "
        "settings.deletionProtectionEnabled; RDS deletionProtection and a final snapshot.",
        remediation="nothing to set: with determined:environment prod the project turns deletion protection "
        "and the final snapshot on (determined:database.mode managed); do not turn them off",
        dev="off",
        prod="mandatory",
        area="data",
        resource=databases_deletion_protected,
        why="A prod database should survive a mistaken delete, in the console as much as in Pulumi.",
    ),
    Rule(
        name="databases-backed-up-in-prod",
        description="In prod, managed databases are backed up: Cloud SQL backups with point-in-time "
        f"recovery; RDS backups kept at least {MIN_BACKUP_DAYS} days.",
        remediation="nothing to set: with determined:environment prod the project configures backups "
        "(determined:database.mode managed); do not reduce them",
        dev="off",
        prod="mandatory",
        area="data",
        resource=databases_backed_up,
        why="Backups are the way back from a bad migration or a deleted experiment.",
    ),
    Rule(
        name="database-tls",
        description="The master reaches a database outside the cluster over TLS: master.yaml db.ssl_mode "
        "require, verify-ca or verify-full (not disable, allow, prefer or unset: those fall back to plain "
        "text). The in-cluster database (a cluster-internal Service name) is exempt.",
        remediation="set determined:database.sslMode to require, verify-ca or verify-full (verify-* with "
        "determined:database.sslRootCert)",
        dev="advisory",
        prod="mandatory",
        area="data",
        resource=database_tls,
        why="The master sends the database password and all its data over this connection; Postgres' "
        "default (prefer) silently accepts plain text.",
    ),
    Rule(
        name="shared-filesystems-encrypted",
        description="Shared filesystems are encrypted: every EFS file system sets encrypted, and no EFS "
        "PersistentVolume turns encryptInTransit off. FSx for Lustre, Filestore and Managed Lustre are "
        "always encrypted at rest (provider-managed keys unless one is given); GCS buckets too.",
        remediation="use determined:sharedFilesystems as the project creates them (EFS: encrypted at rest, "
        "mounted over TLS); an EFS file system made unencrypted must be replaced by a new one",
        dev="mandatory",
        prod="mandatory",
        area="data",
        resource=shared_filesystems_encrypted,
        why="Datasets and checkpoints on a shared filesystem are as valuable as the bucket's; EFS leaves "
        "them unencrypted unless asked.",
    ),
    Rule(
        name="shared-filesystems-not-world-readable",
        description="Shared filesystems are not open to everyone: an EFS access point creates its root "
        "directory with creationInfo permissions that give others nothing (such as 0770), and no "
        "Filestore NFS export admits 0.0.0.0/0. Cloud Storage FUSE buckets are checked by buckets-private.",
        remediation="use determined:sharedFilesystems as the project creates them (EFS access points with "
        "mode 0770, Filestore exports limited to the nodes' range); do not widen them",
        dev="mandatory",
        prod="mandatory",
        area="data",
        resource=shared_filesystems_not_world_readable,
        why="A share every user or address can read hands every team's datasets and checkpoints to "
        "anyone with a shell on a node or an address in range.",
    ),
    Rule(
        name="no-sharedfs-checkpoints-in-prod",
        description="In prod, master.yaml checkpoint_storage.type is not shared_fs (a hostPath on one node).",
        remediation="set determined:checkpointStorage.type to gcs, s3, azure or directory",
        dev="off",
        prod="mandatory",
        area="data",
        resource=no_sharedfs_checkpoints,
        why="shared_fs writes checkpoints to a node's local disk: lost with the node, invisible to tasks "
        "elsewhere.",
    ),
]
