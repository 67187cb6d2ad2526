"""Envoy Gateway, from its official chart: the Gateway API implementation installed when the
cluster brings none.

The chart (oci://docker.io/envoyproxy/gateway-helm) installs the Envoy Gateway controller and,
from its `crds` subchart, the Gateway API CRDs it bundles (v1.6.1 at chart v1.9.0, experimental
channel, a superset of the standard one) and its own CRDs (EnvoyProxy, ...). Helm installs
CRDs from a chart's `crds/` directory on first install only and never upgrades them.

The controller serves every GatewayClass whose `controllerName` is CONTROLLER. Ours points at
an EnvoyProxy that describes the Service in front of the Envoy pods of each Gateway of the
class: a LoadBalancer, with the annotations that make the cloud's load balancer public or
internal, and restricted to the allowed client ranges.

Pure functions only: the objects are registered elsewhere.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from components import constants, kube, versions
from components.addons import release

CHART = "oci://docker.io/envoyproxy/gateway-helm"
VERSION = versions.ENVOY_GATEWAY_VERSION
NAMESPACE = constants.ENVOY_GATEWAY_NAMESPACE
COMPONENT = "envoy-gateway"
# The chart's default `config.envoyGateway.gateway.controllerName` (values.tmpl.yaml).
CONTROLLER = "gateway.envoyproxy.io/gatewayclass-controller"
GATEWAY_CLASS = "determined"
PROXY_NAME = "determined"
PROXY_API = "gateway.envoyproxy.io/v1alpha1"
GATEWAY_API = "gateway.networking.k8s.io/v1"

CLOUDS = ("existing", "gke", "eks")
EXPOSURES = ("public", "internal")

# GKE: an internal passthrough Network Load Balancer instead of an external one.
GKE_LB_TYPE = constants.GKE_LB_TYPE
# EKS without the AWS Load Balancer Controller (none is installed): the in-tree cloud
# provider's legacy annotations. `nlb` makes a Network Load Balancer (instance targets)
# instead of a Classic ELB; `internal` gives it private addresses only.
AWS_LB_TYPE = "service.beta.kubernetes.io/aws-load-balancer-type"
AWS_LB_INTERNAL = constants.AWS_LB_INTERNAL


def values() -> dict[str, Any]:
    """The chart values: its defaults, which already install the Gateway API and Envoy
    Gateway CRDs and make the controller serve CONTROLLER. Written out so that turning the
    CRDs off (for a cluster that manages them itself) is a visible change."""
    return {"crds": {"enabled": True}}


def release_args(version: str = VERSION) -> dict[str, Any]:
    """Arguments of the `kubernetes:helm.sh/v3:Release` (an OCI chart: no repository)."""
    return release.release_args("envoy-gateway", CHART, version, NAMESPACE, values(), create_namespace=True)


def load_balancer_annotations(cloud: str, exposure: str) -> dict[str, str]:
    """Annotations of the Envoy Service that make the cloud's load balancer public or
    internal. An existing cluster gets none: its load balancer is whatever its own cloud
    controller makes of a plain LoadBalancer Service (annotations it needs, e.g. for an
    internal load balancer, are not known here and can be given later)."""
    if cloud not in CLOUDS:
        raise ValueError(f"cloud must be one of {', '.join(CLOUDS)}, not {cloud!r}")
    if exposure not in EXPOSURES:
        raise ValueError(f"exposure must be one of {', '.join(EXPOSURES)}, not {exposure!r}")
    internal = exposure == "internal"
    if cloud == "gke":
        return {GKE_LB_TYPE: "Internal"} if internal else {}
    if cloud == "eks":
        annotations = {AWS_LB_TYPE: "nlb"}
        if internal:
            annotations[AWS_LB_INTERNAL] = "true"
        return annotations
    return {}


def _check_source_ranges(source_ranges: list[str]) -> list[str]:
    """The ranges as given; each must be an IPv4 or IPv6 CIDR (`a.b.c.d/n`), as a Service's
    loadBalancerSourceRanges requires."""
    for cidr in source_ranges:
        try:
            if not isinstance(cidr, str) or "/" not in cidr:
                raise ValueError
            ipaddress.ip_network(cidr, strict=False)
        except ValueError:
            raise ValueError(f"source range {cidr!r} is not a CIDR such as 203.0.113.0/24") from None
    return list(source_ranges)


def envoy_proxy(namespace: str, cloud: str, exposure: str, source_ranges: list[str]) -> dict[str, Any]:
    """The EnvoyProxy the GatewayClass points at: how Envoy Gateway exposes each Gateway.

    The Service is a LoadBalancer with the cloud's annotations; `source_ranges` (when given)
    become its loadBalancerSourceRanges, which the cloud turns into firewall rules (GKE) or
    node security group rules (EKS in-tree NLB). externalTrafficPolicy Local (Envoy Gateway's
    default, written out because the ranges depend on it) keeps the client's source address
    instead of SNATing it to a node's, so Envoy and its access logs see the real client."""
    service: dict[str, Any] = {"type": "LoadBalancer"}
    annotations = load_balancer_annotations(cloud, exposure)
    if annotations:
        service["annotations"] = annotations
    ranges = _check_source_ranges(source_ranges)
    if ranges:
        service["loadBalancerSourceRanges"] = ranges
    service["externalTrafficPolicy"] = "Local"
    spec = {"provider": {"type": "Kubernetes", "kubernetes": {"envoyService": service}}}
    return kube.manifest(PROXY_API, "EnvoyProxy", kube.metadata(PROXY_NAME, COMPONENT, namespace), spec=spec)


def gateway_class(proxy_namespace: str) -> dict[str, Any]:
    """The GatewayClass the Determined Gateway uses: served by Envoy Gateway, configured by
    the EnvoyProxy PROXY_NAME in `proxy_namespace`."""
    spec = {
        "controllerName": CONTROLLER,
        "parametersRef": {
            "group": "gateway.envoyproxy.io",
            "kind": "EnvoyProxy",
            "name": PROXY_NAME,
            "namespace": proxy_namespace,
        },
    }
    return kube.manifest(GATEWAY_API, "GatewayClass", kube.metadata(GATEWAY_CLASS, COMPONENT), spec=spec)
