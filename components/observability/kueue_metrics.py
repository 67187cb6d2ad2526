"""The scrape of Kueue's controller (queue depth and admission for the alerts and dashboards),
with scheduler kueue.

Kueue chart 0.19.2 (kubernetes-sigs/kueue@v0.19.2 charts/kueue): the metrics Service always
exists (templates/manager/auth_proxy_service.yaml: `<fullname>-controller-manager-metrics-service`,
labels `kueue.metricsService.labels` = the chart's labels and
`app.kubernetes.io/component: metrics-service`, _helpers.tpl:52-76), port `https` 8443
(values.yaml:209-215). The chart's own ServiceMonitor (`enablePrometheus`, default false,
templates/prometheus/monitor.yaml) cannot carry the release label the stack's Prometheus
selects (its labels are the chart's, no values key adds any) and lives in Kueue's namespace,
which that Prometheus does not watch: this one lives in the monitoring namespace instead.

The endpoint serves HTTPS with authentication and authorization (cmd/kueue/main.go:190-191:
SecureServing, filters.WithAuthenticationAndAuthorization): Prometheus sends its service
account's token, whose ClusterRole allows GET /metrics (kube-prometheus-stack 88.5.3
templates/prometheus/clusterrole.yaml:30-31), as the chart's kubelet scrape does
(templates/_helpers.tpl:359-365). Kueue serves a self-signed certificate (its internal
certificate management): the chart's own ServiceMonitor skips verification too
(values.yaml:368-371). Metric names: tests/data/metrics/kueue.json.
"""

from __future__ import annotations

from typing import Any

from components import constants, kube
from components.determined.args import DeterminedArgs
from components.observability import layout

NAME = "kueue"
COMPONENT = "kueue-metrics"
JOB = "kueue"
PORT_NAME = "https"
# The release `kueue` (components/addons/kueue.py release_args) and the chart named kueue.
SELECTOR = {
    "app.kubernetes.io/name": "kueue",
    "app.kubernetes.io/instance": "kueue",
    "app.kubernetes.io/component": "metrics-service",
}
SERVICE_ACCOUNT_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token"


def scraped(args: DeterminedArgs) -> bool:
    """Whether Kueue runs for the install (scheduler kueue) and observability is on."""
    return args.observed and args.scheduler == "kueue"


def service_monitor(args: DeterminedArgs) -> dict[str, Any] | None:
    """A ServiceMonitor of Kueue's metrics Service in `constants.KUEUE_NAMESPACE`, in the
    monitoring namespace; None without Kueue. Prometheus reaches port 8443 in Kueue's
    namespace (a NetworkPolicy there must admit it)."""
    if not scraped(args):
        return None
    meta = kube.metadata(NAME, COMPONENT, layout.namespace(args.namespace))
    meta["labels"] = {**meta["labels"], **layout.SELECTOR_LABELS}
    spec = {
        "namespaceSelector": {"matchNames": [constants.KUEUE_NAMESPACE]},
        "selector": {"matchLabels": dict(SELECTOR)},
        "endpoints": [
            {
                "port": PORT_NAME,
                "path": "/metrics",
                "scheme": "https",
                "bearerTokenFile": SERVICE_ACCOUNT_TOKEN,
                "tlsConfig": {"insecureSkipVerify": True},
                "relabelings": [{"targetLabel": "job", "replacement": JOB, "action": "replace"}],
            }
        ],
    }
    return kube.manifest("monitoring.coreos.com/v1", "ServiceMonitor", meta, spec=spec)
