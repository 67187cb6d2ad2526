"""`tls.host` and `tls.certificate.dns01` refused where Gateway API or cert-manager would
refuse them: an IP address as the host, a DNS-01 solver the ClusterIssuer CRD's schema does
not take (checked on the solver as the program renders it), control characters in it."""

from __future__ import annotations

import copy
import json

import pytest
from conftest import EKS, GKE, ROOT, raw_config
from crds import crd_problems

from components import versions
from components.addons import cert_manager
from components.config import ConfigError, load_config
from components.config import tls as tls_config

CLUSTER_ISSUER_SCHEMA = ROOT / "tests/data/crd-schemas/cert-manager.io_v1_ClusterIssuer.json"


def problems(raw) -> list[str]:
    try:
        load_config(raw)
    except ConfigError as exc:
        return [str(p) for p in exc.problems]
    return []


def with_dns01(dns01, base=None, **tls):
    raw = copy.deepcopy(base) if base else raw_config()
    raw["tls"] = {
        "mode": "ingress",
        "host": "det.example.com",
        "certificate": {"email": "ops@mail.example.com", "dns01": dns01},
        "sourceRanges": ["203.0.113.0/24"],
        **tls,
    }
    return raw


# --- tls.host ---------------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["10.0.0.5", "203.0.113.10", "192.168.1.1"])
@pytest.mark.parametrize(
    "certificate", [{"email": "ops@mail.example.com"}, {"source": "secret", "secretName": "det-tls"}]
)
def test_a_host_that_is_an_ip_address_is_refused(host, certificate):
    raw = raw_config(tls={"mode": "master", "host": host, "certificate": certificate})
    assert problems(raw) == [
        f"determined:tls.host: '{host}' is an IP address: give a DNS name pointing at the Gateway (Gateway API "
        "hostnames and TLS server names cannot be IP addresses, and the certificate is issued for a DNS name)"
    ]


def test_a_host_with_digits_that_is_no_address_is_a_name():
    for host in ("10.0.0.5.nip.io", "1.example.com", "det.10"):
        assert (
            problems(
                raw_config(
                    tls={"mode": "ingress", "host": host, "certificate": {"email": "o@mail.example.com"}}
                )
            )
            == []
        )


# --- DNS-01 against cert-manager's schema -------------------------------------------------------


def test_the_solver_schema_is_the_pinned_cluster_issuers():
    assert versions.CERT_MANAGER_VERSION in tls_config.DNS01_SCHEMA.name
    whole = json.loads(CLUSTER_ISSUER_SCHEMA.read_text())
    solvers = whole["properties"]["spec"]["properties"]["acme"]["properties"]["solvers"]["items"]
    assert json.loads(tls_config.DNS01_SCHEMA.read_text()) == solvers["properties"]["dns01"]
    # The providers the config names are the schema's.
    assert set(tls_config.DNS01_PROVIDERS) | {"cnameStrategy"} == set(
        solvers["properties"]["dns01"]["properties"]
    )


@pytest.mark.parametrize(
    ("dns01", "expected"),
    [
        (
            {"webhook": {"config": {"zone": "example.com"}}},
            [
                "tls.certificate.dns01.webhook.groupName: required by cert-manager's DNS-01 solver schema",
                "tls.certificate.dns01.webhook.solverName: required by cert-manager's DNS-01 solver schema",
            ],
        ),
        (
            {"webhook": {"groupName": "acme.example.com", "config": {"deep": {"er": [1, {"x": None}]}}}},
            ["tls.certificate.dns01.webhook.solverName: required by cert-manager's DNS-01 solver schema"],
        ),
        (
            {"rfc2136": {"tsigKeyName": "det", "protocol": "SCTP"}},
            [
                "tls.certificate.dns01.rfc2136.nameserver: required by cert-manager's DNS-01 solver schema",
                "tls.certificate.dns01.rfc2136.protocol: must be one of TCP, UDP",
            ],
        ),
        (
            {"cloudflare": {"apiTokenSecretRef": {"key": "token"}}},
            [
                "tls.certificate.dns01.cloudflare.apiTokenSecretRef.name: required by cert-manager's DNS-01 solver schema"
            ],
        ),
        (
            {"digitalocean": {"tokenSecretRef": "do-token"}},
            ["tls.certificate.dns01.digitalocean.tokenSecretRef: must be a mapping"],
        ),
        (
            {"azureDNS": {"subscriptionID": "s", "resourceGroupName": "r", "zoneType": "Public"}},
            ["tls.certificate.dns01.azureDNS.zoneType: must be one of AzurePublicZone, AzurePrivateZone"],
        ),
        (
            {
                "cnameStrategy": "Always",
                "acmeDNS": {
                    "host": "https://auth.example.com",
                    "accountSecretRef": {"name": "a", "key": "b"},
                },
            },
            ["tls.certificate.dns01.cnameStrategy: must be one of None, Follow"],
        ),
    ],
)
def test_a_solver_the_crd_refuses_is_refused_at_its_key(dns01, expected):
    assert problems(with_dns01(dns01)) == [f"determined:{line}" for line in expected]


def test_an_unknown_field_would_be_dropped_so_it_is_refused():
    raw = with_dns01(
        {"route53": {"hostedZoneID": "Z0123456789ABCDEFGHIJ", "hostedZoneId": "Z0123456789ABCDEFGHIJ"}}, EKS
    )
    assert problems(raw) == [
        "determined:tls.certificate.dns01.route53.hostedZoneId: not a field of cert-manager's DNS-01 solver here "
        "(fields: accessKeyID, accessKeyIDSecretRef, auth, hostedZoneID, region, role, secretAccessKeySecretRef)"
    ]


def test_the_check_reads_the_solver_the_program_renders():
    # gke fills in the cluster's project where the stack makes cert-manager's identity, and
    # only there: with its own key the schema's required `project` must be given.
    assert problems(with_dns01({"cloudDNS": {}}, GKE)) == []
    key = {"serviceAccountSecretRef": {"name": "clouddns", "key": "key.json"}}
    (found,) = problems(with_dns01({"cloudDNS": key}, GKE))
    assert found.startswith("determined:tls.certificate.dns01.cloudDNS.project: required")
    assert problems(with_dns01({"cloudDNS": {**key, "project": "dns-project"}}, GKE)) == []
    # eks adds the region under the configured settings.
    cfg = load_config(with_dns01({"route53": {"hostedZoneID": "Z0123456789ABCDEFGHIJ"}}, EKS))
    assert tls_config.rendered_dns01(cfg) == {
        "route53": {"region": "us-east-1", "hostedZoneID": "Z0123456789ABCDEFGHIJ"}
    }


@pytest.mark.parametrize(
    "dns01",
    [
        {"route53": {"hostedZoneID": "Z0123456789ABCDEFGHIJ"}},
        {"cloudflare": {"apiTokenSecretRef": {"name": "cf", "key": "token"}}},
        {"webhook": {"groupName": "acme.example.com", "solverName": "desec", "config": {"ttl": 60}}},
        {"rfc2136": {"nameserver": "192.0.2.53", "tsigKeyName": "det", "tsigAlgorithm": "HMACSHA512",
                     "tsigSecretSecretRef": {"name": "tsig", "key": "secret"}}},
    ],
)  # fmt: skip
def test_a_solver_the_config_takes_makes_a_cluster_issuer_the_crd_takes(dns01):
    cfg = load_config(with_dns01(dns01, EKS))
    issuer = cert_manager.cluster_issuer(
        "ops@mail.example.com", "determined", "determined", dns01=tls_config.rendered_dns01(cfg)
    )
    assert crd_problems(issuer) == []


def test_control_characters_in_a_solver_are_refused():
    dns01 = {
        "acmeDNS": {"host": "https://auth.example.com\nX: 1", "accountSecretRef": {"name": "a", "key": "b"}}
    }
    assert problems(with_dns01(dns01)) == [
        "determined:tls.certificate.dns01: acmeDNS.host must be one line (no newline or other control character)"
    ]


def test_a_deeply_nested_webhook_config_is_walked_without_recursion():
    deep: dict = {"leaf": "x"}
    for _ in range(5000):
        deep = {"d": deep}
    assert tls_config._inline_secrets({"config": deep}, "webhook") == []
    deep_secret: dict = {"apiKey": "plain"}
    for _ in range(5000):
        deep_secret = {"d": deep_secret}
    (found,) = tls_config._inline_secrets({"config": deep_secret}, "webhook")
    assert found.endswith(".d.apiKey")
