"""What checkpoint storage shares across clouds: the name of a bucket the stack creates,
and the Kubernetes service accounts that get the bucket through workload identity."""

from __future__ import annotations

import hashlib
import re

import pulumi

from components import constants
from components.cluster.args import CloudClusterArgs

SUFFIX = "-checkpoints"


# Bucket names are global (S3: unique across every account of the partition; GCS: across all
# of Google Cloud). What a derived name holds must tell apart every install: the cluster name
# (unique per account or project and region), the region, the account (S3) or project (GCS)
# and the stack.
# The stack name alone does not: two Pulumi projects (or organizations) both have a stack
# "dev", and in us-east-1 CreateBucket on a bucket the account already owns succeeds ("if
# you re-create an existing bucket that you already own in the North Virginia Region, Amazon S3
# returns 200 OK": Amazon S3 API reference, CreateBucket, BucketAlreadyOwnedByYou;
# https://docs.aws.amazon.com/AmazonS3/latest/API/API_CreateBucket.html and botocore 1.43.11,
# read 2026-11-25), so the second install would silently share the first one's bucket (and
# prune its backups). Stacks deployed before the cluster name was added keep their bucket: the
# name is fixed at creation (components/names.py `kept`), and everything that names the bucket
# (master.yaml, IAM, backups, outputs) takes it from the bucket resource.


def bucket_name(*parts: str) -> str:
    """`<parts>-checkpoints` as a valid GCS and S3 name (3-63 lower-case letters, digits and
    '-'); shortened with a digest past 63 characters, so that it stays unique."""
    base = re.sub(r"[^a-z0-9-]+", "-", "-".join(parts).lower()).strip("-")
    if len(base) + len(SUFFIX) > 63:
        digest = hashlib.sha256(base.encode()).hexdigest()[:8]
        base = f"{base[: 63 - len(SUFFIX) - 9].rstrip('-')}-{digest}"
    return base + SUFFIX


def bucket_options(args: CloudClusterArgs, data: pulumi.ResourceOptions) -> pulumi.ResourceOptions:
    """The bucket the stack creates: kept on destroy like all data (`data`) and, in prod, also
    protected, so that a destroy stops before it and policies (which see `protect`, not
    retain-on-delete) can tell it is safe."""
    return pulumi.ResourceOptions.merge(data, pulumi.ResourceOptions(protect=args.environment == "prod"))


def kubernetes_accounts(args: CloudClusterArgs) -> list[tuple[str, str]]:
    """(namespace, service account) of every pod that reads or writes checkpoints: the
    master, task pods (trials, checkpoint GC) in each namespace tasks run in, and the
    database's backup and restore Jobs (their dumps go below the checkpoint prefix)."""
    accounts = [(args.namespace, constants.MASTER_NAME)]
    accounts += [(ns, constants.TASK_SERVICE_ACCOUNT) for ns in args.task_namespaces]
    if args.database.runs_backup_jobs:
        accounts.append((args.namespace, constants.BACKUP_SERVICE_ACCOUNT))
    return accounts
