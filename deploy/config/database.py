"""`determined:database`: where the master keeps its records, by `mode`."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, field_validator

from deploy import defaults
from deploy.config.base import ConfigModel, default_tag
from deploy.config.master import Resources
from deploy.config.secrets import Secret
from deploy.config.syntax import (
    DnsSubdomain,
    Flag,
    ImageReference,
    NonEmpty,
    Quantity,
    pattern_check,
    whole_number,
)

# Settings the StatefulSet, its volume and its Service depend on.
_OWNED_SETTINGS = {"data_directory", "port", "listen_addresses", "hba_file", "config_file"}


_SettingName = Annotated[
    str,
    AfterValidator(
        pattern_check(r"[a-z_][a-z0-9_.]*", "a PostgreSQL setting name (example: max_connections)", 63)
    ),
]


def _setting_text(value: Any) -> str:
    # PostgreSQL reads every setting as text: on/off for booleans, numbers as written.
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, (str, int, float)):
        return str(value)
    raise ValueError("must be a string, a number or true/false (a PostgreSQL setting's value)")


_SettingValue = Annotated[str, BeforeValidator(_setting_text)]


SslMode = Literal["disable", "allow", "prefer", "require", "verify-ca", "verify-full"]


class InClusterDatabase(ConfigModel):
    """PostgreSQL in the cluster, on a volume kept across destroy."""

    mode: Literal["inCluster"]
    storage_size: Quantity = "30Gi"
    storage_class: DnsSubdomain | None = None
    # To reattach a kept volume with the password it was created with.
    password: Secret | None = None
    # A mirror of the pinned PostgreSQL image (same major version: the data directory is
    # only readable by it).
    image: ImageReference | None = None
    resources: Resources | None = None  # default: defaults.DB_RESOURCES
    # postgres -c settings, over the defaults (max_connections 96, shared_buffers 512MB).
    parameters: dict[_SettingName, _SettingValue] = Field(default_factory=dict)

    @field_validator("parameters")
    @classmethod
    def _settable(cls, value: dict[str, Any]) -> dict[str, Any]:
        owned = sorted(set(value) & _OWNED_SETTINGS)
        if owned:
            raise ValueError(
                f"{', '.join(owned)} cannot be set here: the project sets the data directory, "
                "port and listen addresses the Service and volume rely on"
            )
        return value

    @property
    def settings(self) -> dict[str, str]:
        """postgres -c settings: the defaults, then the configured parameters."""
        return {**defaults.DB_SETTINGS, **self.parameters}

    @property
    def container_resources(self) -> dict[str, Any]:
        return self.resources.manifest() if self.resources else defaults.DB_RESOURCES


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
