"""`determined:master`: the Determined master."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, field_validator, model_validator

from components import versions
from components.config import go_time
from components.config.base import ConfigModel, default_tag
from components.config.errors import refuse
from components.config.secrets import Secret
from components.config.syntax import (
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
    cpu: Quantity | None = Field(
        None,
        description="CPU as a Kubernetes quantity (`2`, `500m`); unset: left out of the container's "
        "resources.",
    )
    memory: Quantity | None = Field(
        None,
        description="Memory as a Kubernetes quantity (`8Gi`); unset: left out of the container's resources.",
    )


class Resources(ConfigModel):
    """Container requests and limits (the Kubernetes ResourceRequirements of one container)."""

    requests: ResourceAmounts = Field(
        default_factory=ResourceAmounts,
        description="`{cpu, memory}` the container requests; each at most its limit (Kubernetes refuses "
        "more).",
    )
    limits: ResourceAmounts = Field(
        default_factory=ResourceAmounts, description="`{cpu, memory}`: the container's limits."
    )

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
    # As the master reads it: a Go duration, else a cron line (components/config/go_time.py).
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

    log_retention_days: whole_number(-1, 32767) = Field(
        -1,
        description="Days (-1 to 32767) task logs are kept before they are deleted; default -1 keeps "
        "them forever.",
    )
    schedule: Annotated[str, AfterValidator(_schedule)] = Field(
        "0 3 * * *",
        description="When old task logs are deleted: a duration such as `24h`, or a cron line as the "
        "master's parser reads it (five fields, `@daily`-style descriptors, `@every 1h`, an optional "
        "`CRON_TZ=UTC ` prefix); default `0 3 * * *`.",
    )


class Webhooks(ConfigModel):
    """Webhook payloads link to baseUrl (default: https://<tls.host>); signingKey signs them
    (generated once and kept in state when absent, so signatures survive restarts)."""

    base_url: HttpUrl | None = Field(
        None,
        description="The `http(s)://` address links in webhook payloads use; default "
        "`https://<tls.host>` with TLS.",
    )
    signing_key: Secret | None = Field(
        None,
        description="Secret: the key webhook payloads are signed with; when absent one is generated once "
        "and kept in the stack's state, so receivers' signature checks survive master restarts.",
    )


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

    uid: whole_number(0) = Field(description="Linux user ID (0 or more) tasks run as.")
    gid: whole_number(0) = Field(description="Linux group ID (0 or more) tasks run as.")
    user: LinuxName = Field(
        description="Linux user name of `uid` (letters, digits, `.`, `_`, `-`, not starting with `-`, at "
        "most 32 characters)."
    )
    group: LinuxName = Field(
        description="Linux group name of `gid` (letters, digits, `.`, `_`, `-`, not starting with `-`, "
        "at most 32 characters)."
    )


class Observability(ConfigModel):
    enable_prometheus: Flag = Field(
        False,
        description="`true` turns on the master's Prometheus endpoints (and lets a Prometheus of any "
        "namespace reach the master's port); default off.",
    )


class DefaultLogging(ConfigModel):
    """Task logs kept in the master's database."""

    type: Literal["default"] = Field(
        description="`default`: task logs are kept in the master's database (assumed when `type` is left "
        "out)."
    )


class ElasticSecurity(ConfigModel):
    username: NonEmpty = Field(description="The Elasticsearch user the master logs in as.")
    password: Secret = Field(description="Secret: that user's Elasticsearch password.")
    tls: Flag = Field(  # the CA it presents: see master.caBundle
        False,
        description="`true`: reach Elasticsearch over TLS (trust a private CA with master.caBundle); "
        "default false.",
    )


class ElasticLogging(ConfigModel):
    """Task logs shipped to Elasticsearch (the master reads them back from there)."""

    type: Literal["elastic"] = Field(
        description="`elastic`: task logs are shipped to Elasticsearch and the master reads them back "
        "from there."
    )
    host: Host = Field(description="Elasticsearch's host: a host name, an address or a Service name.")
    port: whole_number(1, 65535) = Field(9200, description="Elasticsearch's port (1 to 65535); default 9200.")
    security: ElasticSecurity | None = Field(
        None, description="`{username, password, tls}` where Elasticsearch asks for a login; unset: none."
    )


LoggingConfig = Annotated[
    DefaultLogging | ElasticLogging,
    BeforeValidator(default_tag("type", "default")),
    Field(discriminator="type"),
]


class Proxy(ConfigModel):
    """An HTTP(S) proxy the master and tasks use for outside addresses; cluster-internal
    addresses (.svc, .cluster.local, the service network) always bypass it."""

    http_proxy: HttpUrl | None = Field(
        None,
        description="The proxy (`http(s)://…`) for plain HTTP, as `HTTP_PROXY`/`http_proxy` of the "
        "master and every task; this or httpsProxy is required.",
    )
    https_proxy: HttpUrl | None = Field(
        None,
        description="The proxy (`http(s)://…`) for HTTPS, as `HTTPS_PROXY`/`https_proxy` of the master "
        "and every task; this or httpProxy is required.",
    )
    no_proxy: Text = Field(
        "",
        description="Comma-separated addresses that bypass the proxy (`NO_PROXY`/`no_proxy`), besides "
        "the cluster-internal ones always added; on an existing cluster add the service CIDR (the "
        "Kubernetes API's address). Default: none.",
    )


class ClusterWrites(ConfigModel):
    """Cluster-wide writes the master's service account may make, each for one optional
    feature the master does without when refused (see components/determined/master.CLUSTER_WRITES):
    `nodes` patches node labels to enable and disable agents; `priorityClasses` creates and
    deletes a PriorityClass per task that sets `resources.priority`. Both off by default."""

    nodes: Flag = Field(
        False,
        description="`true` grants node `patch`, so agents can be enabled and disabled (`det agent "
        "enable/disable`, the cluster page); default false: those calls answer that the right is missing.",
    )
    priority_classes: Flag = Field(
        False,
        description="`true` grants PriorityClass `create`/`delete`, so `resources.priority` of a task "
        "becomes a PriorityClass per task; default false: such a task starts with the cluster's default "
        "priority.",
    )


class ServiceConfig(ConfigModel):
    """The master's Service: ClusterIP by default; LoadBalancer or NodePort only where the
    master ends TLS itself (tls.mode master)."""

    type: Literal["ClusterIP", "LoadBalancer", "NodePort"] = Field(
        "ClusterIP",
        description="The master's Service type: `ClusterIP` (default); `LoadBalancer` or `NodePort` only "
        "with `tls.mode master`.",
    )
    annotations: Annotations = Field(
        default_factory=dict,
        description="Annotations on the master's Service (over the exposure's own); default none.",
    )


def _pem(value: str | None) -> str | None:
    message = pem_certificates_problem(value) if value is not None else None
    if message:
        raise ValueError(message)
    return value


class MasterConfig(ConfigModel):
    version: Version = Field(
        versions.DEFAULT_DETERMINED_VERSION,
        description="The Determined release (`X.Y.Z` without leading zeros, 0.26.0 or newer); default: "
        "the release the project pins. It also decides which master.yaml keys are written.",
    )
    image_registry: ImageRepository = Field(
        "determinedai",
        description="Registry/repository path of the master image "
        "(`mirror.example.com:5000/determinedai`); the image is "
        "`<imageRegistry>/determined-master:<version>`. Default `determinedai`.",
    )
    cpu: Quantity = Field(
        "2",
        description="The master's CPU, a Kubernetes quantity greater than zero, as both request and "
        "limit (unless `resources` is set); default `2`.",
    )
    memory: Quantity = Field(
        "8Gi",
        description="The master's memory, a Kubernetes quantity greater than zero, as both request and "
        "limit (unless `resources` is set); default `8Gi`.",
    )
    initial_user_password: Secret | None = Field(
        None,
        description="Secret: the initial user password (at least 8 characters with an upper-case letter, "
        "a lower-case letter and a digit); when absent one is generated and exported as the secret "
        "`initialUserPassword`.",
    )
    telemetry: Flag = Field(False, description="`true` turns on the master's telemetry; default off.")
    image: ImageReference | None = Field(
        None,
        description="A full image reference with a tag or digest (a mirror, the enterprise "
        "`hpe-mlde-master` image) replacing imageRegistry + version for the image (`version` still decides "
        "the master.yaml keys); unset: `<imageRegistry>/determined-master:<version>`.",
    )
    log_level: Literal["trace", "debug", "info", "warn", "error"] = Field(
        "info", description="The master's log level: `trace`, `debug`, `info` (default), `warn` or `error`."
    )
    notebook_timeout: whole_number(0) = Field(
        3600,
        description="Seconds before an idle notebook is stopped and its GPUs released; 0: never. Default "
        "3600 (one hour).",
    )
    # 300: the master's own default.
    tensorboard_timeout: whole_number(60) = Field(
        300, description="Seconds (60 or more) before an idle TensorBoard is stopped; default 300."
    )
    retention: RetentionPolicy | None = Field(
        None,
        description="Task log retention (Determined 0.31+): `{logRetentionDays, schedule}`; unset: no "
        "retention policy is written to master.yaml.",
    )
    webhooks: Webhooks = Field(
        default_factory=Webhooks, description="`{baseUrl, signingKey}` of the master's webhook payloads."
    )
    default_task_user: DefaultTaskUser | None = Field(
        None,
        description="`{uid, gid, user, group}` (all four): the Linux user tasks run as when a Determined "
        "user has none linked (master.yaml `security.default_task`); unset: not written.",
    )
    observability: Observability = Field(
        default_factory=Observability, description="`{enablePrometheus}`: the master's Prometheus endpoints."
    )
    logging: LoggingConfig = Field(
        default_factory=lambda: {"type": "default"},
        validate_default=True,
        description="Where task logs go: `{type: default}` (the master's database; the default) or "
        "`{type: elastic, host, port, security}` (Elasticsearch).",
    )
    ca_bundle: Annotated[str | None, AfterValidator(_pem)] = Field(
        None,
        description="Extra CA certificates as PEM text, trusted by the master (besides the public CAs) "
        "and by tasks: for private S3/MinIO endpoints, Elasticsearch, TLS-intercepting proxies. Not with "
        "caBundleSecret.",
    )
    ca_bundle_secret: DnsSubdomain | None = Field(
        None,
        description="Name of a Secret of extra CA certificates that exists in the master's and every "
        "pool's namespace; trusted like caBundle. Not with caBundle.",
    )
    proxy: Proxy | None = Field(
        None,
        description="`{httpProxy, httpsProxy, noProxy}` (one of the first two required): an HTTP(S) "
        "proxy for the master and every task; unset: none.",
    )
    node_pool: NonEmpty | None = Field(
        None,
        description="The node pool the master, the in-cluster database and the workspace Job run on; "
        "default: the first untainted, non-GPU, on-demand pool. A tainted, GPU or spot pool is refused.",
    )
    resources: Resources | None = Field(
        None,
        description="`{requests: {cpu, memory}, limits: {cpu, memory}}` of the master container, "
        "replacing cpu/memory (requests left out come from them; the memory limit defaults to the memory "
        "request). Unset: cpu and memory as both requests and limits.",
    )
    service: ServiceConfig = Field(
        default_factory=ServiceConfig, description="The master's Service: `{type, annotations}`."
    )
    cluster_writes: ClusterWrites = Field(
        default_factory=ClusterWrites,
        description="`{nodes, priorityClasses}`: cluster-wide writes the master's service account may "
        "make, each for one optional feature; both off by default.",
    )
    pod_annotations: Annotations = Field(
        default_factory=dict, description="Annotations on the master's pod; default none."
    )
    env: dict[EnvName, MultilineText] = Field(
        default_factory=dict,
        description="Extra environment variables of the master (name: value); they win over the proxy "
        "variables of master.proxy and SSL_CERT_DIR of caBundle. `DET_RELEASE_NAMESPACE` is the stack's own "
        "(0.35+) and refused.",
    )
    config_overrides: dict[str, Any] = Field(
        default_factory=dict,
        description="master.yaml keys (snake_case, as the master reads them) deep-merged into the "
        "generated file last; checked against the configured version. Default none.",
    )

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
        # Kubernetes keeps one value per name; the stack's own come first (components/determined/master.py
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
