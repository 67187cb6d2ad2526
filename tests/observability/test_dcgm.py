"""GPU metrics: where they come from per cloud, operator and pools; the dcgm-exporter chart's
values and placement; the scrape against the CRD schemas."""

from __future__ import annotations

import pytest
from chart_checks import value_problems
from component_args import make_args
from conftest import EKS, GKE
from crds import crd_problems

from components import constants
from components.observability import dcgm, layout

CPU_ONLY = [{"name": "system", "nodeSelector": {"pool": "system"}}]


def _args(source: str, **overrides):
    return make_args(**overrides).model_copy(update={"gpu_metrics": source})


@pytest.mark.parametrize(
    ("cloud", "operator", "expected"),
    [
        ("gke", False, "chart"),  # GKE-managed drivers: the chart (XID and remapped rows), not GKE's managed
        ("gke", True, "operator"),
        ("eks", False, "chart"),
        ("eks", True, "operator"),
        ("existing", False, "chart"),
        ("existing", True, "operator"),
    ],
)
def test_the_source_follows_the_operator(cloud, operator, expected):
    pools = make_args().node_pools
    assert dcgm.source(cloud, operator, pools) == expected


@pytest.mark.parametrize("operator", [False, True])
def test_no_gpu_pool_no_gpu_metrics(operator):
    pools = [pool for pool in make_args().node_pools if not pool.gpu]
    for cloud in ("gke", "eks", "existing"):
        assert dcgm.source(cloud, operator, pools) == "none"


@pytest.mark.parametrize("cloud", [GKE, EKS, {}], ids=["gke", "eks", "existing"])
def test_chart_values_are_keys_the_chart_reads(cloud):
    values = dcgm.values(_args("chart", **cloud))
    assert value_problems(dcgm.CHART, dcgm.VERSION, values) == []


def test_the_chart_is_installed_for_source_chart_only():
    assert dcgm.release_args(_args("operator", **GKE)) is None
    assert dcgm.release_args(_args("gke", **GKE)) is None
    assert dcgm.release_args(_args("none", **GKE)) is None
    release = dcgm.release_args(_args("chart", **EKS))
    assert (release["chart"], release["version"]) == ("dcgm-exporter", "4.8.2")
    assert release["namespace"] == layout.agents_namespace("determined")


def test_the_exporter_runs_on_gpu_nodes_only_whatever_their_taints():
    values = dcgm.values(_args("chart", **EKS))
    assert values["tolerations"] == [{"operator": "Exists"}]
    terms = values["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert {"matchExpressions": [{"key": "cloud.google.com/gke-accelerator", "operator": "Exists"}]} in terms
    assert {
        "matchExpressions": [{"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}]
    } in terms
    # An existing cluster's GPU pool by its own selector too; CPU pools never.
    existing = dcgm.values(_args("chart"))["affinity"]["nodeAffinity"]
    terms = existing["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["a100"]}]} in terms
    assert all(t["matchExpressions"][0].get("values") != ["system"] for t in terms)
    assert values["serviceMonitor"] == {"enabled": False}


def test_gke_nodes_give_the_exporter_the_host_driver():
    values = dcgm.values(_args("chart", **GKE))
    assert values["extraHostVolumes"] == [
        {"name": "nvidia-install-dir-host", "hostPath": "/home/kubernetes/bin/nvidia"}
    ]
    mounts = {m["mountPath"] for m in values["extraVolumeMounts"]}
    # The chart's own counters file stays mounted (Helm replaces lists whole).
    assert mounts == {"/etc/dcgm-exporter/default-counters.csv", "/usr/local/nvidia"}
    env = {e["name"]: e["value"] for e in values["extraEnv"]}
    assert env == {
        "LD_LIBRARY_PATH": "/usr/local/nvidia/lib64",
        "DCGM_EXPORTER_KUBERNETES_GPU_ID_TYPE": "device-name",
    }
    # privileged with allowPrivilegeEscalation false is refused by the API server.
    assert values["securityContext"] == {"privileged": True, "allowPrivilegeEscalation": True}
    assert "extraHostVolumes" not in dcgm.values(_args("chart", **EKS))


def test_gke_admits_the_critical_priority_under_a_quota():
    quota = dcgm.critical_pods_quota(_args("chart", **GKE))
    assert quota["metadata"]["namespace"] == layout.agents_namespace("determined")
    (expression,) = quota["spec"]["scopeSelector"]["matchExpressions"]
    assert expression["values"] == [dcgm.values(_args("chart", **GKE))["priorityClassName"]]
    assert dcgm.critical_pods_quota(_args("chart", **EKS)) is None
    assert dcgm.critical_pods_quota(_args("operator", **GKE)) is None


@pytest.mark.parametrize(
    ("source", "kind", "namespace", "port"),
    [
        ("chart", "ServiceMonitor", "determined-monitoring-agents", "metrics"),
        ("operator", "ServiceMonitor", constants.GPU_OPERATOR_NAMESPACE, "gpu-metrics"),
        ("gke", "PodMonitor", "gke-managed-system", "metrics"),
    ],
)
def test_the_scrape_is_a_valid_monitor_the_install_selects(source, kind, namespace, port):
    monitor = dcgm.service_monitor(_args(source, **GKE))
    assert crd_problems(monitor) == []
    assert monitor["kind"] == kind
    assert monitor["metadata"]["namespace"] == layout.namespace("determined")
    assert layout.SELECTOR_LABELS.items() <= monitor["metadata"]["labels"].items()
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": [namespace]}
    (endpoint,) = monitor["spec"]["endpoints" if kind == "ServiceMonitor" else "podMetricsEndpoints"]
    assert endpoint["port"] == port
    assert endpoint["honorLabels"] is True
    relabel = {r["targetLabel"]: r for r in endpoint["relabelings"]}
    assert relabel["job"]["replacement"] == layout.DCGM_JOB
    assert relabel[layout.NODE_LABEL]["sourceLabels"] == ["__meta_kubernetes_pod_node_name"]


def test_no_scrape_without_gpus():
    assert dcgm.service_monitor(_args("none")) is None
