"""The PromQL checks (promql.py) and their test data (tests/data/metrics): each check catches
what it is for, the data says where every name comes from."""

from __future__ import annotations

import json

import pytest
from promql import METRICS_DIR, check_expressions, metric_names, promtool, substitute_grafana

from components.observability import layout


def test_promtool_is_installed():
    # `make test` installs it (`make tools`); without it every parse check would fail.
    assert promtool(), "promtool missing: run `make tools`"


@pytest.mark.parametrize("path", sorted(METRICS_DIR.glob("*.json")), ids=lambda p: p.name)
def test_every_name_says_where_it_comes_from(path):
    data = json.loads(path.read_text())
    assert data["source"].get("tag") or data["source"].get("commit"), path.name
    for entry in data["metrics"]:
        assert entry.get("name") or entry.get("name_pattern"), entry
        assert entry.get("where") or entry.get("doc"), f"{path.name}: {entry.get('name')} has no source line"


GOOD = {
    "node cpu": 'sum by (node) (rate(node_cpu_seconds_total{mode!="idle"}[$__rate_interval]))',
    "histogram bucket": "histogram_quantile(0.9, sum by (le) (rate(grpc_server_handling_seconds_bucket[5m])))",
    "pg_settings pattern": "pg_settings_max_connections",
    "name regex": '{__name__=~"kube_pod_status_(phase|scheduled)"}',
    "recording rule": layout.RESOURCE_POOL_INFO,
    "grafana variables": 'up{job="$job", namespace=~"${namespace:regex}"} offset $__range',
    "builtin": "ALERTS{alertstate='firing'}",
    "cert-manager": "certmanager_certificate_expiration_timestamp_seconds - time()",
    "dcgm on by default": "DCGM_FI_DEV_XID_ERRORS > 0",
    "kubelet": "kubelet_volume_stats_used_bytes / kubelet_volume_stats_capacity_bytes",
}


def test_good_expressions_pass():
    assert check_expressions(GOOD) == []


@pytest.mark.parametrize(
    ("expr", "needle"),
    [
        ("sum(rate(up[5m]) by (job)", "promtool"),  # a parse error
        ("rate(up[$interval])", "promtool"),  # a dashboard variable where a duration goes
        ("det_no_such_metric", "unknown metric det_no_such_metric"),
        ("DCGM_FI_PROF_SM_ACTIVE", "default metric list"),  # commented out in the CSVs
        ("node_mountstats_nfs_age_seconds_total", "--collector.mountstats"),
        ("pg_stat_statements_calls_total", "off by default"),
        ("kube_pod_nodeselectors", "opt-in"),
        ("kueue_replaced_workload_slices_total", "never registered"),
        ("grpc_server_handling_seconds_total", "unknown metric"),  # a histogram has no _total
        ('{__name__=~"nothing_like_this_.*"}', "matches no known metric"),
        ('sum(up) or on() {__name__="bogus_name"}', "unknown metric bogus_name"),
    ],
)
def test_bad_expressions_are_named(expr, needle):
    problems = check_expressions({"the key": expr})
    assert problems, expr
    assert all(p.startswith("the key: ") for p in problems), problems
    assert any(needle in p for p in problems), problems


def test_ksm_collector_off_in_the_chart():
    # kube-prometheus-stack leaves ingressclasses and the RBAC collectors off.
    disabled = [
        m["name"]
        for m in json.loads((METRICS_DIR / "kube-state-metrics.json").read_text())["metrics"]
        if m.get("enabled_by_kube_prometheus_stack_default") is False
    ]
    assert disabled
    assert check_expressions({"k": disabled[0]})


def test_grafana_variables_substituted_outside_strings_only():
    assert substitute_grafana('rate(x{a="$__interval"}[$__rate_interval])') == 'rate(x{a="$__interval"}[5m])'
    assert substitute_grafana("increase(x[${__range}])") == "increase(x[1h])"


def test_metric_names_walks_the_whole_tree():
    expr = 'a + on(x) group_left sum(rate(b[5m])) or label_replace(max_over_time(c[1h:5m]), "l", "$1", "m", "(.*)")'
    assert sorted(metric_names(expr)) == ["a", "b", "c"]
    assert metric_names('{__name__=~"x_.*"} unless -d offset 5m') == ["~x_.*", "d"]
