"""`determined:cluster`: which cluster, per target (`cloud`)."""

from __future__ import annotations

from pydantic import Field

from deploy.config.base import ConfigModel
from deploy.config.syntax import DnsLabel, KubernetesMinor, NonEmpty


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


class GkeCluster(CloudCluster):
    project: NonEmpty | None = None  # falls back to gcp:project


class EksCluster(CloudCluster):
    pass
