"""Checkpoint storage on S3: the bucket (created unless named), locked down, and one role
that the master's and tasks' Kubernetes service accounts assume through EKS Pod Identity,
allowed that bucket (and prefix) only."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws

from components.cluster import checkpoints, name_kept
from components.cluster.eks import iam
from components.cluster.eks.args import EksClusterArgs
from components.config import S3Storage

NONCURRENT_DAYS = 30
PUBLIC_ACCESS_BLOCKED = {
    "block_public_acls": True,
    "block_public_policy": True,
    "ignore_public_acls": True,
    "restrict_public_buckets": True,
}
# Pod Identity binds by association, not annotation; this one only tells readers (and the
# app, which creates the task service accounts when a cluster component binds storage) which role.
ROLE_ANNOTATION = "determined.ai/aws-role"


BUCKET = "aws:s3/bucket:Bucket"


def bucket_name(stack: str, cluster: str, account: str, region: str) -> str:
    """`<stack>-<cluster>-<account>-<region>-checkpoints`: S3 names are global, and a cluster
    name is unique in its account and region (see checkpoints.py)."""
    return checkpoints.bucket_name(stack, cluster, account, region)


def bucket_arn(name: pulumi.Input[str]) -> pulumi.Output[str]:
    return pulumi.Output.concat("arn:aws:s3:::", name)


def tls_only_policy(bucket_arn: pulumi.Input[str]) -> dict[str, Any]:
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "DenyPlainHttp",
                "Effect": "Deny",
                "Principal": "*",
                "Action": "s3:*",
                "Resource": [bucket_arn, pulumi.Output.concat(bucket_arn, "/*")],
                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
            }
        ],
    }


def access_policy(bucket_arn: pulumi.Input[str], storage: S3Storage) -> dict[str, Any]:
    """Objects under the prefix of this one bucket: read, write, delete, list."""
    prefix = storage.prefix.strip("/")
    objects = pulumi.Output.concat(bucket_arn, f"/{prefix}/*" if prefix else "/*")
    listing: dict[str, Any] = {"Effect": "Allow", "Action": ["s3:ListBucket"], "Resource": bucket_arn}
    if prefix:
        listing["Condition"] = {"StringLike": {"s3:prefix": [prefix, f"{prefix}/*"]}}
    return {
        "Version": "2012-10-17",
        "Statement": [
            listing,
            {
                "Effect": "Allow",
                "Action": ["s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"],
                "Resource": objects,
            },
        ],
    }


@dataclass(frozen=True)
class BucketAccess:
    """The checkpoint bucket as the cluster gives it to Determined."""

    # The bucket the cluster created (None: the configured one): the bucket resource's name,
    # which a stack deployed under an older derivation keeps.
    bucket: pulumi.Output[str] | None = None
    # Annotations naming the role the Kubernetes service accounts get (Pod Identity).
    identity: dict[str, pulumi.Input[str]] = field(default_factory=dict)


def binds_bucket(storage: S3Storage | None) -> bool:
    """Whether the cluster creates or binds the bucket: not for an S3-compatible store
    (endpointUrl) or static keys, which have nothing to create or bind on AWS."""
    return storage is not None and not storage.endpoint_url and storage.access_key is None


def checkpoint_bucket(
    args: EksClusterArgs,
    account: str,
    cluster_name: pulumi.Input[str],
    opts: pulumi.ResourceOptions,
    data: pulumi.ResourceOptions,
) -> BucketAccess:
    """The bucket (created unless named; `data`: its options as data), and the role the
    Kubernetes service accounts of checkpoints.kubernetes_accounts get through Pod Identity."""
    cs = args.checkpoint_storage
    assert cs is not None
    created: pulumi.Output[str] | None = None
    name: pulumi.Input[str]
    if cs.bucket:
        name = cs.bucket
    else:
        derived = bucket_name(pulumi.get_stack(), args.cluster.name, account, args.cluster.region)
        # The bucket's own name, not the derived one: a stack made before the derivation
        # changed keeps its bucket (checkpoints.py), and everything names that one.
        name = created = bucket(args, derived, data)
    role = iam.role(
        "storage",
        iam.role_name(args, "checkpoints"),
        iam.POD_IDENTITY_TRUST,
        (),
        opts,
        inline=access_policy(bucket_arn(name), cs),
    )
    for namespace, service_account in checkpoints.kubernetes_accounts(args):
        aws.eks.PodIdentityAssociation(
            f"storage-{namespace}-{service_account}",
            cluster_name=cluster_name,
            namespace=namespace,
            service_account=service_account,
            role_arn=role.arn,
            opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=role.ready)),
        )
    # Pod Identity needs no annotation; the accounts only have to exist (and be used).
    return BucketAccess(created, {ROLE_ANNOTATION: role.arn})


def bucket(args: EksClusterArgs, name: str, data: pulumi.ResourceOptions) -> pulumi.Output[str]:
    """The bucket, named `name` when created, locked down (`data`: its options as data); its
    name (the deployed one) as an output."""
    created = aws.s3.Bucket(
        "checkpoints",
        bucket=name,
        force_destroy=False,
        tags=dict(args.cluster.tags),
        opts=name_kept(checkpoints.bucket_options(args, data), BUCKET, "bucket"),
    )
    part = pulumi.ResourceOptions.merge(data, pulumi.ResourceOptions(depends_on=[created]))
    aws.s3.BucketPublicAccessBlock("checkpoints", bucket=created.id, opts=part, **PUBLIC_ACCESS_BLOCKED)
    aws.s3.BucketOwnershipControls(
        "checkpoints", bucket=created.id, rule={"object_ownership": "BucketOwnerEnforced"}, opts=part
    )
    aws.s3.BucketServerSideEncryptionConfiguration(
        "checkpoints",
        bucket=created.id,
        rules=[
            {
                "apply_server_side_encryption_by_default": {"sse_algorithm": "aws:kms"},
                "bucket_key_enabled": True,
            }
        ],
        opts=part,
    )
    aws.s3.BucketPolicy(
        "checkpoints",
        bucket=created.id,
        policy=pulumi.Output.json_dumps(tls_only_policy(bucket_arn(created.bucket))),
        opts=part,
    )
    if args.environment == "prod":
        aws.s3.BucketVersioning(
            "checkpoints", bucket=created.id, versioning_configuration={"status": "Enabled"}, opts=part
        )
        aws.s3.BucketLifecycleConfiguration(
            "checkpoints",
            bucket=created.id,
            rules=[
                {
                    "id": "noncurrent-versions",
                    "status": "Enabled",
                    "filter": {},
                    "noncurrent_version_expiration": {"noncurrent_days": NONCURRENT_DAYS},
                }
            ],
            opts=part,
        )
    return created.bucket
