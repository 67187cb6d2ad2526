"""Registering a manifest as the typed pulumi-kubernetes resource of its kind.

The only place that knows the mapping from (apiVersion, kind) to a resource class.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

import pulumi

from components.kube import scan_exceptions
from components.kube.manifests import resource_name

# (apiVersion, kind) -> "module:Class" of the typed pulumi-kubernetes resource.
_RESOURCE_CLASSES = {
    ("v1", "Namespace"): "pulumi_kubernetes.core.v1:Namespace",
    ("v1", "ServiceAccount"): "pulumi_kubernetes.core.v1:ServiceAccount",
    ("v1", "Secret"): "pulumi_kubernetes.core.v1:Secret",
    ("v1", "Service"): "pulumi_kubernetes.core.v1:Service",
    ("v1", "PersistentVolume"): "pulumi_kubernetes.core.v1:PersistentVolume",
    ("v1", "PersistentVolumeClaim"): "pulumi_kubernetes.core.v1:PersistentVolumeClaim",
    ("v1", "ResourceQuota"): "pulumi_kubernetes.core.v1:ResourceQuota",
    ("v1", "LimitRange"): "pulumi_kubernetes.core.v1:LimitRange",
    ("apps/v1", "Deployment"): "pulumi_kubernetes.apps.v1:Deployment",
    ("apps/v1", "StatefulSet"): "pulumi_kubernetes.apps.v1:StatefulSet",
    ("apps/v1", "DaemonSet"): "pulumi_kubernetes.apps.v1:DaemonSet",
    ("batch/v1", "Job"): "pulumi_kubernetes.batch.v1:Job",
    ("batch/v1", "CronJob"): "pulumi_kubernetes.batch.v1:CronJob",
    ("policy/v1", "PodDisruptionBudget"): "pulumi_kubernetes.policy.v1:PodDisruptionBudget",
    ("networking.k8s.io/v1", "NetworkPolicy"): "pulumi_kubernetes.networking.v1:NetworkPolicy",
    ("v1", "ConfigMap"): "pulumi_kubernetes.core.v1:ConfigMap",
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): "pulumi_kubernetes.rbac.v1:ClusterRole",
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): "pulumi_kubernetes.rbac.v1:ClusterRoleBinding",
    ("rbac.authorization.k8s.io/v1", "Role"): "pulumi_kubernetes.rbac.v1:Role",
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): "pulumi_kubernetes.rbac.v1:RoleBinding",
    ("scheduling.k8s.io/v1", "PriorityClass"): "pulumi_kubernetes.scheduling.v1:PriorityClass",
    ("storage.k8s.io/v1", "StorageClass"): "pulumi_kubernetes.storage.v1:StorageClass",
}


def _snake(key: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()


# Custom resources of the add-ons' CRDs: registered as generic CustomResources.
_CUSTOM_KINDS = {
    ("kueue.x-k8s.io/v1beta2", "ResourceFlavor"),
    ("kueue.x-k8s.io/v1beta2", "ClusterQueue"),
    ("kueue.x-k8s.io/v1beta2", "LocalQueue"),
    ("kueue.x-k8s.io/v1beta2", "AdmissionCheck"),
    ("kueue.x-k8s.io/v1beta2", "ProvisioningRequestConfig"),
    ("gateway.networking.k8s.io/v1", "GatewayClass"),
    ("gateway.networking.k8s.io/v1", "Gateway"),
    ("gateway.networking.k8s.io/v1", "HTTPRoute"),
    ("gateway.networking.k8s.io/v1", "TLSRoute"),
    ("gateway.envoyproxy.io/v1alpha1", "EnvoyProxy"),
    ("cert-manager.io/v1", "ClusterIssuer"),
    ("cert-manager.io/v1", "Certificate"),
    ("gateway.networking.k8s.io/v1beta1", "ReferenceGrant"),
    ("monitoring.coreos.com/v1", "ServiceMonitor"),
    ("monitoring.coreos.com/v1", "PodMonitor"),
    ("monitoring.coreos.com/v1", "PrometheusRule"),
    # Karpenter's chart's CRDs (components/cluster/eks/karpenter_nodes.py).
    ("karpenter.sh/v1", "NodePool"),
    ("karpenter.k8s.aws/v1", "EC2NodeClass"),
    # GKE's own CRD (components/cluster/gke/compute_classes.py).
    ("cloud.google.com/v1", "ComputeClass"),
    # GKE's multi-networking CRDs (components/cluster/gke/fabric.py).
    ("networking.gke.io/v1", "GKENetworkParamSet"),
    ("networking.gke.io/v1", "Network"),
}


def _resource_class(api_version: str, kind: str) -> type[pulumi.CustomResource]:
    try:
        module_name, class_name = _RESOURCE_CLASSES[(api_version, kind)].split(":")
    except KeyError:
        raise ValueError(f"no typed resource registered for {api_version} {kind}") from None
    return getattr(importlib.import_module(module_name), class_name)


def register(obj: dict[str, Any], opts: pulumi.ResourceOptions | None = None) -> pulumi.CustomResource:
    """Register a manifest as its typed pulumi-kubernetes resource.

    Top-level fields become the class's snake_case arguments; nested dicts are passed
    through unchanged (pulumi-kubernetes sends them to the API server as they are). Every
    object passes here, so here it gets the outside scan's skips that apply to it.
    """
    obj = scan_exceptions.annotated(obj)
    if (obj["apiVersion"], obj["kind"]) in _CUSTOM_KINDS:
        from pulumi_kubernetes.apiextensions import CustomResource

        fields = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}
        return CustomResource(
            resource_name(obj), api_version=obj["apiVersion"], kind=obj["kind"], opts=opts, **fields
        )
    cls = _resource_class(obj["apiVersion"], obj["kind"])
    fields = {_snake(k): v for k, v in obj.items() if k not in ("apiVersion", "kind")}
    return cls(resource_name(obj), opts=opts, **fields)
