"""Network fencing of the observability namespaces (with `networkPolicies`, as the
Determined namespace's: components/determined/network_policies.py, whose building blocks
these use).

Monitoring namespace: every pod denied ingress, then allowed from the namespace's own pods
(Prometheus scrapes the operator, kube-state-metrics, Alertmanager and the postgres
exporter; Grafana queries Prometheus; Prometheus sends to Alertmanager), Grafana's port from
the Gateway's proxies (tls mode ingress), the operator's admission webhook port from anywhere
(the API server calls it from an address no selector names). Egress is left open: Prometheus
scrapes every namespace and the kubelets, Alertmanager sends to receivers outside.

Agents namespace: NVIDIA's dcgm-exporter (chart) accepts only the monitoring namespace's
pods on its metrics port. The node exporter runs on the host network, which NetworkPolicies
do not govern.

Pure builders.
"""

from __future__ import annotations

from typing import Any

from components.determined import network_policies as base
from components.determined.args import DeterminedArgs
from components.observability import grafana, layout

DEFAULT_DENY = "monitoring-default-deny"
SAME_NAMESPACE = "monitoring-same-namespace"
GRAFANA_POLICY = "monitoring-grafana"
WEBHOOK_POLICY = "monitoring-operator-webhook"
AGENTS_DEFAULT_DENY = "monitoring-agents-default-deny"
DCGM_POLICY = "monitoring-dcgm-exporter"

# Grafana's container port (grafana chart 12.11.1 values `service.targetPort: 3000`) and its
# pods' label (the chart's selector labels: app.kubernetes.io/name = the chart name).
GRAFANA_CONTAINER_PORT = 3000
GRAFANA_POD_LABELS = {"app.kubernetes.io/name": "grafana"}
# The Prometheus Operator's admission webhook listens on its `https` port, 10250
# (kube-prometheus-stack 88.5.3 values `prometheusOperator.tls.internalPort`); its pods carry
# `app: <chart name>-operator` (templates/prometheus-operator/deployment.yaml selector).
WEBHOOK_PORT = 10250
OPERATOR_POD_LABELS = {"app": "kube-prometheus-stack-operator"}
# dcgm-exporter's metrics port (chart 4.8.2 values `service.port: 9400`) and its pods'
# labels (deployment/templates/_helpers.tpl:61-64 selectorLabels, name = the chart's).
DCGM_PORT = 9400
DCGM_POD_LABELS = {"app.kubernetes.io/name": "dcgm-exporter"}


def objects(args: DeterminedArgs) -> list[dict[str, Any]]:
    """The policies of both namespaces; none with `networkPolicies: false`."""
    if not args.network_policies:
        return []
    ns = layout.namespace(args.namespace)
    agents = layout.agents_namespace(args.namespace)
    found = [
        base.policy(DEFAULT_DENY, ns, {}, ingress=[]),
        base.policy(SAME_NAMESPACE, ns, {}, ingress=[{"from": [base.pods({})]}]),
        base.policy(WEBHOOK_POLICY, ns, OPERATOR_POD_LABELS, ingress=[{"ports": [base.tcp(WEBHOOK_PORT)]}]),
        base.policy(AGENTS_DEFAULT_DENY, agents, {}, ingress=[]),
    ]
    if args.gpu_metrics == "chart":
        scrapers = {
            "from": [{"namespaceSelector": base.namespace_selector(ns)}],
            "ports": [base.tcp(DCGM_PORT)],
        }
        found.append(base.policy(DCGM_POLICY, agents, DCGM_POD_LABELS, ingress=[scrapers]))
    if grafana.exposed(args):
        proxies = base.gateway_proxies(args)
        rule: dict[str, Any] = {"ports": [base.tcp(GRAFANA_CONTAINER_PORT)]}
        if proxies is not None:
            rule = {"from": proxies, **rule}
        found.append(base.policy(GRAFANA_POLICY, ns, GRAFANA_POD_LABELS, ingress=[rule]))
    return found
