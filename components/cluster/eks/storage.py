"""Checkpoint storage on S3: the bucket (created unless named), locked down, and one role
that the master's and tasks' Kubernetes service accounts assume through EKS Pod Identity,
allowed that bucket (and prefix) only."""

from __future__ import annotations

from typing import Any

import pulumi

from components.cluster import checkpoints
from components.config import S3Storage

NONCURRENT_DAYS = 30
PUBLIC_ACCESS_BLOCKED = {
    "block_public_acls": True,
    "block_public_policy": True,
    "ignore_public_acls": True,
    "restrict_public_buckets": True,
}
# Pod Identity binds by association, not annotation; this one only tells readers (and the
# app, which creates the task service accounts when a platform binds storage) which role.
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
