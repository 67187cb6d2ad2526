"""cert-manager, from its official chart: Let's Encrypt certificates for the Gateway.

The chart (oci://quay.io/jetstack/charts/cert-manager) installs its CRDs when `crds.enabled`
(`installCRDs` is deprecated). Gateway API support is switched on in the controller's
ControllerConfiguration, which the chart renders from `config` (v1.21: `gatewayAPI.enabled`;
the older top-level `enableGatewayAPI` is deprecated but still read). The
ExperimentalGatewayAPISupport feature gate it also needs is on by default (beta).

With it on, the controller refuses to start (crash loop) until the Gateway API CRDs exist: the
Release must wait for whatever installs them (Envoy Gateway's chart, or the cluster's own).

The ClusterIssuer solves ACME HTTP-01 challenges with the `gatewayHTTPRoute` solver (still
marked experimental upstream): for each challenge cert-manager creates an HTTPRoute, in the
namespace of the Certificate, attached to the Gateway's plain-HTTP listener. A Gateway
annotated `cert-manager.io/cluster-issuer: ISSUER` gets its HTTPS listeners' certificates.

DNS-01 with the cluster's own cloud identity (gke: Cloud DNS, eks: Route 53): the platform
binds a cloud identity to the controller's service account (SERVICE_ACCOUNT in NAMESPACE) and
hands over the solver settings it implies (`solver_defaults`) and the account's annotations;
the ClusterIssuer's solver then names no credentials and cert-manager uses ambient ones.

Pure functions only: the objects are registered elsewhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from components import constants, kube, versions
from components.addons import release

# One copy: the config checks the solver it renders against cert-manager's schema.
from components.config.tls import dns01_solver

CHART = "oci://quay.io/jetstack/charts/cert-manager"
VERSION = versions.CERT_MANAGER_VERSION
NAMESPACE = constants.CERT_MANAGER_NAMESPACE
COMPONENT = "cert-manager"
API = "cert-manager.io/v1"
CONFIG_API = "controller.config.cert-manager.io/v1alpha1"
ISSUER = "determined-letsencrypt"
ACME_SERVER = "https://acme-v02.api.letsencrypt.org/directory"
# The Secret (in NAMESPACE, cert-manager's cluster resource namespace) holding the ACME
# account key, which cert-manager creates on first registration.
ACCOUNT_KEY_SECRET = "determined-letsencrypt-account"
# The Release's name: the chart names its objects after it.
RELEASE = "cert-manager"
# The controller's service account (the pod that calls the DNS API): the chart's
# `cert-manager.serviceAccountName`, which is `serviceAccount.name` or else the fullname,
# which is the release name when that contains the chart's name ("cert-manager").
# Source: components/charts/cert-manager/templates/_helpers.tpl at v1.21.1 (read 2026-11).
# The values pin it whenever a cloud identity is bound to it, so both always agree.
SERVICE_ACCOUNT = "cert-manager"
# On the controller's pods: the cloud identity they were created with. A new identity
# restarts them, as EKS sets Pod Identity credentials in a pod's environment only when the
# pod is created (https://docs.aws.amazon.com/eks/latest/APIReference/API_CreatePodIdentityAssociation.html,
# read 2026-11).
IDENTITY_ANNOTATION = "determined.ai/dns01-identity"


def controller_config() -> dict[str, Any]:
    """The controller's ControllerConfiguration (pkg/apis/config/controller/v1alpha1 at
    v1.21.1): the chart's defaults plus the Gateway API integration (the gateway-shim
    controller and the HTTP-01 gatewayHTTPRoute solver)."""
    return {"apiVersion": CONFIG_API, "kind": "ControllerConfiguration", "gatewayAPI": {"enabled": True}}


def values(account_annotations: Mapping[str, Any] | None = None, identity: Any = None) -> dict[str, Any]:
    """The chart values: CRDs installed with the chart, Gateway API support on; with a cloud
    `identity` for DNS-01, the controller's service account (named, annotated with
    `account_annotations`) and its pods marked with the identity."""
    found: dict[str, Any] = {"crds": {"enabled": True}, "config": controller_config()}
    if identity is not None:
        found["serviceAccount"] = {"name": SERVICE_ACCOUNT, "annotations": dict(account_annotations or {})}
        found["podAnnotations"] = {IDENTITY_ANNOTATION: identity}
    return found


def release_args(
    version: str = VERSION, account_annotations: Mapping[str, Any] | None = None, identity: Any = None
) -> dict[str, Any]:
    """Arguments of the `kubernetes:helm.sh/v3:Release` (an OCI chart: no repository)."""
    return release.release_args(
        RELEASE, CHART, version, NAMESPACE, values(account_annotations, identity), create_namespace=True
    )


def cluster_issuer(
    email: str,
    gateway_name: str,
    gateway_namespace: str,
    listener: str = "http",
    dns01: Mapping[str, Any] | None = None,
    solver_defaults: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The Let's Encrypt ClusterIssuer: ACME account `email`, HTTP-01 challenges answered
    through the listener `listener` (plain HTTP on port 80) of the Gateway
    `gateway_namespace/gateway_name`; or, given `dns01` (cert-manager's DNS-01 solver
    settings, with `solver_defaults` under them), DNS-01 challenges (for hosts the internet
    cannot reach over HTTP)."""
    if not isinstance(email, str) or "@" not in email:
        raise ValueError(f"an ACME account needs an email address, not {email!r}")
    if dns01 is not None:
        solver: dict[str, Any] = {"dns01": dns01_solver(dns01, solver_defaults)}
    else:
        solver = {
            "http01": {
                "gatewayHTTPRoute": {
                    "parentRefs": [
                        {
                            "kind": "Gateway",
                            "name": gateway_name,
                            "namespace": gateway_namespace,
                            "sectionName": listener,
                        }
                    ]
                }
            }
        }
    spec = {
        "acme": {
            "server": ACME_SERVER,
            "email": email,
            "privateKeySecretRef": {"name": ACCOUNT_KEY_SECRET},
            "solvers": [solver],
        }
    }
    return kube.manifest(API, "ClusterIssuer", kube.metadata(ISSUER, COMPONENT), spec=spec)
