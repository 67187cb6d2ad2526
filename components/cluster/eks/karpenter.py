"""Karpenter on EKS (`cluster.autoscaler: karpenter`): the controller from its official chart on
the system node group, its AWS identity through EKS Pod Identity, the interruption queue with
the EventBridge rules feeding it, the role Karpenter's nodes run as (with the access entry that
lets them join), and the discovery tag on the cluster security group; then each pool's
NodePool and EC2NodeClass (components/cluster/eks/karpenter_nodes.py).

Everything AWS-side follows upstream's CloudFormation template for v1.x (UPSTREAM): the same
policies scoped to this cluster, the same queue and rules, under this project's names. The
system pool (DeploymentViews.master_node_pool) stays a managed node group: Karpenter, CoreDNS
and the add-ons run there before anything scales.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components import kube, versions
from components.addons import release
from components.cluster import namer
from components.cluster.eks import efa, iam, karpenter_nodes, network
from components.cluster.eks.args import EksClusterArgs
from components.config.node_pools import EksNodePool

# aws/karpenter-provider-aws@v1.14.1 (bde0065): the template the getting-started guide deploys
# beside the chart; website/content/en/docs/reference/cloudformation.md explains each part.
UPSTREAM = (
    "aws/karpenter-provider-aws@v1.14.1:website/content/en/docs/getting-started/"
    "getting-started-with-karpenter/cloudformation.yaml"
)

# kube-system, as upstream's guides install it (KARPENTER_NAMESPACE="kube-system": getting-started
# _index.md:50, migrating-from-cas _index.md:25 at the tag), beside the cluster-autoscaler it
# replaces; its chart runs at priority system-cluster-critical and needs no namespace of its own.
NAMESPACE = "kube-system"
SERVICE_ACCOUNT = "karpenter"  # the chart's name for it (templates/_helpers.tpl serviceAccountName)
RELEASE = "karpenter"
CRD_RELEASE = "karpenter-crd"

# The interruption queue: messages kept 300 s, SSE with SQS-managed keys (UPSTREAM:385-386).
QUEUE_RETENTION_SECONDS = 300
# EventBridge events Karpenter acts on, by rule purpose (UPSTREAM:410-464): it cordons and drains
# a node before AWS takes it back (spot interruption, reservation end, scheduled maintenance) and
# forgets instances that stopped or terminated.
INTERRUPTION_EVENTS: dict[str, dict[str, list[str]]] = {
    "scheduled-change": {"source": ["aws.health"], "detail-type": ["AWS Health Event"]},
    "spot-interruption": {"source": ["aws.ec2"], "detail-type": ["EC2 Spot Instance Interruption Warning"]},
    "rebalance": {"source": ["aws.ec2"], "detail-type": ["EC2 Instance Rebalance Recommendation"]},
    "state-change": {"source": ["aws.ec2"], "detail-type": ["EC2 Instance State-change Notification"]},
    "reservation-interruption": {
        "source": ["aws.ec2"],
        "detail-type": ["EC2 Capacity Reservation Instance Interruption Warning"],
    },
}
TARGET_ID = "KarpenterInterruptionQueueTarget"  # UPSTREAM:419

# Nodes join with an access entry of this type on their role: "If the principalArn is for an IAM
# role that's used for self-managed Amazon EC2 nodes, specify EC2_LINUX ... Amazon EKS grants the
# necessary permissions" (https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateAccessEntry.html).
# The cluster authenticates with access entries only (cluster.py cluster_args: authentication_mode
# API), and EKS makes the managed groups' entries itself; "An IAM principal can't be included in
# more than one access entry" (https://docs.aws.amazon.com/eks/latest/userguide/creating-access-entries.html),
# so Karpenter's nodes get a role of their own rather than the groups'.
NODE_ACCESS_TYPE = "EC2_LINUX"
# The node role's policies: the managed groups' (iam.NODE_POLICIES). Upstream's KarpenterNodeRole
# (UPSTREAM:22-26) adds AmazonEKS_CNI_Policy, which here is on the VPC CNI's own Pod Identity role
# (its aws-node DaemonSet runs on these nodes too), and AmazonSSMManagedInstanceCore, for Session
# Manager shells, which joining and running pods do not need.
NODE_POLICIES = iam.NODE_POLICIES
# Karpenter makes the nodes' instance profile itself from EC2NodeClass spec.role ("Generated
# instance profile name from role"; `instanceProfile` instead means one managed by the user:
# website/content/en/docs/concepts/nodeclasses.md:240,735 at the tag): none is created here.


def serves(args: EksClusterArgs, pool: EksNodePool) -> bool:
    """Karpenter makes this pool's nodes: with cluster.autoscaler karpenter, every pool but the
    system one (the master's pool), which stays a managed node group."""
    if args.cluster.autoscaler != "karpenter":
        return False
    system = args.master_pool
    return system is None or pool.name != system.name


def karpenter_pools(args: EksClusterArgs) -> list[EksNodePool]:
    return [pool for pool in args.node_pools if serves(args, pool)]


def group_pools(args: EksClusterArgs) -> list[EksNodePool]:
    """The pools that are managed node groups."""
    return [pool for pool in args.node_pools if not serves(args, pool)]


def needs_cluster_autoscaler(args: EksClusterArgs) -> bool:
    """A managed node group that can grow or shrink: the cluster-autoscaler sizes it. Karpenter
    leaves managed groups alone, so with karpenter only a system group of several sizes needs it."""
    return any(pool.max_nodes > pool.min_nodes for pool in group_pools(args))


def controller_policy(
    cluster: str,
    region: str,
    account: str,
    node_role_arn: pulumi.Input[str],
    queue_arn: pulumi.Input[str],
) -> dict[str, Any]:
    """The controller's permissions: the statements of upstream's six policies (UPSTREAM:27-380,
    NodeLifecycle, IAMIntegration, EKSIntegration, Interruption, ZonalShift, ResourceDiscovery),
    with their conditions, for this cluster, region and account, in partition aws."""
    ec2 = f"arn:aws:ec2:{region}"
    owned = {f"aws:ResourceTag/kubernetes.io/cluster/{cluster}": "owned"}
    request_owned = {
        f"aws:RequestTag/kubernetes.io/cluster/{cluster}": "owned",
        "aws:RequestTag/eks:eks-cluster-name": cluster,
    }
    nodepool = {"aws:ResourceTag/karpenter.sh/nodepool": "*"}
    launched = [
        f"{ec2}:*:{kind}/*"
        for kind in (
            "fleet",
            "instance",
            "volume",
            "network-interface",
            "launch-template",
            "spot-instances-request",
        )
    ]
    profiles = f"arn:aws:iam::{account}:instance-profile/*"
    region_tag = {"aws:ResourceTag/topology.kubernetes.io/region": region}
    request_profile = {**request_owned, "aws:RequestTag/topology.kubernetes.io/region": region}
    nodeclass = "karpenter.k8s.aws/ec2nodeclass"
    cluster_arn = f"arn:aws:eks:{region}:{account}:cluster/{cluster}"
    statements: list[dict[str, Any]] = [
        # NodeLifecyclePolicy
        {
            "Sid": "AllowScopedEC2InstanceAccessActions",
            "Effect": "Allow",
            "Resource": [
                f"{ec2}::image/*",
                f"{ec2}::snapshot/*",
                f"{ec2}:*:security-group/*",
                f"{ec2}:*:subnet/*",
                f"{ec2}:*:capacity-reservation/*",
                f"{ec2}:*:placement-group/*",
            ],
            "Action": ["ec2:RunInstances", "ec2:CreateFleet"],
        },
        {
            "Sid": "AllowScopedEC2LaunchTemplateAccessActions",
            "Effect": "Allow",
            "Resource": f"{ec2}:*:launch-template/*",
            "Action": ["ec2:RunInstances", "ec2:CreateFleet"],
            "Condition": {"StringEquals": owned, "StringLike": nodepool},
        },
        {
            "Sid": "AllowScopedEC2InstanceActionsWithTags",
            "Effect": "Allow",
            "Resource": launched,
            "Action": ["ec2:RunInstances", "ec2:CreateFleet", "ec2:CreateLaunchTemplate"],
            "Condition": {
                "StringEquals": request_owned,
                "StringLike": {"aws:RequestTag/karpenter.sh/nodepool": "*"},
            },
        },
        {
            "Sid": "AllowScopedResourceCreationTagging",
            "Effect": "Allow",
            "Resource": launched,
            "Action": "ec2:CreateTags",
            "Condition": {
                "StringEquals": {
                    **request_owned,
                    "ec2:CreateAction": ["RunInstances", "CreateFleet", "CreateLaunchTemplate"],
                },
                "StringLike": {"aws:RequestTag/karpenter.sh/nodepool": "*"},
            },
        },
        {
            "Sid": "AllowScopedResourceTagging",
            "Effect": "Allow",
            "Resource": f"{ec2}:*:instance/*",
            "Action": "ec2:CreateTags",
            "Condition": {
                "StringEquals": owned,
                "StringLike": nodepool,
                "StringEqualsIfExists": {"aws:RequestTag/eks:eks-cluster-name": cluster},
                "ForAllValues:StringEquals": {
                    "aws:TagKeys": ["eks:eks-cluster-name", "karpenter.sh/nodeclaim", "Name"]
                },
            },
        },
        {
            "Sid": "AllowScopedDeletion",
            "Effect": "Allow",
            "Resource": [f"{ec2}:*:instance/*", f"{ec2}:*:launch-template/*"],
            "Action": ["ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"],
            "Condition": {"StringEquals": owned, "StringLike": nodepool},
        },
        # IAMIntegrationPolicy
        {
            "Sid": "AllowPassingInstanceRole",
            "Effect": "Allow",
            "Resource": node_role_arn,
            "Action": "iam:PassRole",
            "Condition": {
                "StringEquals": {"iam:PassedToService": ["ec2.amazonaws.com", "ec2.amazonaws.com.cn"]}
            },
        },
        {
            "Sid": "AllowScopedInstanceProfileCreationActions",
            "Effect": "Allow",
            "Resource": profiles,
            "Action": ["iam:CreateInstanceProfile"],
            "Condition": {
                "StringEquals": request_profile,
                "StringLike": {f"aws:RequestTag/{nodeclass}": "*"},
            },
        },
        {
            "Sid": "AllowScopedInstanceProfileTagActions",
            "Effect": "Allow",
            "Resource": profiles,
            "Action": ["iam:TagInstanceProfile"],
            "Condition": {
                "StringEquals": {**owned, **region_tag, **request_profile},
                "StringLike": {f"aws:ResourceTag/{nodeclass}": "*", f"aws:RequestTag/{nodeclass}": "*"},
            },
        },
        {
            "Sid": "AllowScopedInstanceProfileActions",
            "Effect": "Allow",
            "Resource": profiles,
            "Action": [
                "iam:AddRoleToInstanceProfile",
                "iam:RemoveRoleFromInstanceProfile",
                "iam:DeleteInstanceProfile",
            ],
            "Condition": {
                "StringEquals": {**owned, **region_tag},
                "StringLike": {f"aws:ResourceTag/{nodeclass}": "*"},
            },
        },
        # EKSIntegrationPolicy
        {
            "Sid": "AllowAPIServerEndpointDiscovery",
            "Effect": "Allow",
            "Resource": cluster_arn,
            "Action": "eks:DescribeCluster",
        },
        # InterruptionPolicy
        {
            "Sid": "AllowInterruptionQueueActions",
            "Effect": "Allow",
            "Resource": queue_arn,
            "Action": ["sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"],
        },
        # ZonalShiftPolicy
        {
            "Sid": "AllowZonalShiftStatusReadOnly",
            "Effect": "Allow",
            "Resource": "*",
            "Action": ["arc-zonal-shift:GetManagedResource"],
            "Condition": {"StringEquals": {"arc-zonal-shift:ResourceIdentifier": cluster_arn}},
        },
        # ResourceDiscoveryPolicy
        {
            "Sid": "AllowRegionalReadActions",
            "Effect": "Allow",
            "Resource": "*",
            "Action": [
                "ec2:DescribeCapacityReservations",
                "ec2:DescribeImages",
                "ec2:DescribeInstances",
                "ec2:DescribeInstanceStatus",
                "ec2:DescribeInstanceTypeOfferings",
                "ec2:DescribeInstanceTypes",
                "ec2:DescribeLaunchTemplates",
                "ec2:DescribePlacementGroups",
                "ec2:DescribeSecurityGroups",
                "ec2:DescribeSpotPriceHistory",
                "ec2:DescribeSubnets",
            ],
            "Condition": {"StringEquals": {"aws:RequestedRegion": region}},
        },
        {
            "Sid": "AllowSSMReadActions",
            "Effect": "Allow",
            "Resource": f"arn:aws:ssm:{region}::parameter/aws/service/*",
            "Action": "ssm:GetParameter",
        },
        {
            "Sid": "AllowPricingReadActions",
            "Effect": "Allow",
            "Resource": "*",
            "Action": "pricing:GetProducts",
        },
        {
            "Sid": "AllowUnscopedInstanceProfileListAction",
            "Effect": "Allow",
            "Resource": "*",
            "Action": "iam:ListInstanceProfiles",
        },
        {
            "Sid": "AllowInstanceProfileReadActions",
            "Effect": "Allow",
            "Resource": profiles,
            "Action": "iam:GetInstanceProfile",
        },
    ]
    return {"Version": "2012-10-17", "Statement": statements}


def queue_policy(queue_arn: pulumi.Input[str]) -> dict[str, Any]:
    """EventBridge (and SQS) may send to the queue; nothing reaches it without TLS (UPSTREAM:387-409)."""
    return {
        "Version": "2012-10-17",
        "Id": "EC2InterruptionPolicy",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]},
                "Action": "sqs:SendMessage",
                "Resource": queue_arn,
            },
            {
                "Sid": "DenyHTTP",
                "Effect": "Deny",
                "Action": "sqs:*",
                "Resource": queue_arn,
                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                "Principal": "*",
            },
        ],
    }


QUEUE = "aws:sqs/queue:Queue"
RULE = "aws:cloudwatch/eventRule:EventRule"


def queue_name(args: EksClusterArgs) -> str:
    return namer(args.cluster).name(QUEUE, "name", "karpenter")


def rule_name(args: EksClusterArgs, purpose: str) -> str:
    return namer(args.cluster).name(RULE, "name", f"karpenter-{purpose}")


def queue_args(args: EksClusterArgs) -> dict[str, Any]:
    return {
        "name": queue_name(args),
        "message_retention_seconds": QUEUE_RETENTION_SECONDS,
        "sqs_managed_sse_enabled": True,
        "tags": dict(args.cluster.tags),
    }


def replicas(args: EksClusterArgs) -> int:
    """Two controllers (the chart's default, one the leader) when the system group keeps two
    nodes: the chart's required pod anti-affinity on kubernetes.io/hostname (values.yaml
    `affinity`) puts them on different nodes, so on a one-node group the second would wait
    forever, or make the cluster-autoscaler buy a node for it. One otherwise: a restarted
    controller resumes from the cluster's objects."""
    system = args.master_pool
    return 2 if system is not None and system.min_nodes >= 2 else 1


def values(args: EksClusterArgs, queue: str) -> dict[str, Any]:
    """The chart's values (keys: tests/data/chart-keys/karpenter-1.14.1.txt). The controller
    runs on the system group (its pool label; the chart's own affinity already keeps it off
    Karpenter's nodes), finds the cluster by name (eks:DescribeCluster) and reads `queue`. The
    service account carries no role annotation: Pod Identity binds it by name."""
    system = args.master_pool
    selector = {"kubernetes.io/os": "linux"}
    if system is not None:
        selector |= system.selector
    return {
        "replicas": replicas(args),
        "nodeSelector": selector,
        "serviceAccount": {"create": True, "name": SERVICE_ACCOUNT},
        "settings": {"clusterName": args.cluster.name, "interruptionQueue": queue},
    }


def release_args(args: EksClusterArgs) -> dict[str, Any]:
    """The controller's chart, without its crds/ (the CRD chart's, crd_release_args)."""
    return release.release_args(
        RELEASE,
        versions.KARPENTER_CHART,
        versions.KARPENTER_VERSION,
        NAMESPACE,
        values(args, queue_name(args)),
        skip_crds=True,
    )


def crd_release_args() -> dict[str, Any]:
    """Karpenter's CRDs (NodePool, EC2NodeClass, NodeClaim, ...) as a release of their own, at
    the controller's version: Helm upgrades templates, never a chart's crds/ directory, so a
    new Karpenter gets its new CRDs with it."""
    return release.release_args(
        CRD_RELEASE, versions.KARPENTER_CRD_CHART, versions.KARPENTER_VERSION, NAMESPACE, {}
    )


@dataclass(frozen=True)
class Karpenter:
    release: k8s.helm.v3.Release
    node_role: iam.Role
    objects: list[pulumi.Resource]


def karpenter(
    args: EksClusterArgs,
    cluster: aws.eks.Cluster,
    account: str,
    system_groups: list[pulumi.Resource],
    opts: pulumi.ResourceOptions,
    kube_opts: pulumi.ResourceOptions,
    fabric: efa.EfaNetwork | None = None,
) -> Karpenter:
    """Karpenter's AWS side (`opts`), its release once the system groups run (`kube_opts`), and
    each Karpenter pool's NodePool and EC2NodeClass once the release has brought their CRDs (and
    `fabric`, the EFA security group and placement groups EFA pools' node classes name, exists)."""
    name, region = args.cluster.name, args.cluster.region
    queue = aws.sqs.Queue("karpenter", opts=opts, **queue_args(args))
    aws.sqs.QueuePolicy(
        "karpenter",
        queue_url=queue.id,  # the provider's id of a queue is its URL
        policy=pulumi.Output.json_dumps(queue_policy(queue.arn)),
        opts=opts,
    )
    for purpose, pattern in INTERRUPTION_EVENTS.items():
        rule = aws.cloudwatch.EventRule(
            f"karpenter-{purpose}",
            name=rule_name(args, purpose),
            event_pattern=pulumi.Output.json_dumps(pattern),
            tags=dict(args.cluster.tags),
            opts=opts,
        )
        aws.cloudwatch.EventTarget(
            f"karpenter-{purpose}", rule=rule.name, arn=queue.arn, target_id=TARGET_ID, opts=opts
        )

    node_role = iam.role(
        "karpenter-nodes",
        iam.role_name(args, "karpenter-nodes"),
        iam.trust("ec2.amazonaws.com"),
        NODE_POLICIES,
        opts,
    )
    node_access = aws.eks.AccessEntry(
        "karpenter-nodes",
        cluster_name=cluster.name,
        principal_arn=node_role.arn,
        type=NODE_ACCESS_TYPE,
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=node_role.ready)),
    )
    # The security group EKS made for the cluster (the managed groups' nodes use it too): Karpenter's
    # EC2NodeClasses find it by this tag. EKS made it for this cluster only, so the tag is ours.
    aws.ec2.Tag(
        "karpenter-discovery",
        resource_id=cluster.vpc_config.cluster_security_group_id,
        key=network.DISCOVERY_TAG,
        value=name,
        opts=opts,
    )

    controller = iam.role(
        "karpenter",
        iam.role_name(args, "karpenter"),
        iam.POD_IDENTITY_TRUST,
        (),
        opts,
        inline=controller_policy(name, region, account, node_role.arn, queue.arn),
    )
    association = aws.eks.PodIdentityAssociation(
        "karpenter",
        cluster_name=cluster.name,
        namespace=NAMESPACE,
        service_account=SERVICE_ACCOUNT,
        role_arn=controller.arn,
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=controller.ready)),
    )
    crds = k8s.helm.v3.Release(CRD_RELEASE, opts=kube_opts, **crd_release_args())
    chart = k8s.helm.v3.Release(
        RELEASE,
        opts=pulumi.ResourceOptions.merge(
            kube_opts, pulumi.ResourceOptions(depends_on=[*system_groups, association, queue, crds])
        ),
        **release_args(args),
    )
    # Nodes may launch as soon as a NodePool exists: their role must be able to join by then.
    fabric_resources = fabric.resources if fabric is not None else []
    after = pulumi.ResourceOptions.merge(
        kube_opts, pulumi.ResourceOptions(depends_on=[chart, node_access, *fabric_resources])
    )
    role_name = iam.role_name(args, "karpenter-nodes")
    objects = [
        kube.register(obj, after)
        for pool in karpenter_pools(args)
        for obj in karpenter_nodes.objects(args, pool, role_name)
    ]
    return Karpenter(chart, node_role, objects)
