"""Kubernetes helpers: manifests as plain dicts, their registration, strategic merge.

`from components import kube` gives the manifest helpers and `kube.register`; strategic merge
and the schema it reads live in their own modules.
"""

from components.kube.manifests import (
    cluster_ip_service,
    dns_label,
    labels,
    manifest,
    metadata,
    resource_name,
    restricted_container,
    restricted_pod,
    selector,
)
from components.kube.register import register

__all__ = [
    "cluster_ip_service",
    "dns_label",
    "labels",
    "manifest",
    "metadata",
    "register",
    "resource_name",
    "restricted_container",
    "restricted_pod",
    "selector",
]
