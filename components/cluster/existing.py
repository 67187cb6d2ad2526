"""A cluster made elsewhere (kind, on-prem, a cloud cluster): reached by kubeconfig.

Its node pools are described in the config, not created.
"""

from __future__ import annotations

import os

import pulumi
import pulumi_kubernetes as k8s

from components.cluster import ClusterHandle
from components.config import ExistingStack


def provider(cfg: ExistingStack) -> k8s.Provider:
    """The configured kubeconfig (path) and context, else the provider defaults
    (KUBECONFIG or ~/.kube/config, `kubernetes:context`)."""
    kubeconfig = cfg.cluster.kubeconfig
    context = cfg.cluster.context or pulumi.Config("kubernetes").get("context")
    return k8s.Provider(
        "existing-cluster",
        kubeconfig=os.path.expanduser(kubeconfig) if kubeconfig else None,
        context=context,
    )


def connect(cfg: ExistingStack) -> ClusterHandle:
    return ClusterHandle(provider=provider(cfg))
