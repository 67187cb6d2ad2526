"""The scrape of cert-manager's controller (certificate expiry for the alerts), where
cert-manager issues the master's certificate.

cert-manager chart v1.21.1 (cert-manager/cert-manager@v1.21.1 deploy/charts/cert-manager):
metrics are on by default (`prometheus.enabled: true`, values.yaml:658), so the chart renders
the controller's metrics Service (templates/service.yaml:1-38): named after the release
(`cert-manager.fullname`, _helpers.tpl:13-21: the release name when it contains the chart's
name), port `http-metrics` 9402, labels `app.kubernetes.io/name: cert-manager` (the chart's
name, _helpers.tpl:5-7), `app.kubernetes.io/instance: <release>`,
`app.kubernetes.io/component: controller`. No chart value changes: the chart's own
ServiceMonitor (`prometheus.servicemonitor.enabled`) would need the ServiceMonitor CRD when
cert-manager is installed and live in cert-manager's namespace, which the stack's Prometheus
does not watch; this one lives in the monitoring namespace with the release label.
Metric names: tests/data/metrics/cert-manager.json.
"""

from __future__ import annotations

from typing import Any

from components import constants, kube
from components.addons import cert_manager
from components.config.tls import ExposedTls
from components.determined.args import DeterminedArgs
from components.observability import layout

NAME = "cert-manager"
COMPONENT = "cert-manager-metrics"
# The scrape's `job` (the alerts select certificates by issuer, not by job).
JOB = "cert-manager"
PORT_NAME = "http-metrics"
PORT = 9402
SELECTOR = {
    "app.kubernetes.io/name": "cert-manager",
    "app.kubernetes.io/instance": cert_manager.RELEASE,
    "app.kubernetes.io/component": "controller",
}


def scraped(args: DeterminedArgs) -> bool:
    """Whether cert-manager issues a certificate of the install (observability on)."""
    return args.observed and isinstance(args.tls, ExposedTls) and args.tls.issued


def service_monitor(args: DeterminedArgs) -> dict[str, Any] | None:
    """A ServiceMonitor of cert-manager's controller metrics Service in
    `constants.CERT_MANAGER_NAMESPACE`, in the monitoring namespace; None when no
    certificate of the install comes from cert-manager. Prometheus reaches port 9402 in
    cert-manager's namespace (a NetworkPolicy there must admit it)."""
    if not scraped(args):
        return None
    meta = kube.metadata(NAME, COMPONENT, layout.namespace(args.namespace))
    meta["labels"] = {**meta["labels"], **layout.SELECTOR_LABELS}
    spec = {
        "namespaceSelector": {"matchNames": [constants.CERT_MANAGER_NAMESPACE]},
        "selector": {"matchLabels": dict(SELECTOR)},
        "endpoints": [
            {
                "port": PORT_NAME,
                "path": "/metrics",
                # The certificate's own `namespace` label, not the scraped Service's (which
                # Prometheus would otherwise keep, renaming the series' to exported_namespace).
                "honorLabels": True,
                "relabelings": [{"targetLabel": "job", "replacement": JOB, "action": "replace"}],
            }
        ],
    }
    return kube.manifest("monitoring.coreos.com/v1", "ServiceMonitor", meta, spec=spec)
