"""The Kubernetes cluster Determined runs on, and the provider that talks to it.

`cloud: existing` uses a cluster made elsewhere, through its kubeconfig and context.
GKE and EKS clusters are created by their own modules (refused by validation until then).
"""

from __future__ import annotations

import os

import pulumi
import pulumi_kubernetes as k8s

from components.config import StackConfig


def existing_cluster_provider(cfg: StackConfig) -> k8s.Provider:
    """A provider for an existing cluster: the configured kubeconfig (path) and context,
    else the provider defaults (KUBECONFIG or ~/.kube/config, `kubernetes:context`)."""
    kubeconfig = cfg.cluster.kubeconfig
    context = cfg.cluster.context or pulumi.Config("kubernetes").get("context")
    return k8s.Provider(
        "existing-cluster",
        kubeconfig=os.path.expanduser(kubeconfig) if kubeconfig else None,
        context=context,
    )


def provider(cfg: StackConfig) -> k8s.Provider:
    if cfg.cloud == "existing":
        return existing_cluster_provider(cfg)
    raise NotImplementedError(f"cloud {cfg.cloud}")  # refused by config validation first
