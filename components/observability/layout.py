"""Names the observability parts share: namespaces, releases, scrape jobs, labels.

A leaf module: the dashboards and alerts name these jobs and labels, the scrapes set them.
"""

from __future__ import annotations

import re

from components import constants
from components.config.namespaces import monitoring_namespace, suffixed_namespace

# Prometheus, Alertmanager, Grafana, the operator, kube-state-metrics, the postgres
# exporter and the token refresher: Pod Security `restricted`.
namespace = monitoring_namespace


def agents_namespace(watched: str) -> str:
    """The node agents' namespace (node exporter, NVIDIA's dcgm-exporter chart): host
    network, PID and paths, Pod Security `privileged`; nothing else runs there."""
    return suffixed_namespace(watched, f"{constants.MONITORING_SUFFIX}-agents")


# The kube-prometheus-stack Release (in `namespace`).
STACK_RELEASE = "monitoring"
# Every ServiceMonitor, PodMonitor and PrometheusRule of the project carries this label:
# the Prometheus the chart makes selects `release: <its release>` (kube-prometheus-stack
# 88.5.3 templates/prometheus/prometheus.yaml:193-202, the *SelectorNilUsesHelmValues flags).
SELECTOR_LABELS = {"release": STACK_RELEASE}

# `job` of each scrape of the project (set by the scrape's relabeling): dashboards and
# alerts select by them.
MASTER_JOB = "determined-master"
DCGM_JOB = "dcgm-exporter"
POSTGRES_JOB = "postgres-exporter"

# Every series a GPU scrape keeps carries the node it came from as `node` (relabelled from
# the pod's node: the exporter's own Hostname label changed case between releases).
NODE_LABEL = "node"

# kube-state-metrics exposes these labels (kube_node_labels / kube_pod_labels, as
# label_<sanitised name>): the node pool of a node, and what a Determined task pod carries.
NODE_LABELS_ALLOWLIST = [constants.NODE_POOL_LABEL]
# Labels the master puts on every task pod (determined-ai/determined v0.38.1
# master/internal/rm/kubernetesrm/spec.go:47-54 names, :580-603 set; experiment_id/trial_id
# on trials only: master/pkg/tasks/task_trial.go:137-140 via spec.go:606-611); masters before
# 0.32.0 set none of them (0.32.0 spec.go:41-46 adds them, 0.31.0 has no such label). The
# dashboards read them from kube_pod_labels as label_determined_ai_<key>.
TASK_POD_LABELS: list[str] = [
    "determined.ai/task_id",
    "determined.ai/task_type",
    "determined.ai/resource_pool",
    "determined.ai/workspace",
    "determined.ai/user",
    "determined.ai/experiment_id",
    "determined.ai/trial_id",
]


def ksm_label(key: str) -> str:
    """The label kube-state-metrics gives an allowlisted Kubernetes label `key` on
    kube_pod_labels / kube_node_labels: `label_` + the key with every character outside
    [a-zA-Z0-9_] made `_` (kube-state-metrics v2.20.0 internal/store/utils.go:38,148-149)."""
    return "label_" + re.sub(r"[^a-zA-Z0-9_]", "_", key)


# Series the project's own recording rules make (components/observability/alerts.py), for
# dashboards to join on; tests/observability/promql.py knows them as metric names.
# `determined:resource_pool:info{resource_pool, namespace, node_pool} 1`: a resource pool, one
# series per task namespace of the pool (built from the configuration).
RESOURCE_POOL_INFO = "determined:resource_pool:info"
# `determined:node_pool:max_nodes{node_pool} <max>`: the most nodes a node pool may grow to
# (only for pools with a maximum).
NODE_POOL_MAX_NODES = "determined:node_pool:max_nodes"
RECORDING_RULES = (RESOURCE_POOL_INFO, NODE_POOL_MAX_NODES)

# Grafana's Service (kube-prometheus-stack's grafana subchart, `grafana.fullnameOverride`),
# its port (grafana chart 12.11.1 values.yaml `service.port: 80`) and the path it is served
# under behind the Gateway (tls mode ingress: https://<tls.host>/grafana).
GRAFANA_SERVICE = "grafana"
GRAFANA_PORT = 80
GRAFANA_PATH = "/grafana"
# The label Grafana's dashboard sidecar loads ConfigMaps by (kube-prometheus-stack 88.5.3
# values.yaml grafana.sidecar.dashboards.label/labelValue), in `namespace` only.
DASHBOARD_LABELS = {"grafana_dashboard": "1"}

# The postgres exporter's pods (prometheus-postgres-exporter 8.2.0
# templates/_helpers.tpl:51-54 selectorLabels: app.kubernetes.io/name is the chart's name
# unless nameOverride): the in-cluster database admits them (determined/network_policies.py).
POSTGRES_EXPORTER_POD_LABELS = {"app.kubernetes.io/name": "prometheus-postgres-exporter"}
