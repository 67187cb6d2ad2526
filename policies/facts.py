"""Reading resources as policies see them: pod specs, images, node pools, master.yaml.

Every helper takes a resource the way CrossGuard hands it over (`resource_type`, `props`,
`urn`, `name`, `opts`; props are read-only mappings in camelCase, and in a preview a value
not known yet raises `UnknownValueError` when read, which CrossGuard reports for us).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml
from pulumi_policy import proxy as _proxy

from components import constants
from components.config import eks_instances, gke_machines

# --- plain reading -----------------------------------------------------------------------


def get(value: Any, *path: str | int, default: Any = None) -> Any:
    """value[path[0]][path[1]]..., or `default` where a step is missing or of another kind."""
    for step in path:
        if isinstance(step, int):
            if (
                not isinstance(value, Sequence)
                or isinstance(value, str)
                or not -len(value) <= step < len(value)
            ):
                return default
            value = value[step]
        else:
            if not isinstance(value, Mapping) or step not in value:
                return default
            value = value[step]
    return default if value is None else value


def items(value: Any) -> list[Any]:
    """A list value as a list (absent or of another kind: empty)."""
    return list(value) if isinstance(value, Sequence) and not isinstance(value, str) else []


def mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def of_type(resources: Sequence[Any], *types: str) -> list[Any]:
    return [r for r in resources if r.resource_type in types]


def depends_on(resource: Any, prop: str) -> list[Any]:
    """The resources a property's value comes from (stack rules only)."""
    return list(getattr(resource, "property_dependencies", {}).get(prop, []))


# --- numbers as the engine delivers them -------------------------------------------------

# Properties reach a policy pack as a protobuf Struct, which has one kind of number: a double.
# A count of 0 arrives as 0.0 (pulumi/pulumi v3.259.0 pkg/resource/plugin/rpc.go
# MarshalPropertyValue; pulumi-policy 1.21.0 policy.py deserializes with
# json_format.MessageToDict). Rules read whole numbers with `whole` and show numbers with `shown`.


def whole(value: Any) -> int | None:
    """A whole number from an int, a whole double or its text (tags are strings); None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def shown(value: Any) -> str:
    """A value as a message shows it: a whole double as the integer it stands for (2.0: 2)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# --- values a first preview does not know yet -------------------------------------------

# CrossGuard's sentinels for values not known yet, one per kind of value.
_UNKNOWNS = frozenset(
    value for name, value in vars(_proxy).items() if name.startswith("UNKNOWN_") and name.endswith("_VALUE")
)


def is_unknown(container: Any, key: str | int) -> bool:
    """Whether container[key] is a value a first preview does not know yet, told without
    reading it (a read through CrossGuard's proxy raises). For values that come from another
    resource the stack creates: `pulumi up` checks them again, known, before creating the
    resource, so a preview may pass over them."""
    if isinstance(container, Mapping) and isinstance(key, str):
        raw = container.get("__target")  # the proxy's own mapping; a plain mapping has no such key
        value = (raw if isinstance(raw, Mapping) else container).get(key)
    elif isinstance(container, Sequence) and not isinstance(container, str) and isinstance(key, int):
        # CrossGuard's list proxy hands over its own list as "__target".
        raw = container if isinstance(container, list | tuple) else container["__target"]  # type: ignore[index]
        value = raw[key] if -len(raw) <= key < len(raw) else None
    else:
        return False
    return isinstance(value, str) and value in _UNKNOWNS


def known(container: Any, key: str) -> Any:
    """container[key] when known (None when missing or not known yet)."""
    return None if is_unknown(container, key) else get(container, key)


def known_items(container: Any, key: str) -> list[Any]:
    """The items of the list container[key] (empty when missing or not known), those not
    known yet as None."""
    listed = known(container, key)
    if not isinstance(listed, Sequence) or isinstance(listed, str):
        return []
    return [None if is_unknown(listed, i) else listed[i] for i in range(len(listed))]


def describe(resource: Any, kind: str, name_key: str | None = None) -> str:
    """`<kind> '<pulumi name>'`, with the cloud name when known and different."""
    text = f"{kind} {resource.name!r}"
    if name_key:
        cloud_name = known(resource.props, name_key)
        if isinstance(cloud_name, str) and cloud_name and cloud_name != resource.name:
            text += f" ({cloud_name})"
    return text


# --- Kubernetes objects --------------------------------------------------------------------

K8S = "kubernetes:"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"
STATEFUL_SET = "kubernetes:apps/v1:StatefulSet"
DAEMON_SET = "kubernetes:apps/v1:DaemonSet"
REPLICA_SET = "kubernetes:apps/v1:ReplicaSet"
JOB = "kubernetes:batch/v1:Job"
CRON_JOB = "kubernetes:batch/v1:CronJob"
POD = "kubernetes:core/v1:Pod"
SECRET = "kubernetes:core/v1:Secret"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
SERVICE = "kubernetes:core/v1:Service"
NAMESPACE = "kubernetes:core/v1:Namespace"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"
STORAGE_CLASS = "kubernetes:storage.k8s.io/v1:StorageClass"
RESOURCE_QUOTA = "kubernetes:core/v1:ResourceQuota"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
WORKLOADS = (DEPLOYMENT, STATEFUL_SET, DAEMON_SET, REPLICA_SET, JOB)


def metadata(resource: Any) -> Mapping[str, Any]:
    return mapping(get(resource.props, "metadata"))


def labels(resource: Any) -> Mapping[str, Any]:
    return mapping(get(resource.props, "metadata", "labels"))


def object_name(resource: Any) -> str:
    """namespace/name of a Kubernetes object (name alone when cluster-scoped)."""
    meta = metadata(resource)
    name = meta.get("name") or resource.name
    return f"{meta['namespace']}/{name}" if meta.get("namespace") else str(name)


def pod_spec_of(resource: Any) -> Mapping[str, Any] | None:
    """The pod spec of a workload, CronJob or Pod; None for any other resource."""
    props = resource.props
    if resource.resource_type in WORKLOADS:
        return get(props, "spec", "template", "spec")
    if resource.resource_type == CRON_JOB:
        return get(props, "spec", "jobTemplate", "spec", "template", "spec")
    if resource.resource_type == POD:
        return get(props, "spec")
    return None


def containers(spec: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    """Init, regular and ephemeral containers of a pod spec."""
    spec = mapping(spec)
    return [
        c
        for key in ("initContainers", "containers", "ephemeralContainers")
        for c in items(spec.get(key))
        if isinstance(c, Mapping)
    ]


def is_pinned(image: str) -> bool:
    """A version tag (not `latest`) or a digest."""
    if "@sha256:" in image:
        return True
    name = image.rsplit("/", 1)[-1]
    return ":" in name and name.rsplit(":", 1)[1] not in ("", "latest")


# --- node pools (GKE node pools, EKS node groups) -------------------------------------------

GKE_NODE_POOL = "gcp:container/nodePool:NodePool"
EKS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
GKE_CLUSTER = "gcp:container/cluster:Cluster"
EKS_CLUSTER = "aws:eks/cluster:Cluster"
GPU_TAINT_KEY = "nvidia.com/gpu"

# Cloud APIs spell taint effects in capitals; Kubernetes in CamelCase.
_EFFECTS = {"NO_SCHEDULE": "NoSchedule", "PREFER_NO_SCHEDULE": "PreferNoSchedule", "NO_EXECUTE": "NoExecute"}


@dataclass(frozen=True)
class Taint:
    key: str
    value: str
    effect: str  # as Kubernetes spells it

    @property
    def repels(self) -> bool:
        """Keeps pods without a toleration off the node."""
        return self.effect in ("NoSchedule", "NoExecute")


@dataclass(frozen=True)
class NodePool:
    """A node pool or node group the stack creates, as the policies need it."""

    resource: Any
    name: str
    machine_types: tuple[str, ...]
    gpus: int  # per node; 0 for CPU pools
    spot: bool
    min_nodes: int | None  # None: no minimum, or not a whole number
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    gpu_image: bool = False  # EKS: an NVIDIA AMI

    @property
    def key(self) -> str:
        """Where the pool is configured."""
        return f"determined:nodePools[{self.name}]"

    @property
    def gpu(self) -> bool:
        return self.gpus > 0 or self.gpu_image

    def machine_gpus(self) -> int | None:
        """GPUs per node its machine type carries (None: unknown or chosen per pool)."""
        counts = set()
        for machine in self.machine_types:
            if self.resource.resource_type == GKE_NODE_POOL:
                known = gke_machines.gpu_machine(machine)
                if known is None:
                    return 0 if gke_machines.series(machine) not in gke_machines.SERIES_ACCELERATOR else None
                if not known.fixed:
                    return None
                counts.add(known.counts[0])
            else:
                counts.add(eks_instances.gpu_count(machine) if eks_instances.accelerator(machine) else 0)
        return counts.pop() if len(counts) == 1 else None

    def tolerated_by(self, tolerations: Sequence[Any]) -> list[Taint]:
        """This pool's repelling taints that `tolerations` do not tolerate."""
        return [t for t in self.taints if t.repels and not any(tolerates(tol, t) for tol in tolerations)]

    def selected_by(self, selector: Mapping[str, Any]) -> bool:
        """A nodeSelector every node of this pool matches (and that names something)."""
        return bool(selector) and all(self.labels.get(k) == v for k, v in selector.items())


def tolerates(toleration: Any, taint: Taint) -> bool:
    toleration = mapping(toleration)
    effect = toleration.get("effect")
    if effect and effect != taint.effect:
        return False
    key = toleration.get("key")
    if toleration.get("operator") == "Exists":
        return key in (None, "", taint.key)
    return key == taint.key and (toleration.get("value") or "") == taint.value


def _taints(values: Any) -> tuple[Taint, ...]:
    return tuple(
        Taint(
            str(get(t, "key", default="")),
            str(get(t, "value", default="")),
            _EFFECTS.get(t.get("effect"), ""),
        )
        for t in items(values)
        if isinstance(t, Mapping)
    )


def _gke_arch_taints(machine_type: str) -> tuple[Taint, ...]:
    """The taint GKE puts on Arm nodes itself, which the pool's inputs do not carry
    (components/config/gke_machines.py ARM_FAMILIES, with its source)."""
    return (Taint("kubernetes.io/arch", "arm64", "NoSchedule"),) if gke_machines.is_arm(machine_type) else ()


def node_pool(resource: Any) -> NodePool | None:
    props = resource.props
    if resource.resource_type == GKE_NODE_POOL:
        config = mapping(get(props, "nodeConfig"))
        gpus = sum(whole(get(a, "count")) or 0 for a in items(config.get("guestAccelerators")))
        minimum = get(props, "autoscaling", "minNodeCount")
        return NodePool(
            resource=resource,
            name=str(get(props, "name", default=resource.name)),
            machine_types=(str(config.get("machineType", "")),),
            gpus=gpus,
            spot=bool(config.get("spot") or config.get("preemptible")),
            min_nodes=whole(get(props, "autoscaling", "totalMinNodeCount", default=minimum)),
            labels=mapping(config.get("labels")),
            taints=_taints(config.get("taints")) + _gke_arch_taints(str(config.get("machineType", ""))),
        )
    if resource.resource_type == EKS_NODE_GROUP:
        machines = tuple(str(m) for m in items(get(props, "instanceTypes")))
        gpu_image = "NVIDIA" in str(get(props, "amiType", default="")).upper()
        gpus = max((eks_instances.gpu_count(m) for m in machines if eks_instances.accelerator(m)), default=0)
        return NodePool(
            resource=resource,
            name=str(get(props, "nodeGroupName", default=resource.name)),
            machine_types=machines,
            gpus=gpus,
            spot=get(props, "capacityType") == "SPOT",
            min_nodes=whole(get(props, "scalingConfig", "minSize")),
            labels=mapping(get(props, "labels")),
            taints=_taints(get(props, "taints")),
            gpu_image=gpu_image,
        )
    return None


def node_pools(resources: Sequence[Any]) -> list[NodePool]:
    return [pool for r in resources if (pool := node_pool(r)) is not None]


# --- the Determined master's configuration --------------------------------------------------


@dataclass(frozen=True)
class MasterConfig:
    """master.yaml as the master receives it (from its config Secret) and its version."""

    resource: Any
    config: Mapping[str, Any]
    version: str | None


@functools.lru_cache(maxsize=8)
def _load_yaml(text: str) -> Any:
    """master.yaml parsed once for every rule that reads it (rules never change it)."""
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def is_master_config(resource: Any) -> bool:
    """The master's config Secret (told by its name and labels, which a preview knows)."""
    return (
        resource.resource_type == SECRET
        and metadata(resource).get("name") == constants.MASTER_CONFIG_SECRET
        and labels(resource).get("app.kubernetes.io/part-of") == "determined"
    )


def master_config_of(resource: Any) -> MasterConfig | None:
    """master.yaml of the master's config Secret (None for any other resource)."""
    if not is_master_config(resource):
        return None
    text = get(resource.props, "stringData", "master.yaml")
    loaded = _load_yaml(text) if isinstance(text, str) else None
    annotations = mapping(metadata(resource).get("annotations"))
    return MasterConfig(resource, mapping(loaded), annotations.get(constants.MASTER_VERSION_ANNOTATION))


def master_configs(resources: Sequence[Any]) -> list[MasterConfig]:
    return [mc for r in resources if (mc := master_config_of(r)) is not None]


@dataclass(frozen=True)
class TaskPodSpec:
    """A pod spec master.yaml gives tasks: where it sits, the config key it comes from."""

    where: str  # e.g. resource_pools[a100].task_container_defaults.gpu_pod_spec
    key: str  # e.g. determined:resourcePools[a100].podSpec
    pool: str | None  # the resource pool, None for the top-level defaults
    kind: str  # cpu_pod_spec | gpu_pod_spec | checkpoint_gc_pod_spec
    spec: Mapping[str, Any]


_SPEC_KEYS = {
    "cpu_pod_spec": "cpuPodSpec",
    "gpu_pod_spec": "gpuPodSpec",
    "checkpoint_gc_pod_spec": "checkpointGcPodSpec",
}


def task_sections(config: Mapping[str, Any]) -> Iterator[tuple[str, str | None, Mapping[str, Any]]]:
    """(where, pool, task_container_defaults) of master.yaml: the top-level one (pool None)
    and each resource pool's."""
    yield "task_container_defaults", None, mapping(config.get("task_container_defaults"))
    for pool in items(config.get("resource_pools")):
        name = get(pool, "pool_name", default="?")
        yield (
            f"resource_pools[{name}].task_container_defaults",
            name,
            mapping(get(pool, "task_container_defaults")),
        )


def task_pod_specs(config: Mapping[str, Any]) -> Iterator[TaskPodSpec]:
    """Every pod spec in master.yaml: the top-level task defaults' and each pool's."""
    for where, pool, tcd in task_sections(config):
        for kind, key in _SPEC_KEYS.items():
            if isinstance(tcd.get(kind), Mapping):
                source = (
                    f"determined:taskContainerDefaults.{key}"
                    if pool is None
                    else (f"determined:resourcePools[{pool}].podSpec")
                )
                yield TaskPodSpec(f"{where}.{kind}", source, pool, kind, mapping(get(tcd, kind, "spec")))


def task_defaults(config: Mapping[str, Any], key: str) -> Iterator[tuple[str, Any]]:
    """(where, value) of one task_container_defaults key of master.yaml, top and per pool."""
    for where, _, tcd in task_sections(config):
        yield where, get(tcd, key)


def task_images(config: Mapping[str, Any]) -> Iterator[tuple[str, str, str]]:
    """(where, config key, image) for the task images master.yaml names."""
    for where, image in task_defaults(config, "image"):
        values = (
            image.items() if isinstance(image, Mapping) else [("", image)] if isinstance(image, str) else []
        )
        for runtime, value in values:
            if isinstance(value, str):
                suffix = f".{runtime}" if runtime else ""
                yield f"{where}.image{suffix}", "determined:taskContainerDefaults.images", value


# --- misc -----------------------------------------------------------------------------------


def policy_document(value: Any) -> Mapping[str, Any]:
    """An IAM policy given as JSON text or as a mapping."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return mapping(value)


def as_list(value: Any) -> list[Any]:
    """IAM's "one or many" fields as a list."""
    if isinstance(value, str):
        return [value]
    return items(value)


_SECRET_WORDS = re.compile(
    r"(password|passwd|secret|token|credential|private[_-]?key|access[_-]?key|api[_-]?key)", re.I
)


def secret_named(name: str) -> bool:
    """A key or variable whose name says it holds a secret."""
    return bool(_SECRET_WORDS.search(name))
