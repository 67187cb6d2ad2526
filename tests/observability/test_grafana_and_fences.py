"""Reaching Grafana (a path under the master's host through its Gateway, or port-forward)
and the NetworkPolicies of the observability namespaces and of the Determined namespace
towards them."""

from __future__ import annotations

import pytest
from conftest import make_config
from crds import crd_problems
from planning import planned

import stack_args
from components.determined import network_policies as det_np
from components.kube import validation
from components.observability import grafana, layout
from components.observability import network_policies as np

INGRESS = {"mode": "ingress", "host": "det.example.com", "certificate": {"email": "ops@mail.example.com"}}
MASTER = {"mode": "master", "host": "det.example.com", "certificate": {"email": "ops@mail.example.com"}}
ON = {"enabled": True}


def args(**overrides):
    return stack_args.determined_args(make_config(observability=ON, **overrides))


def test_with_tls_ingress_grafana_is_a_path_of_the_masters_host_through_its_gateway():
    a = args(tls=INGRESS)
    route, grant = grafana.route_objects(a)
    assert route["metadata"]["namespace"] == "determined"  # beside the Gateway (listeners: Same)
    assert route["spec"]["parentRefs"] == [{"name": "determined", "sectionName": "https"}]
    assert route["spec"]["hostnames"] == ["det.example.com"]
    (rule,) = route["spec"]["rules"]
    assert rule["matches"] == [{"path": {"type": "PathPrefix", "value": "/grafana"}}]
    assert rule["backendRefs"] == [
        {"name": layout.GRAFANA_SERVICE, "namespace": "determined-monitoring", "port": layout.GRAFANA_PORT}
    ]
    # The grant sits with the Service and admits this namespace's HTTPRoutes only.
    assert grant["metadata"]["namespace"] == "determined-monitoring"
    assert grant["spec"]["from"] == [
        {"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "namespace": "determined"}
    ]
    assert grant["spec"]["to"] == [{"group": "", "kind": "Service", "name": layout.GRAFANA_SERVICE}]
    assert grafana.url(a) == "https://det.example.com/grafana/"
    for obj in (route, grant):
        assert crd_problems(obj) == []


@pytest.mark.parametrize("tls", [MASTER, {"mode": "none"}], ids=["master", "none"])
def test_without_a_terminating_gateway_grafana_is_reached_by_port_forward(tls):
    a = args(tls=tls)
    assert grafana.route_objects(a) == []
    assert grafana.url(a) == f"http://{layout.GRAFANA_SERVICE}.determined-monitoring.svc:80"
    assert grafana.port_forward(a) == (
        f"kubectl -n determined-monitoring port-forward svc/{layout.GRAFANA_SERVICE} 3000:80"
    )


def by_name(a):
    return {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in np.objects(a)}


def test_the_monitoring_namespaces_deny_ingress_except_what_they_need():
    found = by_name(args(tls=INGRESS))
    mon, agents = "determined-monitoring", "determined-monitoring-agents"
    assert found[(mon, np.DEFAULT_DENY)]["spec"] == {
        "podSelector": {},
        "policyTypes": ["Ingress"],
        "ingress": [],
    }
    assert found[(agents, np.AGENTS_DEFAULT_DENY)]["spec"]["ingress"] == []
    # Egress stays open: Prometheus scrapes every namespace and the kubelets.
    assert all("Egress" not in p["spec"]["policyTypes"] for p in found.values())
    assert found[(mon, np.SAME_NAMESPACE)]["spec"]["ingress"] == [{"from": [{"podSelector": {}}]}]
    (dcgm,) = found[(agents, np.DCGM_POLICY)]["spec"]["ingress"]
    assert dcgm == {
        "from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": mon}}}],
        "ports": [{"protocol": "TCP", "port": 9400}],
    }
    # Grafana from the Gateway's Envoy pods only.
    (rule,) = found[(mon, np.GRAFANA_POLICY)]["spec"]["ingress"]
    assert rule["from"] == det_np.gateway_proxies(args(tls=INGRESS))
    for obj in found.values():
        assert list(validation.problems(obj)) == []


def test_without_an_exposed_grafana_no_policy_opens_its_port_and_none_without_network_policies():
    assert (layout.namespace("determined"), np.GRAFANA_POLICY) not in by_name(args(tls=MASTER))
    assert np.objects(args(networkPolicies=False)) == []


def test_the_determined_namespace_admits_the_exporter_and_the_scrapers_of_the_monitoring_namespace():
    a = args()
    mon = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "determined-monitoring"}}}
    (master_rule,) = det_np.master_policy(a)["spec"]["ingress"]
    assert mon in master_rule["from"] and {"namespaceSelector": {}} not in master_rule["from"]
    (db_rule,) = det_np.database_policy(a)["spec"]["ingress"]
    assert {"podSelector": {"matchLabels": layout.POSTGRES_EXPORTER_POD_LABELS}, **mon} in db_rule["from"]
    # Off: neither.
    off = stack_args.determined_args(make_config())
    (db_rule,) = det_np.database_policy(off)["spec"]["ingress"]
    assert not any(
        "namespaceSelector" in peer
        and peer.get("podSelector", {}).get("matchLabels") == (layout.POSTGRES_EXPORTER_POD_LABELS)
        for peer in db_rule["from"]
    )


def test_the_token_jobs_reach_dns_the_master_and_the_kubernetes_api_only_and_the_master_admits_them():
    a = args()
    found = {p["metadata"]["name"]: p for p in det_np.objects(a)}
    token = found[det_np.METRICS_TOKEN_POLICY]["spec"]
    assert token["podSelector"] == {
        "matchLabels": {"app.kubernetes.io/name": "metrics-token", "app.kubernetes.io/instance": "determined"}
    }
    assert token["policyTypes"] == ["Egress"]
    dns, to_master, api = token["egress"]
    assert dns == det_np.dns_rule()
    assert to_master["ports"] == [{"protocol": "TCP", "port": 8081}]
    assert api == {"ports": [{"protocol": "TCP", "port": 443}, {"protocol": "TCP", "port": 6443}]}
    (master_rule,) = found[det_np.MASTER_POLICY]["spec"]["ingress"]
    assert {"podSelector": token["podSelector"]} in master_rule["from"]
    assert det_np.METRICS_TOKEN_POLICY not in {
        p["metadata"]["name"] for p in det_np.objects(stack_args.determined_args(make_config()))
    }


def test_grafanas_route_waits_for_the_gateway_api_and_the_gateway_class():
    # The HTTPRoute and ReferenceGrant kinds come with Envoy Gateway's CRDs: created before
    # them, pulumi-kubernetes gives up on "no matches for kind" (pulumi-kubernetes#1446).
    result = planned("tls-ingress-gke")
    by_name = {r["name"]: r for r in result.resources}
    gateway_release = next(r for r in result.resources if r["name"] == "envoy-gateway")
    gateway_class = next(r for r in result.resources if r["type"].endswith(":GatewayClass"))
    route = by_name["determined/grafana"]
    grant = by_name["determined-monitoring/grafana"]
    for obj in (route, grant):
        assert {gateway_release["urn"], gateway_class["urn"]} <= set(obj["dependsOn"]), obj["name"]
