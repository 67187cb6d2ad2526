"""`determined:cluster`: which cluster, per target (`cloud`)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from components import cloud_limits
from components.config.base import ConfigModel
from components.config.syntax import (
    Cidr,
    DnsLabel,
    Flag,
    KubernetesMinor,
    NonEmpty,
    each_entry,
    pattern_check,
    text_problem,
)

SubnetId = Annotated[str, AfterValidator(pattern_check(r"subnet-[0-9a-f]{8,17}", "a subnet ID (subnet-...)"))]
IamPrincipalArn = Annotated[
    str,
    AfterValidator(
        pattern_check(
            r"arn:aws[a-z-]*:iam::[0-9]{12}:(role|user)/[A-Za-z0-9+=,.@_/-]+",
            "an IAM role or user ARN (arn:aws:iam::123456789012:role/name)",
        )
    ),
]


def _gcp_label(key: str, value: str) -> str | None:
    message = cloud_limits.gcp_label_problem(key, value)
    return message and message.replace("label", "tag", 1)


def _gcp_label_count(labels: dict[str, str]) -> dict[str, str]:
    if len(labels) > cloud_limits.GCP_MAX_LABELS:
        raise ValueError(
            f"{len(labels)} tags; Google Cloud takes at most {cloud_limits.GCP_MAX_LABELS} labels on a "
            "resource (the cluster, node pools, bucket and database carry these)"
        )
    return labels


# Google Cloud resource labels (components/cloud_limits.py, with its source), every bad one on its
# own line.
GcpLabels = Annotated[
    dict[str, str], AfterValidator(each_entry(_gcp_label)), AfterValidator(_gcp_label_count)
]


def _aws_tag(key: str, value: str) -> str | None:
    """What AWS refuses of one tag whatever the resource (components/cloud_limits.py): eks.py adds
    the rules of the Auto Scaling groups and RDS. An empty value is a tag AWS takes: values
    are 0-256 characters (cloud_limits.AWS_TAGS_SOURCE; RDS's too, "Minimum: 0",
    https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-properties-rds-dbinstance-tag.html,
    read 2026-11)."""
    if message := text_problem(value):
        return message
    if key.lower().startswith(cloud_limits.AWS_RESERVED_PREFIX) or value.lower().startswith(
        cloud_limits.AWS_RESERVED_PREFIX
    ):
        return "the 'aws:' prefix (in any case) is AWS's own; AWS refuses tags that start with it"
    if len(key) > cloud_limits.AWS_TAG_KEY_MAX:
        return f"AWS tag keys take at most {cloud_limits.AWS_TAG_KEY_MAX} characters; this one has {len(key)}"
    if len(value) > cloud_limits.AWS_TAG_VALUE_MAX:
        most = cloud_limits.AWS_TAG_VALUE_MAX
        return f"AWS tag values take at most {most} characters; this one has {len(value)}"
    return None


def _aws_tag_count(tags: dict[str, str]) -> dict[str, str]:
    if len(tags) > cloud_limits.AWS_MAX_TAGS:
        raise ValueError(
            f"{len(tags)} tags; AWS takes at most {cloud_limits.AWS_MAX_TAGS} on a resource (the cluster, "
            "node groups, bucket and database carry these)"
        )
    return tags


AwsTags = Annotated[dict[str, str], AfterValidator(each_entry(_aws_tag)), AfterValidator(_aws_tag_count)]


class ClusterConfig(ConfigModel):
    # Cloud resource names are derived from it (GKE allows 40 characters).
    name: DnsLabel = Field(
        max_length=40,
        description="The cluster's name, required: a DNS label of at most 40 characters, also the "
        "master's `cluster_name`; on gke/eks the cloud cluster's name and the prefix of its cloud resources.",
    )
    kubernetes_version: KubernetesMinor | None = Field(
        None,
        description="The Kubernetes minor version, `1.N` (e.g. `1.35`). gke: the control plane's minimum "
        "version, a minor GKE still creates (default: the release channel's); eks: the cluster's version, "
        "one EKS offers (default: the newest for a new cluster; an unpinned cluster keeps its own).",
    )


class ExistingCluster(ClusterConfig):
    """A cluster made elsewhere, reached through a kubeconfig."""

    kubeconfig: NonEmpty | None = Field(
        None, description="Existing clusters only: path to the kubeconfig (default: the default kubeconfig)."
    )
    context: NonEmpty | None = Field(
        None, description="Existing clusters only: the kube context to use (default: `kubernetes:context`)."
    )


class CloudCluster(ClusterConfig):
    region: NonEmpty = Field(description="gke/eks, required: the region the cluster and its resources go in.")
    zones: list[NonEmpty] = Field(
        default_factory=list,
        description="gke/eks: zones of `region` for the cluster (default: the cloud's choice).",
    )
    # What each cloud's repair catches, and what it does not (GPU errors on GKE): docs/clouds/.
    node_repair: Flag = Field(
        True,
        description="gke/eks: repair unhealthy nodes (default: on). gke: node auto-repair on every node pool "
        "(a node NotReady or silent ~10 min, or its boot disk full ~30 min, is recreated; GPU errors are "
        "not among its checks). eks: node auto repair on every node group and the EKS node monitoring agent "
        "add-on, whose conditions add kernel, network, storage and GPU (critical XID, double-bit ECC, "
        "NVLink) errors; GPU groups repair one node at a time. Off: no repair, no agent.",
    )


# Region and zone names as the clouds spell them; they reach provider settings, resource
# names and the commands the stack prints (get-credentials, update-kubeconfig).
GcpRegion = Annotated[
    str, AfterValidator(pattern_check(r"[a-z]+-[a-z]+[0-9]+", "a Google Cloud region (example: us-central1)"))
]
GcpZone = Annotated[
    str,
    AfterValidator(
        pattern_check(r"[a-z]+-[a-z]+[0-9]+-[a-z]", "a Google Cloud zone (example: us-central1-a)")
    ),
]
# A project ID (6 to 30 characters for new projects), optionally domain-scoped (example.com:id).
_GCE_PROJECT = r"([a-z][-a-z0-9.]*[a-z0-9]:)?[a-z]([-a-z0-9]{0,28}[a-z0-9])?"
GcpProject = Annotated[
    str,
    AfterValidator(
        pattern_check(
            _GCE_PROJECT,
            "a Google Cloud project ID (lower-case letters, digits and '-', starting with a letter; "
            "example: my-project-123)",
        )
    ),
]
_AWS_REGION = r"[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9]"
AwsRegion = Annotated[str, AfterValidator(pattern_check(_AWS_REGION, "an AWS region (example: us-east-1)"))]
AwsZone = Annotated[
    str,
    AfterValidator(
        pattern_check(
            rf"{_AWS_REGION}([a-z]|-[a-z]+-[0-9]+[a-z])", "an AWS availability zone (example: us-east-1a)"
        )
    ),
]


# Compute Engine resource names (networks, subnetworks, secondary ranges): 1-63 characters,
# lower-case letters, digits and '-', starting with a letter and not ending with '-'. Source:
# https://cloud.google.com/compute/docs/naming-resources#resource-name-format (read 2026-11).
_GCE_NAME = r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?"
GceName = Annotated[
    str,
    AfterValidator(
        pattern_check(
            _GCE_NAME,
            "a Compute Engine name (lower-case letters, digits and '-', starting with a letter, at most 63 "
            "characters)",
        )
    ),
]
# A network or subnetwork by name, or by path (projects/<project>/global/networks/<name>,
# projects/<project>/regions/<region>/subnetworks/<name>), as the GKE API takes them.
NetworkName = Annotated[
    str,
    AfterValidator(
        pattern_check(
            rf"(projects/{_GCE_PROJECT}/global/networks/)?{_GCE_NAME}",
            "a network name or path (example: my-vpc, projects/host-project/global/networks/my-vpc)",
        )
    ),
]
SubnetworkName = Annotated[
    str,
    AfterValidator(
        pattern_check(
            rf"(projects/{_GCE_PROJECT}/regions/[a-z]+-[a-z]+[0-9]+/subnetworks/)?{_GCE_NAME}",
            "a subnetwork name or path (example: gke-nodes, "
            "projects/host-project/regions/us-central1/subnetworks/gke-nodes)",
        )
    ),
]


class GkeNetwork(ConfigModel):
    """The cluster's VPC: created (CIDRs below) or an existing one named here."""

    name: NetworkName | None = Field(
        None,
        description="An existing network to use, by name or path (`projects/<p>/global/networks/<n>`), "
        "together with `subnetwork`. Absent: `<cluster.name>-net` is created.",
    )
    subnetwork: SubnetworkName | None = Field(
        None,
        description="The existing network's subnetwork for the nodes, by name or path "
        "(`projects/<p>/regions/<r>/subnetworks/<n>`), together with `name`. Absent: `<cluster.name>-nodes` "
        "is created.",
    )
    pods_range: GceName | None = Field(
        None,
        description="Existing network only: the subnetwork's secondary range for pods, together with "
        "`servicesRange` (absent: GKE adds its own).",
    )
    services_range: GceName | None = Field(
        None,
        description="Existing network only: the subnetwork's secondary range for services, together with "
        "`podsRange` (absent: GKE adds its own).",
    )
    nodes_cidr: Cidr = Field(
        "10.10.0.0/20",
        description="Created network only: the nodes' CIDR range; must not overlap `podsCidr` or "
        "`servicesCidr`.",
    )
    pods_cidr: Cidr = Field(
        "10.32.0.0/14",
        description="Created network only: the pods' CIDR range (a secondary range); must not overlap the "
        "other two.",
    )
    services_cidr: Cidr = Field(
        "10.36.0.0/20",
        description="Created network only: the services' CIDR range (a secondary range); must not overlap "
        "the other two.",
    )

    @property
    def existing(self) -> bool:
        return self.name is not None


# Control plane authorized networks a GKE cluster takes: "up to 50 CIDR ranges" on a cluster
# whose control plane has a public endpoint (100 with the private endpoint only). The stack
# always keeps the public endpoint (components/cluster/gke/cluster.py), so 50. Source: GKE docs,
# "Add authorized networks for control plane access", Limitations,
# https://cloud.google.com/kubernetes-engine/docs/how-to/authorized-networks (read 2026-11; the
# stored copy did not show the section; the limit as quoted "You can add up to 50 authorized
# networks (allowed CIDR blocks) in a project" in a copy of the GKE network-isolation page
# found by the code search, read 2026-11).
GKE_AUTHORIZED_NETWORKS_MAX = 50


def _authorized_networks(cidrs: list[str]) -> list[str]:
    if len(cidrs) > GKE_AUTHORIZED_NETWORKS_MAX:
        raise ValueError(
            f"{len(cidrs)} CIDR ranges; GKE takes at most {GKE_AUTHORIZED_NETWORKS_MAX} authorized "
            "networks on a cluster with a public control plane endpoint: merge neighbouring ranges"
        )
    return cidrs


class GkeCluster(CloudCluster):
    region: GcpRegion = Field(
        description="Required: the Google Cloud region of the regional cluster (e.g. `us-central1`)."
    )
    zones: list[GcpZone] = Field(
        default_factory=list,
        description="Zones of `region` for the nodes (e.g. `us-central1-a`; default: three of the region, "
        "GKE's choice).",
    )
    project: GcpProject | None = Field(
        None,
        description="The Google Cloud project ID; wins over `gcp:project`, and one of the two is required.",
    )
    release_channel: Literal["RAPID", "REGULAR", "STABLE", "EXTENDED"] = Field(
        "REGULAR",
        description="The GKE release channel: `RAPID`, `REGULAR` (default), `STABLE` or `EXTENDED`.",
    )
    network: GkeNetwork = Field(
        default_factory=GkeNetwork,
        description="The cluster's VPC: an existing network named here, or (default) one created from "
        "its CIDRs.",
    )
    private_nodes: Flag = Field(
        False,
        description="Nodes without public IPs (default: off). A created network gets Cloud Router and Cloud "
        "NAT (an existing network's owner provides NAT); the control plane keeps its public endpoint.",
    )
    authorized_networks: Annotated[list[Cidr], AfterValidator(_authorized_networks)] = Field(
        default_factory=list,
        description="CIDRs that may reach the control plane, at most 50; include the address `pulumi up` "
        "runs from. Empty (default): any address, with Google authentication.",
    )
    tags: GcpLabels = Field(
        default_factory=dict,
        description="Google Cloud labels on the cluster, nodes, bucket and Cloud SQL (keys: lower-case "
        "letters, digits, `_`, `-`, starting with a letter; values may be empty; at most 63 characters).",
    )


class EksVpc(ConfigModel):
    """The cluster's VPC: created (`cidr`) or an existing one with its subnets."""

    id: Annotated[str, AfterValidator(pattern_check(r"vpc-[0-9a-f]{8,17}", "a VPC ID (vpc-...)"))] | None = (
        Field(
            None,
            description="An existing VPC (`vpc-...`), with `privateSubnetIds`. Absent: a VPC is created.",
        )
    )
    # Nodes and the database; at least two zones. (Load balancers find their subnets by
    # the kubernetes.io/role/elb tags the VPC's owner puts on them.)
    private_subnet_ids: list[SubnetId] = Field(
        default_factory=list,
        description="The existing VPC's private subnets (`subnet-...`) for the nodes and RDS, at least two "
        "in two zones; load balancers find subnets by the `kubernetes.io/role/elb` / `internal-elb` tags the "
        "VPC's owner sets.",
    )
    cidr: Cidr = Field(
        "10.0.0.0/16",
        description="Created VPC only: its range; a private /19 and a public /22 per zone are carved "
        "from it.",
    )

    @property
    def existing(self) -> bool:
        return self.id is not None


class EksEndpoint(ConfigModel):
    """Who reaches the Kubernetes API: from inside the VPC, and from the CIDRs listed."""

    private_access: Flag = Field(
        True, description="The Kubernetes API reachable from inside the VPC (default: on); not both off."
    )
    public_access: Flag = Field(
        True, description="The Kubernetes API reachable from the internet (default: on); not both off."
    )
    public_access_cidrs: list[Cidr] = Field(
        default_factory=list,
        description="With `publicAccess`: CIDRs that may reach the public endpoint; include the address "
        "`pulumi up` runs from. Empty (default): any address, as `0.0.0.0/0` (a mandatory policy violation "
        "in prod).",
    )


class EksCluster(CloudCluster):
    region: AwsRegion = Field(
        description="Required: the AWS region of every resource (e.g. `us-east-1`; `aws:region` is not "
        "read), in the `aws` partition."
    )
    zones: list[AwsZone] = Field(
        default_factory=list,
        description="The created VPC's availability zones, at least two (prod: three; default: the "
        "region's first two, prod three, available zones).",
    )
    vpc: EksVpc = Field(
        default_factory=EksVpc, description="The cluster's VPC: created (default) or an existing one."
    )
    endpoint: EksEndpoint = Field(
        default_factory=EksEndpoint,
        description="Who reaches the Kubernetes API: from inside the VPC, the internet.",
    )
    admin_arns: list[IamPrincipalArn] = Field(
        default_factory=list,
        description="IAM role or user ARNs (`arn:aws:iam::<account>:role/<name>`) given cluster-admin access "
        "entries, besides the deploying identity.",
    )
    autoscaler: Literal["clusterAutoscaler", "karpenter"] = Field(
        "clusterAutoscaler",
        description="What adds and removes the nodes of the pools other than the system one: "
        "`clusterAutoscaler` (default: one managed node group per pool, scaled from zero) or `karpenter` "
        "(a Karpenter NodePool per pool: several instance types, spot falling back to on-demand, "
        "reservations, consolidation of idle nodes). The first CPU pool stays a managed node group.",
    )
    tags: AwsTags = Field(
        default_factory=dict,
        description="AWS tags (values may be empty) on the cluster, node groups, bucket, RDS instance and "
        "its subnet and security groups.",
    )
