"""`determined:cluster`: which cluster, per target (`cloud`)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from deploy import cloud_limits
from deploy.config.base import ConfigModel
from deploy.config.syntax import (
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


# Google Cloud resource labels (deploy/cloud_limits.py, with its source), every bad one on its
# own line.
GcpLabels = Annotated[
    dict[str, str], AfterValidator(each_entry(_gcp_label)), AfterValidator(_gcp_label_count)
]


def _aws_tag(key: str, value: str) -> str | None:
    """What AWS refuses of one tag whatever the resource (deploy/cloud_limits.py): eks.py adds
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
    name: DnsLabel = Field(max_length=40)
    kubernetes_version: KubernetesMinor | None = None


class ExistingCluster(ClusterConfig):
    """A cluster made elsewhere, reached through a kubeconfig."""

    kubeconfig: NonEmpty | None = None
    context: NonEmpty | None = None


class CloudCluster(ClusterConfig):
    region: NonEmpty
    zones: list[NonEmpty] = Field(default_factory=list)


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

    # Existing network and subnetwork (both, or neither: then they are created).
    name: NetworkName | None = None
    subnetwork: SubnetworkName | None = None
    # Secondary ranges of the existing subnetwork for pods and services (optional: GKE
    # adds ranges of its own when absent).
    pods_range: GceName | None = None
    services_range: GceName | None = None
    # Ranges of a created network.
    nodes_cidr: Cidr = "10.10.0.0/20"
    pods_cidr: Cidr = "10.32.0.0/14"
    services_cidr: Cidr = "10.36.0.0/20"

    @property
    def existing(self) -> bool:
        return self.name is not None


# Control plane authorized networks a GKE cluster takes: "up to 50 CIDR ranges" on a cluster
# whose control plane has a public endpoint (100 with the private endpoint only). The stack
# always keeps the public endpoint (deploy/platform/gke/cluster.py), so 50. Source: GKE docs,
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
    region: GcpRegion
    zones: list[GcpZone] = Field(default_factory=list)
    project: GcpProject | None = None  # falls back to gcp:project
    release_channel: Literal["RAPID", "REGULAR", "STABLE", "EXTENDED"] = "REGULAR"
    network: GkeNetwork = Field(default_factory=GkeNetwork)
    # Nodes without public IPs (outbound through Cloud NAT).
    private_nodes: Flag = False
    # Who may reach the control plane (empty: any address, with Google authentication).
    authorized_networks: Annotated[list[Cidr], AfterValidator(_authorized_networks)] = Field(
        default_factory=list
    )
    # Labels on the cluster, bucket and database.
    tags: GcpLabels = Field(default_factory=dict)


class EksVpc(ConfigModel):
    """The cluster's VPC: created (`cidr`) or an existing one with its subnets."""

    id: Annotated[str, AfterValidator(pattern_check(r"vpc-[0-9a-f]{8,17}", "a VPC ID (vpc-...)"))] | None = (
        None
    )
    # Nodes and the database; at least two zones. (Load balancers find their subnets by
    # the kubernetes.io/role/elb tags the VPC's owner puts on them.)
    private_subnet_ids: list[SubnetId] = Field(default_factory=list)
    cidr: Cidr = "10.0.0.0/16"

    @property
    def existing(self) -> bool:
        return self.id is not None


class EksEndpoint(ConfigModel):
    """Who reaches the Kubernetes API: from inside the VPC, and from the CIDRs listed."""

    private_access: Flag = True
    public_access: Flag = True
    # Empty: any address (refused in prod).
    public_access_cidrs: list[Cidr] = Field(default_factory=list)


class EksCluster(CloudCluster):
    region: AwsRegion
    zones: list[AwsZone] = Field(default_factory=list)
    vpc: EksVpc = Field(default_factory=EksVpc)
    endpoint: EksEndpoint = Field(default_factory=EksEndpoint)
    # IAM roles or users given cluster-admin access entries (besides the deploying identity).
    admin_arns: list[IamPrincipalArn] = Field(default_factory=list)
    tags: AwsTags = Field(default_factory=dict)
