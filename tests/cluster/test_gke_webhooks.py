"""Private GKE nodes and the stack's admission webhooks: GKE's own rule lets the control
plane reach private nodes on 443 and 10250 only, so a created network gets a rule for the
webhook ports beyond those (Kueue's and Envoy Gateway's 9443)."""

from __future__ import annotations

import copy

import yaml
from conftest import ROOT
from planning import of_type, plan_for, planned

import stack_args
from components.addons import kueue
from components.cluster.gke import network
from components.config import load_config

FIXTURES = ROOT / "tests" / "fixtures" / "stacks"


def fixture(name):
    raw = yaml.safe_load((FIXTURES / f"Pulumi.{name}.yaml").read_text())["config"]
    return {key.split(":", 1)[1]: value for key, value in raw.items()}


def private(raw, **cluster):
    raw = copy.deepcopy(raw)
    raw["cluster"] = {**raw["cluster"], "privateNodes": True, **cluster}
    return raw


def firewalls(result):
    return of_type(result, "compute/firewall:Firewall")


def test_kueues_webhook_port_is_the_one_the_rule_opens():
    # The port Kueue's webhook server listens on (components/addons/kueue.py keeps the chart's).
    assert kueue.manager_config(600)["webhook"]["port"] == network.WEBHOOK_PORTS["kueue"] == 9443
    assert network.WEBHOOK_PORTS["kueue"] not in network.CONTROL_PLANE_PORTS
    assert network.WEBHOOK_PORTS["cert-manager"] in network.CONTROL_PLANE_PORTS


def test_kueues_visibility_api_port_is_opened_too():
    # Kueue 0.19's chart: APIService v1beta2.visibility.kueue.x-k8s.io on Service
    # kueue-visibility-server, targetPort 8082 (the visibility server's BindPort).
    assert network.WEBHOOK_PORTS["kueue-visibility"] == 8082
    assert network.WEBHOOK_PORTS["kueue-visibility"] not in network.CONTROL_PLANE_PORTS
    args = stack_args.gke_cluster_args(load_config(private(fixture("kueue-gke"))))
    assert network.webhook_servers(args) == ["kueue", "kueue-visibility"]
    assert network.webhook_ports(args) == [8082, 9443]


def test_private_nodes_with_kueue_open_its_webhook_and_api_to_the_control_plane():
    result = plan_for(private(fixture("kueue-gke")), stack="kueue-private")
    (rule,) = firewalls(result)
    inputs = rule["inputs"]
    assert inputs["direction"] == "INGRESS"
    assert inputs["allows"] == [{"protocol": "tcp", "ports": ["8082", "9443"]}]
    assert inputs["name"] == network.firewall_name(load_config(private(fixture("kueue-gke"))))
    # The stack sets no master_ipv4_cidr_block: a new private cluster uses Private Service
    # Connect and reports no control-plane /28 (nor does it under the plan's mocks); its private
    # endpoint is in the nodes' subnet, so the nodes' range, never an open rule.
    assert "masterIpv4CidrBlock" not in str(
        next(r for r in of_type(result, "container/cluster:Cluster"))["inputs"].get("privateClusterConfig")
    )
    assert inputs["sourceRanges"] == ["10.10.0.0/20"]
    assert "0.0.0.0/0" not in inputs["sourceRanges"]


def test_the_rule_admits_the_control_planes_range_when_the_cluster_has_one():
    assert network.webhook_sources("172.16.0.0/28", "10.10.0.0/20") == ["172.16.0.0/28"]
    assert network.webhook_sources(None, "10.10.0.0/20") == ["10.10.0.0/20"]
    assert network.webhook_sources("", "10.10.0.0/20") == ["10.10.0.0/20"]
    assert network.control_plane_range({"master_ipv4_cidr_block": "172.16.0.0/28"}) == "172.16.0.0/28"
    assert network.control_plane_range(None) is None


def test_envoy_gateway_needs_the_rule_cert_manager_does_not():
    args = stack_args.gke_cluster_args(load_config(private(fixture("tls-ingress-gke"))))
    assert network.webhook_servers(args) == ["envoy-gateway", "cert-manager"]
    assert network.webhook_ports(args) == [9443]


def test_no_rule_without_private_nodes_webhooks_or_a_created_network():
    assert not firewalls(planned("kueue-gke"))  # public nodes: GKE's rules do not apply
    assert not firewalls(planned("gke-prod"))  # private, but no webhook beyond 443/10250
    shared = private(fixture("kueue-gke"), network=fixture("gke-shared-vpc")["cluster"]["network"])
    assert not firewalls(plan_for(shared, stack="kueue-shared"))  # the network's owner opens it
