"""`determined:tls`: how the master is reached, by `mode`; certificates by `source`."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BeforeValidator, Field

from deploy.config.base import ConfigModel, default_tag
from deploy.config.syntax import Cidr, DnsSubdomain, Email, HostName

# The Secret cert-manager issues the certificate into.
ISSUED_SECRET = "determined-tls"


class CertManagerCertificate(ConfigModel):
    """An ACME certificate issued by cert-manager."""

    source: Literal["certManager"]
    email: Email  # ACME registration


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


class ExposedTls(ConfigModel):
    host: HostName
    certificate: Certificate
    source_ranges: list[Cidr] = Field(default_factory=list)  # who may reach the master
    exposure: Literal["public", "internal"] = "public"
    # A GatewayClass the cluster already runs (its controller serves the Gateway); absent:
    # Envoy Gateway is installed and its class used.
    gateway_class_name: DnsSubdomain | None = None

    @property
    def secret_name(self) -> str:
        """The kubernetes.io/tls Secret with the certificate: the user's, or the one
        cert-manager issues into."""
        if isinstance(self.certificate, SecretCertificate):
            return self.certificate.secret_name
        return ISSUED_SECRET


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
