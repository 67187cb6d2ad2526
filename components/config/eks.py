"""Rules an EKS stack must meet beyond each section's own checks: instance types that carry
the GPUs a pool declares (and CPU pools that do not), a Kubernetes version EKS still offers,
node groups that can start and labels, taints and tags the EKS and Auto Scaling APIs take, an
API endpoint fenced in prod, and a coherent VPC section."""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from datetime import date
from typing import TYPE_CHECKING

from components import cloud_limits, versions
from components.config import capacity_rules, eks_instances
from components.config.database import ManagedDatabase
from components.config.eks_node_features import node_feature_problems
from components.config.eks_shared_filesystems import eks_filesystem_problems
from components.config.errors import Add
from components.config.node_pools import EksNodePool, gpu_names
from components.config.syntax import entry_at, shown
from components.config.views import _system_capable

if TYPE_CHECKING:
    from components.config.stack import EksStack


# What the cluster-autoscaler reads from a group's Auto Scaling group to plan a node while the
# group is at zero (labels, taints, resources), and the label NVIDIA GPU nodes carry so that it
# does not add more nodes while the device plugin starts. Source: kubernetes/autoscaler
# cluster-autoscaler/cloudprovider/aws/README.md, "Auto-Discovery Setup" (node-template tags)
# and "Special note on GPU instances" (`k8s.amazonaws.com/accelerator=<gpu-type>`, autoscaler
# 1.15 and newer), https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler/cloudprovider/aws/README.md
# (read 2026-11-25).
AUTOSCALER_TEMPLATE = "k8s.io/cluster-autoscaler/node-template"
AUTOSCALER_TAGS = "k8s.io/cluster-autoscaler/"
ACCELERATOR_LABEL = "k8s.amazonaws.com/accelerator"

# EKS node group labels and taints. Source: Amazon EKS API reference, CreateNodegroup and
# UpdateNodegroupConfig (`labels`: keys and values 1-63 characters;
# https://docs.aws.amazon.com/eks/latest/APIReference/API_UpdateLabelsPayload.html) and Taint
# (key 1-63, value 0-63; https://docs.aws.amazon.com/eks/latest/APIReference/API_Taint.html),
# read 2026-11-25 and checked against the service model (botocore eks 2017-11-01: labelKey,
# labelValue, taintKey, taintValue). Kubernetes allows prefixed keys up to 253+1+63.
EKS_LABEL_KEY_MAX = cloud_limits.EKS_LABEL_MAX
EKS_LABEL_VALUE_MAX = cloud_limits.EKS_LABEL_MAX
EKS_TAINT_KEY_MAX = cloud_limits.EKS_LABEL_MAX

# Auto Scaling group tags (the node-template tags, and cluster.tags, which the stack puts on
# each group's Auto Scaling group so that they reach its instances). Source: Amazon EC2 Auto
# Scaling API reference, Tag (Key 1-128, Value 0-256 characters),
# https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_Tag.html (read 2026-11-25; also
# the service model, botocore autoscaling 2011-01-01 TagKey/TagValue). The `aws:` prefix is
# AWS's own (EKS API reference, CreateCluster `tags`).
ASG_TAG_KEY_MAX = cloud_limits.AWS_TAG_KEY_MAX
ASG_TAG_VALUE_MAX = cloud_limits.AWS_TAG_VALUE_MAX
RESERVED_TAG_PREFIX = cloud_limits.AWS_RESERVED_PREFIX

# Tags per Auto Scaling group: "The maximum number of tags per resource is 50" (EC2 Auto
# Scaling user guide, "Tag Auto Scaling groups and instances", Tag naming and usage
# restrictions, https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-tagging.html,
# read 2026-11-25). A group's Auto Scaling group carries cluster.tags, the node-template tags
# (components/cluster/eks/node_groups.py) and the tags EKS puts there itself: it tags a managed
# node group's resources for the cluster-autoscaler's auto-discovery (EKS user guide, "Simplify
# node lifecycle with managed node groups": "Amazon EKS tags managed node group resources so
# that they are configured to use the Kubernetes Cluster Autoscaler",
# https://docs.aws.amazon.com/eks/latest/userguide/managed-node-groups.html; the keys as the
# autoscaler's AWS README names them, "Auto-Discovery Setup") and names the cluster and group
# (eks:cluster-name, eks:nodegroup-name, kubernetes.io/cluster/<cluster>, as EKS sets them on
# the group's Auto Scaling group). AWS's own `aws:` tags do not count ("This specific tag
# doesn't count towards the 50 tags limit", EKS user guide, "Tag your Amazon EKS resources").
ASG_TAGS_MAX = cloud_limits.AWS_MAX_TAGS
EKS_ASG_TAGS = (
    "eks:cluster-name",
    "eks:nodegroup-name",
    "k8s.io/cluster-autoscaler/enabled",
    "k8s.io/cluster-autoscaler/{cluster}",
    "kubernetes.io/cluster/{cluster}",
)

# Characters AWS tag APIs take: "The string can only contain only the set of Unicode letters,
# digits, white-space, '_', '.', ':', '/', '=', '+', '-', '@'", keys and values, none starting
# with `aws:` or `rds:` (Amazon RDS API reference, Tag, Java regex
# ^([\p{L}\p{Z}\p{N}_.:/=+\-@]*)$, https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_Tag.html;
# botocore 1.43.11, rds 2014-10-31 service model, Tag; read 2026-11-25). The same set is "the
# standard set of characters available across AWS services that support tags" (e.g. Amazon
# Personalize developer guide, "Managing tags"): cluster.tags go to S3, RDS, EKS, EC2 and Auto
# Scaling alike, so they keep to it. Letters, spaces and digits are Unicode categories L, Z, N.
TAG_CHARACTER_CATEGORIES = ("L", "Z", "N")
TAG_SYMBOLS = "_.:/=+-@"
RDS_RESERVED_TAG_PREFIX = "rds:"

# The partition of AWS a region belongs to (botocore 1.43.11, data/partitions.json,
# `regionRegex`, read 2026-11-25). Every ARN the stack writes (IAM managed policies, EKS
# access policies, S3 buckets, Route 53 zones) is of the `aws` partition (arn:aws:...), so
# regions of other partitions are refused (their ARNs start arn:aws-us-gov:, arn:aws-cn:, ...).
AWS_PARTITION_REGION = re.compile(r"(us|eu|ap|sa|ca|me|af|il|mx)-\w+-\d+")
OTHER_PARTITIONS = {
    "aws-cn": re.compile(r"cn-\w+-\d+"),
    "aws-us-gov": re.compile(r"us-gov-\w+-\d+"),
    "aws-iso": re.compile(r"us-iso-\w+-\d+"),
    "aws-iso-b": re.compile(r"us-isob-\w+-\d+"),
    "aws-iso-e": re.compile(r"eu-isoe-\w+-\d+"),
    "aws-iso-f": re.compile(r"us-isof-\w+-\d+"),
    "aws-eusc": re.compile(r"eusc-de-\w+-\d+"),
}

# An untainted on-demand CPU group gets this many nodes at least when its minNodes is not
# written (the first one only: see EksStack._system_pool_starts in components/config/stack.py): CoreDNS,
# the coredns and aws-ebs-csi-driver add-ons and the cluster-autoscaler itself need a node
# before the autoscaler can add any (EKS runs no autoscaler of its own). Two in prod, so that
# one node's loss leaves the system pods a place; never above the group's maxNodes.
SYSTEM_MIN_NODES = {"dev": 1, "prod": 2}

_INSTANCE_TYPE = "an EC2 instance type such as m6i.2xlarge or g6.12xlarge"
# family.size (m6i.2xlarge, u-6tb1.metal, p4d.24xlarge)
_INSTANCE_TYPE_FORM = re.compile(r"[a-z][a-z0-9-]*\.[a-z0-9-]+")
RDS_MIN_STORAGE_GB = 20


def _gpu_problems(i: int, pool: EksNodePool, add: Add) -> None:
    at = f"nodePools[{i}]"
    if not _INSTANCE_TYPE_FORM.fullmatch(pool.machine_type):
        add(f"{at}.machineType", f"{shown(pool.machine_type)} is not {_INSTANCE_TYPE}")
        return
    family = eks_instances.family(pool.machine_type)
    accelerator = eks_instances.accelerator(pool.machine_type)
    gpu = pool.gpu
    refused = eks_instances.refused_gpu_family(pool.machine_type)
    if refused:
        families = ", ".join(sorted(eks_instances.FAMILY_ACCELERATOR))
        add(
            f"{at}.machineType",
            f"{pool.machine_type!r} has {refused}; node groups take NVIDIA GPUs of: {families} "
            "(or a CPU instance type)",
        )
        return
    if eks_instances.arm(pool.machine_type) and not accelerator:
        add(
            f"{at}.machineType",
            f"{pool.machine_type!r} has ARM (Graviton) CPUs; node groups run the x86_64 AL2023 AMIs: "
            "choose an x86 instance type (m6i, m7i, c7i, r7i, ...)",
        )
        return
    if accelerator and pool.machine_type not in eks_instances.sizes(pool.machine_type):
        add(
            f"{at}.machineType",
            f"{pool.machine_type!r} is not a size of {family}; EC2 offers "
            f"{', '.join(eks_instances.sizes(pool.machine_type))}",
        )
        return
    if gpu is None:
        if accelerator:
            count = eks_instances.gpu_count(pool.machine_type)
            add(
                f"{at}.gpu",
                f"required: {pool.machine_type} carries {count} {accelerator} GPU(s); set gpu {{type: "
                f"{accelerator}, count: {count}}} (GPU nodes run the NVIDIA AMI and are tainted for GPU "
                "tasks), or choose a CPU instance type",
            )
        return
    if accelerator is None:
        why = eks_instances.NOT_NVIDIA_X86.get(family, "no NVIDIA GPU")
        families = ", ".join(sorted(eks_instances.FAMILY_ACCELERATOR))
        add(f"{at}.machineType", f"{pool.machine_type!r} has {why}; GPU pools need one of: {families}")
        return
    if gpu.type != accelerator:
        names = " or ".join(gpu_names(accelerator))
        add(
            f"{at}.gpu.type",
            f"{gpu.type!r} does not fit: {pool.machine_type} carries {accelerator} (write {names})",
        )
    count = eks_instances.gpu_count(pool.machine_type)
    if gpu.count != count:
        add(f"{at}.gpu.count", f"{pool.machine_type} has {count} GPU(s), not {gpu.count}")


def offered_versions(today: date) -> str:
    """The EKS versions a cluster can be made on, as a user reads them."""
    by_support = versions.offered(versions.EKS_VERSIONS, versions.eks_support, today)
    text = ", ".join(by_support["standard"]) + " (standard support)"
    if by_support["extended"]:
        text += "; " + ", ".join(by_support["extended"]) + " (extended support, billed extra)"
    return text


def _version_problems(cfg: EksStack, add: Add) -> None:
    # A pinned version EKS still runs is accepted, in extended support too (the program warns
    # then); one EKS no longer offers at all is refused.
    version = cfg.cluster.kubernetes_version
    today = versions.today()
    if version is None or versions.eks_support(version, today):
        return
    why = versions.not_offered(
        "EKS", version, versions.EKS_VERSIONS, versions.EKS_VERSIONS_READ, "EKS does not offer it"
    )
    if version in versions.EKS_VERSIONS:
        why += ": EKS no longer runs it"
    add("cluster.kubernetesVersion", f"{version}: {why}; choose one of {offered_versions(today)}")


def _capacity_problems(cfg: EksStack, add: Add) -> None:
    """Some untainted on-demand CPU group must start with a node (see SYSTEM_MIN_NODES)."""
    capable = [i for i, pool in enumerate(cfg.node_pools) if _system_capable(pool)]
    if capable and not any(cfg.node_pools[i].min_nodes for i in capable):
        add(
            f"nodePools[{capable[0]}].minNodes",
            "0 on every untainted on-demand CPU group leaves the new cluster without a node: CoreDNS, "
            "the EKS add-ons and the cluster-autoscaler need one before anything can scale up; set at "
            "least 1 here (or leave minNodes out: 1, 2 in prod)",
        )


def asg_tag_problem(key: str, value: str) -> str | None:
    """Why an Auto Scaling group would refuse a tag, or None."""
    if len(key) > ASG_TAG_KEY_MAX:
        return f"Auto Scaling tag keys take at most {ASG_TAG_KEY_MAX} characters; {key!r} has {len(key)}"
    if len(value) > ASG_TAG_VALUE_MAX:
        return (
            f"Auto Scaling tag values take at most {ASG_TAG_VALUE_MAX} characters; this one has {len(value)}"
        )
    return None


def _label_problems(i: int, pool: EksNodePool, add: Add) -> None:
    """Labels and taints as the EKS API takes them, and the node-template tags made of them."""
    at = f"nodePools[{i}]"
    for key, value in pool.labels.items():
        if key == ACCELERATOR_LABEL:
            add(
                f"{at}.labels",
                f"{key!r} is set by the project on GPU groups (the instance type's GPU); remove it",
            )
        elif len(key) > EKS_LABEL_KEY_MAX:
            add(
                f"{at}.labels",
                f"label key {key!r} has {len(key)} characters; EKS node group labels take keys of at most "
                f"{EKS_LABEL_KEY_MAX}, prefix included",
            )
        elif not value:
            add(
                f"{at}.labels",
                f"label {key!r} has no value; EKS node group labels take values of 1 to "
                f"{EKS_LABEL_VALUE_MAX} characters",
            )
        else:
            message = asg_tag_problem(f"{AUTOSCALER_TEMPLATE}/label/{key}", value)
            if message:
                add(
                    f"{at}.labels", f"label {key!r} makes a node-template tag the autoscaler reads: {message}"
                )
    for j, taint in enumerate(pool.taints):
        if len(taint.key) > EKS_TAINT_KEY_MAX:
            add(
                f"{at}.taints[{j}].key",
                f"{taint.key!r} has {len(taint.key)} characters; EKS node group taints take keys of at most "
                f"{EKS_TAINT_KEY_MAX}, prefix included",
            )
        else:
            message = asg_tag_problem(
                f"{AUTOSCALER_TEMPLATE}/taint/{taint.key}", f"{taint.value}:{taint.effect}"
            )
            if message:
                add(f"{at}.taints[{j}].key", f"makes a node-template tag the autoscaler reads: {message}")


def tag_characters_problem(text: str) -> str | None:
    """Why AWS tag APIs would refuse `text` as a tag key or value, or None."""
    bad = sorted(
        {
            c
            for c in text
            if unicodedata.category(c)[0] not in TAG_CHARACTER_CATEGORIES and c not in TAG_SYMBOLS
        }
    )
    if not bad:
        return None
    shown_bad = " ".join(repr(c) for c in bad)
    symbols = " ".join(TAG_SYMBOLS)
    return f"has {shown_bad}; AWS tags (RDS, S3, ...) take letters, digits, spaces and {symbols} only"


def template_tag_count(pool: EksNodePool) -> int:
    """The node-template tags the stack puts on the pool's Auto Scaling group: one per node
    label (the pool's, its node-pool label and, on GPU pools, the GPU-present and accelerator
    labels), one per taint, the GPU resource, the EFA devices (fabric efa) and the ephemeral
    storage of the instance store (localNvme) (components/cluster/eks/node_groups.py; a test
    keeps the two equal)."""
    labels = set(pool.node_labels) | ({"nvidia.com/gpu.present", ACCELERATOR_LABEL} if pool.gpu else set())
    resources = (
        (1 if pool.gpu else 0)
        + (1 if pool.fabric == "efa" else 0)
        + (1 if pool.local_nvme and eks_instances.instance_store_gb(pool.machine_type) else 0)
    )
    return len(labels) + len(pool.all_taints) + resources


def asg_tags(cfg: EksStack, pool: EksNodePool) -> int:
    """Tags on the pool's Auto Scaling group that count towards ASG_TAGS_MAX."""
    return len(cfg.cluster.tags) + template_tag_count(pool) + len(EKS_ASG_TAGS)


def _tag_problems(cfg: EksStack, add: Add) -> None:
    """cluster.tags also go on every node group's Auto Scaling group (and so its instances),
    the bucket, RDS and the rest. (What AWS refuses of any tag, the 'aws:' prefix and the
    lengths, the section refuses itself: components/config/cluster.py AwsTags.)"""
    managed = isinstance(cfg.database, ManagedDatabase)
    for key, value in cfg.cluster.tags.items():
        at, named = entry_at("cluster.tags", key)
        if managed and (
            key.lower().startswith(RDS_RESERVED_TAG_PREFIX)
            or value.lower().startswith(RDS_RESERVED_TAG_PREFIX)
        ):
            add(
                at,
                f"{named}the {RDS_RESERVED_TAG_PREFIX!r} prefix is RDS's own; RDS refuses tags that start "
                "with it",
            )
        elif key.startswith(AUTOSCALER_TAGS):
            add(
                at,
                f"{named}keys under {AUTOSCALER_TAGS!r} belong to the cluster-autoscaler, on the same Auto "
                "Scaling groups",
            )
        elif message := tag_characters_problem(key):
            add(at, f"{named}the key {message}")
        elif message := tag_characters_problem(value):
            add(at, f"{named}the value {message}")
    for i, pool in enumerate(cfg.node_pools):
        count = asg_tags(cfg, pool)
        if count > ASG_TAGS_MAX:
            at = "cluster.tags" if cfg.cluster.tags else f"nodePools[{i}].labels"
            add(
                at,
                f"node group {pool.name!r} (nodePools[{i}]) would put {count} tags on its Auto Scaling "
                f"group: {len(cfg.cluster.tags)} of cluster.tags, {template_tag_count(pool)} node-template "
                f"tags of its labels and taints, {len(EKS_ASG_TAGS)} EKS adds itself; Auto Scaling takes "
                f"at most {ASG_TAGS_MAX} per group: remove {count - ASG_TAGS_MAX}",
            )


def _region_problems(cfg: EksStack, add: Add) -> None:
    region = cfg.cluster.region
    if AWS_PARTITION_REGION.fullmatch(region):
        return
    partition = next((name for name, regex in OTHER_PARTITIONS.items() if regex.fullmatch(region)), None)
    where = f"is in the {partition} partition" if partition else "is not a region of the aws partition"
    add(
        "cluster.region",
        f"{region} {where}; every ARN this stack writes (IAM and EKS access policies, S3, Route 53) is "
        "of the aws partition (arn:aws:...), so only its regions are supported",
    )


# The stack's clusters are IPv4 clusters (it sets no kubernetesNetworkConfig.ipFamily, whose
# default is ipv4), and EKS takes no IPv6 CIDR in an IPv4 cluster's publicAccessCidrs: "You
# can't add IPv6 CIDR blocks to IPv4 clusters or IPv6 clusters that were made before October
# 2024". Source: Amazon EKS API reference, VpcConfigRequest, publicAccessCidrs,
# https://docs.aws.amazon.com/eks/latest/APIReference/API_VpcConfigRequest.html (read 2026-11;
# quoted from the same text in the AWS SDK for Kotlin reference,
# https://docs.aws.amazon.com/sdk-for-kotlin/api/latest/eks/aws.sdk.kotlin.services.eks.model/-vpc-config-request/public-access-cidrs.html,
# read 2026-11); KubernetesNetworkConfigRequest ipFamily ("If you don't specify a value, ipv4 is
# used by default"), https://docs.aws.amazon.com/eks/latest/APIReference/API_KubernetesNetworkConfigRequest.html
# (read 2026-11, as the AWS SDK for Ruby reference quotes it).
EKS_CLUSTER_IP_VERSION = 4

# "Public endpoint access CIDR ranges per cluster: 40", not adjustable. Source: Amazon EKS
# service quotas, https://docs.aws.amazon.com/eks/latest/userguide/service-quotas.html and
# https://docs.aws.amazon.com/general/latest/gr/eks.html#limits_eks (read 2026-11-25).
EKS_PUBLIC_ACCESS_CIDRS_MAX = 40

# "The block cannot include reserved addresses" (Amazon EKS user guide, "Configure network
# access to cluster API server endpoint",
# https://docs.aws.amazon.com/eks/latest/userguide/config-cluster-endpoint.html, read
# 2026-11-25). The ranges below are those no request from the internet comes from: RFC 1918
# private, shared (carrier-grade NAT), loopback, link-local, "this network", multicast and the
# reserved 240/4 (IANA IPv4 Special-Purpose Address Registry,
# https://www.iana.org/assignments/iana-ipv4-special-registry/). The documentation ranges
# (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24) stay accepted: the same EKS page gives
# 203.0.113.5/32 as its example, so EKS takes them.
EKS_RESERVED_PUBLIC_RANGES = {
    "0.0.0.0/8": "'this network'",
    "10.0.0.0/8": "private (RFC 1918)",
    "100.64.0.0/10": "shared address space (carrier-grade NAT)",
    "127.0.0.0/8": "loopback",
    "169.254.0.0/16": "link-local",
    "172.16.0.0/12": "private (RFC 1918)",
    "192.168.0.0/16": "private (RFC 1918)",
    "224.0.0.0/4": "multicast",
    "240.0.0.0/4": "reserved",
}


def reserved_public_range(cidr: str) -> str | None:
    """What reserved range `cidr` lies in (EKS_RESERVED_PUBLIC_RANGES), or None."""
    network = ipaddress.ip_network(cidr)
    for reserved, what in EKS_RESERVED_PUBLIC_RANGES.items():
        if network.version == 4 and network.subnet_of(ipaddress.ip_network(reserved)):
            return f"{what}, {reserved}"
    return None


def _endpoint_problems(cfg: EksStack, add: Add) -> None:
    endpoint = cfg.cluster.endpoint
    at = "cluster.endpoint"
    if not endpoint.private_access and not endpoint.public_access:
        add(f"{at}.publicAccess", "privateAccess and publicAccess cannot both be false")
    if endpoint.public_access_cidrs and not endpoint.public_access:
        add(f"{at}.publicAccessCidrs", "only with publicAccess true")
    if len(endpoint.public_access_cidrs) > EKS_PUBLIC_ACCESS_CIDRS_MAX:
        add(
            f"{at}.publicAccessCidrs",
            f"{len(endpoint.public_access_cidrs)} CIDR ranges; EKS takes at most "
            f"{EKS_PUBLIC_ACCESS_CIDRS_MAX} per cluster (a quota AWS does not raise): merge neighbouring "
            "ranges",
        )
    for i, cidr in enumerate(endpoint.public_access_cidrs):
        if ipaddress.ip_network(cidr).version != EKS_CLUSTER_IP_VERSION:
            add(
                f"{at}.publicAccessCidrs[{i}]",
                f"{cidr} is an IPv6 range; the stack's EKS clusters are IPv4 clusters, whose public "
                "endpoint EKS opens to IPv4 ranges only",
            )
        elif reserved := reserved_public_range(cidr):
            add(
                f"{at}.publicAccessCidrs[{i}]",
                f"{cidr} is a reserved range ({reserved}); EKS refuses reserved addresses for its public "
                "endpoint, which no such address reaches (the VPC reaches the API through privateAccess)",
            )


# A created VPC's subnets, carved from `cluster.vpc.cidr`: private subnets get most of the
# space (pods take VPC addresses with the VPC CNI).
PRIVATE_PREFIX = 19
PUBLIC_PREFIX = 22
# "The allowed block size is between a /28 netmask and /16 netmask"; a VPC's primary range is
# IPv4 (IPv6 blocks are added to it). Source: Amazon VPC user guide, "VPC CIDR blocks",
# https://docs.aws.amazon.com/vpc/latest/userguide/vpc-cidr-blocks.html (read 2026-11-25).
VPC_LARGEST_PREFIX = 16


def subnet_cidrs(vpc_cidr: str, zones: int) -> tuple[list[str], list[str]]:
    """(private, public) CIDRs, one of each per zone, carved from the VPC's range: the
    private /19s first, the public /22s after them. Fewer than `zones` of either when the
    range is too small (the config refuses it)."""
    network = ipaddress.ip_network(vpc_cidr)
    if network.version != 4 or network.prefixlen > PRIVATE_PREFIX:
        return [], []
    private = list(network.subnets(new_prefix=PRIVATE_PREFIX))[:zones]
    rest = list(network.subnets(new_prefix=PUBLIC_PREFIX))
    taken = [s for s in rest if any(s.subnet_of(p) for p in private)]
    public = [s for s in rest if s not in taken][:zones]
    return [str(s) for s in private], [str(s) for s in public]


def _vpc_cidr_problem(cidr: str, zones: int) -> str | None:
    network = ipaddress.ip_network(cidr)
    if network.version != 4:
        return "must be an IPv4 range (a VPC's primary range is IPv4)"
    if network.prefixlen < VPC_LARGEST_PREFIX:
        return f"is larger than AWS allows for a VPC (/{VPC_LARGEST_PREFIX} at most)"
    private, public = subnet_cidrs(cidr, zones)
    if len(private) < zones or len(public) < zones:
        return (
            f"too small for {zones} zones: each takes a private /{PRIVATE_PREFIX} and a public "
            f"/{PUBLIC_PREFIX} (a /{VPC_LARGEST_PREFIX} or /17 fits up to 7 or 3 zones)"
        )
    return None


# An EKS cluster's subnets lie in at least two Availability Zones, and a subnet lies in one:
# a subnet listed twice counts once. Source: Amazon EKS user guide, "View Amazon EKS networking
# requirements for VPC and subnets" ("When you create a cluster, you specify a VPC and at least
# two subnets that are in different Availability Zones"),
# https://docs.aws.amazon.com/eks/latest/userguide/network-reqs.html (read 2026-11).
EKS_MIN_SUBNET_ZONES = 2


def _vpc_problems(cfg: EksStack, add: Add) -> None:
    vpc = cfg.cluster.vpc
    at = "cluster.vpc"
    if vpc.existing:
        if cfg.cluster.zones:
            add("cluster.zones", "only for a created VPC: an existing VPC's subnets decide the zones")
        ids = vpc.private_subnet_ids
        for j, subnet in enumerate(ids):
            if subnet in ids[:j]:
                add(f"{at}.privateSubnetIds[{j}]", f"{subnet} is listed twice (one subnet is in one zone)")
        if len(set(ids)) < EKS_MIN_SUBNET_ZONES:
            add(
                f"{at}.privateSubnetIds",
                "at least two subnets (in two zones) of the existing VPC, each listed once: EKS needs "
                "subnets in two Availability Zones",
            )
        if "cidr" in vpc.model_fields_set:
            add(f"{at}.cidr", "only for a created VPC (without vpc.id)")
    else:
        if vpc.private_subnet_ids:
            add(f"{at}.privateSubnetIds", "only for an existing VPC (vpc.id)")
        for j, zone in enumerate(cfg.cluster.zones):
            if zone in cfg.cluster.zones[:j]:
                add(
                    f"cluster.zones[{j}]",
                    f"{zone!r} is listed twice: each zone gets one subnet, and EKS needs subnets in "
                    f"{EKS_MIN_SUBNET_ZONES} different zones",
                )
        zones = len(cfg.cluster.zones)
        wanted = 3 if cfg.environment == "prod" else 2
        if zones and zones < wanted:
            add("cluster.zones", f"at least {wanted} availability zones in {cfg.environment}")
        problem = _vpc_cidr_problem(vpc.cidr, zones or wanted)
        if problem:
            add(f"{at}.cidr", problem)


def _taint_problems(i: int, pool: EksNodePool, add: Add) -> None:
    for j, taint in enumerate(pool.taints):
        reserved = cloud_limits.eks_taint_key_problem(taint.key)
        if reserved:
            add(f"nodePools[{i}].taints[{j}].key", reserved)
        if not taint.value:
            add(
                f"nodePools[{i}].taints[{j}].value", "required on EKS (node group taints always have a value)"
            )


def _database_problems(cfg: EksStack, add: Add) -> None:
    db = cfg.database
    if isinstance(db, ManagedDatabase) and db.storage_size_gb < RDS_MIN_STORAGE_GB:
        add("database.storageSizeGb", f"RDS gp3 storage starts at {RDS_MIN_STORAGE_GB} GB")
    if isinstance(db, ManagedDatabase) and db.tier.startswith("db-"):
        add(
            "database.tier",
            f"{db.tier!r} is a Cloud SQL tier; RDS instance classes start with 'db.' (example: db.m6g.large)",
        )


def _zone_problems(cfg: EksStack, add: Add) -> None:
    region = cfg.cluster.region
    for i, zone in enumerate(cfg.cluster.zones):
        if not zone.startswith(region):
            add(f"cluster.zones[{i}]", f"{zone!r} is not a zone of cluster.region {region}")
    for i, pool in enumerate(cfg.node_pools):
        if pool.zones is None:
            continue
        if not pool.zones:
            add(
                f"nodePools[{i}].zones",
                "at least one zone (or leave it out: every zone that offers the type)",
            )
        for j, zone in enumerate(pool.zones):
            at = f"nodePools[{i}].zones[{j}]"
            if not zone.startswith(region):
                add(at, f"{zone!r} is not a zone of cluster.region {region}")
            elif cfg.cluster.zones and zone not in cfg.cluster.zones:
                add(
                    at,
                    f"{zone!r} is not one of cluster.zones ({', '.join(cfg.cluster.zones)}): "
                    "the VPC has no subnet there",
                )
            elif zone in pool.zones[:j]:
                add(at, f"{zone!r} is listed twice")


def eks_problems(cfg: EksStack, add: Add) -> None:
    for i, pool in enumerate(cfg.node_pools):
        _gpu_problems(i, pool, add)
        _taint_problems(i, pool, add)
        _label_problems(i, pool, add)
    _capacity_problems(cfg, add)
    capacity_rules.eks_capacity_problems(cfg, add)
    capacity_rules.bounded_fallback_problems(cfg, add)
    _region_problems(cfg, add)
    _tag_problems(cfg, add)
    _version_problems(cfg, add)
    _endpoint_problems(cfg, add)
    _vpc_problems(cfg, add)
    _zone_problems(cfg, add)
    _database_problems(cfg, add)
    node_feature_problems(cfg, add)
    eks_filesystem_problems(cfg, add)
