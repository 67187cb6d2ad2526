"""Kubernetes manifest helpers shared by the components.

Pure functions build manifests as plain dicts (exactly what the API server receives), so
tests and policies see every field. `register` turns such a manifest into the typed
pulumi-kubernetes resource of its kind; it is the only place that knows that mapping.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

import pulumi

PART_OF = "determined"

# (apiVersion, kind) -> "module:Class" of the typed pulumi-kubernetes resource.
_RESOURCE_CLASSES = {
    ("v1", "Namespace"): "pulumi_kubernetes.core.v1:Namespace",
    ("v1", "ServiceAccount"): "pulumi_kubernetes.core.v1:ServiceAccount",
    ("v1", "Secret"): "pulumi_kubernetes.core.v1:Secret",
    ("v1", "Service"): "pulumi_kubernetes.core.v1:Service",
    ("v1", "PersistentVolumeClaim"): "pulumi_kubernetes.core.v1:PersistentVolumeClaim",
    ("v1", "ResourceQuota"): "pulumi_kubernetes.core.v1:ResourceQuota",
    ("apps/v1", "Deployment"): "pulumi_kubernetes.apps.v1:Deployment",
    ("apps/v1", "StatefulSet"): "pulumi_kubernetes.apps.v1:StatefulSet",
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): "pulumi_kubernetes.rbac.v1:ClusterRole",
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): "pulumi_kubernetes.rbac.v1:ClusterRoleBinding",
    ("scheduling.k8s.io/v1", "PriorityClass"): "pulumi_kubernetes.scheduling.v1:PriorityClass",
}


def labels(component: str, instance: str = "determined") -> dict[str, str]:
    """Recommended Kubernetes labels; `app.kubernetes.io/name` + instance select pods."""
    return {
        "app.kubernetes.io/name": component,
        "app.kubernetes.io/instance": instance,
        "app.kubernetes.io/part-of": PART_OF,
        "app.kubernetes.io/managed-by": "pulumi",
    }


def selector(component: str, instance: str = "determined") -> dict[str, str]:
    """The immutable subset of `labels` used in selectors."""
    return {"app.kubernetes.io/name": component, "app.kubernetes.io/instance": instance}


def metadata(name: str, component: str, namespace: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": labels(component)}
    if namespace is not None:
        meta["namespace"] = namespace
    return meta


def manifest(api_version: str, kind: str, meta: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, **fields}


def cluster_ip_service(
    name: str, component: str, namespace: str, port_name: str, port: int
) -> dict[str, Any]:
    """A ClusterIP Service for a component's pods; the target is the pods' named port."""
    spec = {
        "type": "ClusterIP",
        "selector": selector(component),
        "ports": [{"name": port_name, "port": port, "targetPort": port_name}],
    }
    return manifest("v1", "Service", metadata(name, component, namespace), spec=spec)


def resource_name(obj: dict[str, Any]) -> str:
    """Pulumi logical name of a manifest: `<namespace>/<name>`, or `<name>` if cluster-scoped."""
    meta = obj["metadata"]
    return f"{meta['namespace']}/{meta['name']}" if "namespace" in meta else meta["name"]


def dns_label(text: str) -> str:
    """A DNS label made from free text: lower case, other characters turned into '-'."""
    return re.sub(r"[^a-z0-9-]", "-", text.lower()).strip("-")[:63]


def _snake(key: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()


def _resource_class(api_version: str, kind: str) -> type[pulumi.CustomResource]:
    try:
        module_name, class_name = _RESOURCE_CLASSES[(api_version, kind)].split(":")
    except KeyError:
        raise ValueError(f"no typed resource registered for {api_version} {kind}") from None
    return getattr(importlib.import_module(module_name), class_name)


def register(obj: dict[str, Any], opts: pulumi.ResourceOptions | None = None) -> pulumi.CustomResource:
    """Register a manifest as its typed pulumi-kubernetes resource.

    Top-level fields become the class's snake_case arguments; nested dicts are passed
    through unchanged (pulumi-kubernetes sends them to the API server as they are).
    """
    cls = _resource_class(obj["apiVersion"], obj["kind"])
    fields = {_snake(k): v for k, v in obj.items() if k not in ("apiVersion", "kind")}
    return cls(resource_name(obj), opts=opts, **fields)
