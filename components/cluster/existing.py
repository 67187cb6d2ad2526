"""A cluster made elsewhere (kind, on-prem, a cloud cluster): reached by kubeconfig.

Its node pools are described to the Determined component, not created here: the cluster
component holds only the Kubernetes provider that reaches it.

No `from __future__ import annotations` here: the Pulumi SDK's schema analyzer reads the
class-level output annotations as types, not strings (pulumi 3.272.0
provider/experimental/analyzer.py `analyze_type`: `inspect.get_annotations` without `eval_str`).
"""

import os

import pulumi
import pulumi_kubernetes as k8s
from pydantic import Field

from components.cluster import ClusterHandle
from components.config.args import ArgsModel
from components.config.cluster import ExistingCluster as ExistingClusterConfig

__all__ = ["ExistingCluster", "ExistingClusterArgs"]

TYPE = "determined:index:ExistingCluster"


class ExistingClusterArgs(ArgsModel):
    """A Kubernetes cluster that exists already, as the stack's cluster section names it."""

    cluster: ExistingClusterConfig = Field(
        description="The cluster: its name (the master's cluster_name), and the kubeconfig path and context "
        "that reach it (default: KUBECONFIG or ~/.kube/config, and kubernetes:context)."
    )


def provider_args(args: ExistingClusterArgs) -> dict[str, str | None]:
    """The configured kubeconfig (path) and context, else the provider defaults
    (KUBECONFIG or ~/.kube/config, `kubernetes:context`)."""
    kubeconfig = args.cluster.kubeconfig
    context = args.cluster.context or pulumi.Config("kubernetes").get("context")
    return {"kubeconfig": os.path.expanduser(kubeconfig) if kubeconfig else None, "context": context}


class ExistingCluster(pulumi.ComponentResource):
    """A cluster made elsewhere, reached through a kubeconfig; `handle` is what the
    Determined component deploys onto."""

    cluster_name: pulumi.Output[str]
    """The cluster's name, as the Args give it."""

    def __init__(self, name: str, args: ExistingClusterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__(TYPE, name, None, opts)
        self.kubernetes = k8s.Provider(
            "existing-cluster",
            # The provider was the stack's own child before this component held it: deployed
            # stacks keep its URN (and every object's reference to it).
            opts=pulumi.ResourceOptions(
                parent=self, aliases=[pulumi.Alias(parent=pulumi.ROOT_STACK_RESOURCE)]
            ),
            **provider_args(args),
        )
        self.cluster_name = pulumi.Output.from_input(args.cluster.name)
        self.handle = ClusterHandle(provider=self.kubernetes)
        self.register_outputs({"clusterName": self.cluster_name})
