"""kube-prometheus-stack: values the chart reads, namespaces at their Pod Security levels, the
project's selectors, placement, Grafana's admin and path, and two installs apart."""

from __future__ import annotations

import pytest
from chart_checks import strings, value_problems
from component_args import make_args
from conftest import EKS, GKE

from components.kube import pod_security
from components.observability import layout, prometheus_stack

PSA = pod_security.LABEL_PREFIX
TLS = {
    "mode": "ingress",
    "host": "det.example.com",
    "certificate": {"source": "secret", "secretName": "det-tls"},
}


@pytest.fixture(scope="module")
def args():
    return make_args(**GKE)


@pytest.mark.parametrize("cloud", [GKE, EKS, {}], ids=["gke", "eks", "existing"])
def test_values_are_keys_the_chart_reads(cloud):
    for tls in (None, TLS):
        overrides = dict(cloud) | ({"tls": tls} if tls else {})
        values = prometheus_stack.values(make_args(**overrides))
        assert value_problems(prometheus_stack.CHART, prometheus_stack.VERSION, values) == []


def test_release_is_the_pinned_chart_in_the_monitoring_namespace(args):
    release = prometheus_stack.release_args(args)
    assert (release["name"], release["chart"], release["version"]) == (
        layout.STACK_RELEASE,
        "kube-prometheus-stack",
        "88.5.3",
    )
    assert release["namespace"] == layout.namespace(args.namespace) == "determined-monitoring"
    assert release["repository_opts"] == {"repo": "https://prometheus-community.github.io/helm-charts"}


def test_namespaces_enforce_restricted_and_privileged(args):
    monitoring, agents = prometheus_stack.namespaces(args)
    assert monitoring["metadata"]["name"] == layout.namespace(args.namespace)
    assert agents["metadata"]["name"] == layout.agents_namespace(args.namespace)
    for mode in ("enforce", "audit", "warn"):
        assert monitoring["metadata"]["labels"][f"{PSA}{mode}"] == "restricted"
    assert agents["metadata"]["labels"][f"{PSA}enforce"] == "privileged"
    assert agents["metadata"]["labels"][f"{PSA}audit"] == "baseline"


def test_prometheus_keeps_samples_on_a_volume_and_stops_before_it_fills():
    args = make_args(
        **GKE, observability={"retention": "30d", "storageSize": "100Gi", "storageClass": "fast"}
    )
    spec = prometheus_stack.values(args)["prometheus"]["prometheusSpec"]
    assert spec["retention"] == "30d"
    assert spec["retentionSize"] == "92160MB"  # 90% of 100Gi, in MiB
    claim = spec["storageSpec"]["volumeClaimTemplate"]["spec"]
    assert claim["resources"]["requests"]["storage"] == "100Gi"
    assert claim["storageClassName"] == "fast"
    assert prometheus_stack.retention_size("50Gi") == "46080MB"
    assert prometheus_stack.retention_size("500M") == "429MB"
    am = prometheus_stack.values(args)["alertmanager"]["alertmanagerSpec"]
    assert am["storage"]["volumeClaimTemplate"]["spec"]["storageClassName"] == "fast"
    assert am["retention"]


def test_prometheus_selects_the_projects_monitors_and_rules_in_its_namespaces_only(args):
    spec = prometheus_stack.values(args)["prometheus"]["prometheusSpec"]
    watched = [layout.namespace(args.namespace), layout.agents_namespace(args.namespace)]
    for kind in ("serviceMonitor", "podMonitor", "rule", "probe", "scrapeConfig"):
        assert spec[f"{kind}Selector"] == {"matchLabels": layout.SELECTOR_LABELS}
        (expression,) = spec[f"{kind}NamespaceSelector"]["matchExpressions"]
        assert expression == {"key": "kubernetes.io/metadata.name", "operator": "In", "values": watched}
    operator = prometheus_stack.values(args)["prometheusOperator"]
    assert operator["namespaces"] == {"releaseNamespace": True, "additional": [watched[1]]}


def test_two_namespaces_give_distinct_cluster_scoped_names():
    first = make_args(**GKE)
    second = make_args(**GKE, namespace="team-b")
    a, b = prometheus_stack.cluster_scoped_names(first), prometheus_stack.cluster_scoped_names(second)
    assert len(set(a)) == len(a)
    assert not set(a) & set(b)
    # Long namespaces with one head stay apart, within the chart's 26 characters.
    long_a = make_args(**GKE, namespace="determined-research-cluster-one")
    long_b = make_args(**GKE, namespace="determined-research-cluster-two")
    names = {prometheus_stack.fullname(long_a), prometheus_stack.fullname(long_b)}
    assert len(names) == 2 and all(len(n) <= prometheus_stack.FULLNAME_MAX for n in names)
    # What values decide them: the fullnames the chart derives them from.
    for args in (first, second):
        values = prometheus_stack.values(args)
        assert values["fullnameOverride"] == prometheus_stack.fullname(args)
        assert ("ClusterRole", values["kube-state-metrics"]["fullnameOverride"]) in (
            prometheus_stack.cluster_scoped_names(args)
        )
        # Grafana makes a Role, not a ClusterRole.
        assert values["grafana"]["rbac"]["namespaced"] is True


def test_unreachable_control_plane_is_not_scraped(args):
    values = prometheus_stack.values(args)
    for key in ("kubeEtcd", "kubeControllerManager", "kubeScheduler", "kubeProxy"):
        assert values[key] == {"enabled": False}
    assert "kubelet" not in values and "kubeApiServer" not in values  # kept as the chart has them
    assert values["coreDns"] == {"enabled": False}  # GKE runs kube-dns
    assert "coreDns" not in prometheus_stack.values(make_args(**EKS))


def test_node_exporter_runs_in_the_agents_namespace_on_every_node(args):
    exporter = prometheus_stack.values(args)["prometheus-node-exporter"]
    assert exporter["namespaceOverride"] == layout.agents_namespace(args.namespace)
    assert exporter["tolerations"] == [{"operator": "Exists"}]


def test_kube_state_metrics_exposes_the_node_pool_label(args):
    ksm = prometheus_stack.values(args)["kube-state-metrics"]
    assert ksm["metricLabelsAllowlist"][0] == f"nodes=[{','.join(layout.NODE_LABELS_ALLOWLIST)}]"


def test_grafana_admin_comes_from_the_secret(args):
    secret = prometheus_stack.grafana_admin_secret(args, "s3cret")
    grafana = prometheus_stack.values(args)["grafana"]
    assert secret["metadata"]["namespace"] == layout.namespace(args.namespace)
    assert grafana["admin"]["existingSecret"] == secret["metadata"]["name"]
    assert set(secret["stringData"]) == {grafana["admin"]["userKey"], grafana["admin"]["passwordKey"]}
    assert "s3cret" not in strings(prometheus_stack.release_args(args))


def test_grafana_loads_dashboards_of_its_namespace_only(args):
    sidecar = prometheus_stack.values(args)["grafana"]["sidecar"]["dashboards"]
    assert {sidecar["label"]: sidecar["labelValue"]} == layout.DASHBOARD_LABELS
    assert sidecar["searchNamespace"] == [layout.namespace(args.namespace)]
    assert prometheus_stack.values(args)["grafana"]["persistence"] == {"enabled": False}


def test_grafana_is_served_under_the_masters_host_with_tls_ingress():
    grafana = prometheus_stack.values(make_args(**GKE, tls=TLS))["grafana"]
    assert grafana["grafana.ini"]["server"] == {
        "root_url": f"https://det.example.com{layout.GRAFANA_PATH}/",
        "serve_from_sub_path": True,
    }
    assert grafana["fullnameOverride"] == layout.GRAFANA_SERVICE
    assert "grafana.ini" not in prometheus_stack.values(make_args(**GKE))["grafana"]


def test_system_pods_run_on_the_masters_pool(args):
    values = prometheus_stack.values(args)
    selector = {"determined.ai/node-pool": "system"}
    assert values["prometheus"]["prometheusSpec"]["nodeSelector"] == selector
    assert values["alertmanager"]["alertmanagerSpec"]["nodeSelector"] == selector
    assert values["prometheusOperator"]["nodeSelector"] == selector
    assert values["prometheusOperator"]["admissionWebhooks"]["patch"]["nodeSelector"] == selector
    assert values["grafana"]["nodeSelector"] == selector
    assert values["kube-state-metrics"]["nodeSelector"] == selector
    # Existing clusters: the pool's own selector.
    existing = prometheus_stack.values(make_args())
    assert existing["prometheus"]["prometheusSpec"]["nodeSelector"] == {"pool": "system"}


def test_every_workload_has_requests_and_a_memory_limit(args):
    values = prometheus_stack.values(args)
    for resources in (
        values["prometheus"]["prometheusSpec"]["resources"],
        values["alertmanager"]["alertmanagerSpec"]["resources"],
        values["prometheusOperator"]["resources"],
        values["prometheusOperator"]["prometheusConfigReloader"]["resources"],
        values["prometheusOperator"]["admissionWebhooks"]["patch"]["resources"],
        values["grafana"]["resources"],
        values["grafana"]["sidecar"]["resources"],
        values["kube-state-metrics"]["resources"],
        values["prometheus-node-exporter"]["resources"],
    ):
        assert (
            resources["requests"]["cpu"] and resources["requests"]["memory"] and resources["limits"]["memory"]
        )


def test_what_is_set_for_pod_security_is_restricted_or_baseline(args):
    # The container securityContexts set here, on a pod of the chart's pod-level defaults.
    exporter = prometheus_stack.values(args)["prometheus-node-exporter"]
    pod = {
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": 65534,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [{"name": "node-exporter", "securityContext": exporter["containerSecurityContext"]}],
    }
    assert pod_security.restricted_problems(pod) == []
    restricted = {"containers": [{"name": "c", "securityContext": prometheus_stack.RESTRICTED_CONTAINER}]}
    assert pod_security.restricted_problems(restricted) == []
