"""Task pod specs as written (taskContainerDefaults and each pool's podSpec): the Kubernetes
Pod schema, the fields Determined sets itself, quantities, reserved priority classes, the
volumes they mount, and whether they merge over each other."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from components import constants, versions
from components.config.errors import Add, format_path
from components.config.resource_pools import POD_KEYS, determined_owned, pod_form_problem
from components.config.syntax import annotation_value_problems, quantity_value
from components.kube import api_rules, strategic_merge, validation

if TYPE_CHECKING:
    from components.config.stack import StackConfig
    from components.config.task_pods import TaskPods


def _pod_specs(cfg: StackConfig) -> Iterable[tuple[str, dict[str, Any]]]:
    tcd = cfg.task_container_defaults
    for key, spec in (
        ("cpuPodSpec", tcd.cpu_pod_spec),
        ("gpuPodSpec", tcd.gpu_pod_spec),
        ("checkpointGcPodSpec", tcd.checkpoint_gc_pod_spec),
    ):
        yield f"taskContainerDefaults.{key}", spec
    for i, rp in enumerate(cfg.resource_pools):
        yield f"resourcePools[{i}].podSpec", rp.pod_spec


def _without_directives(value: Any) -> Any:
    """A pod spec without strategic-merge directives (`$patch`, `$retainKeys`, ...), which
    the merge understands and the Kubernetes schema does not."""
    if isinstance(value, dict):
        return {k: _without_directives(v) for k, v in value.items() if not str(k).startswith("$")}
    if isinstance(value, list):
        return [_without_directives(v) for v in value if not (isinstance(v, dict) and "$patch" in v)]
    return value


def _quantity_problems(pod: dict[str, Any]) -> Iterable[tuple[tuple[str | int, ...], str]]:
    """Resource amounts the Kubernetes JSON schema lets through but the API server (and the
    master, which decodes them as quantities) refuses."""
    spec = pod.get("spec") or {}
    for kind in ("containers", "initContainers"):
        # Not a list: the schema check reports it.
        listed = spec.get(kind)
        for i, container in enumerate(listed if isinstance(listed, list) else []):
            resources = container.get("resources") if isinstance(container, dict) else None
            for section in ("limits", "requests"):
                amounts = (resources or {}).get(section) if isinstance(resources, dict) else None
                for name, amount in (amounts or {}).items() if isinstance(amounts, dict) else ():
                    if isinstance(amount, str):
                        try:
                            quantity_value(amount)
                        except ValueError:
                            where = ("spec", kind, i, "resources", section, name)
                            yield where, "is not a Kubernetes quantity (examples: '2', '500m', '8Gi')"


# Priority classes task pods may not take: the cluster's own (tasks would preempt its system
# pods) and the one the project gives the master and the database.
RESERVED_PRIORITY_CLASSES = (
    "system-node-critical",
    "system-cluster-critical",
    constants.SYSTEM_PRIORITY_CLASS,
)


def _reserved_priority(pod: dict[str, Any]) -> Iterable[tuple[tuple[str, ...], str]]:
    spec = pod.get("spec")
    name = spec.get("priorityClassName") if isinstance(spec, dict) else None
    if name in RESERVED_PRIORITY_CLASSES:
        yield (
            ("spec", "priorityClassName"),
            f"{name!r} is kept for the cluster's and Determined's own pods, which tasks would preempt; "
            "use a priority class of your own",
        )


def pod_spec_problems(
    path: str, spec: dict[str, Any], provided_volumes: Iterable[str] | None = None
) -> list[tuple[str, str]]:
    """(key path, message) for a pod spec as written: the Kubernetes Pod schema, the fields
    Determined sets itself, resource quantities, and whether it merges over the defaults.
    `provided_volumes`: every volume the pod gets besides its own and the master's, when
    known; then a mount of any other volume is refused."""
    if not spec or pod_form_problem(spec):
        return []
    is_pod = bool(POD_KEYS & spec.keys())
    if is_pod and not isinstance(spec.get("spec", {}), dict):
        return [(format_path([path, "spec"]), "must be a mapping (a Kubernetes PodSpec)")]
    pod = spec if is_pod else {"spec": spec}
    if (pod.get("spec") or {}).get("$patch") == "delete" or pod.get("$patch") == "delete":
        return [
            (
                path,
                "'$patch: delete' would remove the whole pod spec Determined builds on; "
                "remove the key instead",
            )
        ]

    def at(where: tuple[str | int, ...]) -> str:
        # Paths as the user wrote them: a bare PodSpec has no leading "spec".
        if not is_pod and where[:1] == ("spec",):
            where = where[1:]
        return format_path([path, *where])

    found = [(at(where), f"not allowed: {reason}") for where, reason in determined_owned(pod)]
    found += [(at(where), f"not allowed: {reason}") for where, reason in _reserved_priority(pod)]
    found += [(at(where), message) for where, message in _quantity_problems(pod)]
    # The schema requires what a partial spec leaves to the defaults (the task container):
    # fill it in, check, and report paths as the user wrote them.
    plain = _without_directives(pod)
    body = {"containers": [{"name": constants.TASK_CONTAINER}], **(plain.get("spec") or {})}
    full = {"apiVersion": "v1", "kind": "Pod", **plain, "spec": body}
    found += [
        (at(where) if where else path, message) for where, message in validation.template_problems(full)
    ]
    # What the API server refuses beyond the schema, where the schema found nothing, on the
    # Pod the master makes: its task container always among the containers (an init
    # container of that name clashes), the pod spec's own paths kept.
    reported = {where for where, _ in found}
    pod_spec = plain.get("spec") or {}
    given = pod_spec.get("containers") if isinstance(pod_spec.get("containers"), list) else []
    if not any(isinstance(c, dict) and c.get("name") == constants.TASK_CONTAINER for c in given):
        given = [*given, {"name": constants.TASK_CONTAINER}]
    task_pod = {**plain, "spec": {**pod_spec, "containers": given}}
    for w, m in api_rules.pod_problems(task_pod, is_pod=True):
        if w[-1:] == ("name",) and repr(constants.TASK_CONTAINER) in m:
            m += " (the master runs the task in a container of that name)"
        if at(w) not in reported:
            found.append((at(w), m))
    metadata = plain.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    found += [(at(("metadata", "annotations")), m) for m in annotation_value_problems(annotations)]
    if provided_volumes is not None:
        mounts = api_rules.task_mount_problems(plain.get("spec"), provided_volumes)
        found += [(at(("spec", *w)), m) for w, m in mounts]
    if not found:
        try:
            strategic_merge.merge_pods({"spec": body}, pod)
        except ValueError as exc:
            found.append((path, f"cannot be merged over the defaults: {exc}"))
    return found


def configured_pod_spec_problems(cfg: StackConfig, add: Add, task_pods: TaskPods | None) -> None:
    """Every pod spec of taskContainerDefaults and the pools as written (pod_spec_problems);
    the checkpoint GC pod's mounts against the volumes it gets, where task_pods tell them."""
    gc = "taskContainerDefaults.checkpointGcPodSpec"
    for path, spec in _pod_specs(cfg):
        provided = _gc_provided_volumes(cfg, task_pods) if path == gc and spec else None
        for where, message in pod_spec_problems(path, spec, provided):
            add(where, message)


def merged_pod_spec_problems(cfg: StackConfig, add: Add) -> None:
    """Two layers that pass alone can fail merged (an env var given a value by the task
    container defaults and a valueFrom by a pool): every pool's podSpec merged over the
    constants, as the master gets them (components.determined.resource_pools.pool_pod_specs), checked
    again when neither layer has a problem of its own."""
    tcd = cfg.task_container_defaults
    for i, rp in enumerate(cfg.resource_pools):
        path = f"resourcePools[{i}].podSpec"
        if not rp.pod_spec or pod_spec_problems(path, rp.pod_spec):
            continue
        for key, base in (("cpuPodSpec", tcd.cpu_pod_spec), ("gpuPodSpec", tcd.gpu_pod_spec)):
            if not base or pod_spec_problems(f"taskContainerDefaults.{key}", base):
                continue
            try:
                merged = strategic_merge.merge_pods(base, rp.pod_spec)
            except ValueError:
                continue  # reported by pod_spec_problems of the layer that cannot merge
            for where, message in pod_spec_problems(path, merged):
                inner = where.removeprefix(path).lstrip(".")
                add(path, f"merged over taskContainerDefaults.{key}, {inner or 'the pod'}: {message}")
                break  # one line per pool and layer: the first problem of the merge


def _gc_provided_volumes(cfg: StackConfig, task_pods: TaskPods | None) -> set[str] | None:
    """Volumes a checkpoint GC pod gets besides its spec's own and the master's: the
    project's task layer, and the default pod spec the master merges the GC spec over (the
    default aux pool's: master/pkg/tasks/task_gc.go:41-55 and internal/checkpoint_gc.go:101-114
    at v0.38.1, read 2026-11-25; every pool's and default's counted, to refuse only what none
    gives). The experiment's own pod spec is not used once checkpointGcPodSpec is set."""
    if task_pods is None or cfg.master.version_tuple < versions.CHECKPOINT_GC_POD_SPEC_SINCE:
        return None  # not known, or not used (master_rules.version_problems reports it)

    tcd = cfg.task_container_defaults
    layers = [task_pods.project_layer(cfg), tcd.cpu_pod_spec, tcd.gpu_pod_spec]
    layers += [rp.pod_spec for rp in cfg.resource_pools]
    names: set[str] = set()
    for layer in layers:
        body = layer.get("spec") if isinstance(layer, dict) and POD_KEYS & layer.keys() else layer
        volumes = body.get("volumes") if isinstance(body, dict) else None
        for volume in volumes if isinstance(volumes, list) else ():
            if isinstance(volume, dict) and isinstance(volume.get("name"), str):
                names.add(volume["name"])
    return names
