"""The stack configuration: pydantic models, validation and error reporting.

This module is the single source of truth for configuration (../shared/CONTRACT.md §1).
`load_config` turns the raw `determined:*` values into a `StackConfig` or raises
`ConfigError` carrying one `determined:<key path>: <problem>` line per problem.
Validation runs in two passes: the models check each value on its own, then
`_cross_field_problems` checks how values relate (pool references, required fields per
mode, what this version of the project supports). Nothing here touches Pulumi resources.
"""

from __future__ import annotations

import ipaddress
import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import pulumi
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
)
from pydantic.alias_generators import to_camel

from deploy import defaults, kube, versions

PROJECT = "determined"

# --- Kubernetes syntax rules -------------------------------------------------------------

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_LABEL_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_QUANTITY = re.compile(r"^[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei|e[0-9]+)?$")
_SEMVER = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+$")
_CHART_VERSION = re.compile(r"^v[0-9]+\.[0-9]+\.[0-9]+$")
_HOSTNAME = re.compile(r"^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$")


def _check_dns_label(value: str) -> str:
    if len(value) > 63 or not _DNS_LABEL.match(value):
        raise ValueError(
            f"{value!r} is not a valid DNS label (lower-case letters, digits and '-', "
            "starting and ending with a letter or digit, at most 63 characters)"
        )
    return value


def _check_label_key(key: str) -> None:
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)):
        raise ValueError(f"label key {key!r} has an invalid prefix {prefix!r}")
    if not name or len(name) > 63 or not _LABEL_NAME.match(name):
        raise ValueError(
            f"label key {key!r} is invalid (name part: letters, digits, '-', '_', '.', at most 63 characters)"
        )


def _check_label_value(key: str, value: str) -> None:
    if value and (len(value) > 63 or not _LABEL_NAME.match(value)):
        raise ValueError(
            f"label value {value!r} for {key!r} is invalid (letters, digits, '-', '_', '.', "
            "at most 63 characters)"
        )


def _check_labels(labels: dict[str, str]) -> dict[str, str]:
    for key, value in labels.items():
        _check_label_key(key)
        _check_label_value(key, value)
    return labels


def _to_str(value: Any) -> Any:
    # YAML turns `cpu: 2` into an int; Kubernetes quantities are strings.
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value


def _check_quantity(value: str) -> str:
    if not _QUANTITY.match(value):
        raise ValueError(f"{value!r} is not a Kubernetes quantity (examples: '2', '500m', '8Gi', '30Gi')")
    return value


def _check_password_rule(value: SecretStr | None) -> SecretStr | None:
    # Determined's rule for user passwords; the message never repeats the value.
    if value is None:
        return value
    text = value.get_secret_value()
    if (
        len(text) < 8
        or not re.search(r"[A-Z]", text)
        or not re.search(r"[a-z]", text)
        or not re.search(r"[0-9]", text)
    ):
        raise ValueError(
            "does not meet Determined's password rule: at least 8 characters with an "
            "upper-case letter, a lower-case letter and a digit"
        )
    return value


DnsLabel = Annotated[str, BeforeValidator(_check_dns_label)]
Quantity = Annotated[str, BeforeValidator(lambda v: _check_quantity(_to_str(v)))]


class _Model(BaseModel):
    """Base for every section: camelCase keys, unknown keys refused, immutable."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
        hide_input_in_errors=True,
    )


# --- sections --------------------------------------------------------------------------


class ClusterConfig(_Model):
    name: DnsLabel
    kubernetes_version: str | None = Field(default=None, pattern=r"^1\.[0-9]+$")
    region: str | None = None
    zones: list[str] = Field(default_factory=list)
    project: str | None = None
    kubeconfig: str | None = None
    context: str | None = None

    @field_validator("name")
    @classmethod
    def _short_name(cls, value: str) -> str:
        # Cloud resource names are derived from it (GKE allows 40 characters).
        if len(value) > 40:
            raise ValueError("must be at most 40 characters")
        return value


class GpuConfig(_Model):
    type: str | None = None
    count: int = Field(ge=1)


TaintEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]


class Taint(_Model):
    key: str
    value: str = ""
    effect: TaintEffect

    @field_validator("key")
    @classmethod
    def _key(cls, value: str) -> str:
        _check_label_key(value)
        return value

    @field_validator("value")
    @classmethod
    def _value(cls, value: str, info) -> str:
        _check_label_value(info.data.get("key", ""), value)
        return value


# Every GPU node pool carries this taint so that only pods asking for GPUs land there.
GPU_TAINT = Taint(key="nvidia.com/gpu", value="present", effect="NoSchedule")


class NodePool(_Model):
    name: DnsLabel
    machine_type: str | None = None
    gpu: GpuConfig | None = None
    min_nodes: int = Field(default=0, ge=0)
    max_nodes: int = Field(default=1, ge=1)
    spot: bool = False
    labels: dict[str, str] = Field(default_factory=dict)
    taints: list[Taint] = Field(default_factory=list)
    node_selector: dict[str, str] = Field(default_factory=dict)

    @field_validator("labels", "node_selector")
    @classmethod
    def _labels(cls, value: dict[str, str]) -> dict[str, str]:
        return _check_labels(value)

    @property
    def gpu_count(self) -> int:
        return self.gpu.count if self.gpu else 0

    @property
    def all_taints(self) -> list[Taint]:
        """The pool's taints, with the GPU taint first on GPU pools."""
        taints = [GPU_TAINT] if self.gpu else []
        taints += [t for t in self.taints if t not in taints]
        return taints


class GpuOperatorConfig(_Model):
    enabled: bool = False
    version: str = Field(default=versions.DEFAULT_GPU_OPERATOR_VERSION, pattern=_CHART_VERSION.pattern)


class MasterConfig(_Model):
    version: str = Field(default=versions.DEFAULT_DETERMINED_VERSION, pattern=_SEMVER.pattern)
    image_registry: str = Field(default="determinedai", min_length=1)
    cpu: Quantity = "2"
    memory: Quantity = "8Gi"
    initial_user_password: SecretStr | None = None
    telemetry: bool = False

    @field_validator("initial_user_password")
    @classmethod
    def _password_rule(cls, value: SecretStr | None) -> SecretStr | None:
        return _check_password_rule(value)

    @field_validator("version")
    @classmethod
    def _supported(cls, value: str) -> str:
        if versions.parse_version(value) < versions.MIN_DETERMINED_VERSION:
            oldest = ".".join(map(str, versions.MIN_DETERMINED_VERSION))
            raise ValueError(f"Determined {value} is older than the oldest supported, {oldest}")
        return value

    @property
    def version_tuple(self) -> tuple[int, int, int]:
        return versions.parse_version(self.version)


SslMode = Literal["disable", "allow", "prefer", "require", "verify-ca", "verify-full"]


class DatabaseConfig(_Model):
    mode: Literal["inCluster", "external", "managed"] = "inCluster"
    storage_size: Quantity = "30Gi"
    storage_class: str | None = None
    host: str | None = None
    port: int = Field(default=defaults.DB_PORT, ge=1, le=65535)
    name: str = Field(default="determined", min_length=1)
    user: str | None = None
    password: SecretStr | None = None
    ssl_mode: SslMode | None = None
    ssl_root_cert: str | None = None
    tier: str | None = None


class CheckpointStorageConfig(_Model):
    type: Literal["gcs", "s3", "azure", "sharedFs"] = "sharedFs"
    bucket: str | None = None
    prefix: str = ""
    endpoint_url: str | None = Field(default=None, pattern=r"^https?://")
    access_key: SecretStr | None = None
    secret_key: SecretStr | None = None
    container: str | None = None
    connection_string: SecretStr | None = None
    host_path: str = Field(default="/tmp/determined-checkpoints", pattern=r"^/")
    save_experiment_best: int = Field(default=0, ge=0)
    save_trial_best: int = Field(default=1, ge=0)
    save_trial_latest: int = Field(default=1, ge=0)


class CertificateConfig(_Model):
    source: Literal["certManager", "secret"] = "certManager"
    email: str | None = Field(default=None, pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
    secret_name: str | None = None


class TlsConfig(_Model):
    mode: Literal["none", "ingress", "master"] = "none"
    host: str | None = None
    certificate: CertificateConfig = Field(default_factory=CertificateConfig)
    source_ranges: list[str] = Field(default_factory=list)

    @field_validator("host")
    @classmethod
    def _host(cls, value: str | None) -> str | None:
        if value is not None and not _HOSTNAME.match(value):
            raise ValueError(f"{value!r} is not a host name (example: det.example.com)")
        return value

    @field_validator("source_ranges")
    @classmethod
    def _cidrs(cls, value: list[str]) -> list[str]:
        for cidr in value:
            try:
                ipaddress.ip_network(cidr, strict=True)
            except ValueError as exc:
                raise ValueError(f"{cidr!r} is not a CIDR range ({exc})") from None
        return value


class QuotaConfig(_Model):
    gpu: int | None = Field(default=None, ge=0)
    cpu: Quantity | None = None
    memory: Quantity | None = None


_POD_KEYS = {"apiVersion", "kind", "metadata", "spec"}


def _check_pod_spec(value: Any) -> dict:
    """A pod spec is given either as a Pod (apiVersion/kind/metadata/spec) or as its spec."""
    if not isinstance(value, dict):
        raise ValueError("must be a mapping (a Pod or a PodSpec)")
    if "spec" in value or "apiVersion" in value or "kind" in value:
        extra = sorted(set(value) - _POD_KEYS)
        if extra:
            raise ValueError(f"unexpected keys {extra} in a Pod (allowed: {sorted(_POD_KEYS)})")
        if value.get("kind", "Pod") != "Pod" or value.get("apiVersion", "v1") != "v1":
            raise ValueError("must be a v1 Pod (apiVersion: v1, kind: Pod)")
    return value


PodSpec = Annotated[dict[str, Any], BeforeValidator(_check_pod_spec)]


class ResourcePoolConfig(_Model):
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=63)
    node_pool: str
    namespace: DnsLabel | None = None
    description: str = ""
    pod_spec: PodSpec = Field(default_factory=dict)
    quota: QuotaConfig | None = None

    @property
    def namespace_name(self) -> str:
        return self.namespace or kube.dns_label(f"det-{self.name}")


class TaskContainerDefaultsConfig(_Model):
    cpu_pod_spec: PodSpec = Field(default_factory=dict)
    gpu_pod_spec: PodSpec = Field(default_factory=dict)
    checkpoint_gc_pod_spec: PodSpec = Field(default_factory=dict)


class SlotsConfig(_Model):
    type: Literal["gpu", "cpu"] | None = None
    cpu_per_slot: float | None = Field(default=None, gt=0)
    max_slots_per_pod: int | None = Field(default=None, ge=1)


def _check_scheduler(value: Any) -> Any:
    if value == "preemption":
        raise ValueError(
            "'preemption' is not accepted by the Kubernetes resource manager of current "
            "Determined releases (older docs still show it); use 'default' or 'coscheduler'"
        )
    return value


class StackConfig(_Model):
    cloud: Literal["gke", "eks", "existing"]
    environment: Literal["dev", "prod"] = "dev"
    allow_data_deletion: bool = False
    namespace: DnsLabel = "determined"
    cluster: ClusterConfig
    node_pools: list[NodePool] = Field(min_length=1)
    gpu_operator: GpuOperatorConfig = Field(default_factory=GpuOperatorConfig)
    master: MasterConfig = Field(default_factory=MasterConfig)
    database: DatabaseConfig = Field(default_factory=DatabaseConfig)
    checkpoint_storage: CheckpointStorageConfig = Field(default_factory=CheckpointStorageConfig)
    tls: TlsConfig = Field(default_factory=TlsConfig)
    resource_pools: list[ResourcePoolConfig] = Field(min_length=1)
    default_compute_pool: str | None = None
    default_aux_pool: str | None = None
    scheduler: Annotated[Literal["default", "coscheduler"], BeforeValidator(_check_scheduler)] = "default"
    task_container_defaults: TaskContainerDefaultsConfig = Field(default_factory=TaskContainerDefaultsConfig)
    slots: SlotsConfig = Field(default_factory=SlotsConfig)

    # --- derived views used by the components ----------------------------------------

    def node_pool(self, name: str) -> NodePool:
        return next(pool for pool in self.node_pools if pool.name == name)

    def node_selector(self, pool: NodePool) -> dict[str, str]:
        """Labels that select exactly the nodes of `pool`: on clusters the project creates,
        the label it puts on every node; on an existing cluster, the labels described."""
        if self.cloud == "existing":
            return dict(pool.node_selector or pool.labels)
        return {defaults.NODE_POOL_LABEL: pool.name}

    def node_pool_of(self, resource_pool: ResourcePoolConfig) -> NodePool:
        return self.node_pool(resource_pool.node_pool)

    def _pool_has_gpus(self, resource_pool: ResourcePoolConfig) -> bool:
        # Tolerates a dangling reference so that validation can report it.
        return any(n.gpu for n in self.node_pools if n.name == resource_pool.node_pool)

    @property
    def compute_pool(self) -> str:
        """Default compute pool: as configured, else the first pool on GPU nodes."""
        if self.default_compute_pool:
            return self.default_compute_pool
        gpu_pools = [p for p in self.resource_pools if self._pool_has_gpus(p)]
        return (gpu_pools or self.resource_pools)[0].name

    @property
    def aux_pool(self) -> str:
        """Default aux pool: as configured, else the first pool on CPU-only nodes."""
        if self.default_aux_pool:
            return self.default_aux_pool
        cpu_pools = [p for p in self.resource_pools if not self._pool_has_gpus(p)]
        return (cpu_pools or self.resource_pools)[0].name

    @property
    def slot_type(self) -> Literal["gpu", "cpu"]:
        if self.slots.type:
            return self.slots.type
        return "gpu" if any(self._pool_has_gpus(p) for p in self.resource_pools) else "cpu"

    @property
    def gpu_counts(self) -> list[int]:
        """Distinct GPUs per node of the node pools that resource pools run on, ascending."""
        names = {p.node_pool for p in self.resource_pools}
        return sorted({n.gpu_count for n in self.node_pools if n.name in names and n.gpu})

    @property
    def max_slots_per_pod(self) -> int:
        """The global slots-per-pod limit: as configured, else the largest value that
        divides the GPUs per node of every GPU pool (so no pod asks for more GPUs than a
        node has, and multi-pod tasks fill nodes evenly)."""
        if self.slots.max_slots_per_pod:
            return self.slots.max_slots_per_pod
        return math.gcd(*self.gpu_counts) if self.gpu_counts else 1

    @property
    def data_deletion_allowed(self) -> bool:
        # Refused in prod by validation; kept explicit here for the components.
        return self.allow_data_deletion and self.environment == "dev"


# --- errors ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    """One configuration problem: a key path (without the project prefix) and a message."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{PROJECT}:{self.path}: {self.message}"


class ConfigError(pulumi.RunError):
    """Raised before any resource is registered. pulumi.RunError prints no traceback."""

    def __init__(self, problems: Iterable[Problem]):
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


def _path(loc: Iterable[Any]) -> str:
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += ("." if text else "") + str(part)
    return text


def _describe(error: Mapping[str, Any]) -> str:
    kind = error["type"]
    ctx = error.get("ctx") or {}
    if kind == "missing":
        return "required"
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "literal_error":
        # Literal fields are never secret, so the given value can be shown.
        return f"must be one of {ctx.get('expected')} (got {error.get('input')!r})"
    if kind == "value_error":
        return str(ctx.get("error", error["msg"]))
    if kind == "string_pattern_mismatch":
        return f"does not match the expected form {ctx.get('pattern')}"
    return error["msg"][0].lower() + error["msg"][1:]


def _pydantic_problems(exc: ValidationError) -> list[Problem]:
    problems = []
    for error in exc.errors(include_url=False):
        # Union members and validator wrappers add location parts that are not keys.
        loc = [p for p in error["loc"] if not (isinstance(p, str) and "[" in p)]
        problems.append(Problem(_path(loc), _describe(error)))
    return problems


# --- cross-field rules -------------------------------------------------------------------


def _cross_field_problems(cfg: StackConfig) -> list[Problem]:
    problems: list[Problem] = []
    add = lambda path, message: problems.append(Problem(path, message))  # noqa: E731

    node_pool_names = [p.name for p in cfg.node_pools]
    for i, pool in enumerate(cfg.node_pools):
        if pool.name in node_pool_names[:i]:
            add(f"nodePools[{i}].name", f"duplicate node pool name {pool.name!r}")
        if pool.min_nodes > pool.max_nodes:
            add(f"nodePools[{i}].minNodes", f"{pool.min_nodes} is greater than maxNodes ({pool.max_nodes})")
        if cfg.cloud != "existing":
            if pool.node_selector:
                add(
                    f"nodePools[{i}].nodeSelector",
                    "only for cloud: existing (created pools are selected by their own label)",
                )
            if not pool.machine_type:
                add(f"nodePools[{i}].machineType", f"required for cloud: {cfg.cloud}")
            if pool.gpu and not pool.gpu.type:
                add(f"nodePools[{i}].gpu.type", f"required for cloud: {cfg.cloud}")
    if not any(not p.all_taints for p in cfg.node_pools):
        add(
            "nodePools",
            "at least one untainted CPU pool is needed for system pods (CoreDNS, the master, the database)",
        )

    pool_names = [p.name for p in cfg.resource_pools]
    for i, rp in enumerate(cfg.resource_pools):
        if rp.name in pool_names[:i]:
            add(f"resourcePools[{i}].name", f"duplicate resource pool name {rp.name!r}")
        if rp.node_pool not in node_pool_names:
            add(
                f"resourcePools[{i}].nodePool",
                f"no node pool named {rp.node_pool!r} (node pools: {', '.join(node_pool_names)})",
            )
        elif cfg.cloud == "existing":
            node_pool = cfg.node_pool(rp.node_pool)
            if not node_pool.node_selector and not node_pool.labels:
                j = node_pool_names.index(rp.node_pool)
                add(
                    f"nodePools[{j}].nodeSelector",
                    f"required on an existing cluster: resource pool {rp.name!r} is pinned to "
                    "these nodes by their labels (e.g. {node.kubernetes.io/instance-type: ...})",
                )
        if rp.namespace_name == cfg.namespace:
            add(
                f"resourcePools[{i}].namespace",
                f"{rp.namespace_name!r} is the master's namespace; give task pods their own",
            )
        if (
            rp.quota
            and rp.quota.gpu
            and rp.node_pool in node_pool_names
            and not cfg.node_pool(rp.node_pool).gpu
        ):
            add(f"resourcePools[{i}].quota.gpu", f"node pool {rp.node_pool!r} has no GPUs")
    for key, value in (
        ("defaultComputePool", cfg.default_compute_pool),
        ("defaultAuxPool", cfg.default_aux_pool),
    ):
        if value is not None and value not in pool_names:
            add(
                key,
                f"no resource pool named {value!r} (resource pools: {', '.join(dict.fromkeys(pool_names))})",
            )

    if cfg.allow_data_deletion and cfg.environment == "prod":
        add("allowDataDeletion", "refused in prod: the database and checkpoint bucket are always kept")

    if cfg.cloud == "gke" and not cfg.cluster.region:
        add("cluster.region", "required for cloud: gke")
    if cfg.cloud == "eks" and not cfg.cluster.region:
        add("cluster.region", "required for cloud: eks")
    if cfg.cloud != "existing":
        for key in ("kubeconfig", "context"):
            if getattr(cfg.cluster, key):
                add(f"cluster.{key}", "only for cloud: existing")
    else:
        for key in ("region", "zones", "project"):
            if getattr(cfg.cluster, key):
                add(
                    f"cluster.{key}",
                    "only for cloud gke or eks (an existing cluster is reached by kubeconfig)",
                )

    db = cfg.database
    if db.mode == "external":
        for key in ("host", "user", "password"):
            if not getattr(db, key):
                add(f"database.{key}", "required for database mode external")
    else:
        for key in ("host", "user", "sslMode", "sslRootCert"):
            if getattr(db, to_snake(key)) is not None:
                add(f"database.{key}", "only for database mode external")
    if db.ssl_mode in ("verify-ca", "verify-full") and not db.ssl_root_cert:
        add("database.sslRootCert", f"required for sslMode {db.ssl_mode} (the CA certificate in PEM form)")
    if db.mode == "managed" and not db.tier:
        add("database.tier", "required for database mode managed")

    _storage_problems(cfg, add)
    _tls_problems(cfg, add)
    # Slots are derived from the pools' node pools: a dangling reference is reported once above.
    if all(rp.node_pool in node_pool_names for rp in cfg.resource_pools):
        _slots_problems(cfg, add)
    _not_supported_yet(cfg, add)
    return problems


def to_snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _storage_problems(cfg: StackConfig, add) -> None:
    cs = cfg.checkpoint_storage
    own = {
        "sharedFs": {"hostPath"},
        "s3": {"bucket", "prefix", "endpointUrl", "accessKey", "secretKey"},
        "gcs": {"bucket", "prefix"},
        "azure": {"container", "connectionString", "prefix"},
    }[cs.type]
    for key in ("bucket", "endpointUrl", "accessKey", "secretKey", "container", "connectionString"):
        if getattr(cs, to_snake(key)) is not None and key not in own:
            add(f"checkpointStorage.{key}", f"not used by checkpoint storage type {cs.type}")
    if cs.type in ("gcs", "s3") and not cs.bucket and cfg.cloud == "existing":
        add(
            "checkpointStorage.bucket",
            "required on an existing cluster (buckets are created only for cloud gke or eks)",
        )
    if cs.type == "s3" and (cs.access_key is None) != (cs.secret_key is None):
        add(
            "checkpointStorage.secretKey" if cs.secret_key is None else "checkpointStorage.accessKey",
            "accessKey and secretKey go together",
        )
    if cs.type == "azure":
        for key in ("container", "connectionString"):
            if getattr(cs, to_snake(key)) is None:
                add(f"checkpointStorage.{key}", "required for checkpoint storage type azure")
    if cs.type == "sharedFs" and cfg.environment == "prod":
        add(
            "checkpointStorage.type",
            "sharedFs keeps checkpoints on one node's disk and is for testing only; refused in prod",
        )


def _tls_problems(cfg: StackConfig, add) -> None:
    tls = cfg.tls
    if tls.mode == "none":
        return
    if not tls.host:
        add("tls.host", f"required for tls mode {tls.mode}")
    cert = tls.certificate
    if cert.source == "certManager" and not cert.email:
        add("tls.certificate.email", "required for certificate source certManager (ACME registration)")
    if cert.source == "secret" and not cert.secret_name:
        add("tls.certificate.secretName", "required for certificate source secret")


def _slots_problems(cfg: StackConfig, add) -> None:
    slots = cfg.slots
    gpu_counts = cfg.gpu_counts
    if cfg.slot_type == "gpu":
        if slots.cpu_per_slot is not None:
            add("slots.cpuPerSlot", "only for slots type cpu")
        if not gpu_counts:
            add("slots.type", "gpu slots need a resource pool on a node pool with GPUs")
        elif slots.max_slots_per_pod is not None:
            misfits = [c for c in gpu_counts if c % slots.max_slots_per_pod]
            if misfits:
                fits = [n for n in range(1, gpu_counts[0] + 1) if all(c % n == 0 for c in gpu_counts)]
                add(
                    "slots.maxSlotsPerPod",
                    f"{slots.max_slots_per_pod} does not divide the GPUs per node of every GPU pool "
                    f"({', '.join(map(str, gpu_counts))}); values that fit: {', '.join(map(str, fits))}",
                )
    else:
        if slots.max_slots_per_pod is None:
            add(
                "slots.maxSlotsPerPod",
                "required for cpu slots: the CPUs of the nodes are not known offline, so set how many "
                "slots (of cpuPerSlot CPUs each) one task pod may take",
            )


def _not_supported_yet(cfg: StackConfig, add) -> None:
    """Sections that are parsed and checked now but deployed by later work."""
    if cfg.cloud in ("gke", "eks"):
        add("cloud", f"{cfg.cloud} is not supported yet; use 'existing' with a cluster made elsewhere")
    if cfg.database.mode == "managed":
        add("database.mode", "managed is not supported yet; use inCluster or external")
    if cfg.tls.mode != "none":
        add("tls.mode", f"{cfg.tls.mode} is not supported yet; use none")
    if cfg.gpu_operator.enabled:
        add("gpuOperator.enabled", "installing the GPU operator is not supported yet; set false")
    if cfg.scheduler == "coscheduler":
        add("scheduler", "coscheduler is not supported yet; use default")


# --- loading -----------------------------------------------------------------------------

# Top-level keys whose values Pulumi hands over as plain strings; the others are JSON
# (objects, lists, booleans).
_STRING_KEYS = {"cloud", "environment", "namespace", "defaultComputePool", "defaultAuxPool", "scheduler"}


def decode_raw(raw: Mapping[str, str]) -> dict[str, Any]:
    """Decode Pulumi config values (strings, JSON for objects) into plain Python values."""
    decoded: dict[str, Any] = {}
    for key, value in raw.items():
        if not isinstance(value, str) or key in _STRING_KEYS:
            decoded[key] = value
            continue
        try:
            decoded[key] = json.loads(value)
        except json.JSONDecodeError:
            decoded[key] = value  # left for the model to report with the key path
    return decoded


def _top_key(problem: Problem) -> str:
    return re.split(r"[.\[]", problem.path, maxsplit=1)[0]


def load_config(raw: Mapping[str, Any]) -> StackConfig:
    """Validate decoded config values (keys without the `determined:` prefix)."""
    try:
        cfg = StackConfig.model_validate(dict(raw))
    except ValidationError as exc:
        problems = _pydantic_problems(exc)
        # Report the relations between the remaining keys too: validate again without the
        # broken top-level keys (where they have defaults) and keep what does not touch them.
        broken = {_top_key(p) for p in problems}
        try:
            cfg = StackConfig.model_validate({k: v for k, v in raw.items() if k not in broken})
        except ValidationError:
            raise ConfigError(problems) from None
        problems += [p for p in _cross_field_problems(cfg) if _top_key(p) not in broken]
        raise ConfigError(problems) from None
    problems = _cross_field_problems(cfg)
    if problems:
        raise ConfigError(problems)
    return cfg


def read_pulumi_config() -> dict[str, Any]:
    """All `determined:*` values of the running stack, decoded."""
    from pulumi.runtime import config as runtime_config

    prefix = PROJECT + ":"
    everything = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    raw = {k[len(prefix) :]: v for k, v in everything.items() if k.startswith(prefix)}
    return decode_raw(raw)


def secret_fields(model: BaseModel) -> list[tuple[tuple[str | int, ...], SecretStr]]:
    """Every secret-by-nature value in a config model with its key path, as the user wrote
    it (camelCase keys, list indexes): `(("database", "password"), SecretStr(...))`."""
    found: list[tuple[tuple[str | int, ...], SecretStr]] = []

    def walk(value: Any, path: tuple[str | int, ...]) -> None:
        if isinstance(value, SecretStr):
            found.append((path, value))
        elif isinstance(value, BaseModel):
            for name, info in type(value).model_fields.items():
                walk(getattr(value, name), (*path, info.alias or name))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk(item, (*path, index))
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(item, (*path, key))

    walk(model, ())
    return found


def secret_values(model: BaseModel) -> set[str]:
    """Every secret-by-nature value in a config model (for redaction checks)."""
    return {secret.get_secret_value() for _, secret in secret_fields(model)}
