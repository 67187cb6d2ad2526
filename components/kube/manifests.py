"""Kubernetes manifest helpers: labels, metadata, whole objects as plain dicts.

Pure functions build manifests exactly as the API server receives them, so tests and
policies see every field; `components.kube.register` turns them into Pulumi resources.
"""

from __future__ import annotations

import re
from typing import Any

PART_OF = "determined"


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


def restricted_container(uid: int) -> dict[str, Any]:
    """A container securityContext meeting the `restricted` Pod Security Standard, running
    as `uid` with a read-only root file system."""
    return {
        "runAsNonRoot": True,
        "runAsUser": uid,
        "runAsGroup": uid,
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def restricted_pod(uid: int) -> dict[str, Any]:
    """The pod-level securityContext that goes with `restricted_container(uid)`."""
    return {
        "runAsNonRoot": True,
        "runAsUser": uid,
        "runAsGroup": uid,
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def resource_name(obj: dict[str, Any]) -> str:
    """Pulumi logical name of a manifest: `<namespace>/<name>`, or `<name>` if cluster-scoped."""
    meta = obj["metadata"]
    return f"{meta['namespace']}/{meta['name']}" if "namespace" in meta else meta["name"]


def dns_label(text: str) -> str:
    """A DNS label made from free text: lower case, other characters turned into '-'."""
    return re.sub(r"[^a-z0-9-]", "-", text.lower()).strip("-")[:63].rstrip("-")
