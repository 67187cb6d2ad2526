"""Where Determined runs: one module per target, each giving the app a `ClusterHandle`.

`existing` connects to a cluster made elsewhere; `gke` and `eks` (later) create one. The
app never asks which cloud it is on: whatever differs between targets is in the handle.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from deploy.config import ExistingStack, StackConfig


@dataclass(frozen=True)
class ClusterHandle:
    """What the app needs to know of the cluster it deploys onto."""

    # Every Kubernetes object goes through this provider.
    provider: k8s.Provider
    # Storage class for the in-cluster database when the config names none
    # (None: the cluster's default class).
    default_storage_class: str | None = None
    # Cluster resources the app waits for (node pools, add-ons).
    ready: list[pulumi.Resource] = field(default_factory=list)


def connect(cfg: StackConfig) -> ClusterHandle:
    """The handle of the cluster the config names; each target imports only its own SDK."""
    if isinstance(cfg, ExistingStack):
        from deploy.platform import existing

        return existing.connect(cfg)
    raise NotImplementedError(f"cloud {cfg.cloud}")  # refused by config validation first
