"""`determined:tls`: how the master is reached, by `mode`; certificates by `source`."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, TypeAdapter, ValidationError

from deploy.config.base import ConfigModel, default_tag
from deploy.config.cluster import GcpProject, IamPrincipalArn
from deploy.config.syntax import Cidr, DnsSubdomain, Email, HostName, shown

if TYPE_CHECKING:
    from deploy.config.stack import StackConfig

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


def _inline_secrets(value: Any, path: str) -> list[str]:
    found = []
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}"
            if (
                _INLINE_SECRET.search(str(key))
                and not str(key).endswith("Ref")
                and not isinstance(item, dict)
            ):
                found.append(where)
            found += _inline_secrets(item, where)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += _inline_secrets(item, f"{path}[{i}]")
    return found


def _dns01(value: dict[str, Any]) -> dict[str, Any]:
    providers = [key for key in value if key in DNS01_PROVIDERS]
    unknown = sorted(set(value) - set(DNS01_PROVIDERS) - {"cnameStrategy"})
    if unknown:
        raise ValueError(f"unknown key(s) {', '.join(unknown)} (providers: {', '.join(DNS01_PROVIDERS)})")
    if len(providers) != 1:
        raise ValueError(f"exactly one DNS provider, one of: {', '.join(DNS01_PROVIDERS)}")
    if not isinstance(value[providers[0]], dict):
        raise ValueError(f"{providers[0]} must be a mapping (cert-manager's settings for it)")
    inline = _inline_secrets(value[providers[0]], providers[0])
    if inline:
        # The value is not repeated, and would not be kept secret: the issuer is written in clear.
        raise ValueError(
            f"{inline[0]} holds a secret in clear: put it in a Secret in cert-manager's namespace and "
            "name it with the provider's ...SecretRef key (e.g. apiTokenSecretRef: {name: ..., key: ...})"
        )
    return value


class CertManagerCertificate(ConfigModel):
    """An ACME certificate issued by cert-manager."""

    source: Literal["certManager"]
    email: Email  # ACME registration
    # cert-manager's DNS-01 solver settings (e.g. {route53: {hostedZoneID: Z...}}); absent:
    # HTTP-01 through the Gateway, which needs the host reachable from the internet on port 80.
    # On gke/eks a solver of the cloud's DNS without credentials gets a cloud identity
    # (cloud_identity, dns01_problems below).
    dns01: Annotated[dict[str, Any], AfterValidator(_dns01)] | None = None


class SecretCertificate(ConfigModel):
    """A certificate the user keeps in a kubernetes.io/tls Secret."""

    source: Literal["secret"]
    secret_name: DnsSubdomain


Certificate = Annotated[
    CertManagerCertificate | SecretCertificate,
    BeforeValidator(default_tag("source", "certManager")),
    Field(discriminator="source"),
]


class NoTls(ConfigModel):
    """The master stays inside the cluster (reach it with kubectl port-forward)."""

    mode: Literal["none"]


def _not_wildcard(host: str) -> str:
    if host.startswith("*."):
        raise ValueError(
            f"{host!r} is a wildcard: give the one host name the master is reached at (a wildcard "
            "certificate in a Secret still covers it)"
        )
    return host


class ExposedTls(ConfigModel):
    host: Annotated[HostName, AfterValidator(_not_wildcard)]
    certificate: Certificate
    source_ranges: list[Cidr] = Field(default_factory=list)  # who may reach the master
    exposure: Literal["public", "internal"] = "public"
    # A GatewayClass the cluster already runs (its controller serves the Gateway); absent:
    # Envoy Gateway is installed and its class used.
    gateway_class_name: DnsSubdomain | None = None

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

    mode: Literal["ingress"]


class MasterTls(ExposedTls):
    """TLS ends in the master itself."""

    mode: Literal["master"]


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


def dns01_problems(cfg: StackConfig, add: Callable[[str, str], None]) -> None:
    """DNS-01 settings the cloud identity depends on: the hosted zone the Route 53 role may
    change, the Cloud DNS project, and a solver of one cloud's DNS on another cloud, where
    nothing gives it credentials."""
    found = dns01_provider(cfg.tls)
    if found is None:
        return
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
        elif cfg.cloud != "gke":
            add(
                f"{path}.project",
                "required: the Google Cloud project of the DNS zone (on gke: the cluster's)",
            )
        if cfg.cloud == "eks" and not own:
            add(
                path,
                "needs serviceAccountSecretRef on eks: the stack gives cert-manager a Google identity on gke "
                "only (on eks use route53)",
            )
