"""Checkpoint storage on GCS: the bucket (created unless named) and the Google service
account that the master's and tasks' Kubernetes service accounts act as (workload
identity): no keys anywhere, and access to this one bucket only.
"""

from __future__ import annotations

from typing import Any

from components.cluster import checkpoints
from components.cluster.gke.cluster import workload_pool
from components.cluster.gke.node_pools import account_id
from components.config import GkeStack

# Read, write and delete objects (checkpoints), nothing on the bucket itself.
STORAGE_ROLE = "roles/storage.objectUser"
WORKLOAD_IDENTITY_ROLE = "roles/iam.workloadIdentityUser"
# The annotation that binds a Kubernetes service account to a Google one.
ANNOTATION = "iam.gke.io/gcp-service-account"
# Noncurrent versions of a prod bucket are kept this long (a way back from an overwrite).
NONCURRENT_DAYS = 30


BUCKET = "gcp:storage/bucket:Bucket"


def bucket_name(project: str, stack: str, cluster: str, region: str) -> str:
    """`<project>-<stack>-<cluster>-<region>-checkpoints`: GCS names are global, project IDs
    are, and a cluster name is unique in its project and region (see checkpoints.py)."""
    return checkpoints.bucket_name(project, stack, cluster, region)


def bucket_args(cfg: GkeStack, name: str) -> dict[str, Any]:
    prod = cfg.environment == "prod"
    args: dict[str, Any] = {
        "name": name,
        "location": cfg.cluster.region.upper(),
        "uniform_bucket_level_access": True,
        "public_access_prevention": "enforced",
        "versioning": {"enabled": prod},
        # Never: a destroy that may delete the bucket (allowDataDeletion) still refuses to
        # delete one that holds checkpoints.
        "force_destroy": False,
        "labels": dict(cfg.cluster.tags),
    }
    if prod:
        args["lifecycle_rules"] = [
            {
                "action": {"type": "Delete"},
                "condition": {"days_since_noncurrent_time": NONCURRENT_DAYS, "with_state": "ARCHIVED"},
            }
        ]
    return args


def storage_account_args(cfg: GkeStack) -> dict[str, Any]:
    return {
        "account_id": account_id(cfg, "storage"),
        "display_name": f"Determined checkpoints of {cfg.cluster.name}",
    }


def workload_identity_member(project: str, namespace: str, account: str) -> str:
    """The IAM member that is Kubernetes service account `namespace/account` of this project's clusters."""
    return f"serviceAccount:{workload_pool(project)}[{namespace}/{account}]"
