"""tls: how users reach the master. The Gateway API objects that expose it, by TLS mode and
certificate source (components.determined.tls), and the add-ons that serve them: Envoy
Gateway (chart values, EnvoyProxy, GatewayClass) and cert-manager (chart values, Let's
Encrypt ClusterIssuer), checked against Envoy Gateway v1.9.0's and cert-manager v1.21.1's CRD
schemas and chart value keys, and Gateway API v1.6.1's schemas."""

from __future__ import annotations

import copy

import pytest
from conftest import ROOT, make_config
from crds import crd_problems, scopes

from components import constants, versions
from components.addons import cert_manager, envoy_gateway
from components.config.tls import MasterTls
from components.determined import tls

HOST = "det.example.com"
CLASS = "envoy-gateway"
ISSUER = "letsencrypt"
CERT_MANAGER = {"source": "certManager", "email": "ops@mail.example.com"}
USER_SECRET = {"source": "secret", "secretName": "my-det-cert"}
CERTIFICATES = {"certManager": CERT_MANAGER, "secret": USER_SECRET}


def ingress(certificate):
    return make_config(tls={"mode": "ingress", "host": HOST, "certificate": certificate})


def master(certificate):
    # The stack's validation still refuses `mode: master` (not supported yet), so the
    # master-mode TLS settings are put into an otherwise valid configuration directly.
    cfg = ingress(certificate)
    settings = MasterTls.model_validate({"mode": "master", "host": HOST, "certificate": certificate})
    return cfg.model_copy(update={"tls": settings})


def configs():
    """(name, cfg) for every exposed mode and certificate source."""
    for source, certificate in CERTIFICATES.items():
        yield f"ingress-{source}", ingress(certificate)
        yield f"master-{source}", master(certificate)


def built(cfg):
    return tls.objects(cfg, CLASS, ISSUER)


def by_kind(objs, kind):
    return [obj for obj in objs if obj["kind"] == kind]


def listeners(gw):
    return {listener["name"]: listener for listener in gw["spec"]["listeners"]}


def attached_sections(route):
    return {(ref["name"], ref.get("sectionName")) for ref in route["spec"]["parentRefs"]}


def test_every_object_conforms_to_its_crd_schema():
    for name, cfg in configs():
        objs = built(cfg)
        assert objs, name
        for obj in objs:
            assert crd_problems(obj) == [], (name, obj["kind"], obj["metadata"]["name"])
            assert obj["metadata"]["namespace"] == cfg.namespace
            assert obj["apiVersion"] in ("gateway.networking.k8s.io/v1", "cert-manager.io/v1")


def test_the_schema_check_catches_broken_objects():
    cfg = ingress(CERT_MANAGER)
    gw = copy.deepcopy(tls.gateway(cfg, CLASS, ISSUER))
    gw["spec"]["listeners"][1]["tls"]["mode"] = "Reencrypt"
    assert any("tls.mode" in problem for problem in crd_problems(gw))

    route = copy.deepcopy(tls.https_route(cfg))
    route["spec"]["rules"][0]["timeouts"]["idle"] = "0s"  # not a v1 standard field
    assert any("unknown field 'idle'" in problem for problem in crd_problems(route))

    route = copy.deepcopy(tls.https_route(cfg))
    route["spec"]["rules"][0]["timeouts"]["request"] = "forever"
    assert any("timeouts.request" in problem for problem in crd_problems(route))

    tls_route = copy.deepcopy(tls.tls_route(master(USER_SECRET), 8443))
    tls_route["apiVersion"] = "gateway.networking.k8s.io/v1alpha2"  # not served by the standard CRD
    assert any("no schema" in problem for problem in crd_problems(tls_route))


def test_no_exposure_builds_nothing():
    assert tls.objects(make_config(), CLASS, ISSUER) == []
    assert tls.objects(make_config(tls={"mode": "none"}), CLASS, None) == []


def test_certificate_secret_is_the_users_or_cert_managers():
    assert tls.certificate_secret(ingress(USER_SECRET).tls) == "my-det-cert"
    assert tls.certificate_secret(ingress(CERT_MANAGER).tls) == "determined-tls"
    assert tls.certificate_secret(master(USER_SECRET).tls) == "my-det-cert"
    assert tls.certificate_secret(master(CERT_MANAGER).tls) == "determined-tls"


def test_ingress_mode_builds_the_gateway_and_two_http_routes():
    objs = built(ingress(USER_SECRET))
    assert [(obj["kind"], obj["metadata"]["name"]) for obj in objs] == [
        ("Gateway", tls.GATEWAY),
        ("HTTPRoute", "determined-master"),
        ("HTTPRoute", "determined-redirect"),
    ]


def test_ingress_gateway_terminates_tls_with_the_certificate_secret():
    for source, secret in (("secret", "my-det-cert"), ("certManager", "determined-tls")):
        cfg = ingress(CERTIFICATES[source])
        gw = tls.gateway(cfg, CLASS, ISSUER)
        assert gw["metadata"]["name"] == tls.GATEWAY
        assert gw["metadata"]["namespace"] == cfg.namespace
        assert gw["spec"]["gatewayClassName"] == CLASS
        found = listeners(gw)
        assert set(found) == {"http", "https"}
        http, https = found["http"], found["https"]
        assert (http["port"], http["protocol"], http["hostname"]) == (80, "HTTP", HOST)
        assert "tls" not in http
        assert (https["port"], https["protocol"], https["hostname"]) == (443, "HTTPS", HOST)
        assert https["tls"] == {"mode": "Terminate", "certificateRefs": [{"kind": "Secret", "name": secret}]}
        for listener in found.values():
            assert listener["allowedRoutes"] == {"namespaces": {"from": "Same"}}


def test_only_a_cert_manager_certificate_annotates_the_gateway_with_the_issuer():
    annotated = tls.gateway(ingress(CERT_MANAGER), CLASS, ISSUER)
    assert annotated["metadata"]["annotations"] == {"cert-manager.io/cluster-issuer": ISSUER}
    plain = tls.gateway(ingress(USER_SECRET), CLASS, ISSUER)
    assert "annotations" not in plain["metadata"]
    for certificate in CERTIFICATES.values():
        assert "annotations" not in tls.gateway(master(certificate), CLASS, ISSUER)["metadata"]


def test_a_cert_manager_certificate_needs_an_issuer():
    with pytest.raises(ValueError, match="ClusterIssuer"):
        tls.objects(ingress(CERT_MANAGER), CLASS, None)
    with pytest.raises(ValueError, match="ClusterIssuer"):
        tls.objects(master(CERT_MANAGER), CLASS, None)
    assert tls.objects(ingress(USER_SECRET), CLASS, None)


def test_the_https_route_sends_the_host_to_the_master_service_without_deadlines():
    route = tls.https_route(ingress(USER_SECRET))
    assert route["metadata"]["name"] == "determined-master"
    assert attached_sections(route) == {(tls.GATEWAY, "https")}
    assert route["spec"]["hostnames"] == [HOST]
    [rule] = route["spec"]["rules"]
    assert rule["backendRefs"] == [
        {"name": constants.MASTER_SERVICE_NAME, "port": constants.MASTER_SERVICE_PORT}
    ]
    # websockets and long downloads: "0s" disables both timeouts
    assert rule["timeouts"] == {"request": "0s", "backendRequest": "0s"}


def test_the_redirect_route_sends_plain_http_to_https_and_nowhere_else():
    for name, cfg in configs():
        route = tls.redirect_route(cfg)
        assert route["metadata"]["name"] == "determined-redirect", name
        assert attached_sections(route) == {(tls.GATEWAY, "http")}
        assert route["spec"]["hostnames"] == [HOST]
        [rule] = route["spec"]["rules"]
        assert "backendRefs" not in rule
        assert rule["filters"] == [
            {"type": "RequestRedirect", "requestRedirect": {"scheme": "https", "statusCode": 301}}
        ]


def test_no_route_forwards_plain_http_to_a_backend_in_any_mode():
    for name, cfg in configs():
        for route in by_kind(built(cfg), "HTTPRoute"):
            if (tls.GATEWAY, "http") in attached_sections(route):
                assert all(not rule.get("backendRefs") for rule in route["spec"]["rules"]), name
            # every HTTPRoute names its listener: none falls onto `http` by default
            assert all(section for _, section in attached_sections(route)), name


def test_master_mode_passes_tls_through_to_the_master():
    for source, certificate in CERTIFICATES.items():
        cfg = master(certificate)
        objs = tls.objects(cfg, CLASS, ISSUER, master_tls_port=8443)
        gw = by_kind(objs, "Gateway")[0]
        found = listeners(gw)
        assert set(found) == {"http", "tls"}, source
        assert (found["tls"]["port"], found["tls"]["protocol"], found["tls"]["hostname"]) == (
            443,
            "TLS",
            HOST,
        )
        assert found["tls"]["tls"] == {"mode": "Passthrough"}
        assert (found["http"]["port"], found["http"]["protocol"]) == (80, "HTTP")

        [route] = by_kind(objs, "TLSRoute")
        assert route["apiVersion"] == "gateway.networking.k8s.io/v1"
        assert attached_sections(route) == {(tls.GATEWAY, "tls")}
        assert route["spec"]["hostnames"] == [HOST]
        assert route["spec"]["rules"] == [
            {"backendRefs": [{"name": constants.MASTER_SERVICE_NAME, "port": 8443}]}
        ]
        # the only HTTPRoute is the redirect
        assert [r["metadata"]["name"] for r in by_kind(objs, "HTTPRoute")] == ["determined-redirect"]


def test_master_mode_port_defaults_to_the_service_port():
    objs = built(master(USER_SECRET))
    [route] = by_kind(objs, "TLSRoute")
    assert route["spec"]["rules"][0]["backendRefs"][0]["port"] == constants.MASTER_SERVICE_PORT


def test_master_mode_asks_cert_manager_for_a_certificate_only_when_it_issues_it():
    cfg = master(CERT_MANAGER)
    [cert] = by_kind(built(cfg), "Certificate")
    assert cert["apiVersion"] == "cert-manager.io/v1"
    assert cert["metadata"]["name"] == "determined-master"
    assert cert["metadata"]["namespace"] == cfg.namespace
    assert cert["spec"] == {
        "secretName": "determined-tls",
        "dnsNames": [HOST],
        "issuerRef": {"kind": "ClusterIssuer", "name": ISSUER},
    }
    assert by_kind(built(master(USER_SECRET)), "Certificate") == []
    assert by_kind(built(ingress(CERT_MANAGER)), "Certificate") == []


# --- the add-ons: Envoy Gateway and cert-manager ---------------------------------------------

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
def test_every_addon_object_conforms_to_its_crd_schema(obj):
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
