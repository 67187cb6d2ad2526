"""The checks of the outside scan (checkov's Kubernetes checks, run over every stack's
manifests by tests/invariants/test_checkov.py) that the project's objects skip: the one
table of them, each with why.

`register` annotates every object it registers with the skips that apply to it, in the form
checkov reads (`checkov.io/skip<n>: <check id>=<reason>`), so the object itself says why,
and so does anyone's scan of what `pulumi up` applied. A skip is only for what the workload
inherently needs (the master's API token, a privileged driver installer, an image the user
chose); everything else is fixed in the object. A skip with `when` applies only to objects
that match it, so no object carries a skip it does not need (the test checks that every
annotated skip excuses a real finding).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from components import constants

ANNOTATION_PREFIX = "checkov.io/skip"
COMPONENT_LABEL = "app.kubernetes.io/name"


def _pod_spec(obj: dict[str, Any]) -> dict[str, Any]:
    spec = obj.get("spec") or {}
    if obj.get("kind") == "CronJob":
        spec = ((spec.get("jobTemplate") or {}).get("spec")) or {}
    return ((spec.get("template") or {}).get("spec")) or {}


def _containers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    spec = _pod_spec(obj)
    return [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]


def _always(obj: dict[str, Any]) -> bool:
    return True


def image_without_digest(obj: dict[str, Any]) -> bool:
    """Some container's image is named by a tag only."""
    return any("@" not in str(c.get("image", "")) for c in _containers(obj))


def no_cpu_limit(obj: dict[str, Any]) -> bool:
    """Some container sets no CPU limit."""
    return any("cpu" not in ((c.get("resources") or {}).get("limits") or {}) for c in _containers(obj))


def _pod_field(name: str) -> Callable[[dict[str, Any]], bool]:
    return lambda obj: bool(_pod_spec(obj).get(name))


@dataclass(frozen=True)
class Skip:
    check: str  # checkov's check id
    reason: str  # one line; checkov splits the annotation at '=', so none in it
    when: Callable[[dict[str, Any]], bool] = _always


CPU_LIMIT = (
    "CPU limits deliberately unset: CFS throttling stalls the process under bursts while the CPU idles; "
    "the CPU request guarantees its share (policy containers-have-requests-and-limits)"
)

# Workload identity hands the pod its cloud credentials through the service account's token
# (GKE's metadata server, EKS Pod Identity): only pods that reach a bucket mount it.
_IDENTITY_TOKEN = Skip(
    "CKV_K8S_38",
    "uploads and fetches dumps through workload identity, which authenticates with this token",
    when=_pod_field("automountServiceAccountToken"),
)


# The migration Job and its Secret go where the Helm chart's database claim is, which may be
# `default`, where the chart was installed.
_CHART_NAMESPACE = Skip(
    "CKV_K8S_21",
    "runs beside the Helm chart's database claim it copies, in the namespace the chart was installed in",
    when=lambda obj: (obj.get("metadata") or {}).get("namespace") in (None, "default"),
)


def _user_mirror(check: str) -> Skip:
    return Skip(
        check,
        "the user's PostgreSQL mirror (database.image) named by tag; the project's own images carry digests",
        when=image_without_digest,
    )


_DRIVER_INSTALLER = "Google's NVIDIA driver installer kept as upstream ships it (gke_driver_installer.py)"


def _upstream_node_agent(who: str, passes: tuple[str, ...] = ()) -> tuple[Skip, ...]:
    """The checks a node agent Google ships (a kube-system DaemonSet the project pins as
    upstream writes it, privileged by nature: it loads kernel modules, installs libraries
    into the node, injects devices) skips; `passes`: those it passes as upstream writes it."""
    skips = (
        Skip("CKV_K8S_16", f"{who}: privileged by nature"),
        Skip("CKV_K8S_20", f"{who}: privileged containers, which escalate by nature"),
        Skip("CKV_K8S_17", f"{who}: works in the node's PID namespace", when=_pod_field("hostPID")),
        Skip("CKV_K8S_19", f"{who}: works in the node's network namespace", when=_pod_field("hostNetwork")),
        Skip("CKV_K8S_22", f"{who}: writes into its own and the node's file system"),
        Skip("CKV_K8S_23", f"{who}: runs as root on the node"),
        Skip("CKV_K8S_40", f"{who}: runs as root on the node"),
        Skip("CKV_K8S_28", f"{who}: privileged, it has every capability"),
        Skip("CKV_K8S_37", f"{who}: privileged, it has every capability"),
        Skip("CKV_K8S_29", f"{who}: upstream sets no pod security context"),
        Skip("CKV_K8S_30", f"{who}: upstream sets no security context on some containers"),
        Skip("CKV_K8S_31", f"{who}: privileged containers run without seccomp anyway"),
        Skip("CKV_K8S_8", f"{who}: upstream defines no probe"),
        Skip("CKV_K8S_9", f"{who}: upstream defines no probe"),
        Skip("CKV_K8S_10", f"{who}: upstream requests CPU for some containers only"),
        Skip("CKV_K8S_11", f"{who}: upstream sets no limits"),
        Skip("CKV_K8S_12", f"{who}: upstream requests no memory"),
        Skip("CKV_K8S_13", f"{who}: upstream sets no limits"),
        Skip("CKV_K8S_15", f"{who}: upstream's pull policy", when=image_without_digest),
        Skip("CKV_K8S_43", f"{who}: upstream's image tag", when=image_without_digest),
        Skip("CKV_K8S_38", f"{who}: upstream's pod spec, unchanged"),
        Skip(
            "CKV2_K8S_6",
            "a kube-system node agent; the project's NetworkPolicies fence Determined's namespaces",
        ),
    )
    return tuple(skip for skip in skips if skip.check not in passes)


# What each fabric agent passes as upstream writes it (container-engine-accelerators@992db81):
# the injector pins its image by digest, requests CPU and sets a container security context;
# all three share the node's network (CKV2_K8S_6 judges only pods that have their own).
_FABRIC_AGENT_PASSES = {
    "device-injector": ("CKV_K8S_10", "CKV_K8S_15", "CKV_K8S_30", "CKV_K8S_43", "CKV2_K8S_6"),
    "nccl-tcpxo-installer": ("CKV2_K8S_6",),
    "nccl-rdma-installer": ("CKV2_K8S_6",),
}


# (kind, name) -> the checks that object skips. The name is the object's metadata.name or its
# component (label app.kubernetes.io/name: objects named per version or run, like Jobs).
_WRITES_TOKEN_SECRET = Skip(
    "CKV_K8S_38", "writes Prometheus' token into one Secret through the API (a Role for that Secret only)"
)

SKIPS: dict[tuple[str, str], tuple[Skip, ...]] = {
    ("Deployment", constants.MASTER_NAME): (
        Skip(
            "CKV_K8S_38", "the master creates, watches and deletes task pods through the API with this token"
        ),
        Skip(
            "CKV_K8S_43",
            "a Determined release tag (master.version) or the user's master.image: no digest the project "
            "could pin",
            when=image_without_digest,
        ),
        Skip(
            "CKV_K8S_15",
            "IfNotPresent: a restarting master needs no registry (mirrored or preloaded images); the tag "
            "names one Determined release",
            when=image_without_digest,
        ),
        Skip("CKV_K8S_11", CPU_LIMIT, when=no_cpu_limit),
    ),
    ("StatefulSet", constants.DB_NAME): (
        Skip(
            "CKV_K8S_40",
            "runs as the official image's postgres user (999), which owns the data directory of every "
            "earlier install",
        ),
        Skip("CKV_K8S_11", CPU_LIMIT, when=no_cpu_limit),
        Skip(
            "CKV_K8S_43",
            "the user's mirror of PostgreSQL (database.image) named by tag; the project's own image is "
            "pinned by digest",
            when=image_without_digest,
        ),
        Skip(
            "CKV_K8S_15",
            "the user's mirror (database.image) named by tag, pulled once per node like the pinned image",
            when=image_without_digest,
        ),
    ),
    # Backup, restore and migration Jobs by component (their names carry versions and runs).
    ("CronJob", constants.BACKUP_COMPONENT): (
        _IDENTITY_TOKEN,
        _user_mirror("CKV_K8S_43"),
        _user_mirror("CKV_K8S_15"),
    ),
    ("Job", constants.BACKUP_COMPONENT): (
        _IDENTITY_TOKEN,
        _user_mirror("CKV_K8S_43"),
        _user_mirror("CKV_K8S_15"),
    ),
    ("Job", constants.RESTORE_COMPONENT): (
        _IDENTITY_TOKEN,
        _user_mirror("CKV_K8S_43"),
        _user_mirror("CKV_K8S_15"),
    ),
    ("Secret", constants.MIGRATION_SECRET): (_CHART_NAMESPACE,),
    ("Job", constants.MIGRATION_COMPONENT): (
        _CHART_NAMESPACE,
        Skip(
            "CKV_K8S_40",
            "runs as the chart's postgres user (999), which owns the data directory it copies",
        ),
        Skip(
            "CKV_K8S_43",
            "PostgreSQL 10's last image (postgres:10.23) reads the chart's data directory; named by tag for "
            "the one-shot copy (the project knows no digest of this retired branch)",
            when=image_without_digest,
        ),
        Skip(
            "CKV_K8S_15",
            "one-shot copy of the chart's database with PostgreSQL 10's last image, pulled once",
            when=image_without_digest,
        ),
    ),
    # The Jobs that keep Prometheus' token for the master fresh (components/observability/
    # master_metrics.py), by component: the Job's name carries a hash.
    ("Job", constants.METRICS_TOKEN_COMPONENT): (_WRITES_TOKEN_SECRET,),
    ("CronJob", constants.METRICS_TOKEN_COMPONENT): (_WRITES_TOKEN_SECRET,),
    # The pre-pull DaemonSets (components/determined/image_pre_pull.py), by component: one per pool.
    ("DaemonSet", constants.IMAGE_PRE_PULL_COMPONENT): (
        Skip(
            "CKV_K8S_43",
            "pulls the images tasks run: Determined's default tags or taskContainerDefaults.images",
            when=image_without_digest,
        ),
        Skip(
            "CKV_K8S_15",
            "IfNotPresent as the task pods pull: a cached image is what the pod is for",
            when=image_without_digest,
        ),
        Skip("CKV_K8S_8", "init containers do the work; the pause container has nothing to probe"),
        Skip("CKV_K8S_9", "init containers do the work; the pause container serves nothing"),
        Skip("CKV_K8S_11", CPU_LIMIT, when=no_cpu_limit),
    ),
    ("DaemonSet", constants.GKE_DRIVER_INSTALLER_NAME): _upstream_node_agent(_DRIVER_INSTALLER),
    **{
        ("DaemonSet", name): _upstream_node_agent(
            f"Google's {name} for the GPU fabric (cluster/gke/fabric.py)", _FABRIC_AGENT_PASSES[name]
        )
        for name in constants.GKE_FABRIC_NODE_AGENTS
    },
}


def keys(obj: dict[str, Any]) -> list[tuple[str, str]]:
    """The table keys `obj` answers to: (kind, name), then (kind, component)."""
    meta = obj.get("metadata") or {}
    names = [meta.get("name"), (meta.get("labels") or {}).get(COMPONENT_LABEL)]
    return [(str(obj.get("kind")), name) for name in dict.fromkeys(names) if isinstance(name, str)]


def skips_for(obj: dict[str, Any]) -> list[Skip]:
    """The skips that apply to `obj` (by name, then by component; each check once)."""
    found: dict[str, Skip] = {}
    for key in keys(obj):
        for skip in SKIPS.get(key, ()):
            if skip.check not in found and skip.when(obj):
                found[skip.check] = skip
    return list(found.values())


def annotations(skips: list[Skip]) -> dict[str, str]:
    return {f"{ANNOTATION_PREFIX}{n}": f"{skip.check}={skip.reason}" for n, skip in enumerate(skips, 1)}


def annotated(obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` with its skips among its annotations (a new dict when there are any; `obj`
    itself, unchanged, when there are none)."""
    skips = skips_for(obj)
    if not skips:
        return obj
    meta = dict(obj["metadata"])
    meta["annotations"] = {**(meta.get("annotations") or {}), **annotations(skips)}
    return {**obj, "metadata": meta}
