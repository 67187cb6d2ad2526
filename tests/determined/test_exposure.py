"""The Gateway API objects that expose the master, by TLS mode and certificate source."""

from __future__ import annotations

import copy

import pytest
from conftest import make_config
from crds import crd_problems

from components import constants
from components.config.tls import MasterTls
from components.determined import exposure

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
    tls = MasterTls.model_validate({"mode": "master", "host": HOST, "certificate": certificate})
    return cfg.model_copy(update={"tls": tls})


def configs():
    """(name, cfg) for every exposed mode and certificate source."""
    for source, certificate in CERTIFICATES.items():
        yield f"ingress-{source}", ingress(certificate)
        yield f"master-{source}", master(certificate)


def built(cfg):
    return exposure.objects(cfg, CLASS, ISSUER)


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
    gw = copy.deepcopy(exposure.gateway(cfg, CLASS, ISSUER))
    gw["spec"]["listeners"][1]["tls"]["mode"] = "Reencrypt"
    assert any("tls.mode" in problem for problem in crd_problems(gw))

    route = copy.deepcopy(exposure.https_route(cfg))
    route["spec"]["rules"][0]["timeouts"]["idle"] = "0s"  # not a v1 standard field
    assert any("unknown field 'idle'" in problem for problem in crd_problems(route))

    route = copy.deepcopy(exposure.https_route(cfg))
    route["spec"]["rules"][0]["timeouts"]["request"] = "forever"
    assert any("timeouts.request" in problem for problem in crd_problems(route))

    tls_route = copy.deepcopy(exposure.tls_route(master(USER_SECRET), 8443))
    tls_route["apiVersion"] = "gateway.networking.k8s.io/v1alpha2"  # not served by the standard CRD
    assert any("no schema" in problem for problem in crd_problems(tls_route))


def test_no_exposure_builds_nothing():
    assert exposure.objects(make_config(), CLASS, ISSUER) == []
    assert exposure.objects(make_config(tls={"mode": "none"}), CLASS, None) == []


def test_certificate_secret_is_the_users_or_cert_managers():
    assert exposure.certificate_secret(ingress(USER_SECRET).tls) == "my-det-cert"
    assert exposure.certificate_secret(ingress(CERT_MANAGER).tls) == "determined-tls"
    assert exposure.certificate_secret(master(USER_SECRET).tls) == "my-det-cert"
    assert exposure.certificate_secret(master(CERT_MANAGER).tls) == "determined-tls"


def test_ingress_mode_builds_the_gateway_and_two_http_routes():
    objs = built(ingress(USER_SECRET))
    assert [(obj["kind"], obj["metadata"]["name"]) for obj in objs] == [
        ("Gateway", exposure.GATEWAY),
        ("HTTPRoute", "determined-master"),
        ("HTTPRoute", "determined-redirect"),
    ]


def test_ingress_gateway_terminates_tls_with_the_certificate_secret():
    for source, secret in (("secret", "my-det-cert"), ("certManager", "determined-tls")):
        cfg = ingress(CERTIFICATES[source])
        gw = exposure.gateway(cfg, CLASS, ISSUER)
        assert gw["metadata"]["name"] == exposure.GATEWAY
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
    annotated = exposure.gateway(ingress(CERT_MANAGER), CLASS, ISSUER)
    assert annotated["metadata"]["annotations"] == {"cert-manager.io/cluster-issuer": ISSUER}
    plain = exposure.gateway(ingress(USER_SECRET), CLASS, ISSUER)
    assert "annotations" not in plain["metadata"]
    for certificate in CERTIFICATES.values():
        assert "annotations" not in exposure.gateway(master(certificate), CLASS, ISSUER)["metadata"]


def test_a_cert_manager_certificate_needs_an_issuer():
    with pytest.raises(ValueError, match="ClusterIssuer"):
        exposure.objects(ingress(CERT_MANAGER), CLASS, None)
    with pytest.raises(ValueError, match="ClusterIssuer"):
        exposure.objects(master(CERT_MANAGER), CLASS, None)
    assert exposure.objects(ingress(USER_SECRET), CLASS, None)


def test_the_https_route_sends_the_host_to_the_master_service_without_deadlines():
    route = exposure.https_route(ingress(USER_SECRET))
    assert route["metadata"]["name"] == "determined-master"
    assert attached_sections(route) == {(exposure.GATEWAY, "https")}
    assert route["spec"]["hostnames"] == [HOST]
    [rule] = route["spec"]["rules"]
    assert rule["backendRefs"] == [
        {"name": constants.MASTER_SERVICE_NAME, "port": constants.MASTER_SERVICE_PORT}
    ]
    # websockets and long downloads: "0s" disables both timeouts
    assert rule["timeouts"] == {"request": "0s", "backendRequest": "0s"}


def test_the_redirect_route_sends_plain_http_to_https_and_nowhere_else():
    for name, cfg in configs():
        route = exposure.redirect_route(cfg)
        assert route["metadata"]["name"] == "determined-redirect", name
        assert attached_sections(route) == {(exposure.GATEWAY, "http")}
        assert route["spec"]["hostnames"] == [HOST]
        [rule] = route["spec"]["rules"]
        assert "backendRefs" not in rule
        assert rule["filters"] == [
            {"type": "RequestRedirect", "requestRedirect": {"scheme": "https", "statusCode": 301}}
        ]


def test_no_route_forwards_plain_http_to_a_backend_in_any_mode():
    for name, cfg in configs():
        for route in by_kind(built(cfg), "HTTPRoute"):
            if (exposure.GATEWAY, "http") in attached_sections(route):
                assert all(not rule.get("backendRefs") for rule in route["spec"]["rules"]), name
            # every HTTPRoute names its listener: none falls onto `http` by default
            assert all(section for _, section in attached_sections(route)), name


def test_master_mode_passes_tls_through_to_the_master():
    for source, certificate in CERTIFICATES.items():
        cfg = master(certificate)
        objs = exposure.objects(cfg, CLASS, ISSUER, master_tls_port=8443)
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
        assert attached_sections(route) == {(exposure.GATEWAY, "tls")}
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
