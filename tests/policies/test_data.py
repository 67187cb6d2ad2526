"""Policies on data: checkpoint buckets, databases, the in-cluster database's volume, and
what master.yaml says about the database connection and checkpoint storage. Props are
copied from the plans of the gke/eks stacks (resources.json)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE

from policies import data, facts
from tests.policies.support import args, check, ctx, master_config, resource, rule

GCS = "gcp:storage/bucket:Bucket"
GCS_MEMBER = "gcp:storage/bucketIAMMember:BucketIAMMember"
GCS_BINDING = "gcp:storage/bucketIAMBinding:BucketIAMBinding"
S3 = "aws:s3/bucket:Bucket"
PAB = "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock"
SSE = "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration"
OWNERSHIP = "aws:s3/bucketOwnershipControls:BucketOwnershipControls"
VERSIONING = "aws:s3/bucketVersioning:BucketVersioning"
SQL = "gcp:sql/databaseInstance:DatabaseInstance"
RDS = "aws:rds/instance:Instance"
PARAMS = "aws:rds/parameterGroup:ParameterGroup"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"
STORAGE_CLASS = "kubernetes:storage.k8s.io/v1:StorageClass"
SECRET = "kubernetes:core/v1:Secret"

DEV, PROD = ctx("dev", "gke"), ctx("prod", "gke")
LABELS = {"app.kubernetes.io/part-of": "determined", "app.kubernetes.io/name": "database"}


def gcs_bucket(**changes: Any) -> dict:
    props = {
        "forceDestroy": False,
        "labels": {"environment": "prod"},
        "location": "US-CENTRAL1",
        "name": "my-gcp-project-gke-prod-checkpoints",
        "publicAccessPrevention": "enforced",
        "uniformBucketLevelAccess": True,
        "versioning": {"enabled": True},
    }
    return props | changes


def gcs_member(
    member: str = "serviceAccount:det-prod-storage@my-gcp-project.iam.gserviceaccount.com",
) -> dict:
    return {
        "bucket": "my-gcp-project-gke-prod-checkpoints",
        "member": member,
        "role": "roles/storage.objectUser",
    }


def s3_bucket(name: str = "checkpoints", bucket: str = "eks-prod-123456789012-us-west-2-checkpoints"):
    return resource(S3, {"bucket": bucket, "forceDestroy": False, "tags": {}}, name=name)


def attached(kind: str, props: dict, bucket, name: str = "checkpoints"):
    """A configuration of `bucket` as the project registers it: `bucket` from its id."""
    return resource(
        kind, {"bucket": "checkpoints-7e2c60fb", **props}, name=name, depends={"bucket": [bucket]}
    )


BLOCKED = {
    "blockPublicAcls": True,
    "blockPublicPolicy": True,
    "ignorePublicAcls": True,
    "restrictPublicBuckets": True,
}
KMS = {
    "rules": [{"applyServerSideEncryptionByDefault": {"sseAlgorithm": "aws:kms"}, "bucketKeyEnabled": True}]
}


def s3_stack(**parts: dict | None) -> list:
    """An S3 bucket with the configurations the project gives it (override or drop by kind)."""
    bucket = s3_bucket()
    kinds = {
        "block": (PAB, BLOCKED),
        "sse": (SSE, KMS),
        "ownership": (OWNERSHIP, {"rule": {"objectOwnership": "BucketOwnerEnforced"}}),
        "versioning": (VERSIONING, {"versioningConfiguration": {"status": "Enabled"}}),
    }
    found = [bucket]
    for key, (kind, props) in kinds.items():
        props = parts.get(key, props)
        if props is not None:
            found.append(attached(kind, props, bucket))
    return found


def cloud_sql(**settings: Any) -> dict:
    props: dict[str, Any] = {
        "databaseVersion": "POSTGRES_17",
        "deletionProtection": True,
        "name": "det-prod-db",
        "region": "us-central1",
        "settings": {
            "availabilityType": "REGIONAL",
            "backupConfiguration": {
                "backupRetentionSettings": {"retainedBackups": 30, "retentionUnit": "COUNT"},
                "enabled": True,
                "pointInTimeRecoveryEnabled": True,
                "startTime": "03:00",
                "transactionLogRetentionDays": 7,
            },
            "deletionProtectionEnabled": True,
            "diskSize": 50,
            "edition": "ENTERPRISE",
            "ipConfiguration": {
                "ipv4Enabled": False,
                "privateNetwork": "projects/my-gcp-project/global/networks/det-prod-net",
                "sslMode": "ENCRYPTED_ONLY",
            },
            "tier": "db-custom-2-8192",
        },
    }
    props["settings"] |= settings
    return props


def rds(**changes: Any) -> dict:
    props = {
        "allocatedStorage": 50,
        "backupRetentionPeriod": 30,
        "deletionProtection": True,
        "engine": "postgres",
        "engineVersion": "17",
        "finalSnapshotIdentifier": "det-prod-db-final",
        "identifier": "det-prod-db",
        "instanceClass": "db.m7g.large",
        "parameterGroupName": "det-prod-db",
        "password": "Plain-Text-Db-Password-1",
        "publiclyAccessible": False,
        "skipFinalSnapshot": False,
        "storageEncrypted": True,
    }
    return {k: v for k, v in (props | changes).items() if v is not None}


def parameter_group(value: str = "1") -> Any:
    return resource(
        PARAMS,
        {
            "family": "postgres17",
            "name": "det-prod-db",
            "parameters": [{"name": "rds.force_ssl", "value": value}],
        },
        name="database",
    )


def rds_stack(group_value: str | None = "1", **changes: Any) -> list:
    if group_value is None:
        return [resource(RDS, rds(**changes), name="database")]
    group = parameter_group(group_value)
    return [group, resource(RDS, rds(**changes), name="database", depends={"parameterGroupName": [group]})]


def db_section(host: str, ssl_mode: str | None = None) -> dict:
    section = {
        "user": "determined",
        "password": "Db-Password-0",
        "host": host,
        "port": "5432",
        "name": "determined",
    }
    if ssl_mode is not None:
        section["ssl_mode"] = ssl_mode
    return {"db": section}


# --- buckets-private ---------------------------------------------------------------------------


def test_buckets_private_passes_what_the_project_creates():
    gcs = [
        resource(GCS, gcs_bucket(), name="checkpoints"),
        resource(GCS_MEMBER, gcs_member(), name="storage-objects"),
    ]
    assert check("buckets-private", gcs) == []
    assert check("buckets-private", s3_stack()) == []


def test_buckets_private_refuses_a_gcs_bucket_without_enforced_prevention():
    found = check(
        "buckets-private", [resource(GCS, gcs_bucket(publicAccessPrevention="inherited"), name="ckpt")]
    )
    assert found == [
        "GCS bucket 'ckpt' (my-gcp-project-gke-prod-checkpoints): publicAccessPrevention is 'inherited', "
        "not 'enforced'"
    ]
    props = gcs_bucket()
    del props["publicAccessPrevention"]
    assert "publicAccessPrevention is 'not set'" in check("buckets-private", [resource(GCS, props)])[0]


def test_buckets_private_refuses_public_members_of_bucket_iam():
    stack = [
        resource(GCS, gcs_bucket(), name="checkpoints"),
        resource(GCS_MEMBER, gcs_member("allUsers"), name="public"),
        resource(
            GCS_BINDING,
            {
                "bucket": "b",
                "role": "roles/storage.objectViewer",
                "members": ["user:a@example.com", "allAuthenticatedUsers"],
            },
            name="viewers",
        ),
    ]
    assert check("buckets-private", stack) == [
        "GCS bucket IAM grant 'public' gives 'roles/storage.objectUser' to allUsers",
        "GCS bucket IAM grant 'viewers' gives 'roles/storage.objectViewer' to allAuthenticatedUsers",
    ]


def test_buckets_private_passes_over_members_a_first_preview_does_not_know():
    stack = [
        resource(GCS, gcs_bucket(), name="checkpoints"),
        resource(GCS_MEMBER, gcs_member(UNKNOWN_STRING_VALUE), name="storage-objects"),
        resource(GCS_BINDING, {"bucket": "b", "role": "r", "members": [UNKNOWN_STRING_VALUE]}, name="x"),
    ]
    assert check("buckets-private", stack) == []


def test_buckets_private_needs_a_full_public_access_block_on_every_s3_bucket():
    assert check("buckets-private", s3_stack(block=None)) == [
        "S3 bucket 'checkpoints' (eks-prod-123456789012-us-west-2-checkpoints) has no BucketPublicAccessBlock"
    ]
    found = check("buckets-private", s3_stack(block=BLOCKED | {"restrictPublicBuckets": False}))
    assert found == [
        "S3 bucket 'checkpoints' (eks-prod-123456789012-us-west-2-checkpoints): its BucketPublicAccessBlock "
        "'checkpoints' leaves restrictPublicBuckets off"
    ]


def test_buckets_private_matches_blocks_to_their_bucket():
    first, other = s3_bucket("first", "first-bucket"), s3_bucket("other", "other-bucket")
    stack = [first, other, attached(PAB, BLOCKED, first)]
    assert check("buckets-private", stack) == [
        "S3 bucket 'other' (other-bucket) has no BucketPublicAccessBlock"
    ]
    # A block naming its bucket in plain text (no dependency) counts for that bucket.
    named = resource(PAB, {"bucket": "other-bucket", **BLOCKED}, name="named")
    assert check("buckets-private", [*stack, named]) == []


# --- buckets-encrypted --------------------------------------------------------------------------


def test_buckets_encrypted_passes_kms_and_aes256_and_every_gcs_bucket():
    assert check("buckets-encrypted", s3_stack()) == []
    aes = {"rules": [{"applyServerSideEncryptionByDefault": {"sseAlgorithm": "AES256"}}]}
    assert check("buckets-encrypted", s3_stack(sse=aes)) == []
    assert check("buckets-encrypted", [resource(GCS, gcs_bucket())]) == []


def test_buckets_encrypted_refuses_an_s3_bucket_without_encryption():
    assert check("buckets-encrypted", s3_stack(sse=None)) == [
        "S3 bucket 'checkpoints' (eks-prod-123456789012-us-west-2-checkpoints) has no "
        "BucketServerSideEncryptionConfiguration"
    ]
    found = check("buckets-encrypted", s3_stack(sse={"rules": [{"applyServerSideEncryptionByDefault": {}}]}))
    assert len(found) == 1 and "names no algorithm of aws:kms, aws:kms:dsse, AES256" in found[0]


# --- buckets-uniform-access ---------------------------------------------------------------------


def test_buckets_uniform_access_passes_what_the_project_creates():
    assert check("buckets-uniform-access", [resource(GCS, gcs_bucket()), *s3_stack()]) == []


def test_buckets_uniform_access_refuses_acls():
    found = check(
        "buckets-uniform-access", [resource(GCS, gcs_bucket(uniformBucketLevelAccess=False), name="c")]
    )
    assert found == [
        "GCS bucket 'c' (my-gcp-project-gke-prod-checkpoints): uniformBucketLevelAccess is not true (object ACLs apply)"
    ]
    assert check("buckets-uniform-access", s3_stack(ownership=None)) == [
        "S3 bucket 'checkpoints' (eks-prod-123456789012-us-west-2-checkpoints) has no BucketOwnershipControls "
        "(ACLs stay on)"
    ]
    found = check("buckets-uniform-access", s3_stack(ownership={"rule": {"objectOwnership": "ObjectWriter"}}))
    assert len(found) == 1 and "objectOwnership is 'ObjectWriter', not BucketOwnerEnforced" in found[0]


# --- buckets-versioned-in-prod ------------------------------------------------------------------


def test_buckets_versioned_is_for_prod_only():
    assert rule("buckets-versioned-in-prod").level(DEV) == "off"
    assert rule("buckets-versioned-in-prod").level(PROD) == "mandatory"


def test_buckets_versioned_passes_versioned_buckets():
    assert check("buckets-versioned-in-prod", [resource(GCS, gcs_bucket()), *s3_stack()], PROD) == []


def test_buckets_versioned_refuses_unversioned_buckets():
    found = check(
        "buckets-versioned-in-prod", [resource(GCS, gcs_bucket(versioning={"enabled": False}))], PROD
    )
    assert found == ["GCS bucket 'r' (my-gcp-project-gke-prod-checkpoints): versioning is not enabled"]
    assert check("buckets-versioned-in-prod", s3_stack(versioning=None), PROD) == [
        "S3 bucket 'checkpoints' (eks-prod-123456789012-us-west-2-checkpoints) has no BucketVersioning"
    ]
    suspended = s3_stack(versioning={"versioningConfiguration": {"status": "Suspended"}})
    found = check("buckets-versioned-in-prod", suspended, PROD)
    assert len(found) == 1 and "versioning status is 'Suspended', not Enabled" in found[0]


# --- buckets-not-force-destroyed ----------------------------------------------------------------


def test_buckets_not_force_destroyed():
    assert check("buckets-not-force-destroyed", args(GCS, gcs_bucket())) == []
    assert check("buckets-not-force-destroyed", args(S3, {"bucket": "b"})) == []
    assert check("buckets-not-force-destroyed", args(GCS, gcs_bucket(forceDestroy=True), name="c")) == [
        "GCS bucket 'c' (my-gcp-project-gke-prod-checkpoints): forceDestroy is true (a destroy would delete "
        "every checkpoint in it)"
    ]
    found = check("buckets-not-force-destroyed", args(S3, {"bucket": "b", "forceDestroy": True}, name="c"))
    assert found and found[0].startswith("S3 bucket 'c' (b): forceDestroy is true")
    assert check("buckets-not-force-destroyed", args(SECRET, {"forceDestroy": True})) == []


# --- data-protected-in-prod ---------------------------------------------------------------------


def pvc(name: str = "determined-db-data") -> dict:
    return {
        "metadata": {"name": name, "namespace": "determined", "labels": LABELS},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "20Gi"}}},
    }


HOLDERS = [
    (GCS, gcs_bucket(), "GCS bucket 'r' (my-gcp-project-gke-prod-checkpoints)"),
    (S3, {"bucket": "eks-prod-ckpt"}, "S3 bucket 'r' (eks-prod-ckpt)"),
    (SQL, cloud_sql(), "Cloud SQL instance 'r' (det-prod-db)"),
    (RDS, rds(), "RDS instance 'r' (det-prod-db)"),
    (PVC, pvc(), "the database's PersistentVolumeClaim determined/determined-db-data"),
]


@pytest.mark.parametrize(("kind", "props", "name"), HOLDERS, ids=[h[0] for h in HOLDERS])
def test_data_protected_in_prod(kind, props, name):
    assert rule("data-protected-in-prod").level(DEV) == "off"
    assert check("data-protected-in-prod", args(kind, props, protect=True), PROD) == []
    assert check("data-protected-in-prod", args(kind, props), PROD) == [
        f"{name} is not protected (protect: true), so a destroy or replacement may delete it"
    ]


def test_data_protected_ignores_other_claims_and_resources():
    assert check("data-protected-in-prod", args(PVC, pvc("determined-checkpoints")), PROD) == []
    assert check("data-protected-in-prod", args(PARAMS, {"name": "x"}), PROD) == []


# --- database-volume-retained -------------------------------------------------------------------


def storage_class(policy: str | None = "Retain", name: str = "determined-db") -> dict:
    props = {
        "metadata": {"name": name, "labels": LABELS},
        "parameters": {"type": "pd-balanced"},
        "provisioner": "pd.csi.storage.gke.io",
        "reclaimPolicy": policy,
        "volumeBindingMode": "WaitForFirstConsumer",
    }
    return {k: v for k, v in props.items() if v is not None}


def test_database_volume_class_name_is_the_projects():
    from components.cluster import database_volume

    assert data.DB_STORAGE_CLASS == database_volume.NAME


def test_database_volume_retained():
    assert check("database-volume-retained", args(STORAGE_CLASS, storage_class())) == []
    message = (
        "StorageClass determined-db (the in-cluster database's volumes) has reclaimPolicy 'Delete': deleting "
        "the claim would delete the disk"
    )
    assert check("database-volume-retained", args(STORAGE_CLASS, storage_class("Delete")), PROD) == [message]
    found = check("database-volume-retained", args(STORAGE_CLASS, storage_class(None)))
    assert len(found) == 1 and "reclaimPolicy 'unset (Delete)'" in found[0]


def test_database_volume_may_go_with_allow_data_deletion_and_other_classes_are_ignored():
    deletable = ctx("dev", "eks", allow_data_deletion=True)
    assert check("database-volume-retained", args(STORAGE_CLASS, storage_class("Delete")), deletable) == []
    assert check("database-volume-retained", args(STORAGE_CLASS, storage_class("Delete", "fast-ssd"))) == []


# --- databases-private --------------------------------------------------------------------------


def test_databases_private_passes_private_instances():
    assert check("databases-private", args(SQL, cloud_sql())) == []
    assert check("databases-private", args(RDS, rds())) == []


def test_databases_private_refuses_a_public_cloud_sql_address():
    public = cloud_sql(ipConfiguration={"ipv4Enabled": True, "authorizedNetworks": [{"value": "0.0.0.0/0"}]})
    assert check("databases-private", args(SQL, public, name="database")) == [
        "Cloud SQL instance 'database' (det-prod-db) has a public IPv4 address (settings.ipConfiguration."
        "ipv4Enabled is not false) and authorizes 0.0.0.0/0"
    ]
    # The provider's default is a public address.
    found = check("databases-private", args(SQL, cloud_sql(ipConfiguration={"sslMode": "ENCRYPTED_ONLY"})))
    assert len(found) == 1 and found[0].endswith("(settings.ipConfiguration.ipv4Enabled is not false)")


def test_databases_private_refuses_a_public_rds_instance():
    assert check("databases-private", args(RDS, rds(publiclyAccessible=True), name="database")) == [
        "RDS instance 'database' (det-prod-db) is publicly accessible"
    ]


# --- databases-encrypted ------------------------------------------------------------------------


def test_databases_encrypted_passes_what_the_project_creates():
    assert check("databases-encrypted", [resource(SQL, cloud_sql(), name="database"), *rds_stack()]) == []


def test_databases_encrypted_refuses_cloud_sql_accepting_plain_text():
    lax = cloud_sql(ipConfiguration={"ipv4Enabled": False, "sslMode": "ALLOW_UNENCRYPTED_AND_ENCRYPTED"})
    assert check("databases-encrypted", [resource(SQL, lax, name="database")]) == [
        "Cloud SQL instance 'database' (det-prod-db): settings.ipConfiguration.sslMode is "
        "'ALLOW_UNENCRYPTED_AND_ENCRYPTED', so it accepts unencrypted connections"
    ]
    unset = cloud_sql(ipConfiguration={"ipv4Enabled": False})
    assert "sslMode is 'not set'" in check("databases-encrypted", [resource(SQL, unset)])[0]


def test_databases_encrypted_refuses_rds_unencrypted_or_without_forced_tls():
    assert check("databases-encrypted", rds_stack(storageEncrypted=False)) == [
        "RDS instance 'database' (det-prod-db): storageEncrypted is not true (its storage and snapshots are "
        "unencrypted)"
    ]
    assert check("databases-encrypted", rds_stack("0")) == [
        "RDS instance 'database' (det-prod-db): its parameter group 'database' does not set rds.force_ssl = 1, "
        "so clients may connect without TLS"
    ]


def test_databases_encrypted_finds_parameter_groups_by_name_or_the_engines_default():
    group = parameter_group()
    assert check("databases-encrypted", [group, resource(RDS, rds(), name="database")]) == []
    assert check("databases-encrypted", [resource(RDS, rds(parameterGroupName="shared-pg"), name="db")]) == [
        "RDS instance 'db' (det-prod-db): parameter group 'shared-pg' is not created by the stack, so nothing "
        "shows that it sets rds.force_ssl = 1"
    ]
    # No group: PostgreSQL 15+ defaults rds.force_ssl to 1, older versions do not.
    assert check("databases-encrypted", rds_stack(None, parameterGroupName=None)) == []
    found = check("databases-encrypted", rds_stack(None, parameterGroupName=None, engineVersion="14.12"))
    assert len(found) == 1 and "PostgreSQL before 15 does not force TLS" in found[0]


def test_databases_encrypted_messages_hold_no_password():
    found = check("databases-encrypted", rds_stack("0", storageEncrypted=False))
    assert len(found) == 2 and not any("Plain-Text-Db-Password-1" in m for m in found)


# --- databases-deletion-protected-in-prod -------------------------------------------------------


def test_databases_deletion_protected_is_for_prod_only():
    assert rule("databases-deletion-protected-in-prod").level(DEV) == "off"


def test_databases_deletion_protected_passes_prod_instances():
    assert check("databases-deletion-protected-in-prod", args(SQL, cloud_sql()), PROD) == []
    assert check("databases-deletion-protected-in-prod", args(RDS, rds()), PROD) == []


def test_databases_deletion_protected_refuses_cloud_sql_without_either_protection():
    props = cloud_sql(deletionProtectionEnabled=False) | {"deletionProtection": False}
    assert check("databases-deletion-protected-in-prod", args(SQL, props, name="database"), PROD) == [
        "Cloud SQL instance 'database' (det-prod-db): deletionProtection is false (the provider may delete it)",
        "Cloud SQL instance 'database' (det-prod-db): settings.deletionProtectionEnabled is not true (the API "
        "may delete it)",
    ]


def test_databases_deletion_protected_refuses_rds_as_dev_creates_it():
    dev_shape = rds(deletionProtection=False, skipFinalSnapshot=True, finalSnapshotIdentifier=None)
    assert check("databases-deletion-protected-in-prod", args(RDS, dev_shape, name="database"), PROD) == [
        "RDS instance 'database' (det-prod-db): deletionProtection is not true",
        "RDS instance 'database' (det-prod-db): skipFinalSnapshot is true (deleting it keeps no final snapshot)",
    ]
    found = check("databases-deletion-protected-in-prod", args(RDS, rds(finalSnapshotIdentifier=None)), PROD)
    assert found == [
        "RDS instance 'r' (det-prod-db): no finalSnapshotIdentifier (deleting it cannot take a final snapshot)"
    ]


# --- databases-backed-up-in-prod ----------------------------------------------------------------


def test_databases_backed_up():
    assert rule("databases-backed-up-in-prod").level(DEV) == "off"
    assert check("databases-backed-up-in-prod", args(SQL, cloud_sql()), PROD) == []
    assert check("databases-backed-up-in-prod", args(RDS, rds()), PROD) == []


def test_databases_backed_up_refuses_cloud_sql_without_backups_or_recovery():
    dev_shape = cloud_sql(backupConfiguration={"enabled": True, "pointInTimeRecoveryEnabled": False})
    assert check("databases-backed-up-in-prod", args(SQL, dev_shape, name="database"), PROD) == [
        "Cloud SQL instance 'database' (det-prod-db): settings.backupConfiguration.pointInTimeRecoveryEnabled "
        "is not true"
    ]
    found = check("databases-backed-up-in-prod", args(SQL, cloud_sql(backupConfiguration={})), PROD)
    assert len(found) == 2 and "backupConfiguration.enabled is not true (no daily backups)" in found[0]


def test_databases_backed_up_refuses_short_rds_retention():
    assert check(
        "databases-backed-up-in-prod", args(RDS, rds(backupRetentionPeriod=3), name="database"), PROD
    ) == ["RDS instance 'database' (det-prod-db): backupRetentionPeriod is 3, fewer than 7 days"]
    found = check("databases-backed-up-in-prod", args(RDS, rds(backupRetentionPeriod=None)), PROD)
    assert found == ["RDS instance 'r' (det-prod-db): backupRetentionPeriod is not set, fewer than 7 days"]


# --- database-tls -------------------------------------------------------------------------------


def test_database_tls_levels():
    assert rule("database-tls").level(DEV) == "advisory" and rule("database-tls").level(PROD) == "mandatory"


@pytest.mark.parametrize(
    "host", ["determined-db", "determined-db.determined.svc", "pg.db.svc.cluster.local", "determined-db."]
)
def test_database_tls_exempts_cluster_internal_databases(host):
    assert check("database-tls", args(SECRET, master_config(db_section(host))), PROD) == []


@pytest.mark.parametrize("mode", ["require", "verify-ca", "verify-full"])
def test_database_tls_passes_modes_without_plain_text(mode):
    config = db_section("det-prod-db.c73500b1bed0.us-west-2.rds.amazonaws.com", mode)
    assert check("database-tls", args(SECRET, master_config(config)), PROD) == []


def test_database_tls_refuses_an_external_database_without_tls():
    found = check("database-tls", args(SECRET, master_config(db_section("pg.db.example.internal"))), PROD)
    assert found == [
        "master.yaml db.ssl_mode is not set (the driver's default, prefer, falls back to plain text): the "
        "master may reach the database at pg.db.example.internal without TLS, its password and data in the clear"
    ]
    for mode in ("disable", "allow", "prefer"):
        found = check("database-tls", args(SECRET, master_config(db_section("10.20.236.201", mode))))
        assert len(found) == 1 and found[0].startswith(f"master.yaml db.ssl_mode is {mode!r}: ")
        assert "Db-Password-0" not in found[0]


def test_database_tls_reads_only_the_master_config_secret():
    other = master_config(db_section("pg.example.com")) | {"metadata": {"name": "other"}}
    assert check("database-tls", args(SECRET, other), PROD) == []


# --- no-sharedfs-checkpoints-in-prod ------------------------------------------------------------


def test_no_sharedfs_checkpoints_in_prod():
    assert rule("no-sharedfs-checkpoints-in-prod").level(DEV) == "off"
    shared = {"checkpoint_storage": {"type": "shared_fs", "host_path": "/tmp/determined-checkpoints"}}
    assert check("no-sharedfs-checkpoints-in-prod", args(SECRET, master_config(shared)), PROD) == [
        "master.yaml checkpoint_storage.type is shared_fs: checkpoints land on one node's disk (a hostPath), lost "
        "with the node and unseen by tasks on other nodes"
    ]
    gcs = {"checkpoint_storage": {"type": "gcs", "bucket": "b", "prefix": ""}}
    assert check("no-sharedfs-checkpoints-in-prod", args(SECRET, master_config(gcs)), PROD) == []


# --- helpers ------------------------------------------------------------------------------------


def test_is_unknown_tells_unknowns_without_reading_them():
    props = args(GCS_MEMBER, {"member": UNKNOWN_STRING_VALUE, "members": ["a", UNKNOWN_STRING_VALUE]}).props
    assert facts.is_unknown(props, "member") and not facts.is_unknown(props, "role")
    assert facts.is_unknown(props["members"], 1) and not facts.is_unknown(props["members"], 0)
    assert facts.known(props, "member") is None
    plain = copy.deepcopy({"member": UNKNOWN_STRING_VALUE})
    assert facts.is_unknown(plain, "member") and not facts.is_unknown("text", "x")
