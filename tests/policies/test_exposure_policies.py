"""Policies on how the master and the cluster are reached: TLS, load balancer source ranges,
the Kubernetes API endpoint, plain HTTP routes. Props are the plans' (resources.json)."""

from __future__ import annotations

import copy

import pytest
import yaml
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE

from policies.rule import Context
from tests.policies.support import args, check, ctx, resource, rule

SERVICE = "kubernetes:core/v1:Service"
SECRET = "kubernetes:core/v1:Secret"
GATEWAY = "kubernetes:gateway.networking.k8s.io/v1:Gateway"
HTTP_ROUTE = "kubernetes:gateway.networking.k8s.io/v1:HTTPRoute"
TLS_ROUTE = "kubernetes:gateway.networking.k8s.io/v1:TLSRoute"
ENVOY_PROXY = "kubernetes:gateway.envoyproxy.io/v1alpha1:EnvoyProxy"
EKS_CLUSTER = "aws:eks/cluster:Cluster"
GKE_CLUSTER = "gcp:container/cluster:Cluster"


def labels(component: str) -> dict:
    return {
        "app.kubernetes.io/instance": "determined",
        "app.kubernetes.io/managed-by": "pulumi",
        "app.kubernetes.io/name": component,
        "app.kubernetes.io/part-of": "determined",
    }


def master_service(service_type: str = "ClusterIP", **spec: object) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "labels": labels("master"),
            "name": "determined-master-service",
            "namespace": "determined",
        },
        "spec": {
            "ports": [{"name": "https", "port": 8080, "targetPort": "https"}],
            "selector": {"app.kubernetes.io/instance": "determined", "app.kubernetes.io/name": "master"},
            "type": service_type,
            **spec,
        },
    }


def master_config(config: dict | str) -> dict:
    text = config if isinstance(config, str) else yaml.safe_dump(config)
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "annotations": {"determined.ai/master-version": "0.38.1"},
            "labels": labels("master"),
            "name": "determined-master-config",
            "namespace": "determined",
        },
        "stringData": {"master.yaml": text} if isinstance(config, dict) else text,
        "type": "Opaque",
    }


MASTER_TLS = {
    "port": 8081,
    "security": {"tls": {"cert": "/etc/determined-tls/tls.crt", "key": "/etc/determined-tls/tls.key"}},
}
NO_TLS = {"port": 8081, "security": {"initial_user_password": "Fixture-Pass-1"}}


def listener(name: str, port: int, protocol: str, **extra: object) -> dict:
    return {
        "allowedRoutes": {"namespaces": {"from": "Same"}},
        "hostname": "det.example.org",
        "name": name,
        "port": port,
        "protocol": protocol,
        **extra,
    }


HTTP = listener("http", 80, "HTTP")
HTTPS = listener(
    "https",
    443,
    "HTTPS",
    tls={"certificateRefs": [{"kind": "Secret", "name": "det-example-org-tls"}], "mode": "Terminate"},
)
TLS = listener("tls", 443, "TLS", tls={"mode": "Passthrough"})


def gateway(*listeners: dict, namespace: str = "determined") -> dict:
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "metadata": {"labels": labels("gateway"), "name": "determined", "namespace": namespace},
        "spec": {"gatewayClassName": "determined", "listeners": list(listeners)},
    }


def parent(section: str | None, **extra: object) -> dict:
    ref: dict = {"name": "determined", **extra}
    if section is not None:
        ref["sectionName"] = section
    return ref


def route(kind: str, name: str, parents: list[dict], rules: list[dict]) -> dict:
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": kind,
        "metadata": {"labels": labels("gateway"), "name": name, "namespace": "determined"},
        "spec": {"hostnames": ["det.example.org"], "parentRefs": parents, "rules": rules},
    }


MASTER_BACKEND = {
    "backendRefs": [{"name": "determined-master-service", "port": 8080}],
    "timeouts": {"backendRequest": "0s", "request": "0s"},
}
REDIRECT = {
    "filters": [{"requestRedirect": {"scheme": "https", "statusCode": 301}, "type": "RequestRedirect"}]
}


def https_route(section: str | None = "https", rules: list[dict] | None = None) -> dict:
    return route("HTTPRoute", "determined-master", [parent(section)], rules or [MASTER_BACKEND])


def redirect_route(rules: list[dict] | None = None) -> dict:
    return route("HTTPRoute", "determined-redirect", [parent("http")], rules or [REDIRECT])


def tls_route() -> dict:
    backend = {"backendRefs": [{"name": "determined-master-service", "port": 8080}]}
    return route("TLSRoute", "determined-master", [parent("tls")], [backend])


def ingress_stack() -> list:
    """tls.mode ingress as tests/fixtures/stacks/Pulumi.tls-ingress-eks.yaml plans it."""
    return [
        resource(SERVICE, master_service("ClusterIP"), "svc"),
        resource(GATEWAY, gateway(HTTP, HTTPS), "gw"),
        resource(HTTP_ROUTE, https_route(), "route"),
        resource(HTTP_ROUTE, redirect_route(), "redirect"),
    ]


# --- master-tls -------------------------------------------------------------------------------


def test_master_tls_levels():
    assert rule("master-tls").level(ctx("dev")) == "advisory"
    assert rule("master-tls").level(ctx("prod")) == "mandatory"


def test_master_tls_passes_a_cluster_ip_master_without_reading_master_yaml():
    # A first preview: master.yaml is not known yet, and nothing needs it.
    stack = [
        resource(SERVICE, master_service("ClusterIP"), "svc"),
        resource(SECRET, master_config(UNKNOWN_STRING_VALUE), "config"),
    ]
    assert check("master-tls", stack) == []


def test_master_tls_refuses_a_load_balancer_master_without_security_tls():
    stack = [
        resource(SERVICE, master_service("LoadBalancer", loadBalancerSourceRanges=["203.0.113.0/24"]), "svc"),
        resource(SECRET, master_config(NO_TLS), "config"),
    ]
    (found,) = check("master-tls", stack)
    assert "Service determined/determined-master-service" in found
    assert "LoadBalancer" in found and "security.tls" in found


@pytest.mark.parametrize("service_type", ["LoadBalancer", "NodePort"])
def test_master_tls_passes_an_exposed_master_serving_tls(service_type):
    stack = [
        resource(SERVICE, master_service(service_type), "svc"),
        resource(SECRET, master_config(MASTER_TLS), "config"),
    ]
    assert check("master-tls", stack, ctx("prod")) == []


def test_master_tls_refuses_a_node_port_master_with_no_master_yaml():
    (found,) = check("master-tls", [resource(SERVICE, master_service("NodePort"), "svc")])
    assert "NodePort" in found


def test_master_tls_ignores_services_of_other_pods():
    db = master_service("LoadBalancer")
    db["metadata"]["name"] = "determined-db"
    db["spec"]["selector"]["app.kubernetes.io/name"] = "database"
    assert check("master-tls", [resource(SERVICE, db, "db"), resource(SECRET, master_config(NO_TLS))]) == []


def test_master_tls_passes_the_ingress_and_master_mode_gateways():
    assert check("master-tls", ingress_stack()) == []
    master_mode = [
        resource(SERVICE, master_service("ClusterIP"), "svc"),
        resource(GATEWAY, gateway(HTTP, TLS), "gw"),
        resource(TLS_ROUTE, tls_route(), "route"),
        resource(HTTP_ROUTE, redirect_route(), "redirect"),
        resource(SECRET, master_config(MASTER_TLS), "config"),
    ]
    assert check("master-tls", master_mode) == []


def test_master_tls_refuses_a_gateway_routing_to_the_master_without_https_or_tls():
    stack = [
        resource(SERVICE, master_service("ClusterIP"), "svc"),
        resource(GATEWAY, gateway(HTTP), "gw"),
        resource(HTTP_ROUTE, https_route(section="http"), "route"),
    ]
    (found,) = check("master-tls", stack)
    assert "Gateway determined/determined routes to the master" in found
    assert "HTTPRoute determined/determined-master" in found and "'http' (HTTP)" in found


def test_master_tls_follows_a_parent_ref_into_another_namespace():
    attached = route("HTTPRoute", "determined-master", [parent(None, namespace="edge")], [MASTER_BACKEND])
    stack = [
        resource(SERVICE, master_service("ClusterIP"), "svc"),
        resource(GATEWAY, gateway(HTTP, HTTPS), "ours"),
        resource(GATEWAY, gateway(HTTP, namespace="edge"), "edge"),
        resource(HTTP_ROUTE, attached, "route"),
    ]
    (found,) = check("master-tls", stack)
    assert "Gateway edge/determined" in found


def test_master_tls_ignores_gateways_routing_elsewhere():
    elsewhere = https_route(section="http", rules=[{"backendRefs": [{"name": "grafana", "port": 3000}]}])
    stack = [resource(GATEWAY, gateway(HTTP), "gw"), resource(HTTP_ROUTE, elsewhere, "route")]
    assert check("master-tls", stack) == []


# --- lb-source-ranges -------------------------------------------------------------------------


def envoy_proxy(annotations: dict | None = None, ranges: list[str] | None = None, **service: object) -> dict:
    envoy_service: dict = {"externalTrafficPolicy": "Local", "type": "LoadBalancer", **service}
    if annotations is not None:
        envoy_service["annotations"] = annotations
    if ranges is not None:
        envoy_service["loadBalancerSourceRanges"] = ranges
    return {
        "apiVersion": "gateway.envoyproxy.io/v1alpha1",
        "kind": "EnvoyProxy",
        "metadata": {"labels": labels("envoy-gateway"), "name": "determined", "namespace": "determined"},
        "spec": {"provider": {"kubernetes": {"envoyService": envoy_service}, "type": "Kubernetes"}},
    }


NLB = {"service.beta.kubernetes.io/aws-load-balancer-type": "nlb"}


def test_lb_source_ranges_levels():
    assert (rule("lb-source-ranges").dev, rule("lb-source-ranges").prod) == ("advisory", "mandatory")


def test_lb_source_ranges_passes_a_fenced_envoy_proxy():
    props = envoy_proxy(NLB, ["203.0.113.0/24", "198.51.100.0/24"])
    assert check("lb-source-ranges", args(ENVOY_PROXY, props), ctx(cloud="eks")) == []


def test_lb_source_ranges_refuses_a_public_envoy_proxy_without_ranges():
    # tls.mode master on an existing cluster, no tls.sourceRanges (the tls-master fixture).
    (found,) = check("lb-source-ranges", args(ENVOY_PROXY, envoy_proxy()))
    assert "EnvoyProxy determined/determined (spec.provider.kubernetes.envoyService)" in found
    assert "no loadBalancerSourceRanges" in found


def test_lb_source_ranges_passes_internal_load_balancers_of_the_stacks_cloud():
    gke_internal = envoy_proxy({"networking.gke.io/load-balancer-type": "Internal"})
    assert check("lb-source-ranges", args(ENVOY_PROXY, gke_internal), ctx(cloud="gke")) == []
    eks_internal = envoy_proxy({**NLB, "service.beta.kubernetes.io/aws-load-balancer-internal": "true"})
    assert check("lb-source-ranges", args(ENVOY_PROXY, eks_internal), ctx(cloud="eks")) == []
    scheme = envoy_proxy({"service.beta.kubernetes.io/aws-load-balancer-scheme": "internal"})
    assert check("lb-source-ranges", args(ENVOY_PROXY, scheme), ctx(cloud="eks")) == []
    assert check("lb-source-ranges", args(ENVOY_PROXY, gke_internal), ctx(cloud="existing")) == []


def test_lb_source_ranges_refuses_another_clouds_internal_annotation():
    gke_internal = envoy_proxy({"networking.gke.io/load-balancer-type": "Internal"})
    assert len(check("lb-source-ranges", args(ENVOY_PROXY, gke_internal), ctx(cloud="eks"))) == 1
    aws_internal = envoy_proxy({"service.beta.kubernetes.io/aws-load-balancer-internal": "true"})
    assert len(check("lb-source-ranges", args(ENVOY_PROXY, aws_internal), ctx(cloud="gke"))) == 1
    not_internal = envoy_proxy({**NLB, "service.beta.kubernetes.io/aws-load-balancer-internal": "false"})
    assert len(check("lb-source-ranges", args(ENVOY_PROXY, not_internal), ctx(cloud="eks"))) == 1


@pytest.mark.parametrize("open_range", ["0.0.0.0/0", "::/0"])
def test_lb_source_ranges_refuses_a_load_balancer_service_open_to_all(open_range):
    props = master_service("LoadBalancer", loadBalancerSourceRanges=["203.0.113.0/24", open_range])
    (found,) = check("lb-source-ranges", args(SERVICE, props), ctx("prod", "gke"))
    assert "Service determined/determined-master-service" in found and open_range in found


def test_lb_source_ranges_reads_the_source_ranges_annotation():
    props = master_service("LoadBalancer")
    props["metadata"]["annotations"] = {
        "service.beta.kubernetes.io/load-balancer-source-ranges": "203.0.113.0/24, 198.51.100.0/24"
    }
    assert check("lb-source-ranges", args(SERVICE, props)) == []
    props["metadata"]["annotations"]["service.beta.kubernetes.io/load-balancer-source-ranges"] = "0.0.0.0/0"
    assert len(check("lb-source-ranges", args(SERVICE, props))) == 1


def test_lb_source_ranges_ignores_what_is_no_load_balancer():
    assert check("lb-source-ranges", args(SERVICE, master_service("ClusterIP"))) == []
    assert check("lb-source-ranges", args(SERVICE, master_service("NodePort"))) == []
    assert check("lb-source-ranges", args(ENVOY_PROXY, envoy_proxy(type="ClusterIP"))) == []


def test_lb_source_ranges_treats_an_envoy_service_without_type_as_a_load_balancer():
    props = envoy_proxy()
    del props["spec"]["provider"]["kubernetes"]["envoyService"]["type"]
    assert len(check("lb-source-ranges", args(ENVOY_PROXY, props))) == 1


# --- control-plane-endpoint-fenced --------------------------------------------------------------


def eks_cluster(**vpc: object) -> dict:
    # eks-prod's cluster, subnets unknown as in a first preview (never read).
    return {
        "name": "det-prod",
        "version": "1.34",
        "vpcConfig": {"subnetIds": [UNKNOWN_STRING_VALUE, UNKNOWN_STRING_VALUE], **vpc},
        "roleArn": UNKNOWN_STRING_VALUE,
    }


def gke_cluster(private_endpoint: bool = False, cidrs: list[str] | None = None, **networks: object) -> dict:
    props: dict = {
        "name": "det-prod",
        "location": "us-central1",
        "network": UNKNOWN_STRING_VALUE,
        "privateClusterConfig": {"enablePrivateEndpoint": private_endpoint, "enablePrivateNodes": True},
    }
    if cidrs is not None or networks:
        blocks = [{"cidrBlock": c, "displayName": f"authorized-{i}"} for i, c in enumerate(cidrs or [])]
        props["masterAuthorizedNetworksConfig"] = {"cidrBlocks": blocks, **networks}
    return props


def test_control_plane_endpoint_fenced_levels():
    the_rule = rule("control-plane-endpoint-fenced")
    assert (the_rule.level(ctx("dev")), the_rule.level(ctx("prod"))) == ("advisory", "mandatory")


def test_control_plane_endpoint_fenced_passes_fenced_eks_endpoints():
    fenced = eks_cluster(
        endpointPrivateAccess=True, endpointPublicAccess=True, publicAccessCidrs=["203.0.113.0/24"]
    )
    assert check("control-plane-endpoint-fenced", args(EKS_CLUSTER, fenced), ctx("prod", "eks")) == []
    private = eks_cluster(endpointPrivateAccess=True, endpointPublicAccess=False)
    assert check("control-plane-endpoint-fenced", args(EKS_CLUSTER, private), ctx("prod", "eks")) == []


def test_control_plane_endpoint_fenced_refuses_an_open_eks_endpoint():
    # eks-dev: public endpoint, no CIDRs.
    props = eks_cluster(endpointPrivateAccess=True, endpointPublicAccess=True)
    (found,) = check("control-plane-endpoint-fenced", args(EKS_CLUSTER, props), ctx(cloud="eks"))
    assert "EKS cluster det-prod" in found and "publicAccessCidrs is empty" in found


def test_control_plane_endpoint_fenced_takes_eks_public_access_as_on_by_default():
    (found,) = check("control-plane-endpoint-fenced", args(EKS_CLUSTER, eks_cluster()), ctx(cloud="eks"))
    assert "admits any address" in found


def test_control_plane_endpoint_fenced_refuses_eks_cidrs_of_everything():
    props = eks_cluster(endpointPublicAccess=True, publicAccessCidrs=["203.0.113.0/24", "0.0.0.0/0"])
    (found,) = check("control-plane-endpoint-fenced", args(EKS_CLUSTER, props), ctx("prod", "eks"))
    assert "0.0.0.0/0" in found


def test_control_plane_endpoint_fenced_passes_fenced_gke_endpoints():
    authorized = gke_cluster(cidrs=["203.0.113.0/24"])
    assert check("control-plane-endpoint-fenced", args(GKE_CLUSTER, authorized), ctx("prod", "gke")) == []
    private = gke_cluster(private_endpoint=True)
    assert check("control-plane-endpoint-fenced", args(GKE_CLUSTER, private), ctx("prod", "gke")) == []


def test_control_plane_endpoint_fenced_refuses_open_gke_endpoints():
    # gke-dev: neither a private endpoint nor authorized networks.
    bare = {"name": "det-dev", "location": "us-central1"}
    (found,) = check("control-plane-endpoint-fenced", args(GKE_CLUSTER, bare), ctx(cloud="gke"))
    assert "GKE cluster det-dev" in found and "no masterAuthorizedNetworksConfig.cidrBlocks" in found
    empty = gke_cluster(cidrs=[])
    assert len(check("control-plane-endpoint-fenced", args(GKE_CLUSTER, empty), ctx(cloud="gke"))) == 1
    everything = gke_cluster(cidrs=["0.0.0.0/0"])
    (found,) = check("control-plane-endpoint-fenced", args(GKE_CLUSTER, everything), ctx(cloud="gke"))
    assert "0.0.0.0/0" in found


def test_control_plane_endpoint_fenced_refuses_gke_access_from_every_google_address():
    props = gke_cluster(cidrs=["203.0.113.0/24"], gcpPublicCidrsAccessEnabled=True)
    (found,) = check("control-plane-endpoint-fenced", args(GKE_CLUSTER, props), ctx("prod", "gke"))
    assert "gcpPublicCidrsAccessEnabled" in found


def test_control_plane_endpoint_fenced_ignores_other_resources():
    assert check("control-plane-endpoint-fenced", args(SERVICE, master_service("LoadBalancer"))) == []


# --- no-plain-http-route ----------------------------------------------------------------------


def test_no_plain_http_route_is_mandatory_everywhere():
    the_rule = rule("no-plain-http-route")
    assert (the_rule.level(Context("dev")), the_rule.level(Context("prod"))) == ("mandatory", "mandatory")


def test_no_plain_http_route_passes_the_redirect_and_the_https_route():
    assert check("no-plain-http-route", ingress_stack()) == []


def test_no_plain_http_route_refuses_a_route_to_the_master_on_the_http_listener():
    plain = route("HTTPRoute", "plain", [parent("http")], [MASTER_BACKEND])
    stack = [*ingress_stack(), resource(HTTP_ROUTE, plain, "plain")]
    (found,) = check("no-plain-http-route", stack)
    assert "HTTPRoute determined/plain" in found
    assert "listener 'http' (HTTP) of Gateway determined/determined" in found and "rule(s) 0" in found


def test_no_plain_http_route_takes_a_route_without_section_as_attached_to_every_listener():
    stack = [resource(GATEWAY, gateway(HTTP, HTTPS), "gw"), resource(HTTP_ROUTE, https_route(section=None))]
    (found,) = check("no-plain-http-route", stack)
    assert "HTTPRoute determined/determined-master" in found
    # ... unless its port picks the HTTPS listener.
    on_443 = route("HTTPRoute", "determined-master", [parent(None, port=443)], [MASTER_BACKEND])
    assert (
        check("no-plain-http-route", [resource(GATEWAY, gateway(HTTP, HTTPS)), resource(HTTP_ROUTE, on_443)])
        == []
    )


@pytest.mark.parametrize(
    "bad_rule",
    [
        {"filters": [{"requestRedirect": {"scheme": "http", "port": 8080}, "type": "RequestRedirect"}]},
        {**REDIRECT, "backendRefs": [{"name": "determined-master-service", "port": 8080}]},
        {"filters": [{"type": "RequestHeaderModifier", "requestHeaderModifier": {"set": []}}]},
    ],
)
def test_no_plain_http_route_refuses_rules_that_do_more_than_redirect_to_https(bad_rule):
    stack = [
        resource(GATEWAY, gateway(HTTP, HTTPS), "gw"),
        resource(HTTP_ROUTE, redirect_route([REDIRECT, bad_rule])),
    ]
    (found,) = check("no-plain-http-route", stack)
    assert "HTTPRoute determined/determined-redirect" in found and "rule(s) 1 " in found


def test_no_plain_http_route_ignores_routes_to_gateways_outside_the_stack():
    assert check("no-plain-http-route", [resource(HTTP_ROUTE, https_route(section="http"))]) == []


def test_no_plain_http_route_ignores_tls_routes():
    passthrough = copy.deepcopy(tls_route())
    passthrough["spec"]["parentRefs"] = [parent("http")]
    stack = [resource(GATEWAY, gateway(HTTP, TLS), "gw"), resource(TLS_ROUTE, passthrough)]
    assert check("no-plain-http-route", stack) == []
