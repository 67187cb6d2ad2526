"""EKS managed node groups from `determined:nodePools`, and the tags that let the
cluster-autoscaler grow a group from zero.

CPU groups run the AL2023 standard AMI, GPU groups the AL2023 NVIDIA AMI (driver and
container toolkit built in). At zero nodes the autoscaler cannot look at a node to learn
what a group offers; it reads `k8s.io/cluster-autoscaler/node-template/...` tags on the
group's Auto Scaling group instead. EKS does not copy node-group tags to the ASG, so each
tag is put there with its own `aws.autoscaling.Tag`.
"""

from __future__ import annotations

from typing import Any

import pulumi

from deploy.addons.nvidia_device_plugin import GPU_PRESENT_LABEL
from deploy.config import EksStack
from deploy.config.node_pools import EksNodePool

AMI_CPU = "AL2023_x86_64_STANDARD"
AMI_GPU = "AL2023_x86_64_NVIDIA"
TEMPLATE = "k8s.io/cluster-autoscaler/node-template"


def node_labels(pool: EksNodePool) -> dict[str, str]:
    labels = dict(pool.node_labels)
    if pool.gpu:
        # What NVIDIA's device plugin looks for without node-feature-discovery.
        labels[GPU_PRESENT_LABEL] = "true"
    return labels


def node_group_args(
    cfg: EksStack,
    pool: EksNodePool,
    cluster_name: pulumi.Input[str],
    node_role_arn: pulumi.Input[str],
    subnet_ids: list[pulumi.Input[str]],
) -> dict[str, Any]:
    return {
        "cluster_name": cluster_name,
        "node_group_name": pool.name,
        "node_role_arn": node_role_arn,
        "subnet_ids": subnet_ids,
        "ami_type": AMI_GPU if pool.gpu else AMI_CPU,
        "instance_types": [pool.machine_type],
        "capacity_type": "SPOT" if pool.spot else "ON_DEMAND",
        "disk_size": pool.disk_size_gb,
        # Only read at creation: later sizes are the autoscaler's (ignore_changes).
        "scaling_config": {
            "min_size": pool.min_nodes,
            "max_size": pool.max_nodes,
            "desired_size": pool.min_nodes,
        },
        "update_config": {"max_unavailable": 1},
        "labels": node_labels(pool),
        "taints": [t.node_taint for t in pool.all_taints],
        "tags": dict(cfg.cluster.tags),
    }


def node_template_tags(pool: EksNodePool) -> dict[str, str]:
    """What a node of the group will offer, for the autoscaler to plan with at zero nodes."""
    tags = {f"{TEMPLATE}/label/{key}": value for key, value in node_labels(pool).items()}
    tags |= {f"{TEMPLATE}/taint/{t.key}": f"{t.value}:{t.effect}" for t in pool.all_taints}
    if pool.gpu:
        tags[f"{TEMPLATE}/resources/nvidia.com/gpu"] = str(pool.gpu.count)
    return tags
