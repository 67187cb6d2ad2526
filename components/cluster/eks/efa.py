"""EFA for the pools with `fabric: efa` (EKS): the security group their EFA interfaces share,
a cluster placement group per pool, and AWS's EFA device plugin, which advertises the nodes'
EFA devices as `vpc.amazonaws.com/efa` for task pods to request.

Pure functions give the arguments; `network` registers the AWS side (before the node groups
and Karpenter's node classes that name it), `device_plugin` the chart (after the groups).
Nothing is created when no pool asks for EFA.

The EKS-optimized AL2023 NVIDIA AMI already carries the EFA kernel driver and host software
("EKS-optimized AL2023 accelerated AMIs ... include the host-level components needed for EFA
... do not include the EFA device plugin": EKS user guide, device-management-efa, read 2026-11);
the task images need libfabric and aws-ofi-nccl themselves (docs/clouds/eks.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.addons import release
from components.cluster import namer
from components.cluster.eks.args import EksClusterArgs
from components.config import GPU_TAINT
from components.config.node_pools import EksNodePool

# The chart (repository https://aws.github.io/eks-charts, stable/aws-efa-k8s-device-plugin at
# aws/eks-charts 5239609, 2026-08-03: chart version "v0.5.30" with the "v", app and image
# v0.5.20); value keys in tests/data/chart-keys/aws-efa-k8s-device-plugin-v0.5.30.txt. Pinned
# here rather than in components/versions.py while that file is edited in parallel.
CHART = "aws-efa-k8s-device-plugin"
REPOSITORY = "https://aws.github.io/eks-charts"
VERSION = "v0.5.30"
RELEASE = "aws-efa-k8s-device-plugin"
NAMESPACE = "kube-system"
# The resource the plugin advertises, one per EFA interface (EKS user guide device-management-efa).
EFA_RESOURCE = "vpc.amazonaws.com/efa"

# The tag Karpenter's EC2NodeClasses of EFA pools select the EFA security group by
# (securityGroupSelectorTerms, as network.DISCOVERY_TAG selects the cluster's group).
SECURITY_GROUP_TAG = "determined.ai/efa"
# "All protocols" in a VPC security group rule (pulumi-aws vpc/security_group_ingress_rule.py
# `ip_protocol`: "-1" for all, no ports).
ALL_PROTOCOLS = "-1"
# A placement group that packs the pool's nodes close together in one Availability Zone, for
# the low latency EFA needs (pulumi-aws ec2/placement_group.py `strategy`: cluster, partition,
# spread; EC2 user guide "Placement strategies": a cluster placement group is "a logical grouping
# of instances within a single Availability Zone"), read 2026-11.
PLACEMENT_STRATEGY = "cluster"

# The plugin's image from the EKS registry of the cluster's own region: the chart's default is
# us-west-2's (602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/aws-efa-k8s-device-plugin,
# tests/data/chart-keys/aws-efa-k8s-device-plugin-v0.5.30.txt), which nodes elsewhere pull
# across regions and a cluster reaching ECR only through VPC endpoints cannot pull at all. The
# account per region and the fallbacks are nodeadm's for EKS's own images (`accountsByRegion`,
# `getEKSRegistryCoordinates`: awslabs/amazon-eks-ami@4d8c261
# nodeadm/internal/aws/ecr/ecr.go); China's registries are under amazonaws.com.cn.
IMAGE_PATH = "eks/aws-efa-k8s-device-plugin"
EKS_REGISTRY_ACCOUNT = "602401143452"
EKS_REGISTRY_ACCOUNTS = {
    "af-south-1": "877085696533",
    "ap-east-1": "800184023465",
    "ap-south-2": "900889452093",
    "ap-southeast-3": "296578399912",
    "ap-southeast-4": "491585149902",
    "ap-southeast-5": "151610086707",
    "ca-west-1": "761377655185",
    "cn-north-1": "918309763551",
    "cn-northwest-1": "961992271922",
    "eu-central-2": "900612956339",
    "eu-south-1": "590381155156",
    "eu-south-2": "455263428931",
    "il-central-1": "066635153087",
    "me-central-1": "759879836304",
    "me-south-1": "558608220178",
    "us-gov-east-1": "151742754352",
    "us-gov-west-1": "013241004608",
}
# The regions nodeadm maps to 602401143452 in their own region (the others it does not list
# fall back to us-west-2's registry, or to their partition's for us-gov- and cn-).
EKS_REGISTRY_DEFAULT_REGIONS = frozenset(
    {
        *(f"ap-northeast-{n}" for n in (1, 2, 3)),
        "ap-south-1",
        "ap-southeast-1",
        "ap-southeast-2",
        "ca-central-1",
        "eu-central-1",
        "eu-north-1",
        *(f"eu-west-{n}" for n in (1, 2, 3)),
        "sa-east-1",
        *(f"us-east-{n}" for n in (1, 2)),
        *(f"us-west-{n}" for n in (1, 2)),
    }
)


def image_repository(region: str) -> str:
    """The device plugin's image repository in the EKS registry serving `region`."""
    if region in EKS_REGISTRY_ACCOUNTS:
        account, serving = EKS_REGISTRY_ACCOUNTS[region], region
    elif region in EKS_REGISTRY_DEFAULT_REGIONS:
        account, serving = EKS_REGISTRY_ACCOUNT, region
    elif region.startswith("us-gov-"):
        account, serving = EKS_REGISTRY_ACCOUNTS["us-gov-west-1"], "us-gov-west-1"
    elif region.startswith("cn-"):
        account, serving = EKS_REGISTRY_ACCOUNTS["cn-northwest-1"], "cn-northwest-1"
    else:
        account, serving = EKS_REGISTRY_ACCOUNT, "us-west-2"
    domain = "amazonaws.com.cn" if serving.startswith("cn-") else "amazonaws.com"
    return f"{account}.dkr.ecr.{serving}.{domain}/{IMAGE_PATH}"


def efa_pools(pools: Sequence[EksNodePool]) -> list[EksNodePool]:
    return [pool for pool in pools if pool.fabric == "efa"]


def placement_group_name(args: EksClusterArgs, pool: EksNodePool) -> str:
    """`<cluster>-<pool>`: placement group names are unique per account and region (EC2 API
    CreatePlacementGroup `GroupName`, up to 255 ASCII characters,
    https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_CreatePlacementGroup.html, read
    2026-11), as EKS cluster names are, so the cluster's name makes it unique. Fixed, not
    generated: Karpenter's EC2NodeClass selects the group by it."""
    return f"{args.cluster.name}-{pool.name}"


def security_group_args(args: EksClusterArgs, vpc_id: pulumi.Input[str]) -> dict[str, Any]:
    """The EFA security group, without inline rules (its rules are resources of their own)."""
    return {
        "name": namer(args.cluster).name("aws:ec2/securityGroup:SecurityGroup", "name", "efa"),
        "description": f"EFA of {args.cluster.name}: all traffic to and from itself only",
        "vpc_id": vpc_id,
        "tags": {**args.cluster.tags, SECURITY_GROUP_TAG: args.cluster.name},
    }


def self_rule_args(group_id: pulumi.Input[str]) -> dict[str, Any]:
    """All traffic from (ingress) or to (egress) the group itself and nothing else: what EFA's
    OS-bypass traffic needs ("a security group that allows all inbound and outbound traffic to
    and from the security group itself", EC2 user guide create-efa.md, Considerations, read
    2026-11; AWS PCS and terraform-aws-eks `all_self_efa` do the same)."""
    return {
        "security_group_id": group_id,
        "referenced_security_group_id": group_id,
        "ip_protocol": ALL_PROTOCOLS,
        "description": "EFA: all traffic within the group",
    }


def placement_group_args(args: EksClusterArgs, pool: EksNodePool) -> dict[str, Any]:
    return {
        "name": placement_group_name(args, pool),
        "strategy": PLACEMENT_STRATEGY,
        "tags": dict(args.cluster.tags),
    }


@dataclass(frozen=True)
class EfaNetwork:
    security_group: aws.ec2.SecurityGroup
    placement_groups: dict[str, aws.ec2.PlacementGroup]  # by pool name
    resources: list[pulumi.Resource]  # what the nodes need before they launch


def network(
    args: EksClusterArgs, vpc_id: pulumi.Input[str], opts: pulumi.ResourceOptions
) -> EfaNetwork | None:
    """The EFA security group with its two self rules and a placement group per EFA pool; None
    without EFA pools."""
    pools = efa_pools(args.node_pools)
    if not pools:
        return None
    group = aws.ec2.SecurityGroup("efa", opts=opts, **security_group_args(args, vpc_id))
    ingress = aws.vpc.SecurityGroupIngressRule("efa-self", opts=opts, **self_rule_args(group.id))
    egress = aws.vpc.SecurityGroupEgressRule("efa-self", opts=opts, **self_rule_args(group.id))
    # Its name is fixed (placement_group_name) and unique per account and region: a replacement
    # must delete the old group before it creates the new one, which EC2 would refuse as a
    # duplicate name (CreatePlacementGroup, above) while both exist.
    replace = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(delete_before_replace=True))
    placement = {
        pool.name: aws.ec2.PlacementGroup(
            f"{pool.name}-efa", opts=replace, **placement_group_args(args, pool)
        )
        for pool in pools
    }
    return EfaNetwork(group, placement, [group, ingress, egress, *placement.values()])


def values(node_pools: Sequence[EksNodePool], region: str) -> dict[str, Any]:
    """The plugin on the EFA pools' nodes, its image from the region's EKS registry
    (image_repository; the chart's tag): it tolerates their taints (the GPU taint and the
    pools' own; the chart tolerates only CriticalAddonsOnly, templates/daemonset.yaml, so GPU
    nodes would get no plugin and advertise no EFA), and runs on their instance types only
    (`supportedInstanceLabels.values`, a node affinity on node.kubernetes.io/instance-type; the
    chart's default lists every EFA type, CPU ones too)."""
    pools = efa_pools(node_pools)
    tolerations = [{"key": GPU_TAINT.key, "operator": "Exists", "effect": GPU_TAINT.effect}]
    for pool in pools:
        for taint in pool.all_taints:
            if taint.key != GPU_TAINT.key and taint.toleration not in tolerations:
                tolerations.append(taint.toleration)
    types = sorted({t for pool in pools for t in pool.machine_types})
    return {
        "image": {"repository": image_repository(region)},
        "tolerations": tolerations,
        "supportedInstanceLabels": {"values": types},
    }


def release_args(node_pools: Sequence[EksNodePool], region: str) -> dict[str, Any]:
    return release.release_args(
        RELEASE, CHART, VERSION, NAMESPACE, values(node_pools, region), repository=REPOSITORY
    )


def device_plugin(args: EksClusterArgs, opts: pulumi.ResourceOptions) -> k8s.helm.v3.Release | None:
    """The EFA device plugin's release (`opts`: on the cluster, after the node groups), only
    when a pool asks for EFA."""
    if not efa_pools(args.node_pools):
        return None
    return k8s.helm.v3.Release(RELEASE, opts=opts, **release_args(args.node_pools, args.cluster.region))
