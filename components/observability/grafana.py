"""How users reach Grafana: under the master's host behind its Gateway, or port-forward.

With tls mode `ingress` the Gateway ends TLS, so it can route by path: an HTTPRoute on the
`https` listener sends `https://<tls.host>/grafana` to Grafana's Service (Grafana serves
from that sub-path: prometheus_stack's grafana.ini), no new host name, DNS record or
certificate. The route lives beside the Gateway (whose listeners admit routes of their own
namespace only) and names a Service of the monitoring namespace, which a ReferenceGrant there
allows (Gateway API standard channel: a backendRef to another namespace is refused
without one; https://gateway-api.sigs.k8s.io/api-types/referencegrant/, read 2026-11). The
grant is `v1beta1`, the version every Gateway API release since v0.6 serves (v1.6.1 serves
it beside v1: tests/data/crd-schemas), so a class the cluster brings with an older Gateway
API accepts it too.
A longer path prefix wins over the master's route of every path (HTTPRoute matching
precedence, same page set: "the longest Path match").

With tls mode `master` the Gateway passes TLS through to the master unopened and cannot
route by path; with `none` there is no Gateway: Grafana is reached by port-forward.
"""

from __future__ import annotations

from typing import Any

from components import kube
from components.config.tls import IngressTls
from components.determined import tls
from components.determined.args import DeterminedArgs
from components.observability import layout

COMPONENT = "grafana"
ROUTE = "grafana"
REFERENCE_GRANT_API = "gateway.networking.k8s.io/v1beta1"


def exposed(args: DeterminedArgs) -> bool:
    """Whether Grafana is reached through the master's Gateway (tls mode ingress)."""
    return isinstance(args.tls, IngressTls)


def https_route(args: DeterminedArgs) -> dict[str, Any]:
    """The route from the Gateway's `https` listener, path /grafana, to Grafana's Service."""
    assert isinstance(args.tls, IngressTls)
    rule = {
        "matches": [{"path": {"type": "PathPrefix", "value": layout.GRAFANA_PATH}}],
        "backendRefs": [
            {
                "name": layout.GRAFANA_SERVICE,
                "namespace": layout.namespace(args.namespace),
                "port": layout.GRAFANA_PORT,
            }
        ],
        # Grafana Live keeps websockets open: no deadline, as for the master.
        "timeouts": {"request": tls.NO_TIMEOUT, "backendRequest": tls.NO_TIMEOUT},
    }
    spec = {
        "parentRefs": [{"name": tls.GATEWAY, "sectionName": tls.HTTPS_LISTENER}],
        "hostnames": [args.tls.host],
        "rules": [rule],
    }
    return kube.manifest(
        tls.GATEWAY_API, "HTTPRoute", kube.metadata(ROUTE, COMPONENT, args.namespace), spec=spec
    )


def reference_grant(args: DeterminedArgs) -> dict[str, Any]:
    """In the monitoring namespace: HTTPRoutes of the Determined namespace may name Grafana's
    Service (and nothing else there)."""
    spec = {
        "from": [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "namespace": args.namespace}],
        "to": [{"group": "", "kind": "Service", "name": layout.GRAFANA_SERVICE}],
    }
    meta = kube.metadata(ROUTE, COMPONENT, layout.namespace(args.namespace))
    return kube.manifest(REFERENCE_GRANT_API, "ReferenceGrant", meta, spec=spec)


def route_objects(args: DeterminedArgs) -> list[dict[str, Any]]:
    """The route and its grant with tls mode ingress; nothing otherwise."""
    return [https_route(args), reference_grant(args)] if exposed(args) else []


def url(args: DeterminedArgs) -> str:
    """https://<tls.host>/grafana/ when exposed, else Grafana's Service inside the cluster."""
    if exposed(args):
        return f"https://{args.tls.host}{layout.GRAFANA_PATH}/"
    return f"http://{layout.GRAFANA_SERVICE}.{layout.namespace(args.namespace)}.svc:{layout.GRAFANA_PORT}"


def port_forward(args: DeterminedArgs, local_port: int = 3000) -> str:
    """The kubectl command that reaches Grafana at http://localhost:<local_port>/ (then
    under /grafana/ when it is served from that sub-path)."""
    return (
        f"kubectl -n {layout.namespace(args.namespace)} port-forward svc/{layout.GRAFANA_SERVICE} "
        f"{local_port}:{layout.GRAFANA_PORT}"
    )
