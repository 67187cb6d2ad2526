"""`determined:cluster`: which cluster, per target (`cloud`)."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from deploy.config.base import ConfigModel
from deploy.config.syntax import Cidr, DnsLabel, Flag, KubernetesMinor, NonEmpty


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
    project: NonEmpty | None = None  # falls back to gcp:project
    release_channel: Literal["RAPID", "REGULAR", "STABLE", "EXTENDED"] = "REGULAR"
    network: GkeNetwork = Field(default_factory=GkeNetwork)
    # Nodes without public IPs (outbound through Cloud NAT).
    private_nodes: Flag = False
    # Who may reach the control plane (empty: any address, with Google authentication).
    authorized_networks: list[Cidr] = Field(default_factory=list)
    # Labels on the cluster, bucket and database.
    tags: Annotated[dict[str, str], AfterValidator(_gcp_labels)] = Field(default_factory=dict)


class EksCluster(CloudCluster):
    tags: dict[str, NonEmpty] = Field(default_factory=dict)
