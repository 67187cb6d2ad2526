"""`determined:tls`: how the master is reached, by `mode`; certificates by `source`."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field

from deploy.config.base import ConfigModel, default_tag
from deploy.config.syntax import Cidr, DnsSubdomain, Email, HostName

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
    # cert-manager's DNS-01 solver settings (e.g. {route53: {region: ...}}); absent: HTTP-01
    # through the Gateway, which needs the host reachable from the internet on port 80.
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
