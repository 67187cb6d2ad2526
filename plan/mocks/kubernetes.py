"""The Kubernetes provider: what the API server sets on an object, and Helm releases.

Every `kubernetes:*` type gets `KUBERNETES` (server metadata, plus what `KUBERNETES_KINDS`
adds for its kind); types the provider answers differently are in `RESOURCES`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plan.mocks.model import CREATED_AT, Request, ResourceModel, digest, ip_address, merge, no_outputs, uid
from plan.redaction import is_secret


def _kind(req: Request) -> str:
    return req.type.rsplit(":", 1)[-1]


def _meta(req: Request) -> dict[str, Any]:
    meta = req.inputs.get("metadata")
    return meta if isinstance(meta, dict) and not is_secret(meta) else {}


def _replicas(req: Request) -> int:
    spec = req.inputs.get("spec")
    replicas = spec.get("replicas", 1) if isinstance(spec, dict) else 1
    return int(replicas) if isinstance(replicas, (int, float)) else 1


def _workload_status(req: Request) -> dict[str, Any]:
    n = _replicas(req)
    status = {"observedGeneration": 1, "replicas": n, "readyReplicas": n, "updatedReplicas": n}
    status["availableReplicas"] = n
    if _kind(req) == "StatefulSet":
        status |= {"currentReplicas": n, "currentRevision": f"{_meta(req).get('name', req.name)}-1"}
    return {"status": status}


def _service(req: Request) -> dict[str, Any]:
    spec = req.inputs.get("spec") if isinstance(req.inputs.get("spec"), dict) else {}
    kind = spec.get("type", "ClusterIP")
    computed_spec: dict[str, Any] = {}
    if kind != "ExternalName" and spec.get("clusterIP") != "None":
        ip = spec.get("clusterIP") or ip_address(req.seed, (10, 96))
        computed_spec |= {"clusterIP": ip, "clusterIPs": [ip], "ipFamilies": ["IPv4"]}
    status: dict[str, Any] = {"loadBalancer": {}}
    if kind in ("NodePort", "LoadBalancer") and isinstance(spec.get("ports"), list):
        computed_spec["ports"] = [
            {**port, "nodePort": port.get("nodePort") or 30000 + int(digest(req.seed, str(i)), 16) % 2768}
            for i, port in enumerate(spec["ports"])
            if isinstance(port, dict)
        ]
    if kind == "LoadBalancer":
        status["loadBalancer"] = {"ingress": [{"ip": ip_address(req.seed, (203, 0)), "ipMode": "VIP"}]}
    return {"spec": computed_spec, "status": status}


def _claim(req: Request) -> dict[str, Any]:
    spec = req.inputs.get("spec") if isinstance(req.inputs.get("spec"), dict) else {}
    requests = (
        spec.get("resources", {}).get("requests", {}) if isinstance(spec.get("resources"), dict) else {}
    )
    return {
        "spec": {"volumeName": f"pvc-{uid(req)}"},
        "status": {
            "phase": "Bound",
            "accessModes": spec.get("accessModes", []),
            "capacity": {"storage": requests.get("storage", "1Gi")},
        },
    }


def _quota(req: Request) -> dict[str, Any]:
    spec = req.inputs.get("spec") if isinstance(req.inputs.get("spec"), dict) else {}
    hard = spec.get("hard", {}) if isinstance(spec.get("hard"), dict) else {}
    return {"status": {"hard": hard, "used": dict.fromkeys(hard, "0")}}


# What the API server adds per kind that the program might read (status, assigned fields).
KUBERNETES_KINDS: dict[str, Callable[[Request], dict[str, Any]]] = {
    "Namespace": lambda req: {"spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}},
    "Service": _service,
    "Deployment": _workload_status,
    "StatefulSet": _workload_status,
    "PersistentVolumeClaim": _claim,
    "ResourceQuota": _quota,
}


def _kubernetes_create(req: Request) -> dict[str, Any]:
    server_meta = {
        "uid": uid(req),
        "resourceVersion": "1",
        "creationTimestamp": CREATED_AT,
        "generation": 1,
    }
    return merge({"metadata": server_meta}, KUBERNETES_KINDS.get(_kind(req), no_outputs)(req))


def _kubernetes_id(req: Request) -> str:
    meta = _meta(req)
    name = meta.get("name") or req.name
    return f"{meta['namespace']}/{name}" if meta.get("namespace") else str(name)


# Any Kubernetes object: the API server's metadata, named `<namespace>/<name>`.
KUBERNETES = ResourceModel(create=_kubernetes_create, autoname="metadata.name", ident=_kubernetes_id)


def _helm_release(req: Request) -> dict[str, Any]:
    chart = req.inputs.get("chart", "")
    name = req.inputs.get("name") or req.name
    return {
        "status": {
            "name": name,
            "namespace": req.inputs.get("namespace", "default"),
            "chart": str(chart).rsplit("/", 1)[-1],
            "version": req.inputs.get("version", ""),
            "appVersion": req.inputs.get("version", ""),
            "revision": 1,
            "status": "deployed",
        }
    }


RESOURCES: dict[str, ResourceModel] = {
    "kubernetes:helm.sh/v3:Release": ResourceModel(create=_helm_release, autoname="name"),
}
