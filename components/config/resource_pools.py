"""`determined:resourcePools`, `taskContainerDefaults` and `slots`: how tasks are placed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from components import constants, kube
from components.config import go_regexp
from components.config.base import ConfigModel
from components.config.errors import refuse
from components.config.syntax import (
    DnsLabel,
    EnvName,
    Flag,
    Fraction,
    ImageReference,
    MultilineText,
    NonEmpty,
    Quantity,
    Text,
    pattern_check,
    quantity_value,
    whole_number,
)

POD_KEYS = {"apiVersion", "kind", "metadata", "spec"}


def pod_form_problem(value: Any) -> str | None:
    """A pod spec is given either as a Pod (apiVersion/kind/metadata/spec) or as its spec."""
    if not isinstance(value, dict):
        return "must be a mapping (a Pod or a PodSpec)"
    if POD_KEYS & value.keys():
        extra = sorted(set(value) - POD_KEYS)
        if extra:
            return f"unexpected keys {', '.join(extra)} in a Pod (allowed: apiVersion, kind, metadata, spec)"
        if value.get("kind", "Pod") != "Pod" or value.get("apiVersion", "v1") != "v1":
            return "must be a v1 Pod (apiVersion: v1, kind: Pod)"
    return None


# What the master refuses in a task pod spec (master/pkg/model/environment_config.go,
# validatePodSpec, the same from 0.26.0 to 0.38.1): it names and places task pods, and
# owns these fields of its task container.
_OWNED_POD_FIELDS = {
    ("metadata", "name"): "the master names each task pod",
    ("metadata", "namespace"): "the master puts each task pod in its pool's namespace (or its workspace's)",
    ("spec", "hostNetwork"): "Determined does not run Kubernetes tasks on the host network",
}
_OWNED_CONTAINER_FIELDS = (
    "image",
    "command",
    "args",
    "workingDir",
    "ports",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
    "terminationMessagePath",
    "terminationMessagePolicy",
    "imagePullPolicy",
)


def determined_owned(pod: dict[str, Any]) -> list[tuple[tuple[str | int, ...], str]]:
    """(path, reason) for each field of a task Pod that Determined sets itself and so
    refuses: the master will not start with such a pod spec."""
    found: list[tuple[tuple[str | int, ...], str]] = []
    for (section, name), reason in _OWNED_POD_FIELDS.items():
        part = pod.get(section)
        if isinstance(part, dict) and part.get(name):
            found.append(((section, name), reason))
    spec = pod.get("spec")
    containers = spec.get("containers") if isinstance(spec, dict) else None
    for i, container in enumerate(containers if isinstance(containers, list) else []):
        if isinstance(container, dict) and container.get("name") == constants.TASK_CONTAINER:
            for name in _OWNED_CONTAINER_FIELDS:
                if container.get(name):
                    reason = f"Determined sets the {name} of its task container ({constants.TASK_CONTAINER})"
                    found.append((("spec", "containers", i, name), reason))
    return found


Clash = tuple[tuple[str | int, ...], str]


def _pod_body(spec: dict[str, Any]) -> tuple[dict[str, Any] | None, tuple[str, ...]]:
    """A user's pod spec as written (Pod or PodSpec form): its PodSpec and the key path to it."""
    if POD_KEYS & spec.keys():
        body = spec.get("spec")
        return (body if isinstance(body, dict) else None), ("spec",)
    return spec, ()


def volume_clashes(spec: dict[str, Any], owners: dict[str, str]) -> Iterator[Clash]:
    """(path, message) for each volume of a user's pod spec named as one the project adds
    (`owners`: volume name -> whose it is): strategic merge matches volumes by name, so the
    user's would replace the project's."""
    body, prefix = _pod_body(spec)
    volumes = body.get("volumes") if body else None
    for i, volume in enumerate(volumes if isinstance(volumes, list) else []):
        name = volume.get("name") if isinstance(volume, dict) else None
        if name in owners:
            yield (
                (*prefix, "volumes", i, "name"),
                f"the volume name {name!r} is {owners[name]}; choose another",
            )


def mount_clashes(spec: dict[str, Any], owners: dict[str, str]) -> Iterator[Clash]:
    """(path, message) for each mount of a user's task container at a path where the project
    mounts a volume (`owners`: path -> what is mounted there): two mounts at one path make an
    invalid pod."""
    body, prefix = _pod_body(spec)
    containers = body.get("containers") if body else None
    for i, container in enumerate(containers if isinstance(containers, list) else []):
        if not (isinstance(container, dict) and container.get("name") == constants.TASK_CONTAINER):
            continue
        mounts = container.get("volumeMounts")
        for j, mount in enumerate(mounts if isinstance(mounts, list) else []):
            path = mount.get("mountPath") if isinstance(mount, dict) else None
            if path in owners:
                where = (*prefix, "containers", i, "volumeMounts", j, "mountPath")
                yield where, f"{path} is {owners[path]}; choose another path"


def _pod(value: Any) -> dict[str, Any]:
    # The full check against the Kubernetes schema runs with the cross-section rules, which
    # report each problem at its own key path.
    message = pod_form_problem(value)
    if message:
        raise ValueError(message)
    return value


PoolName = Annotated[
    str,
    AfterValidator(
        pattern_check(
            r"[A-Za-z0-9][A-Za-z0-9_.-]*",
            "a pool name (letters, digits, '_', '.' and '-', starting with a letter or digit, "
            "at most 63 characters)",
            63,
        )
    ),
]


# The resources a quota caps both as requests and as limits.
QUOTA_LIMITED = ("cpu", "memory")


class QuotaLimits(ConfigModel):
    """Caps on what the namespace's pods may set as limits (limits.cpu, limits.memory)."""

    cpu: Quantity | None = Field(
        None,
        description="The cap on the sum of the namespace's CPU limits (limits.cpu), a Kubernetes quantity no "
        "lower than the quota's cpu; default: uncapped.",
    )
    memory: Quantity | None = Field(
        None,
        description="The cap on the sum of the namespace's memory limits (limits.memory), a Kubernetes "
        "quantity no lower than the quota's memory; default: uncapped.",
    )


class QuotaConfig(ConfigModel):
    """Caps on what the pool's tasks may request in their namespace (a ResourceQuota)."""

    gpu: whole_number(0) | None = Field(
        None,
        description="The cap on the GPUs (nvidia.com/gpu) the namespace's pods may request, a whole number; "
        "default: uncapped.",
    )
    cpu: Quantity | None = Field(
        None,
        description="The cap on the sum of the namespace's CPU requests (requests.cpu), a Kubernetes "
        "quantity; default: uncapped.",
    )
    memory: Quantity | None = Field(
        None,
        description="The cap on the sum of the namespace's memory requests (requests.memory), a Kubernetes "
        "quantity; default: uncapped.",
    )
    limits: QuotaLimits | None = Field(
        None,
        description="{cpu, memory}: caps on the sums of the namespace's limits, each no lower than the "
        "matching request cap; default: none.",
    )

    @model_validator(mode="after")
    def _limits_hold_requests(self) -> QuotaConfig:
        # A ResourceQuota caps the sum of the namespace's requests (requests.cpu) and of its
        # limits (limits.cpu) (https://kubernetes.io/docs/concepts/policy/resource-quotas/,
        # "Compute Resource Quota", read 2026-11), and the API server refuses a container
        # whose request exceeds its limit (pkg/apis/core/validation/validation.go,
        # ValidateResourceRequirements: "must be less than or equal to cpu limit"): so the
        # requests could never reach a cap above the limits' one.
        found = []
        for name in QUOTA_LIMITED:
            request = getattr(self, name)
            limit = getattr(self.limits, name) if self.limits else None
            if request is not None and limit is not None and quantity_value(limit) < quantity_value(request):
                found.append(
                    (
                        ("limits", name),
                        f"{limit} is below {name} ({request}): a container's {name} request is at most "
                        f"its limit, so the namespace's requests could never reach {request}; raise "
                        f"limits.{name} or lower {name}",
                    )
                )
        if found:
            raise refuse(found)
        return self


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError(
            "must hold a character other than spaces (Determined refuses a blank workspace name)"
        )
    return value


# Determined's workspace names: 1 to 80 characters, not all blank (validateWorkspaceName).
WorkspaceName = Annotated[str, Field(min_length=1, max_length=80), AfterValidator(_not_blank)]


class ResourcePoolConfig(ConfigModel):
    # Determined pool names: shown in the CLI and web UI, used in experiment configs.
    name: PoolName = Field(
        description="Required: the Determined pool name (letters, digits, '_', '.' and '-', at most 63 "
        "characters), unique; shown in the CLI and web UI, used in experiment configs."
    )
    node_pool: NonEmpty = Field(
        description="Required: the name of the node pool the pool's tasks are pinned to."
    )
    namespace: DnsLabel | None = Field(
        None,
        description="The namespace the pool's tasks run in, a DNS label, not the master's, default or "
        "kube-*; default det-<name>, which must not collide with another pool's.",
    )
    description: Text = Field("", description="A description of the pool shown by Determined; default empty.")
    pod_spec: dict[str, Any] = Field(
        default_factory=dict,
        description="A Pod or PodSpec merged over taskContainerDefaults, checked against the Kubernetes Pod "
        "schema; pod name, namespace and hostNetwork are refused (the master sets them). Default {}.",
    )
    quota: QuotaConfig | None = Field(
        None,
        description="{gpu, cpu, memory, limits}: a ResourceQuota (and LimitRange) in the pool's namespace; "
        "with scheduler kueue also the pool's ClusterQueue quota. One per namespace; default: none.",
    )
    # An opt-out of the node pool's GPU fabric (nodePools[].fabric): fabric devices and networks are
    # exclusive to one pod per node (components/determined/fabric.py), so a second pool on the same
    # node pool without them serves GPU tasks smaller than a node.
    fabric: bool = Field(
        True,
        description="Whether the pool's GPU tasks get its node pool's GPU fabric (nodePools[].fabric: EFA "
        "devices, TCPXO/RDMA networks), which takes the whole node's fabric for each task pod; false: "
        "a pool for GPU tasks smaller than a node (notebooks, single-GPU trials) beside a fabric pool on the "
        "same node pool, whose multi-node trials use multiples of the node's GPUs. Default true.",
    )
    # 0.35+: the Determined workspace bound to the pool's namespace (default: the pool's name).
    workspace: WorkspaceName | None = Field(
        None,
        description="0.35+: the Determined workspace bound to the pool's namespace (1 to 80 characters); "
        "default: the pool's name. Refused before 0.35.",
    )

    _pod_spec = field_validator("pod_spec", mode="before")(_pod)

    @property
    def namespace_name(self) -> str:
        return self.namespace or kube.dns_label(f"det-{self.name}")

    @property
    def workspace_name(self) -> str:
        return self.workspace or self.name

    @property
    def quota_name(self) -> str:
        return kube.dns_label(f"determined-{self.name}")


class TaskImages(ConfigModel):
    """Default task images (a mirror, or images with your libraries)."""

    cpu: ImageReference | None = Field(
        None,
        description="The default image of CPU tasks, with a tag or digest; default: Determined's.",
    )
    gpu: ImageReference | None = Field(
        None,
        description="The default image of GPU tasks, with a tag or digest; default: Determined's.",
    )


class LogPolicy(ConfigModel):
    """A pattern matched against task logs and what the master does on a match (0.26.4+;
    `name` 0.38+)."""

    name: NonEmpty | None = Field(None, description="0.38+: the policy's name.")
    pattern: NonEmpty = Field(
        description="Required: a regular expression in Go's RE2 syntax (the master compiles it so: no "
        "lookarounds or backreferences) matched against each task log line."
    )
    action: Literal["cancel_retries", "exclude_node"] | None = Field(
        None,
        description="What the master does on a match: cancel_retries or exclude_node; default: none.",
    )

    @field_validator("pattern")
    @classmethod
    def _regex(cls, value: str) -> str:
        # The master compiles it with Go's regexp (RE2 syntax), not Python's: see go_regexp.
        if problem := go_regexp.problem(value):
            raise ValueError(f"is not a regular expression the master can compile: {problem}")
        return value


# A Linux network interface name (at most 15 characters), such as eth0 or ens5.
InterfaceName = Annotated[
    NonEmpty,
    AfterValidator(
        pattern_check(
            r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,14}",
            "a network interface name (at most 15 letters, digits, '_', '.', ':' or '-'; example: eth0)",
        )
    ),
]


class TaskContainerDefaultsConfig(ConfigModel):
    images: TaskImages = Field(
        default_factory=TaskImages,
        description="{cpu, gpu}: default task images (a mirror, or images with your libraries), with a tag "
        "or digest; default: Determined's.",
    )
    force_pull_image: Flag = Field(False, description="Pull task images at every task start; default false.")
    env: dict[EnvName, MultilineText] = Field(
        default_factory=dict,
        description="NAME: value environment variables of every task (environment_variables); default {}.",
    )
    # /dev/shm of each task (the master's default: 4 GiB).
    shm_size_bytes: whole_number(1, 2**63 - 1) = Field(
        4294967296, description="The size of each task's /dev/shm, in bytes; default 4294967296 (4 GiB)."
    )
    # host: task pods on the node's network (RDMA, several NICs); the master's default: bridge.
    network_mode: Literal["bridge", "host"] = Field(
        "bridge",
        description="bridge, or host: task pods on the node's network (RDMA, several NICs); default bridge.",
    )
    dtrain_network_interface: InterfaceName | None = Field(
        None,
        description="The network interface distributed training uses (e.g. eth1); default: not set.",
    )
    startup_hook: Annotated[MultilineText, Field(min_length=1)] | None = Field(
        None, description="0.31+: a shell command (script) run before each task; default: none."
    )
    log_policies: list[LogPolicy] | None = Field(
        None,
        description="0.26.4+: [{name, pattern, action}]: patterns matched against task logs and what the "
        "master does on a match; default: not set (the master's own).",
    )
    cpu_pod_spec: dict[str, Any] = Field(
        default_factory=dict,
        description="A Pod or PodSpec every CPU task starts from, checked like resourcePools[].podSpec; "
        "default {}.",
    )
    gpu_pod_spec: dict[str, Any] = Field(
        default_factory=dict,
        description="A Pod or PodSpec every GPU task starts from, checked like resourcePools[].podSpec; "
        "default {}.",
    )
    checkpoint_gc_pod_spec: dict[str, Any] = Field(
        default_factory=dict,
        description="A Pod or PodSpec the checkpoint GC task starts from, checked like "
        "resourcePools[].podSpec; default {}.",
    )

    _pod_specs = field_validator("cpu_pod_spec", "gpu_pod_spec", "checkpoint_gc_pod_spec", mode="before")(
        _pod
    )


class SlotsConfig(ConfigModel):
    type: Literal["gpu", "cpu"] | None = Field(
        None, description="What a slot is: gpu or cpu; default gpu if a node pool has GPUs, else cpu."
    )
    cpu_per_slot: Fraction | None = Field(
        default=None,
        gt=0,
        le=1024,
        description="CPUs per slot when slots are cpu (greater than 0, at most 1024); default 1.",
    )
    max_slots_per_pod: whole_number(1) | None = Field(
        None,
        description="The most slots one task pod gets; gpu: must divide every GPU pool's GPU count (default "
        "derived from them); cpu: required, and cpuPerSlot times it must fit every node's allocatable CPUs.",
    )
