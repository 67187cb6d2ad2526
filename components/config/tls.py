"""`determined:tls`: how the master is reached, by `mode`; certificates by `source`."""

from __future__ import annotations

import functools
import ipaddress
import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, TypeAdapter, ValidationError

from components import versions
from components.config.base import ConfigModel, default_tag
from components.config.cluster import GcpProject, IamPrincipalArn
from components.config.errors import Add
from components.config.syntax import Cidr, DnsSubdomain, Email, control_character, pattern_check, shown
from components.kube.schema import structural

if TYPE_CHECKING:
    from components.config.stack import StackConfig

# The Secret cert-manager issues the certificate into.
ISSUED_SECRET = "determined-tls"


# cert-manager's DNS-01 providers (ACMEChallengeSolverDNS01, cert-manager.io/v1).
DNS01_PROVIDERS = (
    "acmeDNS",
    "akamai",
    "azureDNS",
    "cloudDNS",
    "cloudflare",
    "digitalocean",
    "rfc2136",
    "route53",
    "webhook",
)


# Keys of solver settings that would hold a secret in clear: cert-manager takes credentials
# from Secrets, named by `...SecretRef` keys (apiTokenSecretRef, secretAccessKeySecretRef).
_INLINE_SECRET = re.compile(r"secret|password|token|apikey|privatekey", re.IGNORECASE)


def _walk(value: Any, path: str) -> Iterator[tuple[str, Any, Any]]:
    """(path, key, value) of every mapping entry and list item below `value`, without
    recursion (a webhook's free-form config may nest deeply)."""
    stack = [(path, value)]
    while stack:
        where, node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, item in items:
            inner = f"{where}[{key}]" if isinstance(key, int) else f"{where}.{key}"
            yield inner, key, item
            stack.append((inner, item))


def _inline_secrets(value: Any, path: str) -> list[str]:
    return sorted(
        where
        for where, key, item in _walk(value, path)
        if isinstance(key, str)
        and _INLINE_SECRET.search(key)
        and not key.endswith("Ref")
        and not isinstance(item, dict)
    )


def _control_characters(value: Any, path: str) -> list[str]:
    """Keys or text values holding a newline or other control character (the issuer is
    written as YAML; cert-manager would send them to the DNS provider's API)."""
    return sorted(
        where
        for where, key, item in _walk(value, path)
        if any(isinstance(text, str) and control_character(text) for text in (key, item))
    )


def _dns01(value: dict[str, Any]) -> dict[str, Any]:
    providers = [key for key in value if key in DNS01_PROVIDERS]
    unknown = sorted(set(value) - set(DNS01_PROVIDERS) - {"cnameStrategy"})
    if unknown:
        raise ValueError(f"unknown key(s) {', '.join(unknown)} (providers: {', '.join(DNS01_PROVIDERS)})")
    if len(providers) != 1:
        raise ValueError(f"exactly one DNS provider, one of: {', '.join(DNS01_PROVIDERS)}")
    if not isinstance(value[providers[0]], dict):
        raise ValueError(f"{providers[0]} must be a mapping (cert-manager's settings for it)")
    garbled = _control_characters(value, "dns01")
    if garbled:
        raise ValueError(
            f"{garbled[0].removeprefix('dns01.')} must be one line (no newline or other control character)"
        )
    inline = _inline_secrets(value[providers[0]], providers[0])
    if inline:
        # The value is not repeated, and would not be kept secret: the issuer is written in clear.
        raise ValueError(
            f"{inline[0]} holds a secret in clear: put it in a Secret in cert-manager's namespace and "
            "name it with the provider's ...SecretRef key (e.g. apiTokenSecretRef: {name: ..., key: ...})"
        )
    return value


# Let's Encrypt (the issuer's ACME server, components/addons/cert_manager.py) issues only for
# names ending in a suffix of the ICANN section of the Public Suffix List, and takes an account
# contact e-mail only at such a domain, never exactly example.com, example.net or example.org:
# letsencrypt/boulder policy/pa.go ValidDomain ("Domain name does not end with a valid public
# suffix (TLD)", iana.ExtractSuffix with IgnorePrivate and no default rule), ValidEmail and
# forbiddenMailDomains, called for every new account's contacts by wfe2/wfe.go
# contactsToEmails (commit 2d00c8e, 2026-08-07; read 2026-11). The PSL is not shipped here;
# these are the suffixes in use for private names that are not in it: the IANA Special-Use
# Domain Names registry's (https://www.iana.org/assignments/special-use-domain-names/, read
# 2026-11: local RFC 6762, localhost, test, invalid and example RFC 6761, alt RFC 9476),
# .internal (reserved by ICANN for private use, board resolution 2024.07.29.06) and the
# undelegated names RFC 6762 appendix G lists as used privately (intranet, private, corp,
# home, lan). tests/config/test_tls_config.py checks them against a copy of the PSL.
NON_PUBLIC_SUFFIXES = (
    "local",
    "localhost",
    "test",
    "invalid",
    "example",
    "alt",
    "internal",
    "intranet",
    "private",
    "corp",
    "home",
    "lan",
)
FORBIDDEN_CONTACT_DOMAINS = ("example.com", "example.net", "example.org")
# RFC 1035 section 2.3.4: "labels 63 octets or less".
DNS_LABEL_MAX = 63


def non_public_suffix(name: str) -> str | None:
    """The suffix of `name` no public DNS (and so no public CA) knows, if it has one."""
    last = name.lower().rstrip(".").rsplit(".", 1)[-1]
    return last if last in NON_PUBLIC_SUFFIXES else None


def _labels(host: str) -> str:
    long = next((label for label in host.split(".") if len(label) > DNS_LABEL_MAX), None)
    if long is not None:
        raise ValueError(
            f"has a label of {len(long)} characters ({long[:20]}...); DNS labels have at most "
            f"{DNS_LABEL_MAX} (RFC 1035): the name never resolves and no certificate can name it"
        )
    return host


def _contact(email: str) -> str:
    domain = email.rsplit("@", 1)[-1].lower()
    if domain in FORBIDDEN_CONTACT_DOMAINS:
        raise ValueError(
            f"Let's Encrypt refuses contacts at {domain} (a documentation domain) and the issuer would never "
            "register: give an address of your own"
        )
    suffix = non_public_suffix(domain)
    if suffix is not None:
        raise ValueError(
            f"its domain ends in .{suffix}, which is not a public domain: Let's Encrypt refuses such a "
            "contact and the issuer would never register; give an address at a public domain"
        )
    _labels(domain)
    return email


class CertManagerCertificate(ConfigModel):
    """An ACME certificate issued by cert-manager."""

    source: Literal["certManager"] = Field(
        description=(
            "certManager (the default source): cert-manager issues the certificate from Let's Encrypt (ACME)."
        )
    )
    email: Annotated[Email, AfterValidator(_contact)] = Field(  # ACME registration
        description=(
            "The contact e-mail of the ACME account (required): an address of your own at a public domain; "
            "Let's Encrypt refuses example.com, .net, .org and private domains such as .local or .internal."
        )
    )
    # cert-manager's DNS-01 solver settings (e.g. {route53: {hostedZoneID: Z...}}); absent:
    # HTTP-01 through the Gateway, which needs the host reachable from the internet on port 80.
    # On gke/eks a solver of the cloud's DNS without credentials gets a cloud identity
    # (cloud_identity, dns01_problems below).
    dns01: Annotated[dict[str, Any], AfterValidator(_dns01)] | None = Field(
        None,
        description=(
            "cert-manager's DNS-01 solver settings with exactly one provider (e.g. {route53: {hostedZoneID: "
            "Z0123456789ABCDEFGHIJ}}), credentials only through ...SecretRef keys; absent: HTTP-01 through "
            "the Gateway, which needs the host reachable from the internet on port 80. Required with "
            "exposure internal or sourceRanges."
        ),
    )


class SecretCertificate(ConfigModel):
    """A certificate the user keeps in a kubernetes.io/tls Secret."""

    source: Literal["secret"] = Field(
        description="secret: a certificate you keep in a kubernetes.io/tls Secret."
    )
    secret_name: DnsSubdomain = Field(
        description=(
            "The kubernetes.io/tls Secret in the master's namespace that holds the certificate (required)."
        )
    )


Certificate = Annotated[
    CertManagerCertificate | SecretCertificate,
    BeforeValidator(default_tag("source", "certManager")),
    Field(discriminator="source"),
]


class NoTls(ConfigModel):
    """The master stays inside the cluster (reach it with kubectl port-forward)."""

    mode: Literal["none"] = Field(
        description=(
            "none (the default mode): the master stays inside the cluster; reach it with kubectl "
            "port-forward."
        )
    )


def _not_wildcard(host: str) -> str:
    if host.startswith("*."):
        raise ValueError(
            f"{host!r} is a wildcard: give the one host name the master is reached at (a wildcard "
            "certificate in a Secret still covers it)"
        )
    return host


def _not_ip(host: str) -> str:
    # The host is the Gateway listener's hostname, the routes' hostnames and the certificate's
    # DNS name. Gateway API's Hostname: "Valid values for Hostnames are determined by RFC 1123
    # definition of a hostname with 2 notable exceptions: 1. IPs are not allowed." (HTTPRoute
    # spec.hostnames; TLSRoute: "IPs are not allowed in SNI hostnames per RFC 6066"), Gateway
    # API v1.6.1 standard CRDs (tests/data/crd-schemas; https://gateway-api.sigs.k8s.io/
    # reference/spec/#hostname, read 2026-11). RFC 6066 section 3: "Literal IPv4 and IPv6
    # addresses are not permitted in HostName".
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return host
    raise ValueError(
        f"{host!r} is an IP address: give a DNS name pointing at the Gateway (Gateway API hostnames and "
        "TLS server names cannot be IP addresses, and the certificate is issued for a DNS name)"
    )


# Gateway API's Hostname, which the host is everywhere it is written (the listener, the
# routes): "^(\\*\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$", at most
# 253 characters; one label (an internal name such as `determined`) is a hostname too.
# Source: gateway-api apis/v1/shared_types.go type Hostname (v1.2.1, and the v1.6.1 CRDs in
# tests/data/crd-schemas), https://gateway-api.sigs.k8s.io/reference/spec/#hostname (read
# 2026-11). Only an ACME certificate needs more (acme_problems).
GATEWAY_HOSTNAME = re.compile(r"(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
GATEWAY_HOSTNAME_MAX = 253
Hostname = Annotated[
    str,
    AfterValidator(
        pattern_check(GATEWAY_HOSTNAME, "a host name (example: det.example.com)", GATEWAY_HOSTNAME_MAX)
    ),
]


class ExposedTls(ConfigModel):
    host: Annotated[
        Hostname, AfterValidator(_not_wildcard), AfterValidator(_not_ip), AfterValidator(_labels)
    ] = Field(
        description=(
            "ingress/master: the DNS name users reach the master at, and the certificate's first name "
            "(required); not a wildcard or an IP address."
        )
    )
    certificate: Certificate = Field(
        description=(
            "ingress/master: where the certificate comes from, by source: certManager (the default; needs "
            "email) or secret (needs secretName)."
        )
    )
    source_ranges: list[Cidr] = Field(  # who may reach the master
        default_factory=list,
        description=(
            "ingress/master: CIDRs allowed to reach the load balancer; default empty: any address. Refused "
            "with gatewayClassName."
        ),
    )
    exposure: Literal["public", "internal"] = Field(
        "public",
        description=(
            "ingress/master: public (the default) or internal, an internal load balancer (GKE "
            "networking.gke.io/load-balancer-type: Internal, EKS internal NLB). internal is refused with "
            "gatewayClassName."
        ),
    )
    # A GatewayClass the cluster already runs (its controller serves the Gateway); absent:
    # Envoy Gateway is installed and its class used.
    gateway_class_name: DnsSubdomain | None = Field(
        None,
        description=(
            "ingress/master: a GatewayClass the cluster already runs, whose controller serves the Gateway; "
            "absent: Envoy Gateway is installed and its class used."
        ),
    )

    @property
    def issued(self) -> bool:
        """Whether cert-manager issues the certificate (else the user's Secret holds it)."""
        return isinstance(self.certificate, CertManagerCertificate)

    @property
    def secret_name(self) -> str:
        """The kubernetes.io/tls Secret with the certificate: the user's, or the one
        cert-manager issues into."""
        return ISSUED_SECRET if self.issued else self.certificate.secret_name


class IngressTls(ExposedTls):
    """TLS ends at the edge (Gateway API)."""

    mode: Literal["ingress"] = Field(description="ingress: TLS ends at the edge, a Gateway API Gateway.")


class MasterTls(ExposedTls):
    """TLS ends in the master itself."""

    mode: Literal["master"] = Field(description="master: TLS ends in the master itself.")


TlsConfig = Annotated[
    NoTls | IngressTls | MasterTls,
    BeforeValidator(default_tag("mode", "none")),
    Field(discriminator="mode"),
]


# --- DNS-01 with the cluster's own cloud identity --------------------------------------------
#
# On gke and eks the stack gives cert-manager a cloud identity for the DNS of its cloud
# (Cloud DNS through workload identity, Route 53 through EKS Pod Identity) when the solver
# brings no credentials of its own: cert-manager then uses ambient credentials, which a
# ClusterIssuer may use by default (`--cluster-issuer-ambient-credentials`, true:
# internal/apis/config/controller/v1alpha1/defaults.go at cert-manager v1.21.1, read 2026-11).

# The DNS provider whose solver takes the cloud identity the stack makes, per cloud.
CLOUD_DNS = {"gke": "cloudDNS", "eks": "route53"}

# Settings by which a solver brings credentials of its own (ACMEIssuerDNS01ProviderRoute53 /
# ...CloudDNS of cert-manager.io/v1): a Secret, static keys, or a token it exchanges itself.
# Source: https://cert-manager.io/docs/configuration/acme/dns01/route53/ and .../google/
# (read 2026-11).
OWN_CREDENTIALS = {
    "route53": ("accessKeyID", "accessKeyIDSecretRef", "secretAccessKeySecretRef", "auth"),
    "cloudDNS": ("serviceAccountSecretRef",),
}

# A Route 53 hosted zone ID: at most 32 characters (HostedZone.Id,
# https://docs.aws.amazon.com/Route53/latest/APIReference/API_HostedZone.html), upper-case
# letters and digits (HostedZoneId pattern ^[A-Z0-9]{1,32}$ of AWS::Route53::DNSSEC,
# https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-resource-route53-dnssec.html);
# read 2026-11. Bare: the IAM resource is arn:aws:route53:::hostedzone/<ID>.
HOSTED_ZONE_ID = re.compile(r"[A-Z0-9]{1,32}")
HOSTED_ZONE_PREFIX = "/hostedzone/"


def dns01_provider(tls: Any) -> tuple[str, dict[str, Any]] | None:
    """(provider, settings) of cert-manager's DNS-01 solver, or None (no solver)."""
    if not isinstance(tls, ExposedTls) or not isinstance(tls.certificate, CertManagerCertificate):
        return None
    dns01 = tls.certificate.dns01
    if dns01 is None:
        return None
    (provider,) = [key for key in dns01 if key in DNS01_PROVIDERS]
    return provider, dns01[provider]


def cloud_identity(cloud: str, tls: Any) -> tuple[str, dict[str, Any]] | None:
    """(provider, settings) when the stack gives cert-manager a cloud identity for DNS-01:
    on gke/eks, a solver of that cloud's DNS with no credentials of its own. None otherwise
    (another provider, `existing`, or a solver naming its Secret)."""
    found = dns01_provider(tls)
    if found is None or CLOUD_DNS.get(cloud) != found[0]:
        return None
    provider, settings = found
    if any(key in settings for key in OWN_CREDENTIALS[provider]):
        return None
    return found


def _type_problem(adapter: TypeAdapter, value: Any) -> str | None:
    try:
        adapter.validate_python(value)
    except ValidationError as exc:
        return str(exc.errors()[0]["msg"]).removeprefix("Value error, ")
    return None


_PROJECT = TypeAdapter(GcpProject)
_ROLE_ARN = TypeAdapter(IamPrincipalArn)


def hosted_zone_problem(value: Any) -> str | None:
    if not isinstance(value, str):
        return "must be a string (a Route 53 hosted zone ID, e.g. Z0123456789ABCDEFGHIJ)"
    if value.startswith(HOSTED_ZONE_PREFIX) and HOSTED_ZONE_ID.fullmatch(value[len(HOSTED_ZONE_PREFIX) :]):
        return f"{shown(value)}: give the ID without {HOSTED_ZONE_PREFIX!r}"
    if not HOSTED_ZONE_ID.fullmatch(value):
        return (
            f"{shown(value)} is not a Route 53 hosted zone ID (upper-case letters and digits, at most 32; "
            "e.g. Z0123456789ABCDEFGHIJ)"
        )
    return None


def dns01_problems(cfg: StackConfig, add: Add) -> None:
    """DNS-01 settings the cloud identity depends on: the hosted zone the Route 53 role may
    change, the Cloud DNS project, and a solver of one cloud's DNS on another cloud, where
    nothing gives it credentials."""
    found = dns01_provider(cfg.tls)
    if found is None:
        return
    reported: set[str] = set()

    def report(key: str, message: str) -> None:
        reported.add(key)
        add(key, message)

    _dns01_settings_problems(cfg, found, report)
    for where, message in dns01_schema_problems(rendered_dns01(cfg) or {}):
        key = f"tls.certificate.dns01{where}"
        if key not in reported and not any(key.startswith(f"{done}.") for done in reported):
            add(key, message)


def _dns01_settings_problems(cfg: StackConfig, found: tuple[str, dict[str, Any]], add: Add) -> None:
    provider, settings = found
    path = f"tls.certificate.dns01.{provider}"
    own = any(key in settings for key in OWN_CREDENTIALS.get(provider, ()))
    if provider == "route53":
        if "hostedZoneID" in settings:
            message = hosted_zone_problem(settings["hostedZoneID"])
            if message:
                add(f"{path}.hostedZoneID", message)
        if cfg.cloud == "eks" and not own:
            if "role" in settings:
                message = _type_problem(_ROLE_ARN, settings["role"])
                if message or not str(settings["role"]).split(":", 5)[-1].startswith("role/"):
                    add(f"{path}.role", message or f"{shown(str(settings['role']))} is not an IAM role ARN")
            elif "hostedZoneID" not in settings:
                add(
                    f"{path}.hostedZoneID",
                    "required on eks: the role the stack makes for cert-manager may change this hosted "
                    "zone only (its ID, e.g. Z0123456789ABCDEFGHIJ: aws route53 list-hosted-zones-by-name)",
                )
        if cfg.cloud == "gke" and not own:
            add(
                path,
                "needs credentials of its own on gke (accessKeyIDSecretRef and secretAccessKeySecretRef): "
                "the stack gives cert-manager an AWS identity on eks only (on gke use cloudDNS)",
            )
    elif provider == "cloudDNS":
        project = settings.get("project")
        if project is not None:
            message = _type_problem(_PROJECT, project)
            if message:
                add(f"{path}.project", message)
        elif cfg.cloud != "gke" or own:
            # The cluster's project is filled in only with the identity the stack makes; the
            # CRD requires `project` (ACMEIssuerDNS01ProviderCloudDNS, cert-manager v1.21.1).
            add(
                f"{path}.project",
                "required: the Google Cloud project of the DNS zone (the cluster's is filled in only on gke "
                "when the solver names no serviceAccountSecretRef)",
            )
        if cfg.cloud == "eks" and not own:
            add(
                path,
                "needs serviceAccountSecretRef on eks: the stack gives cert-manager a Google identity on gke "
                "only (on eks use route53)",
            )


# --- the solver against cert-manager's schema -------------------------------------------------
#
# `spec.acme.solvers[].dns01` of the ClusterIssuer CRD of the pinned cert-manager, copied
# unchanged from components/charts/cert-manager/templates/crd-cert-manager.io_clusterissuers.yaml
# at v1.21.1 (24e33194fb39488eff2bbf10c6dc640f407cad44; the whole schema is
# tests/data/crd-schemas/cert-manager.io_v1_ClusterIssuer.json, read 2026-11). The API server
# refuses a solver missing a required field (a webhook without groupName or solverName) and
# drops unknown fields, which would then silently not apply: both are refused here.
DNS01_SCHEMA = (
    Path(__file__).resolve().parent / "data" / f"cert-manager-{versions.CERT_MANAGER_VERSION}-acme-dns01.json"
)


@functools.cache
def _dns01_validator() -> Any:
    import jsonschema  # the Kubernetes schema's validator (kubernetes-validate) brings it

    schema = structural(json.loads(DNS01_SCHEMA.read_text(encoding="utf-8")))
    return jsonschema.Draft202012Validator(schema)


_TYPE_WORDS = {"object": "a mapping", "array": "a list", "string": "a string", "integer": "a whole number"}


def _schema_message(error: Any) -> tuple[str, str]:
    """(key path below dns01, message) for one schema error."""
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    kind = error.validator
    if kind == "required":
        # One error per missing field, named first in its message ("'solverName' is a required ...").
        missing = [name for name in error.validator_value if name not in error.instance]
        named = [name for name in missing if error.message.startswith(repr(name))]
        return f"{path}.{(named or missing)[0]}", "required by cert-manager's DNS-01 solver schema"
    if kind == "additionalProperties":
        unknown = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        known = ", ".join(sorted(error.schema.get("properties", {})))
        return f"{path}.{unknown[0]}", f"not a field of cert-manager's DNS-01 solver here (fields: {known})"
    if kind == "type":
        expected = error.validator_value
        expected = expected if isinstance(expected, list) else [expected]
        words = [_TYPE_WORDS.get(t, f"a {t}") for t in expected if t != "null"]
        return path, "must be " + " or ".join(words)
    if kind == "enum":
        return path, f"must be one of {', '.join(map(str, error.validator_value))}"
    return path, f"is not valid for cert-manager's DNS-01 solver ({kind})"


def dns01_schema_problems(solver: dict[str, Any]) -> list[tuple[str, str]]:
    """(key path below dns01, message) for each way the rendered DNS-01 solver breaks
    cert-manager's schema; empty when it conforms."""
    errors = sorted(_dns01_validator().iter_errors(solver), key=lambda e: [str(p) for p in e.absolute_path])
    return [_schema_message(error) for error in errors]


def dns01_solver(
    dns01: Mapping[str, Any], solver_defaults: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """cert-manager's DNS-01 solver settings as configured, with `solver_defaults` (what the
    platform's cloud identity implies: the Cloud DNS project, the Route 53 region) under the
    configured provider's own settings."""
    found = {key: (dict(value) if isinstance(value, Mapping) else value) for key, value in dns01.items()}
    if solver_defaults:
        (provider,) = [key for key in found if key != "cnameStrategy"]
        found[provider] = {**solver_defaults, **found[provider]}
    return found


def rendered_dns01(cfg: StackConfig) -> dict[str, Any] | None:
    """The ClusterIssuer's DNS-01 solver as the program renders it: the configured settings
    with what the cloud identity implies under them (gke: the Cloud DNS project, default
    the cluster's; eks: the cluster's region). None without a DNS-01 solver."""
    found = dns01_provider(cfg.tls)
    if found is None:
        return None
    defaults = None
    if cloud_identity(cfg.cloud, cfg.tls) is not None:
        cluster = cfg.cluster
        defaults = (
            {"project": getattr(cluster, "project", None) or "the-cluster-project"}
            if cfg.cloud == "gke"
            else {"region": cluster.region}
        )
    return dns01_solver(cfg.tls.certificate.dns01, defaults)


def acme_problems(cfg: StackConfig, add: Add) -> None:
    """A certificate from Let's Encrypt names a host under a public suffix (NON_PUBLIC_SUFFIXES)."""
    tls = cfg.tls
    if not isinstance(tls, ExposedTls) or not tls.issued:
        return
    if "." not in tls.host:
        # Boulder refuses a name without a dot ("Domain name needs at least one dot",
        # letsencrypt/boulder policy/pa.go errTooFewLabels; read 2026-11).
        add(
            "tls.host",
            "is a single label, not a public domain name: Let's Encrypt issues certificates for public names "
            "only; use a public name, or certificate source secret with a certificate of your own CA",
        )
        return
    suffix = non_public_suffix(tls.host)
    if suffix is not None:
        add(
            "tls.host",
            f"ends in .{suffix}, which is not a public domain: Let's Encrypt issues certificates for public "
            "names only (HTTP-01 and DNS-01 alike); use a public name, or certificate source secret with a "
            "certificate of your own CA",
        )


def gateway_problems(cfg: StackConfig, add: Add) -> None:
    """Source ranges and internal exposure shape the load balancer of the Envoy Gateway the
    stack installs; a cluster's own Gateway class keeps its own."""
    tls = cfg.tls
    if not isinstance(tls, ExposedTls):
        return
    certificate = tls.certificate
    if isinstance(certificate, CertManagerCertificate) and certificate.dns01 is None:
        # HTTP-01: Let's Encrypt fetches the challenge from the host over the internet.
        if tls.exposure == "internal":
            add(
                "tls.certificate.dns01",
                "required with exposure internal: Let's Encrypt cannot reach an internal load balancer "
                "for HTTP-01 (give cert-manager's DNS-01 settings, e.g. {route53: {hostedZoneID: Z...}})",
            )
        elif tls.source_ranges:
            add(
                "tls.certificate.dns01",
                "required with sourceRanges: Let's Encrypt checks HTTP-01 from addresses it does not "
                "publish, which the ranges would block (give cert-manager's DNS-01 settings)",
            )
    if tls.gateway_class_name is None:
        return
    if tls.source_ranges:
        add(
            "tls.sourceRanges",
            "applies to the Envoy Gateway this stack installs; with gatewayClassName, fence the load "
            "balancer of that class where it is configured",
        )
    if tls.exposure == "internal":
        add(
            "tls.exposure",
            "internal applies to the Envoy Gateway this stack installs, not to gatewayClassName",
        )
