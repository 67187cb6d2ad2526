"""What checkpoint storage shares across clouds: the name of a bucket the stack creates,
and the Kubernetes service accounts that get the bucket through workload identity."""

from __future__ import annotations

import hashlib
import re

import pulumi

from deploy import defaults
from deploy.config import StackConfig

SUFFIX = "-checkpoints"


def bucket_name(*parts: str) -> str:
    """`<parts>-checkpoints` as a valid GCS and S3 name (3-63 lower-case letters, digits and
    '-'); shortened with a digest past 63 characters, so that it stays unique."""
    base = re.sub(r"[^a-z0-9-]+", "-", "-".join(parts).lower()).strip("-")
    if len(base) + len(SUFFIX) > 63:
        digest = hashlib.sha256(base.encode()).hexdigest()[:8]
        base = f"{base[: 63 - len(SUFFIX) - 9].rstrip('-')}-{digest}"
    return base + SUFFIX


def bucket_options(cfg: StackConfig, data: pulumi.ResourceOptions) -> pulumi.ResourceOptions:
    """The bucket the stack creates: kept on destroy like all data (`data`) and, in prod, also
    protected, so that a destroy stops before it and policies (which see `protect`, not
    retain-on-delete) can tell it is safe."""
    return pulumi.ResourceOptions.merge(data, pulumi.ResourceOptions(protect=cfg.environment == "prod"))


def kubernetes_accounts(cfg: StackConfig) -> list[tuple[str, str]]:
    """(namespace, service account) of every pod that reads or writes checkpoints: the
    master, task pods (trials, checkpoint GC) in each namespace tasks run in, and the
    database's backup and restore Jobs (their dumps go below the checkpoint prefix)."""
    accounts = [(cfg.namespace, defaults.MASTER_NAME)]
    accounts += [(ns, defaults.TASK_SERVICE_ACCOUNT) for ns in cfg.task_namespaces]
    if cfg.database.runs_backup_jobs:
        accounts.append((cfg.namespace, defaults.BACKUP_SERVICE_ACCOUNT))
    return accounts
