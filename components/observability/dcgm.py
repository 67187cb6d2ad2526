"""GPU metrics: where the DCGM exporter comes from, NVIDIA's dcgm-exporter chart when the
project installs it, and the scrape that brings its metrics into the install's Prometheus.

Where the metrics come from (`source`):
- `none`: no GPU node pool;
- `operator`: the NVIDIA GPU operator runs its own dcgm-exporter DaemonSet and Service
  (NVIDIA/gpu-operator@v26.7.0 values.yaml:299-352 `dcgmExporter.enabled: true`);
- `chart`: otherwise, NVIDIA's dcgm-exporter chart 4.8.2 in the agents' namespace, on GKE
  (GKE-managed drivers) as on EKS and existing clusters.

Why the chart rather than GKE's managed DCGM on GKE-managed drivers
(/work/research24/gpu-metrics.md sections 1-2): the managed exporter collects a fixed set of
21 fields without `DCGM_FI_DEV_XID_ERRORS`, ECC or remapped rows ("the managed one cannot be
reconfigured"), so the XID / fallen-off-the-bus alerts could never fire on GKE, and GKE's
node auto-repair does not catch a failed GPU either (research24/platform/facts.md section 1);
it ships no Service and sends to Managed Service for Prometheus. Google documents the
self-managed exporter for this case ("configure self-managed DCGM if you want to customise
the set of DCGM metrics": the stored copy
https://docs.cloud.google.com/kubernetes-engine/docs/how-to/dcgm-metrics?hl=es-419, facts.md section 1)
with the manifest GoogleCloudPlatform/prometheus-engine@2ffde4ec
examples/nvidia-dcgm/exporter.yaml, whose GKE specifics the chart is given here: the host's
driver directory, `LD_LIBRARY_PATH`, privileged, GPUs named by device
(`GKE_DRIVER_VALUES`). The cluster should not also run GKE's managed DCGM (the cluster's
`monitoring_config.enable_components` without `DCGM`): two DCGM host engines on one GPU.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from components import constants, kube, versions
from components.addons import release
from components.addons.gpu_operator import GKE_NVIDIA_DIR
from components.addons.nvidia_device_plugin import GPU_PRESENT_LABEL
from components.config import NodePool
from components.config.node_pools import ExistingNodePool
from components.determined.args import DeterminedArgs
from components.observability import layout

Source = Literal["operator", "chart", "gke", "none"]

CHART = versions.DCGM_EXPORTER_CHART
VERSION = versions.DCGM_EXPORTER_VERSION
REPOSITORY = versions.DCGM_EXPORTER_REPOSITORY
RELEASE = "dcgm-exporter"
COMPONENT = "dcgm-exporter"

# The label GKE puts on every GPU node (the accelerator type); Google's own exporter manifest
# places on it (prometheus-engine examples/nvidia-dcgm/exporter.yaml:79-87).
GKE_ACCELERATOR_LABEL = "cloud.google.com/gke-accelerator"

# The chart's Service: `<release>` when the release name holds the chart name
# (deployment/templates/_helpers.tpl:14-25), port `metrics` 9400 (templates/service.yaml:33-37).
CHART_PORT_NAME = "metrics"
CHART_SELECTOR = {"app.kubernetes.io/name": "dcgm-exporter", "app.kubernetes.io/instance": RELEASE}
# The GPU operator's Service: `nvidia-dcgm-exporter` in the operator's namespace, label and
# selector `app: nvidia-dcgm-exporter`, port `gpu-metrics` 9400
# (NVIDIA/gpu-operator@v26.7.0 assets/state-dcgm-exporter/0400_service.yaml:1-17).
OPERATOR_PORT_NAME = "gpu-metrics"
OPERATOR_SELECTOR = {"app": "nvidia-dcgm-exporter"}
# GKE's managed exporter: pods in gke-managed-system labelled
# app.kubernetes.io/name=gke-managed-dcgm-exporter, container port `metrics` 9400, no Service
# (gpu-metrics.md section 1): scraped by a PodMonitor.
GKE_MANAGED_NAMESPACE = "gke-managed-system"
GKE_MANAGED_SELECTOR = {"app.kubernetes.io/name": "gke-managed-dcgm-exporter"}
GKE_MANAGED_PORT_NAME = "metrics"

MONITOR_NAME = "dcgm-exporter"
# The chart's and the operator's own ServiceMonitor interval (values.yaml:127-133,
# gpu-operator values.yaml:326-332).
INTERVAL = "15s"

# What GKE-managed-driver nodes need (prometheus-engine examples/nvidia-dcgm/exporter.yaml:
# :88-98 the driver directory mounted at /usr/local/nvidia, :110-126 LD_LIBRARY_PATH and
# DCGM_EXPORTER_KUBERNETES_GPU_ID_TYPE=device-name: GKE's device plugin names GPUs nvidia0...,
# not by UUID; :108-109 privileged, to see /dev/nvidia* without requesting a GPU).
_GKE_DRIVER_VOLUME = "nvidia-install-dir-host"
_GKE_DRIVER_MOUNT = "/usr/local/nvidia"
# The chart's default mount of its metrics list (values.yaml:179-182): Helm replaces lists
# whole, so ours repeats it (else the chart's counters CSV is silently dropped).
_DEFAULT_MOUNTS = [
    {
        "name": "exporter-metrics-volume",
        "mountPath": "/etc/dcgm-exporter/default-counters.csv",
        "subPath": "default-counters.csv",
    }
]
GKE_DRIVER_VALUES: dict[str, Any] = {
    # templates/daemonset.yaml:94-98 renders name and hostPath.path only.
    "extraHostVolumes": [{"name": _GKE_DRIVER_VOLUME, "hostPath": GKE_NVIDIA_DIR}],
    "extraVolumeMounts": [
        *_DEFAULT_MOUNTS,
        {"name": _GKE_DRIVER_VOLUME, "mountPath": _GKE_DRIVER_MOUNT, "readOnly": True},
    ],
    "extraEnv": [
        {"name": "LD_LIBRARY_PATH", "value": f"{_GKE_DRIVER_MOUNT}/lib64"},
        {"name": "DCGM_EXPORTER_KUBERNETES_GPU_ID_TYPE", "value": "device-name"},
    ],
    # The chart's default has allowPrivilegeEscalation false (values.yaml:95-104), which the
    # API server refuses beside privileged: true; the map is merged, so it is overridden.
    "securityContext": {"privileged": True, "allowPrivilegeEscalation": True},
}

RESOURCES = {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "512Mi"}}
# The chart's default (values.yaml:60): GKE admits it outside kube-system only under a
# ResourceQuota naming it (facts.md section 4; components/addons/gpu_operator.py does the same).
PRIORITY_CLASS = "system-node-critical"


def source(cloud: str, gpu_operator_enabled: bool, node_pools: Sequence[NodePool]) -> Source:
    """Where GPU metrics come from: `none` without GPU pools, `operator` when the GPU
    operator runs, else `chart` (on GKE too: see the module's docstring for why not GKE's
    managed exporter, which `service_monitor` can still scrape when a program asks for it)."""
    del cloud  # every cloud takes the chart when the operator is off
    if not any(pool.gpu for pool in node_pools):
        return "none"
    return "operator" if gpu_operator_enabled else "chart"


def _gpu_node_terms(args: DeterminedArgs) -> list[dict[str, Any]]:
    """Node selector terms (ORed) matching GPU nodes: the label each cloud puts on them, and
    on an existing cluster each GPU pool's own selector."""
    terms: list[dict[str, Any]] = [
        {"matchExpressions": [{"key": GKE_ACCELERATOR_LABEL, "operator": "Exists"}]},
        # Every EKS GPU node group carries it (nvidia_device_plugin.GPU_PRESENT_LABEL).
        {"matchExpressions": [{"key": GPU_PRESENT_LABEL, "operator": "In", "values": ["true"]}]},
    ]
    for pool in args.node_pools:
        if pool.gpu and isinstance(pool, ExistingNodePool) and pool.selector:
            expressions = [
                {"key": k, "operator": "In", "values": [v]} for k, v in sorted(pool.selector.items())
            ]
            term = {"matchExpressions": expressions}
            if term not in terms:
                terms.append(term)
    return terms


def values(args: DeterminedArgs) -> dict[str, Any]:
    """The dcgm-exporter chart's values: GPU nodes only, every taint tolerated, the project's
    own scrape instead of the chart's ServiceMonitor."""
    result: dict[str, Any] = {
        # Spelled out though the release name gives the same: the Service's name is the
        # scrape's selector.
        "fullnameOverride": RELEASE,
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": _gpu_node_terms(args)}
            }
        },
        # GPU pools carry nvidia.com/gpu and their own taints; the chart tolerates only the
        # control plane's (values.yaml:153-156).
        "tolerations": [{"operator": "Exists"}],
        # The project's ServiceMonitor (`service_monitor`): release label, job, node label.
        "serviceMonitor": {"enabled": False},
        "priorityClassName": PRIORITY_CLASS,
        "resources": RESOURCES,
    }
    if args.cloud == "gke":
        result |= GKE_DRIVER_VALUES
    return result


def release_args(args: DeterminedArgs) -> dict[str, Any] | None:
    """The `kubernetes:helm.sh/v3:Release` of the dcgm-exporter chart in the agents'
    namespace, for source `chart` only (None otherwise)."""
    if args.gpu_metrics != "chart":
        return None
    return release.release_args(
        RELEASE,
        CHART,
        VERSION,
        layout.agents_namespace(args.namespace),
        values(args),
        repository=REPOSITORY,
    )


def critical_pods_quota(args: DeterminedArgs) -> dict[str, Any] | None:
    """GKE, source `chart`: the ResourceQuota that lets the exporter's pods run at
    system-node-critical in the agents' namespace (GKE admits the critical classes outside
    kube-system only where a quota names them). None elsewhere."""
    if args.gpu_metrics != "chart" or args.cloud != "gke":
        return None
    spec = {
        # One exporter pod per GPU node, at most every GPU pool's maxNodes (GKE pools have
        # one), twice over for a rolling update's surge.
        "hard": {
            "pods": str(
                2 * sum(getattr(pool, "max_nodes", 0) or 0 for pool in args.node_pools if pool.gpu) or 1
            )
        },
        "scopeSelector": {
            "matchExpressions": [{"operator": "In", "scopeName": "PriorityClass", "values": [PRIORITY_CLASS]}]
        },
    }
    meta = kube.metadata("critical-pods", COMPONENT, layout.agents_namespace(args.namespace))
    return kube.manifest("v1", "ResourceQuota", meta, spec=spec)


def _relabelings() -> list[dict[str, Any]]:
    return [
        # Dashboards and alerts select GPU series by this job.
        {"targetLabel": "job", "replacement": layout.DCGM_JOB, "action": "replace"},
        # The node the exporter's pod runs on (the exporter's own Hostname label changed case
        # between releases: gpu-metrics.md section 4).
        {
            "sourceLabels": ["__meta_kubernetes_pod_node_name"],
            "targetLabel": layout.NODE_LABEL,
            "action": "replace",
        },
    ]


def _endpoint(port: str) -> dict[str, Any]:
    return {
        "port": port,
        "path": "/metrics",
        "interval": INTERVAL,
        # The exporter's pod, namespace and container labels name the task using the GPU; the
        # target's own would otherwise push them to exported_* (facts.md section 4).
        "honorLabels": True,
        "relabelings": _relabelings(),
    }


def service_monitor(args: DeterminedArgs) -> dict[str, Any] | None:
    """The scrape of the DCGM exporter into the install's Prometheus, in the monitoring
    namespace with the release label: a ServiceMonitor of the operator's or the chart's
    Service, a PodMonitor of GKE's managed exporter pods (they have no Service). None for
    source `none`."""
    where = args.gpu_metrics
    if where == "none":
        return None
    meta = kube.metadata(MONITOR_NAME, COMPONENT, layout.namespace(args.namespace))
    meta["labels"] |= layout.SELECTOR_LABELS
    if where == "gke":
        spec = {
            "namespaceSelector": {"matchNames": [GKE_MANAGED_NAMESPACE]},
            "selector": {"matchLabels": dict(GKE_MANAGED_SELECTOR)},
            "podMetricsEndpoints": [_endpoint(GKE_MANAGED_PORT_NAME)],
        }
        return kube.manifest("monitoring.coreos.com/v1", "PodMonitor", meta, spec=spec)
    if where == "operator":
        namespace, selector, port = constants.GPU_OPERATOR_NAMESPACE, OPERATOR_SELECTOR, OPERATOR_PORT_NAME
    else:
        namespace, selector, port = layout.agents_namespace(args.namespace), CHART_SELECTOR, CHART_PORT_NAME
    spec = {
        "namespaceSelector": {"matchNames": [namespace]},
        "selector": {"matchLabels": dict(selector)},
        "endpoints": [_endpoint(port)],
    }
    return kube.manifest("monitoring.coreos.com/v1", "ServiceMonitor", meta, spec=spec)
