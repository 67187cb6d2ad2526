"""The edge add-ons: Envoy Gateway (chart values, EnvoyProxy, GatewayClass) and cert-manager
(chart values, Let's Encrypt ClusterIssuer), checked against Envoy Gateway v1.9.0's and
cert-manager v1.21.1's CRD schemas and chart value keys, and Gateway API v1.6.1's schemas."""

from __future__ import annotations

import copy

import pytest
from conftest import ROOT
from crds import crd_problems, scopes

from components import versions
from components.addons import cert_manager, envoy_gateway

KEYS_DIR = ROOT / "tests" / "data" / "chart-keys"
RANGES = ["203.0.113.0/24", "2001:db8::/32"]
GKE_INTERNAL = {"networking.gke.io/load-balancer-type": "Internal"}
NLB = {"service.beta.kubernetes.io/aws-load-balancer-type": "nlb"}
NLB_INTERNAL = {**NLB, "service.beta.kubernetes.io/aws-load-balancer-internal": "true"}


def all_objects():
    objs = [
        envoy_gateway.gateway_class(envoy_gateway.NAMESPACE),
        cert_manager.cluster_issuer("ops@example.com", "determined", "determined"),
    ]
    for cloud in envoy_gateway.CLOUDS:
        for exposure in envoy_gateway.EXPOSURES:
            for ranges in ([], RANGES):
                objs.append(envoy_gateway.envoy_proxy(envoy_gateway.NAMESPACE, cloud, exposure, ranges))
    return objs


def service(proxy):
    return proxy["spec"]["provider"]["kubernetes"]["envoyService"]


# --- schemas ---------------------------------------------------------------------------------------


def test_the_schemas_used_have_scope_rows():
    found = scopes()
    assert found["gateway.networking.k8s.io_v1_GatewayClass.json"] == "Cluster"
    assert found["gateway.envoyproxy.io_v1alpha1_EnvoyProxy.json"] == "Namespaced"
    assert found["cert-manager.io_v1_ClusterIssuer.json"] == "Cluster"


@pytest.mark.parametrize("obj", all_objects(), ids=lambda o: f"{o['kind']}")
def test_every_object_conforms_to_its_crd_schema(obj):
    assert crd_problems(obj) == []


@pytest.mark.parametrize(
    ("obj", "path", "expected"),
    [
        (
            envoy_gateway.envoy_proxy("envoy-gateway-system", "gke", "public", []),
            ("spec", "provider", "kubernetes", "envoyService"),
            "spec.provider.kubernetes.envoyService: unknown field 'loadBalancerSourceRange'",
        ),
        (
            envoy_gateway.gateway_class("envoy-gateway-system"),
            ("spec",),
            "spec: unknown field 'loadBalancerSourceRange'",
        ),
        (
            cert_manager.cluster_issuer("ops@example.com", "gw", "ns"),
            ("spec", "acme", "solvers", 0, "http01", "gatewayHTTPRoute"),
            "spec.acme.solvers[0].http01.gatewayHTTPRoute: unknown field 'loadBalancerSourceRange'",
        ),
    ],
    ids=["EnvoyProxy", "GatewayClass", "ClusterIssuer"],
)
def test_a_misspelt_field_is_caught(obj, path, expected):
    obj = copy.deepcopy(obj)
    node = obj
    for part in path:
        node = node[part]
    node["loadBalancerSourceRange"] = ["203.0.113.0/24"]
    assert crd_problems(obj) == [expected]


def test_a_wrong_enum_and_a_namespace_on_a_cluster_kind_are_caught():
    proxy = envoy_gateway.envoy_proxy("envoy-gateway-system", "eks", "public", [])
    service(proxy)["type"] = "Loadbalancer"
    assert crd_problems(proxy) and all("type" in p for p in crd_problems(proxy))
    issuer = cert_manager.cluster_issuer("ops@example.com", "gw", "ns")
    issuer["metadata"]["namespace"] = "cert-manager"
    assert crd_problems(issuer) == ["metadata.namespace: set on a cluster-scoped kind"]


# --- chart values ----------------------------------------------------------------------------------


def load_key_set(name):
    """({'chart', 'version'} header, {dotted path: kind}) of a tests/data/chart-keys file."""
    header, paths = {}, {}
    for line in (KEYS_DIR / name).read_text().splitlines():
        if line.startswith("#"):
            key, sep, value = line[1:].strip().partition(":")
            if sep and key.strip() in ("chart", "version"):
                header[key.strip()] = value.strip()
        elif line.strip():
            path, kind = line.split()
            paths[path] = kind
    return header, paths


def unknown_values(values, paths, prefix=""):
    """Dotted paths of values the key set does not allow: a map key must be a known map
    (a prefix of some path) or a path; nothing goes below a scalar; `*` takes anything."""
    maps = {p.rsplit(".", i)[0] for p in paths for i in range(1, p.count(".") + 1)}
    found = []
    for key, value in values.items():
        path = f"{prefix}{key}"
        kind = paths.get(path)
        if kind == "*":
            continue
        if kind == "S" and not isinstance(value, (dict, list)):
            continue
        if kind == "L" and isinstance(value, list):
            continue
        if kind is None and path in maps and isinstance(value, dict):
            found += unknown_values(value, paths, f"{path}.")
            continue
        found.append(path)
    return found


@pytest.mark.parametrize(
    ("module", "key_file"),
    [(envoy_gateway, "gateway-helm-v1.9.0.txt"), (cert_manager, "cert-manager-v1.21.1.txt")],
    ids=["envoy-gateway", "cert-manager"],
)
def test_every_value_is_a_key_of_the_pinned_chart(module, key_file):
    header, paths = load_key_set(key_file)
    args = module.release_args()
    assert header["version"] == module.VERSION == args["version"]
    assert args["chart"].rsplit("/", 1)[-1] == header["chart"]
    assert unknown_values(args["values"], paths) == []
    # The checker sees a misspelt key.
    assert unknown_values({"crds": {"enable": True}}, paths) == ["crds.enable"]
    assert unknown_values({"crds": {"enabled": {"x": 1}}}, paths) == ["crds.enabled"]


def test_cert_manager_values_for_a_dns01_identity_are_keys_of_the_pinned_chart():
    _, paths = load_key_set("cert-manager-v1.21.1.txt")
    annotations = {"iam.gke.io/gcp-service-account": "dns@p.iam.gserviceaccount.com"}
    args = cert_manager.release_args(
        account_annotations=annotations, identity="dns@p.iam.gserviceaccount.com"
    )
    assert args["values"]["serviceAccount"] == {
        "name": cert_manager.SERVICE_ACCOUNT,
        "annotations": annotations,
    }
    assert unknown_values(args["values"], paths) == []


@pytest.mark.parametrize(
    "dns01",
    [
        {"route53": {"hostedZoneID": "Z0123456789ABCDEFGHIJ"}},
        {"cloudDNS": {}},
        {"route53": {"hostedZoneID": "Z0123456789ABCDEFGHIJ"}, "cnameStrategy": "Follow"},
    ],
    ids=["route53", "cloudDNS", "cname-follow"],
)
def test_a_dns01_issuer_over_a_cloud_identity_conforms_to_the_crd(dns01):
    defaults = {"region": "eu-west-1"} if "route53" in dns01 else {"project": "dns-hub"}
    issuer = cert_manager.cluster_issuer("ops@example.com", "gw", "ns", dns01=dns01, solver_defaults=defaults)
    assert crd_problems(issuer) == []


def test_the_cloud_dns_solver_needs_the_project_the_platform_supplies():
    bare = cert_manager.cluster_issuer("ops@example.com", "gw", "ns", dns01={"cloudDNS": {}})
    assert [p for p in crd_problems(bare) if "project" in p]


def test_the_pinned_versions_are_the_projects():
    assert envoy_gateway.VERSION == versions.ENVOY_GATEWAY_VERSION == "v1.9.0"
    assert cert_manager.VERSION == versions.CERT_MANAGER_VERSION == "v1.21.1"


@pytest.mark.parametrize("module", [envoy_gateway, cert_manager], ids=["envoy-gateway", "cert-manager"])
def test_the_releases_are_oci_charts_in_their_own_namespace(module):
    args = module.release_args()
    assert args["chart"].startswith("oci://")
    assert "repository_opts" not in args
    assert args["namespace"] == module.NAMESPACE
    assert args["create_namespace"] is True
    assert args["atomic"] is True and args["cleanup_on_fail"] is True


def test_envoy_gateway_installs_the_gateway_api_crds():
    assert envoy_gateway.release_args()["name"] == "envoy-gateway"
    assert envoy_gateway.values()["crds"]["enabled"] is True


def test_cert_manager_installs_its_crds_and_serves_the_gateway_api():
    values = cert_manager.values()
    assert cert_manager.release_args()["name"] == "cert-manager"
    assert values["crds"] == {"enabled": True}
    assert "installCRDs" not in values
    # ControllerConfiguration v1alpha1 at v1.21.1: `gatewayAPI.enabled` (top-level
    # `enableGatewayAPI` is deprecated).
    assert values["config"] == {
        "apiVersion": "controller.config.cert-manager.io/v1alpha1",
        "kind": "ControllerConfiguration",
        "gatewayAPI": {"enabled": True},
    }


# --- load balancer ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cloud", "exposure", "expected"),
    [
        ("existing", "public", {}),
        ("existing", "internal", {}),
        ("gke", "public", {}),
        ("gke", "internal", GKE_INTERNAL),
        ("eks", "public", NLB),
        ("eks", "internal", NLB_INTERNAL),
    ],
)
def test_load_balancer_annotations_per_cloud_and_exposure(cloud, exposure, expected):
    assert envoy_gateway.load_balancer_annotations(cloud, exposure) == expected
    svc = service(envoy_gateway.envoy_proxy("edge", cloud, exposure, []))
    assert svc.get("annotations", {}) == expected
    assert "annotations" in svc or not expected  # no empty map written


@pytest.mark.parametrize(("cloud", "exposure"), [("aks", "public"), ("gke", "private"), ("GKE", "public")])
def test_an_unknown_cloud_or_exposure_is_refused(cloud, exposure):
    with pytest.raises(ValueError):
        envoy_gateway.load_balancer_annotations(cloud, exposure)


def test_source_ranges_reach_the_envoy_service():
    proxy = envoy_gateway.envoy_proxy("edge", "gke", "public", RANGES)
    assert proxy["metadata"]["name"] == envoy_gateway.PROXY_NAME
    assert proxy["metadata"]["namespace"] == "edge"
    assert proxy["spec"]["provider"]["type"] == "Kubernetes"
    svc = service(proxy)
    assert svc["type"] == "LoadBalancer"
    assert svc["loadBalancerSourceRanges"] == RANGES
    # Local keeps the client address (no SNAT to a node), which the ranges are about.
    assert svc["externalTrafficPolicy"] == "Local"
    assert "loadBalancerSourceRanges" not in service(envoy_gateway.envoy_proxy("edge", "gke", "public", []))


@pytest.mark.parametrize("bad", ["203.0.113.7", "everyone", "10.0.0.0/33", ""])
def test_a_source_range_that_is_not_a_cidr_is_refused(bad):
    with pytest.raises(ValueError, match="not a CIDR"):
        envoy_gateway.envoy_proxy("edge", "eks", "public", [bad])


# --- GatewayClass and ClusterIssuer ----------------------------------------------------------------


def test_the_gateway_class_points_at_the_envoy_proxy():
    proxy = envoy_gateway.envoy_proxy("edge", "existing", "public", [])
    gc = envoy_gateway.gateway_class("edge")
    assert gc["apiVersion"] == "gateway.networking.k8s.io/v1"
    assert gc["metadata"]["name"] == envoy_gateway.GATEWAY_CLASS == "determined"
    assert "namespace" not in gc["metadata"]
    assert gc["spec"]["controllerName"] == envoy_gateway.CONTROLLER
    ref = gc["spec"]["parametersRef"]
    group = proxy["apiVersion"].split("/")[0]
    assert ref == {
        "group": group,
        "kind": proxy["kind"],
        "name": proxy["metadata"]["name"],
        "namespace": proxy["metadata"]["namespace"],
    }


def test_the_controller_name_is_the_charts_default():
    # gateway-helm v1.9.0 values.tmpl.yaml config.envoyGateway.gateway.controllerName; the
    # values do not override it.
    assert envoy_gateway.CONTROLLER == "gateway.envoyproxy.io/gatewayclass-controller"
    assert "config" not in envoy_gateway.values()


def test_the_cluster_issuer_carries_the_email_and_the_gateway():
    issuer = cert_manager.cluster_issuer("ops@example.com", "det-gw", "det-edge", listener="plain")
    assert issuer["apiVersion"] == "cert-manager.io/v1"
    assert issuer["metadata"]["name"] == cert_manager.ISSUER == "determined-letsencrypt"
    acme = issuer["spec"]["acme"]
    assert acme["server"] == cert_manager.ACME_SERVER
    assert acme["email"] == "ops@example.com"
    assert acme["privateKeySecretRef"] == {"name": "determined-letsencrypt-account"}
    assert acme["solvers"] == [
        {
            "http01": {
                "gatewayHTTPRoute": {
                    "parentRefs": [
                        {"kind": "Gateway", "name": "det-gw", "namespace": "det-edge", "sectionName": "plain"}
                    ]
                }
            }
        }
    ]
    default = cert_manager.cluster_issuer("ops@example.com", "det-gw", "det-edge")
    assert (
        default["spec"]["acme"]["solvers"][0]["http01"]["gatewayHTTPRoute"]["parentRefs"][0]["sectionName"]
        == "http"
    )


@pytest.mark.parametrize("email", ["", "ops", None])
def test_an_issuer_without_an_email_address_is_refused(email):
    with pytest.raises(ValueError, match="email"):
        cert_manager.cluster_issuer(email, "gw", "ns")
