"""`determined:cluster`: which cluster, per target (`cloud`)."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from deploy.config.base import ConfigModel
from deploy.config.syntax import Cidr, DnsLabel, Flag, KubernetesMinor, NonEmpty, pattern_check

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


def _gcp_labels(labels: dict[str, str]) -> dict[str, str]:
    # Google Cloud resource labels: lower case, at most 63 characters, keys start with a letter.
    for key, value in labels.items():
        if not re.fullmatch(r"[a-z][a-z0-9_-]{0,62}", key):
            raise ValueError(
                f"tag key {key!r} is not a Google Cloud label key (lower-case letters, digits, '_' and '-', "
                "starting with a letter, at most 63 characters)"
            )
        if not re.fullmatch(r"[a-z0-9_-]{0,63}", value):
            raise ValueError(
                f"tag value for {key!r} is not a Google Cloud label value (lower-case letters, digits, "
                "'_' and '-', at most 63 characters)"
            )
    return labels


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
GcpProject = Annotated[
    str,
    AfterValidator(
        pattern_check(
            r"([a-z][-a-z0-9.]*[a-z0-9]:)?[a-z]([-a-z0-9]{0,28}[a-z0-9])?",
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


class GkeNetwork(ConfigModel):
    """The cluster's VPC: created (CIDRs below) or an existing one named here."""

    # Existing network and subnetwork (both, or neither: then they are created).
    name: NonEmpty | None = None
    subnetwork: NonEmpty | None = None
    # Secondary ranges of the existing subnetwork for pods and services (optional: GKE
    # adds ranges of its own when absent).
    pods_range: NonEmpty | None = None
    services_range: NonEmpty | None = None
    # Ranges of a created network.
    nodes_cidr: Cidr = "10.10.0.0/20"
    pods_cidr: Cidr = "10.32.0.0/14"
    services_cidr: Cidr = "10.36.0.0/20"

    @property
    def existing(self) -> bool:
        return self.name is not None


class GkeCluster(CloudCluster):
    region: GcpRegion
    zones: list[GcpZone] = Field(default_factory=list)
    project: GcpProject | None = None  # falls back to gcp:project
    release_channel: Literal["RAPID", "REGULAR", "STABLE", "EXTENDED"] = "REGULAR"
    network: GkeNetwork = Field(default_factory=GkeNetwork)
    # Nodes without public IPs (outbound through Cloud NAT).
    private_nodes: Flag = False
    # Who may reach the control plane (empty: any address, with Google authentication).
    authorized_networks: list[Cidr] = Field(default_factory=list)
    # Labels on the cluster, bucket and database.
    tags: Annotated[dict[str, str], AfterValidator(_gcp_labels)] = Field(default_factory=dict)


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
    tags: dict[str, NonEmpty] = Field(default_factory=dict)
