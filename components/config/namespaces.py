"""Namespaces: those the stack owns (the master's, the tasks', each pool's) are valid DNS
labels, not the cluster's own, the add-ons' or the Helm chart's, one owner per derived name.
The add-ons' namespaces are here (one copy): the add-ons install into them
(components/addons/)."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from components import constants, versions
from components.config.errors import Add
from components.config.syntax import dns_label_problem
from components.kube import manifests

if TYPE_CHECKING:
    from components.config.stack import StackConfig


def suffixed_namespace(watched: str, suffix: str) -> str:
    """An add-on's namespace of one Determined namespace, `<watched>-<suffix>` (two installs
    in one cluster each get their own), cut to a DNS label when longer."""
    name = f"{watched}-{suffix}"
    if len(name) <= 63:
        return manifests.dns_label(name)
    # Cut to a DNS label, the watched namespace's digest keeps it apart from that namespace
    # (which a plain cut of a 55-63 character name would give back) and from other cuts.
    tag = hashlib.sha256(watched.encode()).hexdigest()[:6]
    return f"{watched[: 63 - len(suffix) - len(tag) - 2].rstrip('-')}-{tag}-{suffix}"


def reloader_namespace(watched: str) -> str:
    """Reloader's namespace: one per Determined namespace it watches."""
    return suffixed_namespace(watched, constants.RELOADER_RELEASE)


def monitoring_namespace(watched: str) -> str:
    """The namespace of the metrics store, Grafana and the exporters (observability)."""
    return suffixed_namespace(watched, constants.MONITORING_SUFFIX)


def addon_namespaces(watched: str) -> dict[str, str]:
    """Namespaces the project's add-ons run in, with what installs there, for a stack whose
    Determined namespace is `watched`. Each is refused as a namespace of the stack's own
    whether or not this config turns its add-on on: the stack
    would create a second Namespace of that name (AlreadyExists on `up`: gpu-operator, which the
    project registers itself) or fence the add-on in with the Determined namespaces'
    NetworkPolicies, Pod Security level and quotas (the Helm releases, whose createNamespace
    leaves an existing namespace as it is: cert-manager's webhook, Kueue's admission webhook,
    Envoy Gateway's controller); and turning the add-on on later would have to move every task
    namespace. A cluster's own install of those add-ons lives there too."""
    return {
        constants.CERT_MANAGER_NAMESPACE: "cert-manager (with tls certificate source certManager)",
        constants.ENVOY_GATEWAY_NAMESPACE: (
            "Envoy Gateway (with tls mode ingress, or master without gatewayClassName)"
        ),
        constants.GPU_OPERATOR_NAMESPACE: "the NVIDIA GPU operator (with gpuOperator.enabled)",
        constants.KUEUE_NAMESPACE: "Kueue (with scheduler kueue)",
        reloader_namespace(watched): "Reloader (with tls mode master)",
        monitoring_namespace(watched): "metrics, dashboards and alerts (with observability on)",
    }


def _reserved(namespace: str) -> bool:
    return namespace == "default" or namespace.startswith("kube-")


def namespace_problems(cfg: StackConfig, add: Add) -> None:
    """Namespaces the stack owns: valid, not the cluster's own, one owner per derived name."""
    if _reserved(cfg.namespace):
        add(
            "namespace",
            f"{cfg.namespace!r} belongs to the cluster itself; choose a namespace of Determined's own",
        )
    derived_from: dict[str, int] = {}
    for i, rp in enumerate(cfg.resource_pools):
        path = f"resourcePools[{i}].namespace"
        name = rp.namespace_name
        if rp.namespace is None:
            message = dns_label_problem(name)
            if message or not name:
                add(
                    f"resourcePools[{i}].name",
                    f"derives the namespace {name!r}, which is not a valid DNS label; set {path}",
                )
                continue
        if _reserved(name):
            add(path, f"{name!r} belongs to the cluster itself; give the pool's tasks their own namespace")
        elif name == cfg.namespace:
            add(path, f"{name!r} is the master's namespace; give task pods their own")
        # Two pools may share a namespace they name; a derived name must not collide.
        if name in derived_from and rp.namespace is None:
            j = derived_from[name]
            add(
                f"resourcePools[{i}].name",
                f"derives the namespace {name!r}, as resourcePools[{j}] does; set {path}",
            )
        derived_from.setdefault(name, i)


def addon_namespace_problems(cfg: StackConfig, add: Add) -> None:
    """No namespace of the stack's own is one of the add-ons' (addon_namespaces)."""
    taken = addon_namespaces(cfg.namespace)

    def check(path: str, name: str, what: str) -> None:
        if name in taken:
            add(
                path,
                f"{what}{name!r} is where the project installs {taken[name]}, kept for it whether or "
                "not this stack turns it on: the stack creates and fences its own namespaces, which would "
                "collide with that namespace or cut the add-on off; choose another",
            )

    check("namespace", cfg.namespace, "")
    if cfg.task_namespace is not None:
        check("taskNamespace", cfg.task_namespace, "")
    for i, rp in enumerate(cfg.resource_pools):
        if rp.namespace is not None:
            check(f"resourcePools[{i}].namespace", rp.namespace, "")
        else:
            check(f"resourcePools[{i}].name", rp.namespace_name, "the derived namespace ")


def chart_namespace_problems(cfg: StackConfig, add: Add) -> None:
    """database.fromHelmChart: the migration Job and its Secret go in the chart's namespace,
    which exists already (the chart's): the stack may not create it nor use the cluster's own."""
    chart = cfg.database.from_helm_chart
    if chart is None:
        return
    if chart.namespace.startswith("kube-"):
        add(
            "database.fromHelmChart.namespace",
            f"{chart.namespace!r} belongs to the cluster itself: the migration Job and a Secret holding the "
            "database password would be created there; give the namespace the chart was installed in",
        )
        return
    # Namespaces the stack creates (the master's is database.py's rule): creating one that
    # exists fails on `up` (AlreadyExists).
    separate = cfg.master.version_tuple >= versions.RELEASE_NAMESPACE_SINCE  # else the master's
    if separate and cfg.default_task_namespace == chart.namespace:
        add(
            "taskNamespace" if cfg.task_namespace else "namespace",
            f"the task namespace {chart.namespace!r} is the Helm chart's (database.fromHelmChart.namespace), "
            "which exists already: the stack creates its task namespace; choose another",
        )
    for i, rp in enumerate(cfg.resource_pools):
        if rp.namespace_name == chart.namespace:
            add(
                f"resourcePools[{i}].namespace" if rp.namespace else f"resourcePools[{i}].name",
                f"{'the derived namespace ' if rp.namespace is None else ''}{chart.namespace!r} is the Helm "
                "chart's (database.fromHelmChart.namespace), which exists already: the stack creates each "
                "pool's namespace; give the pool another",
            )


def task_namespace_problems(cfg: StackConfig, add: Add) -> None:
    """taskNamespace: 0.35+ only, a namespace of the tasks' own (a pool's may be shared)."""
    if cfg.master.version_tuple < versions.RELEASE_NAMESPACE_SINCE:
        if cfg.task_namespace is not None:
            add(
                "taskNamespace",
                "needs master.version 0.35.0 or newer (older masters look for their own Service in "
                "their default namespace, so it stays the master's)",
            )
        return
    name = cfg.default_task_namespace
    if cfg.task_namespace is None:
        if dns_label_problem(name):
            add(
                "namespace",
                f"derives the task namespace {name!r}, which is not a valid DNS label (at most 63 "
                "characters); set taskNamespace",
            )
    elif _reserved(name):
        add("taskNamespace", f"{name!r} belongs to the cluster itself; give tasks a namespace of their own")
    elif name == cfg.namespace:
        add(
            "taskNamespace",
            f"{name!r} is the master's namespace; tasks get their own (the master's namespace enforces "
            "Pod Security restricted, which Determined's task pods do not meet)",
        )
