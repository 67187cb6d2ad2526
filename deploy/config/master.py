"""`determined:master`: the Determined master."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, field_validator, model_validator

from deploy import versions
from deploy.config import go_time
from deploy.config.base import ConfigModel, default_tag
from deploy.config.errors import refuse
from deploy.config.secrets import Secret
from deploy.config.syntax import (
    Annotations,
    DnsSubdomain,
    EnvName,
    Flag,
    Host,
    HttpUrl,
    ImageReference,
    ImageRepository,
    MultilineText,
    NonEmpty,
    Quantity,
    Text,
    Version,
    pattern_check,
    pem_certificates_problem,
    quantity_value,
    shown,
    text_problem,
    whole_number,
)


def _password_rule(value: Secret | None) -> Secret | None:
    # Determined's rule for user passwords; the message never repeats the value.
    if value is None:
        return value
    text = value.get_secret_value()
    if message := text_problem(text):
        # A trailing newline (a password piped from a file) would be part of the password.
        raise ValueError(message)
    if len(text) < 8 or not all(re.search(p, text) for p in ("[A-Z]", "[a-z]", "[0-9]")):
        raise ValueError(
            "does not meet Determined's password rule: at least 8 characters with an "
            "upper-case letter, a lower-case letter and a digit"
        )
    return value


class ResourceAmounts(ConfigModel):
    cpu: Quantity | None = None
    memory: Quantity | None = None


class Resources(ConfigModel):
    """Container requests and limits (the Kubernetes ResourceRequirements of one container)."""

    requests: ResourceAmounts = Field(default_factory=ResourceAmounts)
    limits: ResourceAmounts = Field(default_factory=ResourceAmounts)

    @model_validator(mode="after")
    def _requests_within_limits(self) -> Resources:
        for name in ("cpu", "memory"):
            request, limit = getattr(self.requests, name), getattr(self.limits, name)
            if request and limit and quantity_value(request) > quantity_value(limit):
                # Kubernetes refuses such a container at apply time.
                raise ValueError(f"requests.{name} ({request}) is greater than limits.{name} ({limit})")
        return self

    def manifest(self) -> dict[str, Any]:
        """As a container's `resources` field (unset amounts left out)."""
        out: dict[str, Any] = {}
        for key in ("requests", "limits"):
            amounts = getattr(self, key).model_dump(exclude_none=True)
            if amounts:
                out[key] = amounts
        return out


def _schedule(value: str) -> str:
    # As the master reads it: a Go duration, else a cron line (deploy/config/go_time.py).
    refused = (
        f"{shown(value)} is not a cron schedule of five fields (example: '0 3 * * *') or a duration (24h)"
    )
    if message := text_problem(value):
        raise ValueError(f"{refused}: {message}")
    duration = go_time.parse_duration(value)
    if duration is not None:
        if duration <= 0:
            # gocron's DurationJob refuses a zero interval (the master then does not start);
            # a negative one would never wait.
            raise ValueError(f"{shown(value)} is not a positive duration")
        return value
    # The zone is judged with master.image (MasterConfig._stock_image_zones).
    if problem := go_time.cron_problem(value, any_zone=True):
        raise ValueError(f"{refused}: {problem}")
    return value


class RetentionPolicy(ConfigModel):
    """Task log retention (0.31+): logs older than logRetentionDays are deleted on schedule;
    -1 keeps them forever."""

    log_retention_days: whole_number(-1, 32767) = -1
    schedule: Annotated[str, AfterValidator(_schedule)] = "0 3 * * *"


class Webhooks(ConfigModel):
    """Webhook payloads link to baseUrl (default: https://<tls.host>); signingKey signs them
    (generated once and kept in state when absent, so signatures survive restarts)."""

    base_url: HttpUrl | None = None
    signing_key: Secret | None = None


# A user or group name as the master writes it into the task's passwd and group files
# ("<user>:x:<uid>:<gid>::<dir>:/bin/bash", injectUserArchive, determined master/pkg/tasks/task.go
# at 0.38.1): characters of POSIX's portable filename set, not starting with '-' (POSIX.1-2017
# Base Definitions 3.437 User Name, read 2026-11:
# https://pubs.opengroup.org/onlinepubs/9699919799/basedefs/V1_chap03.html#tag_03_437), at most
# 32 (useradd(8) CAVEATS, https://man7.org/linux/man-pages/man8/useradd.8.html, read 2026-11).
# A ':' or a newline would break the file's entries.
LinuxName = Annotated[
    str,
    AfterValidator(
        pattern_check(
            r"[A-Za-z0-9._][A-Za-z0-9._-]*",
            "a Linux user or group name (letters, digits, '.', '_' and '-', not starting with '-', at most "
            "32 characters)",
            32,
        )
    ),
]


class DefaultTaskUser(ConfigModel):
    """The Linux user and group tasks run as when the Determined user has none linked."""

    uid: whole_number(0)
    gid: whole_number(0)
    user: LinuxName
    group: LinuxName


class Observability(ConfigModel):
    enable_prometheus: Flag = False


class DefaultLogging(ConfigModel):
    """Task logs kept in the master's database."""

    type: Literal["default"]


class ElasticSecurity(ConfigModel):
    username: NonEmpty
    password: Secret
    tls: Flag = False  # the CA it presents: see master.caBundle


class ElasticLogging(ConfigModel):
    """Task logs shipped to Elasticsearch (the master reads them back from there)."""

    type: Literal["elastic"]
    host: Host  # a host name, an address or a Service name
    port: whole_number(1, 65535) = 9200
    security: ElasticSecurity | None = None


LoggingConfig = Annotated[
    DefaultLogging | ElasticLogging,
    BeforeValidator(default_tag("type", "default")),
    Field(discriminator="type"),
]


class Proxy(ConfigModel):
    """An HTTP(S) proxy the master and tasks use for outside addresses; cluster-internal
    addresses (.svc, .cluster.local, the service network) always bypass it."""

    http_proxy: HttpUrl | None = None
    https_proxy: HttpUrl | None = None
    no_proxy: Text = ""


class ClusterWrites(ConfigModel):
    """Cluster-wide writes the master's service account may make, each for one optional
    feature the master does without when refused (see deploy/app/master.CLUSTER_WRITES):
    `nodes` patches node labels to enable and disable agents; `priorityClasses` creates and
    deletes a PriorityClass per task that sets `resources.priority`. Both off by default."""

    nodes: Flag = False
    priority_classes: Flag = False


class ServiceConfig(ConfigModel):
    """The master's Service: ClusterIP by default; LoadBalancer or NodePort only where the
    master ends TLS itself (tls.mode master)."""

    type: Literal["ClusterIP", "LoadBalancer", "NodePort"] = "ClusterIP"
    annotations: Annotations = Field(default_factory=dict)


def _pem(value: str | None) -> str | None:
    message = pem_certificates_problem(value) if value is not None else None
    if message:
        raise ValueError(message)
    return value


class MasterConfig(ConfigModel):
    version: Version = versions.DEFAULT_DETERMINED_VERSION
    image_registry: ImageRepository = "determinedai"
    cpu: Quantity = "2"
    memory: Quantity = "8Gi"
    initial_user_password: Secret | None = None
    telemetry: Flag = False
    # A full image reference (a mirror, the enterprise image): replaces imageRegistry + version.
    image: ImageReference | None = None
    log_level: Literal["trace", "debug", "info", "warn", "error"] = "info"
    # Seconds before an idle notebook (and its GPUs) is stopped; 0: never.
    notebook_timeout: whole_number(0) = 3600
    # Seconds before an idle TensorBoard is stopped (the master's own default).
    tensorboard_timeout: whole_number(60) = 300
    retention: RetentionPolicy | None = None
    webhooks: Webhooks = Field(default_factory=Webhooks)
    default_task_user: DefaultTaskUser | None = None
    observability: Observability = Field(default_factory=Observability)
    logging: LoggingConfig = Field(default_factory=lambda: {"type": "default"}, validate_default=True)
    # CA certificates the master and tasks trust besides the public ones (private S3/MinIO,
    # Elasticsearch, a TLS-intercepting proxy): PEM text, or a Secret in every task namespace.
    ca_bundle: Annotated[str | None, AfterValidator(_pem)] = None
    ca_bundle_secret: DnsSubdomain | None = None
    proxy: Proxy | None = None
    # The node pool the master (and the in-cluster database) run on; default: the first
    # untainted on-demand CPU pool.
    node_pool: NonEmpty | None = None
    # Requests and limits; default: cpu and memory above as both.
    resources: Resources | None = None
    service: ServiceConfig = Field(default_factory=ServiceConfig)
    cluster_writes: ClusterWrites = Field(default_factory=ClusterWrites)
    pod_annotations: Annotations = Field(default_factory=dict)
    env: dict[EnvName, MultilineText] = Field(default_factory=dict)
    # master.yaml keys merged in last (snake_case, as the master reads them); checked per version.
    config_overrides: dict[str, Any] = Field(default_factory=dict)

    _password = field_validator("initial_user_password")(_password_rule)

    @field_validator("version")
    @classmethod
    def _supported(cls, value: str) -> str:
        if versions.parse_version(value) < versions.MIN_DETERMINED_VERSION:
            oldest = ".".join(map(str, versions.MIN_DETERMINED_VERSION))
            raise ValueError(f"Determined {value} is older than the oldest supported, {oldest}")
        return value

    @model_validator(mode="after")
    def _env_not_set_by_the_stack(self) -> MasterConfig:
        # Kubernetes keeps one value per name; the stack's own come first (deploy/app/master.py
        # _env), so the user's would be dropped without a word.
        found = [
            (("env", name), f"{name} is set by the stack on the master: {why}")
            for name in self.env
            if (why := self.stack_env.get(name))
        ]
        if found:
            raise refuse(found)
        return self

    @property
    def stack_env(self) -> dict[str, str]:
        """Env names the stack sets on the master ahead of master.env, and why. (The proxy
        variables of master.proxy and SSL_CERT_DIR of caBundle come after it: a user's own
        value of those wins, on purpose.)"""
        if self.version_tuple >= versions.RELEASE_NAMESPACE_SINCE:
            return {"DET_RELEASE_NAMESPACE": "it must name the master's own namespace"}
        return {}

    @model_validator(mode="after")
    def _stock_image_zones(self) -> MasterConfig:
        # The stock image has no time zone database (go_time.CRON_ZONES); an image of one's own
        # (master.image) may have one.
        schedule = self.retention.schedule if self.retention else ""
        if self.image is None and (problem := go_time.cron_problem(schedule)) and go_time.cron_zone(schedule):
            raise refuse([(("retention", "schedule"), f"{shown(schedule)}: {problem}")])
        return self

    @model_validator(mode="after")
    def _one_ca_bundle(self) -> MasterConfig:
        if self.ca_bundle and self.ca_bundle_secret:
            raise ValueError("give caBundle (PEM) or caBundleSecret (a Secret name), not both")
        return self

    @property
    def container_resources(self) -> dict[str, Any]:
        """Requests and limits of the master container: `resources` where given (requests
        it leaves out come from cpu/memory; the memory limit defaults to the request, so
        the master is never evicted for growing past what it asked for), else cpu and memory
        as both (Guaranteed QoS)."""
        amounts = {"cpu": self.cpu, "memory": self.memory}
        if self.resources is None:
            return {"requests": dict(amounts), "limits": dict(amounts)}
        given = self.resources.manifest()
        limits = given.get("limits", {})
        # As Kubernetes does: a limit without a request is also the request.
        requests = amounts | limits | given.get("requests", {})
        limits = {"memory": requests["memory"]} | limits
        return {"requests": requests, "limits": limits}

    @property
    def image_reference(self) -> str:
        """The master's image: `image` as given, else the registry's image of `version`."""
        return self.image or f"{self.image_registry}/determined-master:{self.version}"

    @property
    def has_ca_bundle(self) -> bool:
        return bool(self.ca_bundle or self.ca_bundle_secret)

    @property
    def version_tuple(self) -> tuple[int, int, int]:
        return versions.parse_version(self.version)
