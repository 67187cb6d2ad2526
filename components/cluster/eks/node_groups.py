"""EKS managed node groups from `determined:nodePools`, and the tags the stack puts on each
group's Auto Scaling group: the node-template tags that let the cluster-autoscaler grow a
group from zero, and `cluster.tags`, propagated to the group's instances.

CPU groups run the AL2023 standard AMI, GPU groups the AL2023 NVIDIA AMI (driver and
container toolkit built in). At zero nodes the autoscaler cannot look at a node to learn
what a group offers; it reads `k8s.io/cluster-autoscaler/node-template/...` tags on the
group's Auto Scaling group instead. EKS copies node group tags neither to the Auto Scaling
group nor to its instances ("Tags don't propagate to any other cluster or Amazon Web Services
resources", CreateNodegroup `tags`), so each tag is put there with its own `aws.autoscaling.Tag`.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.addons import cluster_autoscaler
from components.addons.nvidia_device_plugin import GPU_PRESENT_LABEL
from components.cluster.eks import efa, iam, launch_templates
from components.cluster.eks.args import EksClusterArgs
from components.config import eks_instances
from components.config.eks import ACCELERATOR_LABEL, AUTOSCALER_TEMPLATE
from components.config.node_pools import EksNodePool

# What a managed node group changes in place; any other input replaces the group (its instance
# types, AMI type, capacity type, disk size, subnets, role and launch template: EKS creates a
# group with them). Source: Amazon EKS API reference, UpdateNodegroupConfig (labels, taints,
# scalingConfig, updateConfig), https://docs.aws.amazon.com/eks/latest/APIReference/API_UpdateNodegroupConfig.html,
# UpdateNodegroupVersion for the Kubernetes version (new nodes of the new version's AMI replace
# the old ones, the group stays), https://docs.aws.amazon.com/eks/latest/APIReference/API_UpdateNodegroupVersion.html,
# and TagResource for tags (read 2026-11-25); the provider marks the others ForceNew
# (hashicorp/terraform-provider-aws internal/service/eks/node_group.go, under pulumi-aws).
# node_repair_config too: UpdateNodegroupConfig takes nodeRepairConfig, and CloudFormation says
# "Update requires: No interruption" for each of its fields (https://docs.aws.amazon.com/
# AWSCloudFormation/latest/TemplateReference/aws-properties-eks-nodegroup-noderepairconfig.html,
# read 2026-11-26).
IN_PLACE_INPUTS = (
    "labels",
    "taints",
    "scaling_config",
    "update_config",
    "node_repair_config",
    "tags",
    "version",
)

# The desired size belongs to the cluster-autoscaler after creation: `pulumi up` ignores it
# (ignore_changes) and so sends the value in the stack's state whenever scalingConfig changes
# (minNodes, maxNodes). That value is the live one only after a refresh: Pulumi.yaml sets
# `options.refresh: always` (see the source there). EKS still refuses a minNodes above the
# group's current desired size ("Minimum capacity N can't be greater than desired size M",
# UpdateNodegroupConfig; terraform-aws-modules/terraform-aws-eks#944 and #3306 show the same
# with Terraform, which refreshes): raising minNodes above the running node count needs the
# desired size raised first (docs/clouds/eks.md, node groups).
DESIRED_SIZE = "scalingConfig.desiredSize"
PROJECT_REFRESH = "always"

AMI_CPU = "AL2023_x86_64_STANDARD"
AMI_GPU = "AL2023_x86_64_NVIDIA"
TEMPLATE = AUTOSCALER_TEMPLATE


# EC2 offers an instance type in some availability zones only, and a node group with a subnet
# in a zone that lacks its type cannot launch nodes there (EC2 "Find an Amazon EC2 instance
# type": DescribeInstanceTypeOfferings by availability zone,
# https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/instance-discovery.html, read 2026-11-25;
# GPU types such as p5 are in a few zones of a region). Which zones offer a type differs
# between accounts (zone names map to different physical zones), so it is read from EC2 when
# the group is created, not from a table.
OFFERINGS_FILTER = "instance-type"


def place(pool: EksNodePool, subnets: list[str], zones: list[str], offered: list[str]) -> list[str]:
    """The subnets of the group: in the pool's zones (all when unset) that offer its type. An
    EFA pool's group gets one subnet (its one zone: config rules): its placement group lies in
    one Availability Zone, and EKS's own EFA guide pins the group to one (EKS user guide
    node-efa, `availabilityZones: [one]`, read 2026-11)."""
    chosen = [
        s for s, z in zip(subnets, zones, strict=True) if z in offered and (not pool.zones or z in pool.zones)
    ]
    if not chosen:
        wanted = ", ".join(pool.zones or zones)
        raise ValueError(
            f"node pool {pool.name!r}: EC2 offers {pool.machine_type} in none of the zones {wanted} "
            f"(it is offered in {', '.join(sorted(offered)) or 'no zone of this region'}); choose "
            "nodePools[].zones or cluster.zones among those, or another instance type"
        )
    return chosen[:1] if pool.fabric == "efa" else chosen


def subnets(
    pool: EksNodePool,
    subnet_ids: list[pulumi.Input[str]],
    subnet_zones: list[pulumi.Input[str]],
    opts: pulumi.InvokeOutputOptions,
) -> pulumi.Output[list[str]]:
    """The group's subnets once EC2 has said where its instance type is offered."""
    offered = aws.ec2.get_instance_type_offerings_output(
        location_type="availability-zone",
        filters=[{"name": OFFERINGS_FILTER, "values": [pool.machine_type]}],
        opts=opts,
    ).locations
    return pulumi.Output.all(pulumi.Output.all(*subnet_ids), pulumi.Output.all(*subnet_zones), offered).apply(
        lambda v: place(pool, list(v[0]), list(v[1]), list(v[2]))
    )


def node_labels(pool: EksNodePool) -> dict[str, str]:
    labels = dict(pool.node_labels)
    if pool.gpu:
        # What NVIDIA's device plugin looks for without node-feature-discovery.
        labels[GPU_PRESENT_LABEL] = "true"
        # On the node from the start, so that the autoscaler counts the GPUs a new node brings
        # while the device plugin starts (else it adds more nodes for the same pods).
        labels[ACCELERATOR_LABEL] = pool.gpu.type  # the instance type's GPU (validated)
    return labels


# Node auto repair of managed node groups (off unless enabled: NodeRepairConfig `enabled`,
# https://docs.aws.amazon.com/eks/latest/APIReference/API_NodeRepairConfig.html, read 2026-11-26)
# acts on the kubelet's Ready and, with the node monitoring agent (cluster.NODE_MONITORING_AGENT),
# on its conditions: AcceleratedHardwareReady after 10 minutes (Replace or Reboot), the others
# after 30 (Replace); DiskPressure and MemoryPressure never. By default it holds back while a group
# of more than five nodes has more than 20% unhealthy, or during an ARC zonal shift. Source: EKS
# user guide "Automatically repair nodes in EKS clusters" (awsdocs/amazon-eks-user-guide
# latest/ug/nodes/node-repair.adoc at dbc0b72, read 2026-11-26). Those defaults stay; GPU groups
# repair one node at a time (maxParallelNodesRepairedCount, minimum 1: API reference above): a
# replacement needs a free GPU instance of the type, often scarce (the reason GKE GPU pools upgrade
# without a surge node, components/cluster/gke/node_pools.py), and a fault common to many GPU nodes
# (a driver, an AMI) is better met one node at a time than by replacing the whole group at once.
GPU_REPAIR_PARALLELISM = 1


def node_repair_config(args: EksClusterArgs, pool: EksNodePool) -> dict[str, Any]:
    """The group's node auto repair: on with cluster.nodeRepair (GPU groups one node at a time),
    else explicitly off (the provider keeps what the group has when the input is absent:
    node_repair_config is Optional and Computed: hashicorp/terraform-provider-aws
    internal/service/eks/node_group.go at 012e0a3, read 2026-11-26)."""
    if not args.cluster.node_repair:
        return {"enabled": False}
    config: dict[str, Any] = {"enabled": True}
    if pool.gpu:
        config["max_parallel_nodes_repaired_count"] = GPU_REPAIR_PARALLELISM
    return config


def node_group_args(
    args: EksClusterArgs,
    pool: EksNodePool,
    cluster_name: pulumi.Input[str],
    node_role_arn: pulumi.Input[str],
    subnet_ids: pulumi.Input[list[str]],
    kubernetes_version: pulumi.Input[str],
    launch_template: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """`kubernetes_version`: the version the cluster reports. EKS refuses to upgrade a cluster
    while a managed node group is on another minor, so the groups follow the cluster in the
    same update (UpdateNodegroupVersion; see CLUSTER_VERSION_FOLLOWERS in cluster.py).
    `launch_template` ({id, version}): the pool's own (launch_templates.needs_launch_template);
    the root volume's size is then the template's (EKS refuses diskSize beside a template)."""
    result = {
        "cluster_name": cluster_name,
        "node_group_name": pool.name,
        "version": kubernetes_version,
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
        "node_repair_config": node_repair_config(args, pool),
        # Labels and taints change in place (EKS UpdateNodegroupConfig), without new nodes.
        "labels": node_labels(pool),
        "taints": [t.node_taint for t in pool.all_taints],
        "tags": dict(args.cluster.tags),
    }
    if launch_template is not None:
        del result["disk_size"]
        result["launch_template"] = launch_template
    return result


# The resources of a node the autoscaler plans with at zero nodes besides the GPUs: "From
# version 1.14, Cluster Autoscaler can also determine the resources provided by each Auto
# Scaling Group via tags ... k8s.io/cluster-autoscaler/node-template/resources/<resource-name>"
# (kubernetes/autoscaler cluster-autoscaler/cloudprovider/aws/README.md, read 2026-11). Without
# them a pending task pod that requests EFA devices or scratch space above the root volume
# never makes the group grow from zero.
EFA_TEMPLATE_TAG = f"{TEMPLATE}/resources/{efa.EFA_RESOURCE}"
EPHEMERAL_STORAGE_TEMPLATE_TAG = f"{TEMPLATE}/resources/ephemeral-storage"


def node_template_tags(pool: EksNodePool) -> dict[str, str]:
    """What a node of the group will offer, for the autoscaler to plan with at zero nodes."""
    tags = {f"{TEMPLATE}/label/{key}": value for key, value in node_labels(pool).items()}
    tags |= {f"{TEMPLATE}/taint/{t.key}": f"{t.value}:{t.effect}" for t in pool.all_taints}
    if pool.gpu:
        tags[f"{TEMPLATE}/resources/nvidia.com/gpu"] = str(pool.gpu.count)
    if pool.fabric == "efa":
        tags[EFA_TEMPLATE_TAG] = str(eks_instances.efa_interfaces(pool.machine_type))
    if pool.local_nvme and eks_instances.instance_store_gb(pool.machine_type):
        # The RAID0 of the instance store holds /var/lib/kubelet (launch_templates), so the
        # node's ephemeral storage is its size (EC2's TotalSizeInGB, decimal gigabytes).
        tags[EPHEMERAL_STORAGE_TEMPLATE_TAG] = f"{eks_instances.instance_store_gb(pool.machine_type)}G"
    return tags


def tag_name(pool: EksNodePool, kind: str, key: str) -> str:
    """The logical name of one Auto Scaling group tag, stable for its key: adding or removing
    another tag renames none (a renamed tag would be replaced, and the replacement's delete
    would remove a key another resource now holds). A hash: keys hold '/', '.' and ':'."""
    return f"{pool.name}-{kind}-{hashlib.sha256(key.encode()).hexdigest()[:10]}"


# Template tags the stack added before they were named by key (the accelerator label's tag is
# newer): their old positional names are kept as aliases.
_NEWER_TEMPLATE_TAGS = (
    f"{TEMPLATE}/label/{ACCELERATOR_LABEL}",
    EFA_TEMPLATE_TAG,
    EPHEMERAL_STORAGE_TEMPLATE_TAG,
)


def positional_names(pool: EksNodePool) -> dict[str, str]:
    """Template tag key -> the name it had when tags were named by position in the sorted
    tag set (`<pool>-template-<i>`, the set without the tags added since). The aliases let
    Pulumi take the existing tags over under their new names, without a delete and create.
    Valid for a stack's first update with this naming; a label or taint added in that same
    update shifts positions, so it is best added in an update of its own."""
    keys = sorted(k for k in node_template_tags(pool) if k not in _NEWER_TEMPLATE_TAGS)
    return {key: f"{pool.name}-template-{i}" for i, key in enumerate(keys)}


def instance_tags(args: EksClusterArgs) -> dict[str, str]:
    """Tags every group's Auto Scaling group copies to the instances it launches (cost
    allocation): the cluster's tags. Instances running when a tag is added keep their tags;
    EBS volumes get none (Auto Scaling propagates tags to instances only)."""
    return dict(args.cluster.tags)


def launch_template(
    args: EksClusterArgs,
    pool: EksNodePool,
    cluster: aws.eks.Cluster,
    fabric: efa.EfaNetwork | None,
    opts: pulumi.ResourceOptions,
) -> aws.ec2.LaunchTemplate | None:
    """The pool's launch template (launch_templates.py), or None when it needs none. The group
    follows its `latest_version`: EKS recycles the nodes when a group moves to another version
    of its template ("When you update your node group to a different version of your launch
    template, all nodes in the group are recycled": launch-templates.adoc, read 2026-11), which
    should be an update of the group, not a replacement (UpdateNodegroupVersion takes a
    launchTemplate); that the provider does not mark launchTemplate.version ForceNew was not
    read from its source here."""
    if not launch_templates.needs_launch_template(pool):
        return None
    extra: dict[str, Any] = {}
    depends: list[pulumi.Resource] = []
    if pool.fabric == "efa":
        assert fabric is not None, "EFA pools need the EFA network (efa.network)"
        extra = {
            "cluster_security_group": cluster.vpc_config.cluster_security_group_id,
            "efa_security_group": fabric.security_group.id,
            "placement_group": fabric.placement_groups[pool.name].name,
        }
        depends = fabric.resources
    return aws.ec2.LaunchTemplate(
        pool.name,
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=depends)),
        **launch_templates.launch_template_args(pool, dict(args.cluster.tags), **extra),
    )


def node_group(
    args: EksClusterArgs,
    pool: EksNodePool,
    cluster: aws.eks.Cluster,
    node_role_arn: pulumi.Input[str],
    subnet_ids: pulumi.Input[list[str]],
    opts: pulumi.ResourceOptions,
    after: list[pulumi.Resource],
    fabric: efa.EfaNetwork | None = None,
) -> aws.eks.NodeGroup:
    """The managed node group of `pool` (once `after` exists), its launch template when the
    pool needs one (`fabric`: the EFA security group and placement groups, for EFA pools), and
    the tags on its Auto Scaling group: node-template tags and the cluster's tags."""
    template = launch_template(args, pool, cluster, fabric, opts)
    reference = (
        None if template is None else {"id": template.id, "version": template.latest_version.apply(str)}
    )
    group = aws.eks.NodeGroup(
        pool.name,
        opts=pulumi.ResourceOptions.merge(
            opts,
            pulumi.ResourceOptions(
                depends_on=after,
                # The group's name is fixed: a change that replaces it (instance type,
                # capacity, AMI, disk) must delete the old group first.
                delete_before_replace=True,
                # The autoscaler owns the size after creation (DESIRED_SIZE). Subnets are set at
                # creation (a change replaces the group): groups made before they followed the
                # type's zones keep theirs. Not an EFA group's: a group that becomes one is
                # replaced (its launch template) and Pulumi would keep the old subnets for the
                # replacement too, in several zones where its placement group is in one.
                ignore_changes=[DESIRED_SIZE] + ([] if pool.fabric == "efa" else ["subnetIds"]),
            ),
        ),
        **node_group_args(args, pool, cluster.name, node_role_arn, subnet_ids, cluster.version, reference),
    )
    asg = group.resources.apply(lambda resources: resources[0].autoscaling_groups[0].name)
    # Named by key; the names they had by position stay as aliases.
    positional = positional_names(pool)
    for tag_key, value in sorted(node_template_tags(pool).items()):
        aliases = [pulumi.Alias(name=positional[tag_key])] if tag_key in positional else []
        aws.autoscaling.Tag(
            tag_name(pool, "template", tag_key),
            autoscaling_group_name=asg,
            tag={"key": tag_key, "value": value, "propagate_at_launch": False},
            opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(aliases=aliases)),
        )
    for tag_key, value in sorted(instance_tags(args).items()):
        aws.autoscaling.Tag(
            tag_name(pool, "tag", tag_key),
            autoscaling_group_name=asg,
            tag={"key": tag_key, "value": value, "propagate_at_launch": True},
            opts=opts,
        )
    return group


def autoscaler(
    args: EksClusterArgs,
    cluster: aws.eks.Cluster,
    account: str,
    groups: list[aws.eks.NodeGroup],
    opts: pulumi.ResourceOptions,
    kube_opts: pulumi.ResourceOptions,
) -> k8s.helm.v3.Release:
    """The cluster-autoscaler that sizes the groups: its role (Pod Identity) and its release
    (`kube_opts`: on the cluster), once the groups exist."""
    name, region = args.cluster.name, args.cluster.region
    role = iam.role(
        "cluster-autoscaler",
        iam.role_name(args, "cluster-autoscaler"),
        iam.POD_IDENTITY_TRUST,
        (),
        opts,
        inline=cluster_autoscaler.iam_policy(name, region, account),
    )
    association = aws.eks.PodIdentityAssociation(
        "cluster-autoscaler",
        cluster_name=cluster.name,
        namespace=cluster_autoscaler.NAMESPACE,
        service_account=cluster_autoscaler.SERVICE_ACCOUNT,
        role_arn=role.arn,
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=role.ready)),
    )
    return k8s.helm.v3.Release(
        "cluster-autoscaler",
        opts=pulumi.ResourceOptions.merge(
            kube_opts, pulumi.ResourceOptions(depends_on=[*groups, association])
        ),
        # The version the cluster runs: an unpinned cluster keeps the one it was made with.
        **cluster_autoscaler.release_args(name, region, cluster.version),
    )
