"""IAM for the cluster, least privilege: each actor gets its own role with AWS's managed
policy for exactly its job, or an inline policy limited to its resources.

Pods get AWS access only through EKS Pod Identity (a role trusting pods.eks.amazonaws.com,
associated with one namespace/service account): no access keys, nothing on the node role.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws

from components.cluster import name_kept, namer
from components.cluster.eks.args import EksClusterArgs

AWS_POLICY = "arn:aws:iam::aws:policy/"
CLUSTER_POLICIES = ("AmazonEKSClusterPolicy",)
# The VPC CNI's AmazonEKS_CNI_Policy is on the CNI's own role, not here.
NODE_POLICIES = ("AmazonEKSWorkerNodePolicy", "AmazonEC2ContainerRegistryPullOnly")
CNI_POLICIES = ("AmazonEKS_CNI_Policy",)
EBS_CSI_POLICIES = ("service-role/AmazonEBSCSIDriverPolicy",)


def trust(service: str, actions: tuple[str, ...] = ("sts:AssumeRole",)) -> dict[str, Any]:
    """A trust policy letting `service` assume the role."""
    return {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"Service": service}, "Action": list(actions)}],
    }


# EKS Pod Identity assumes roles with session tags.
POD_IDENTITY_TRUST = trust("pods.eks.amazonaws.com", ("sts:AssumeRole", "sts:TagSession"))


@dataclass(frozen=True)
class Role:
    """A role and what grants it its permissions. Whoever uses the role depends on all of
    them (`ready`): EKS needs the permissions while it creates and deletes what it manages."""

    role: aws.iam.Role
    grants: list[pulumi.Resource]

    @property
    def arn(self) -> pulumi.Output[str]:
        return self.role.arn

    @property
    def ready(self) -> list[pulumi.Resource]:
        return [self.role, *self.grants]


def role(
    name: str,
    role_name: str,
    assume: dict[str, Any],
    managed: tuple[str, ...],
    opts: pulumi.ResourceOptions,
    inline: dict[str, Any] | None = None,
) -> Role:
    """A role with AWS managed policies attached (by name) and an optional inline policy
    (which may hold outputs, such as the ARN of a resource created beside it)."""
    created = aws.iam.Role(
        name, name=role_name, assume_role_policy=json.dumps(assume), opts=name_kept(opts, ROLE, "name")
    )
    child = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[created]))
    grants: list[pulumi.Resource] = [
        aws.iam.RolePolicyAttachment(
            f"{name}-{policy.rsplit('/', 1)[-1]}",
            role=created.name,
            policy_arn=AWS_POLICY + policy,
            opts=child,
        )
        for policy in managed
    ]
    if inline is not None:
        grants.append(
            aws.iam.RolePolicy(name, role=created.id, policy=pulumi.Output.json_dumps(inline), opts=child)
        )
    return Role(created, grants)


def secrets_key_policy(key_arn: pulumi.Input[str]) -> dict[str, Any]:
    """What the cluster role needs of the KMS key that encrypts Kubernetes secrets."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": ["kms:Encrypt", "kms:Decrypt", "kms:ListGrants", "kms:DescribeKey"],
                "Resource": key_arn,
            }
        ],
    }


ROLE = "aws:iam/role:Role"


def role_name(args: EksClusterArgs, purpose: str) -> str:
    """A role name for `purpose`, unique in the account across regions (components.names)."""
    return namer(args.cluster).name(ROLE, "name", purpose)
