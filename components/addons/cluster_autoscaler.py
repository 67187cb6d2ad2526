"""The Kubernetes cluster-autoscaler (EKS), from its official chart: grows node groups
from zero when pods wait, shrinks them when nodes idle.

It finds the groups by the tags EKS puts on their Auto Scaling groups and, at zero nodes,
learns what a group offers from the node-template tags (components/cluster/eks/node_groups.py).
Its AWS permissions come through EKS Pod Identity: describe everything, change only the
Auto Scaling groups of this cluster.
"""

from __future__ import annotations

from typing import Any

import pulumi

from components import versions
from components.addons import release

NAMESPACE = "kube-system"
SERVICE_ACCOUNT = "cluster-autoscaler"

# The Auto Scaling groups it may resize: those of this cluster (the tag EKS puts on them) in
# the cluster's region and account. The tag alone would also match a cluster of the same name
# in another region of the account. ARN form from the autoscaler's minimal policy
# (kubernetes/autoscaler cluster-autoscaler/cloudprovider/aws/README.md, "Minimal IAM
# Permissions Policy": arn:aws:autoscaling:REGION:ACCOUNT:autoScalingGroup:*:autoScalingGroupName/NAME;
# read 2026-11-25), with any group name.
ASG_ARN = "arn:aws:autoscaling:{region}:{account}:autoScalingGroup:*:autoScalingGroupName/*"


def iam_policy(cluster: str, region: str, account: str) -> dict[str, Any]:
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": [
                    "autoscaling:DescribeAutoScalingGroups",
                    "autoscaling:DescribeAutoScalingInstances",
                    "autoscaling:DescribeLaunchConfigurations",
                    "autoscaling:DescribeScalingActivities",
                    "autoscaling:DescribeTags",
                    "ec2:DescribeImages",
                    "ec2:DescribeInstanceTypes",
                    "ec2:DescribeLaunchTemplateVersions",
                    "ec2:GetInstanceTypesFromInstanceRequirements",
                    "eks:DescribeNodegroup",
                ],
                "Resource": "*",
            },
            {
                "Effect": "Allow",
                "Action": [
                    "autoscaling:SetDesiredCapacity",
                    "autoscaling:TerminateInstanceInAutoScalingGroup",
                ],
                "Resource": ASG_ARN.format(region=region, account=account),
                # EKS tags the Auto Scaling groups of its managed node groups so.
                "Condition": {
                    "StringEquals": {f"aws:ResourceTag/k8s.io/cluster-autoscaler/{cluster}": "owned"}
                },
            },
        ],
    }


def image_tag(kubernetes_version: pulumi.Input[str]) -> pulumi.Input[str]:
    """The autoscaler release for the cluster's minor (the chart defaults to its own newest).
    Given the cluster's reported version, an unpinned cluster gets the autoscaler of the
    version it runs, not of the default a new cluster would get."""
    if isinstance(kubernetes_version, str):
        return versions.cluster_autoscaler_image(kubernetes_version)
    return pulumi.Output.from_input(kubernetes_version).apply(versions.cluster_autoscaler_image)


def values(cluster: str, region: str, kubernetes_version: pulumi.Input[str]) -> dict[str, Any]:
    return {
        "cloudProvider": "aws",
        "awsRegion": region,
        "autoDiscovery": {"clusterName": cluster},
        "image": {"tag": image_tag(kubernetes_version)},
        "rbac": {"serviceAccount": {"create": True, "name": SERVICE_ACCOUNT}},
        "extraArgs": {
            "balance-similar-node-groups": True,
            # The group that wastes the least of what it would add: GPUs stay for GPU tasks.
            "expander": "least-waste",
            "scale-down-unneeded-time": "10m",
        },
    }


def release_args(cluster: str, region: str, kubernetes_version: pulumi.Input[str]) -> dict[str, Any]:
    return release.release_args(
        "cluster-autoscaler",
        versions.CLUSTER_AUTOSCALER_CHART,
        versions.CLUSTER_AUTOSCALER_VERSION,
        NAMESPACE,
        values(cluster, region, kubernetes_version),
        repository=versions.CLUSTER_AUTOSCALER_REPOSITORY,
    )
