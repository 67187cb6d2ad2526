"""The NVIDIA GPU operator, from its official chart, configured the way each cloud needs.

EKS: the nodes' AL2023 NVIDIA AMI has the driver and container toolkit; the operator adds
the device plugin, GPU feature discovery, DCGM and the MIG manager.

GKE (as NVIDIA documents it for GKE): node pools come with `gpu_driver_version:
INSTALLATION_DISABLED` and the label that turns GKE's own device plugin off (see
components/cluster/gke/node_pools.py); Google's driver installer DaemonSet puts the drivers
under /home/kubernetes/bin/nvidia, where the operator's toolkit is pointed; the operator's
DaemonSets run at system-node-critical priority, which GKE admits outside kube-system only
under a ResourceQuota naming those priority classes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import pulumi
import pulumi_kubernetes as k8s

from components import constants, kube, versions
from components.addons import gke_driver_installer, release
from components.config import GPU_TAINT, NodePool
from components.config.addons import GpuOperatorConfig

NAMESPACE = constants.GPU_OPERATOR_NAMESPACE
COMPONENT = "gpu-operator"
GKE_NVIDIA_DIR = "/home/kubernetes/bin/nvidia"
# GKE 1.33+ (containerd 2) reads the runtime config from a file the toolkit must edit.
RUNTIME_CONFIG_FILE_SINCE = (1, 33)
# Pods the quota admits at the critical priorities (the operator's DaemonSets, per node).
CRITICAL_PODS = "100"

# The chart's own tolerations; Helm replaces lists whole, so ours repeat them.
_DAEMONSETS_DEFAULT = [{"key": GPU_TAINT.key, "operator": "Exists", "effect": "NoSchedule"}]
_NFD_WORKER_DEFAULT = [
    {
        "key": "node-role.kubernetes.io/control-plane",
        "operator": "Equal",
        "value": "",
        "effect": "NoSchedule",
    },
    {"key": GPU_TAINT.key, "operator": "Exists", "effect": "NoSchedule"},
]

# The clouds whose clusters the stack creates, each needing the operator configured its way.
Cloud = Literal["gke", "eks"]


def with_gpu_pool_taints(
    defaults: list[dict[str, Any]], node_pools: Sequence[NodePool]
) -> list[dict[str, Any]]:
    """`defaults` plus a toleration for every other taint of a GPU pool (its nodes need
    the operator's DaemonSets too): those the pool's nodes carry (all_taints), a ComputeClass's
    and GKE's Arm taint included."""
    tolerations = list(defaults)
    for pool in node_pools:
        if not pool.gpu:
            continue
        for taint in pool.all_taints:
            if taint.key != GPU_TAINT.key and taint.toleration not in tolerations:
                tolerations.append(taint.toleration)
    return tolerations


def _runtime_config_from_file(kubernetes_version: str | None) -> bool:
    version = kubernetes_version
    # Unpinned clusters follow their release channel, which is past 1.33 today.
    return version is None or tuple(map(int, version.split("."))) >= RUNTIME_CONFIG_FILE_SINCE


def values(node_pools: Sequence[NodePool], kubernetes_version: str | None, cloud: Cloud) -> dict[str, Any]:
    """The chart values for `cloud`, a cluster of `node_pools` at `kubernetes_version`
    (None: unpinned)."""
    result: dict[str, Any] = {
        "daemonsets": {"tolerations": with_gpu_pool_taints(_DAEMONSETS_DEFAULT, node_pools)},
        "node-feature-discovery": {
            "worker": {"tolerations": with_gpu_pool_taints(_NFD_WORKER_DEFAULT, node_pools)}
        },
    }
    if cloud == "gke":
        toolkit: dict[str, Any] = {"installDir": GKE_NVIDIA_DIR}
        if _runtime_config_from_file(kubernetes_version):
            toolkit["env"] = [{"name": "RUNTIME_CONFIG_SOURCE", "value": "file"}]
        result |= {
            "driver": {"enabled": False},
            "hostPaths": {"driverInstallDir": GKE_NVIDIA_DIR},
            "toolkit": toolkit,
        }
    if cloud == "eks":
        # The AL2023 NVIDIA AMI carries the driver and the container toolkit.
        result |= {"driver": {"enabled": False}, "toolkit": {"enabled": False}}
    return result


def namespace() -> dict[str, Any]:
    meta = kube.metadata(NAMESPACE, COMPONENT)
    # The operator's DaemonSets are privileged (drivers, toolkit, device plugin).
    meta["labels"]["pod-security.kubernetes.io/enforce"] = "privileged"
    return kube.manifest("v1", "Namespace", meta)


def critical_pods_quota() -> dict[str, Any]:
    """Admits the operator's pods at system-node/cluster-critical priority (GKE)."""
    spec = {
        "hard": {"pods": CRITICAL_PODS},
        "scopeSelector": {
            "matchExpressions": [
                {
                    "operator": "In",
                    "scopeName": "PriorityClass",
                    "values": ["system-node-critical", "system-cluster-critical"],
                }
            ]
        },
    }
    return kube.manifest(
        "v1", "ResourceQuota", kube.metadata("gpu-operator-critical-pods", COMPONENT, NAMESPACE), spec=spec
    )


def driver_installer_image_type(node_pools: Sequence[NodePool]) -> str:
    """The image type of the GPU pools (GKE; one, checked by config validation)."""
    return next(pool.image_type for pool in node_pools if pool.gpu)


def release_args(
    settings: GpuOperatorConfig,
    node_pools: Sequence[NodePool],
    kubernetes_version: str | None,
    cloud: Cloud,
) -> dict[str, Any]:
    return release.release_args(
        "gpu-operator",
        versions.GPU_OPERATOR_CHART,
        settings.version,
        NAMESPACE,
        values(node_pools, kubernetes_version, cloud),
        repository=versions.GPU_OPERATOR_REPOSITORY,
        timeout=900,  # the operator's DaemonSets roll out node by node
    )


class GpuOperator(pulumi.ComponentResource):
    """The operator's namespace, what the cloud needs beside it, and its Helm release."""

    def __init__(
        self,
        name: str,
        settings: GpuOperatorConfig,
        node_pools: Sequence[NodePool],
        kubernetes_version: str | None,
        cloud: Cloud,
        after: list[pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None,
    ):
        """The operator at `settings.version` for a cluster of `node_pools` at
        `kubernetes_version` (None: unpinned). `after`: what must exist first (the node
        pools); a component's own dependencies do not reach its children, so each child is
        given them."""
        super().__init__("determined:addons:GpuOperator", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, depends_on=after)
        ns = kube.register(namespace(), child)
        after_ns = pulumi.ResourceOptions(parent=self, depends_on=[*after, ns])
        before_release: list[pulumi.Resource] = [ns]
        if cloud == "gke":
            before_release.append(kube.register(critical_pods_quota(), after_ns))
            has_gpu_pools = any(pool.gpu for pool in node_pools)
            if has_gpu_pools:
                installer = gke_driver_installer.daemonset(driver_installer_image_type(node_pools))
                before_release.append(kube.register(installer, child))
        self.release = k8s.helm.v3.Release(
            "gpu-operator",
            opts=pulumi.ResourceOptions(parent=self, depends_on=[*after, *before_release]),
            **release_args(settings, node_pools, kubernetes_version, cloud),
        )
        self.register_outputs({})
