"""Checkpoint storage on GCS: the bucket (created unless named) and the Google service
account that the master's and tasks' Kubernetes service accounts act as (workload
identity): no keys anywhere, and access to this one bucket only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_gcp as gcp

from components.cluster import checkpoints, name_kept
from components.cluster.gke.args import GkeClusterArgs
from components.cluster.gke.cluster import workload_pool
from components.cluster.gke.node_pools import ACCOUNT, account_id

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


def bucket_args(args: GkeClusterArgs, name: str) -> dict[str, Any]:
    prod = args.environment == "prod"
    result: dict[str, Any] = {
        "name": name,
        "location": args.cluster.region.upper(),
        "uniform_bucket_level_access": True,
        "public_access_prevention": "enforced",
        "versioning": {"enabled": prod},
        # Never: a destroy that may delete the bucket (allowDataDeletion) still refuses to
        # delete one that holds checkpoints.
        "force_destroy": False,
        "labels": dict(args.cluster.tags),
    }
    if prod:
        result["lifecycle_rules"] = [
            {
                "action": {"type": "Delete"},
                "condition": {"days_since_noncurrent_time": NONCURRENT_DAYS, "with_state": "ARCHIVED"},
            }
        ]
    return result


def storage_account_args(args: GkeClusterArgs) -> dict[str, Any]:
    return {
        "account_id": account_id(args, "storage"),
        "display_name": f"Determined checkpoints of {args.cluster.name}",
    }


def workload_identity_member(project: str, namespace: str, account: str) -> str:
    """The IAM member that is Kubernetes service account `namespace/account` of this project's clusters."""
    return f"serviceAccount:{workload_pool(project)}[{namespace}/{account}]"


@dataclass(frozen=True)
class BucketAccess:
    """The checkpoint bucket as the cluster gives it to Determined."""

    # The bucket the cluster created (None: the configured one): the bucket resource's name,
    # which a stack deployed under an older derivation keeps.
    bucket: pulumi.Output[str] | None = None
    # Annotations binding a Kubernetes service account to the Google account that reaches it.
    identity: dict[str, pulumi.Input[str]] = field(default_factory=dict)


def checkpoint_bucket(
    args: GkeClusterArgs,
    project: str,
    cluster: pulumi.Resource,
    opts: pulumi.ResourceOptions,
    data: pulumi.ResourceOptions,
) -> BucketAccess:
    """The bucket (created unless named; `data`: its options as data) and the Google account
    the Kubernetes service accounts of checkpoints.kubernetes_accounts act as."""
    assert args.checkpoint_storage is not None
    configured = args.checkpoint_storage.bucket
    created: pulumi.Output[str] | None = None
    if configured:
        name: pulumi.Input[str] = configured
    else:
        derived = bucket_name(project, pulumi.get_stack(), args.cluster.name, args.cluster.region)
        # The bucket's own name, not the derived one: a stack made before the derivation
        # changed keeps its bucket (components/cluster/checkpoints.py), and everything names
        # that one.
        name = created = gcp.storage.Bucket(
            "checkpoints",
            opts=name_kept(checkpoints.bucket_options(args, data), BUCKET, "name"),
            **bucket_args(args, derived),
        ).name
    account = gcp.serviceaccount.Account(
        "storage", opts=name_kept(opts, ACCOUNT, "accountId"), **storage_account_args(args)
    )
    gcp.storage.BucketIAMMember(
        "storage-objects", bucket=name, role=STORAGE_ROLE, member=account.member, opts=opts
    )
    for namespace, ksa in checkpoints.kubernetes_accounts(args):
        gcp.serviceaccount.IAMMember(
            f"storage-{namespace}-{ksa}",
            service_account_id=account.name,
            role=WORKLOAD_IDENTITY_ROLE,
            member=workload_identity_member(project, namespace, ksa),
            # The identity pool <project>.svc.id.goog exists once a cluster uses it.
            opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[cluster])),
        )
    return BucketAccess(created, {ANNOTATION: account.email})
