"""How the master is reached from outside: Gateway API objects built by pure functions.

One Gateway `determined` (its class, e.g. Envoy Gateway's, is the caller's) in the stack's
namespace, only standard-channel `gateway.networking.k8s.io/v1` kinds:

- `ingress` mode: TLS ends at the Gateway. Listener `https` (HTTPS, Terminate) carries an
  HTTPRoute to the master Service; with a cert-manager certificate the Gateway is annotated
  `cert-manager.io/cluster-issuer`, and cert-manager's gateway-shim issues the listener's
  certificate into the Secret it names.
- `master` mode: TLS ends in the master. Listener `tls` (TLS, Passthrough) carries a
  TLSRoute to the master's TLS port; a cert-manager certificate is a Certificate object
  whose Secret the master mounts.

In both, listener `http` (port 80) only serves ACME HTTP-01 challenges (routes cert-manager
creates itself) and a redirect to https: nothing here routes plain HTTP to the master.

cert-manager's ClusterIssuer answers DNS-01 challenges instead when `certificate.dns01` is
set; with the cloud identity a platform gave cert-manager (`Dns01Identity`), its solver takes
the settings that identity implies and names no credentials.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from components import constants, kube
from components.addons import cert_manager
from components.config.tls import CertManagerCertificate, ExposedTls, IngressTls, MasterTls
from components.determined.args import DeterminedArgs

if TYPE_CHECKING:
    from components.cluster import Dns01Identity

COMPONENT = "gateway"
GATEWAY = "determined"
ROUTE = "determined-master"
REDIRECT_ROUTE = "determined-redirect"

GATEWAY_API = "gateway.networking.k8s.io/v1"
CERT_MANAGER_API = "cert-manager.io/v1"
CLUSTER_ISSUER_ANNOTATION = "cert-manager.io/cluster-issuer"

HTTP_LISTENER = "http"
HTTPS_LISTENER = "https"
TLS_LISTENER = "tls"

# No deadline on a request through the Gateway: the master serves websockets (shells,
# notebooks, log streams) and long downloads (checkpoints, model files). "0s" disables the
# timeout (Gateway API duration, GEP-2257); without it Envoy cuts streams after 15s.
NO_TIMEOUT = "0s"


def _exposed(cfg: DeterminedArgs) -> ExposedTls:
    tls = cfg.tls
    if not isinstance(tls, ExposedTls):
        raise ValueError(f"tls mode {tls.mode!r} exposes nothing")
    return tls


def certificate_secret(tls: ExposedTls) -> str:
    """The Secret holding the certificate: the user's, or the one cert-manager issues into."""
    return tls.secret_name


def _listener(name: str, port: int, protocol: str, host: str, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "port": port,
        "protocol": protocol,
        "hostname": host,
        "allowedRoutes": {"namespaces": {"from": "Same"}},
        **extra,
    }


def gateway(cfg: DeterminedArgs, class_name: str, issuer: str | None) -> dict[str, Any]:
    """The Gateway: `http` (challenges, redirect) and `https` (ingress mode, terminating
    with `certificate_secret`) or `tls` (master mode, passing TLS through)."""
    tls = _exposed(cfg)
    meta = kube.metadata(GATEWAY, COMPONENT, cfg.namespace)
    listeners = [_listener(HTTP_LISTENER, 80, "HTTP", tls.host)]
    if isinstance(tls, IngressTls):
        secret_ref = {"kind": "Secret", "name": certificate_secret(tls)}
        terminate = {"mode": "Terminate", "certificateRefs": [secret_ref]}
        listeners.append(_listener(HTTPS_LISTENER, 443, "HTTPS", tls.host, tls=terminate))
        if tls.issued:
            if not issuer:
                raise ValueError("a cert-manager certificate needs a ClusterIssuer")
            meta["annotations"] = {CLUSTER_ISSUER_ANNOTATION: issuer}
    elif isinstance(tls, MasterTls):
        listeners.append(_listener(TLS_LISTENER, 443, "TLS", tls.host, tls={"mode": "Passthrough"}))
    spec = {"gatewayClassName": class_name, "listeners": listeners}
    return kube.manifest(GATEWAY_API, "Gateway", meta, spec=spec)


def _parent(section: str) -> dict[str, Any]:
    return {"name": GATEWAY, "sectionName": section}


def https_route(cfg: DeterminedArgs) -> dict[str, Any]:
    """Ingress mode: decrypted HTTPS from listener `https` to the master Service."""
    tls = _exposed(cfg)
    rule = {
        "backendRefs": [{"name": constants.MASTER_SERVICE_NAME, "port": constants.MASTER_SERVICE_PORT}],
        "timeouts": {"request": NO_TIMEOUT, "backendRequest": NO_TIMEOUT},
    }
    spec = {"parentRefs": [_parent(HTTPS_LISTENER)], "hostnames": [tls.host], "rules": [rule]}
    meta = kube.metadata(ROUTE, COMPONENT, cfg.namespace)
    return kube.manifest(GATEWAY_API, "HTTPRoute", meta, spec=spec)


def redirect_route(cfg: DeterminedArgs) -> dict[str, Any]:
    """Plain HTTP on listener `http` answered with a permanent redirect to https://host
    (port 443 follows from the scheme). ACME challenge routes, more specific, win over it."""
    tls = _exposed(cfg)
    redirect = {"type": "RequestRedirect", "requestRedirect": {"scheme": "https", "statusCode": 301}}
    spec = {
        "parentRefs": [_parent(HTTP_LISTENER)],
        "hostnames": [tls.host],
        "rules": [{"filters": [redirect]}],
    }
    meta = kube.metadata(REDIRECT_ROUTE, COMPONENT, cfg.namespace)
    return kube.manifest(GATEWAY_API, "HTTPRoute", meta, spec=spec)


def tls_route(cfg: DeterminedArgs, backend_port: int) -> dict[str, Any]:
    """Master mode: TLS from listener `tls`, by SNI, passed through to the master's TLS port."""
    tls = _exposed(cfg)
    backend = {"name": constants.MASTER_SERVICE_NAME, "port": backend_port}
    spec = {
        "parentRefs": [_parent(TLS_LISTENER)],
        "hostnames": [tls.host],
        "rules": [{"backendRefs": [backend]}],
    }
    meta = kube.metadata(ROUTE, COMPONENT, cfg.namespace)
    return kube.manifest(GATEWAY_API, "TLSRoute", meta, spec=spec)


def master_certificate(cfg: DeterminedArgs, issuer: str) -> dict[str, Any]:
    """Master mode with cert-manager: the certificate the master itself serves."""
    tls = _exposed(cfg)
    spec = {
        "secretName": certificate_secret(tls),
        "dnsNames": [tls.host],
        "issuerRef": {"kind": "ClusterIssuer", "name": issuer},
    }
    meta = kube.metadata(ROUTE, COMPONENT, cfg.namespace)
    return kube.manifest(CERT_MANAGER_API, "Certificate", meta, spec=spec)


def cert_manager_release_args(identity: Dns01Identity | None) -> dict[str, Any]:
    """cert-manager's Release: with a cloud identity for DNS-01, its controller's service
    account carries the identity's annotations and its pods the identity."""
    if identity is None:
        return cert_manager.release_args()
    return cert_manager.release_args(
        account_annotations=identity.account_annotations, identity=identity.identity
    )


def cluster_issuer(cfg: DeterminedArgs, identity: Dns01Identity | None) -> dict[str, Any]:
    """The ACME ClusterIssuer for a cert-manager certificate: HTTP-01 through the Gateway's
    `http` listener, or DNS-01 as configured, over the settings the cloud identity implies."""
    tls = _exposed(cfg)
    certificate = tls.certificate
    if not isinstance(certificate, CertManagerCertificate):
        raise ValueError("the certificate comes from a Secret: no issuer")
    return cert_manager.cluster_issuer(
        certificate.email,
        GATEWAY,
        cfg.namespace,
        listener=HTTP_LISTENER,
        dns01=certificate.dns01,
        solver_defaults=identity.solver_defaults if identity and certificate.dns01 else None,
    )


def objects(
    cfg: DeterminedArgs,
    class_name: str,
    issuer: str | None,
    master_tls_port: int = constants.MASTER_SERVICE_PORT,
) -> list[dict[str, Any]]:
    """Everything the configured mode needs; nothing for `none`."""
    tls = cfg.tls
    if isinstance(tls, IngressTls):
        return [gateway(cfg, class_name, issuer), https_route(cfg), redirect_route(cfg)]
    if isinstance(tls, MasterTls):
        found = [gateway(cfg, class_name, issuer), tls_route(cfg, master_tls_port), redirect_route(cfg)]
        if tls.issued:
            if not issuer:
                raise ValueError("a cert-manager certificate needs a ClusterIssuer")
            found.append(master_certificate(cfg, issuer))
        return found
    return []
