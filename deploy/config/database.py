"""`determined:database`: where the master keeps its records, by `mode`."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, field_validator

from deploy import defaults
from deploy.config.base import ConfigModel, default_tag
from deploy.config.secrets import Secret
from deploy.config.syntax import DnsSubdomain, Flag, NonEmpty, Quantity, whole_number

SslMode = Literal["disable", "allow", "prefer", "require", "verify-ca", "verify-full"]


class InClusterDatabase(ConfigModel):
    """PostgreSQL in the cluster, on a volume kept across destroy."""

    mode: Literal["inCluster"]
    storage_size: Quantity = "30Gi"
    storage_class: DnsSubdomain | None = None
    # To reattach a kept volume with the password it was created with.
    password: Secret | None = None


class ExternalDatabase(ConfigModel):
    """A PostgreSQL server run elsewhere."""

    mode: Literal["external"]
    host: NonEmpty
    port: whole_number(1, 65535) = defaults.DB_PORT
    name: NonEmpty = defaults.DB_DATABASE
    user: NonEmpty
    password: Secret
    ssl_mode: SslMode | None = None
    ssl_root_cert: NonEmpty | None = None  # PEM

    @field_validator("ssl_root_cert")
    @classmethod
    def _pem(cls, value: str | None) -> str | None:
        if value is not None and "-----BEGIN CERTIFICATE-----" not in value:
            raise ValueError("must be a CA certificate in PEM form (-----BEGIN CERTIFICATE----- ...)")
        return value


class ManagedDatabase(ConfigModel):
    """Cloud SQL (gke) or RDS (eks), created by the stack, reached on a private address."""

    mode: Literal["managed"]
    tier: NonEmpty  # Cloud SQL tier (db-custom-2-8192) or RDS instance class
    storage_size_gb: whole_number(10, 65536) = 20
    # A standby in a second zone; default: on in prod, off in dev.
    high_availability: Flag | None = None


DatabaseConfig = Annotated[
    InClusterDatabase | ExternalDatabase | ManagedDatabase,
    BeforeValidator(default_tag("mode", "inCluster")),
    Field(discriminator="mode"),
]
