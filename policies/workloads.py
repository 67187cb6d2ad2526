"""Policies: what runs in pods (the project's workloads and the task pod specs of
master.yaml): pinned images, requests and limits, no secrets in plain sight, no privilege."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from components import constants
from policies import facts
from policies.rule import Context, Report, Rule


def images_pinned(context: Context, resource: Any, report: Report) -> None:
    spec = facts.pod_spec_of(resource)
    for container in facts.containers(spec):
        image = str(container.get("image", ""))
        if not facts.is_pinned(image):
            report(
                f"{facts.object_name(resource)}: container {container.get('name')!r} uses image {image!r}, "
                "which names no version"
            )
    master = facts.master_config_of(resource)
    if master is None:
        return
    for task in facts.task_pod_specs(master.config):
        for container in facts.containers(task.spec):
            image = container.get("image")
            if image is not None and not facts.is_pinned(str(image)):
                report(
                    f"master.yaml {task.where}: container {container.get('name')!r} uses image {image!r}, "
                    f"which names no version (from {task.key})"
                )
    for where, key, image in facts.task_images(master.config):
        if not facts.is_pinned(image):
            report(f"master.yaml {where}: task image {image!r} names no version (from {key})")


# --- the project's workloads ------------------------------------------------------------------

# Upstream manifests the project applies verbatim: node agents whose privilege is their job
# (Google's NVIDIA driver installer loads kernel modules: privileged, host PID and network).
# (type, namespace, name)
UPSTREAM_NODE_AGENTS = {
    (facts.DAEMON_SET, constants.GKE_DRIVER_INSTALLER_NAMESPACE, constants.GKE_DRIVER_INSTALLER_NAME),
    *(
        (facts.DAEMON_SET, constants.GKE_DRIVER_INSTALLER_NAMESPACE, name)
        for name in constants.GKE_FABRIC_NODE_AGENTS
    ),
}


def workload_name(resource: Any) -> str:
    """How messages name a workload: `Deployment determined/determined-master`."""
    return f"{resource.resource_type.rsplit(':', 1)[-1]} {facts.object_name(resource)}"


def own_pod_spec(resource: Any) -> Mapping[str, Any] | None:
    """The pod spec of a workload the project builds itself (None for other resources and
    for the upstream node agents above)."""
    if resource.resource_type not in (*facts.WORKLOADS, facts.CRON_JOB, facts.POD):
        return None
    meta = facts.metadata(resource)
    if (resource.resource_type, meta.get("namespace"), meta.get("name")) in UPSTREAM_NODE_AGENTS:
        return None
    return facts.mapping(facts.pod_spec_of(resource))


# --- containers-have-requests-and-limits ------------------------------------------------------


def containers_have_requests_and_limits(context: Context, resource: Any, report: Report) -> None:
    spec = own_pod_spec(resource)
    if spec is None:
        return
    # Ephemeral containers cannot set resources; init and regular ones can.
    for key, kind in (("initContainers", "init container"), ("containers", "container")):
        for container in facts.items(spec.get(key)):
            resources = facts.mapping(facts.get(container, "resources"))
            requests = facts.mapping(resources.get("requests"))
            limits = facts.mapping(resources.get("limits"))
            # As Kubernetes defaults them: a limit without a request is also the request.
            missing = [
                f"requests.{name}"
                for name in ("cpu", "memory")
                if name not in requests and name not in limits
            ]
            if "memory" not in limits:
                missing.append("limits.memory")
            if missing:
                report(
                    f"{workload_name(resource)}: {kind} {facts.get(container, 'name')!r} sets no "
                    f"{', '.join(missing)}"
                )


# --- no-secrets-in-plain-sight ----------------------------------------------------------------

PRIVATE_KEY_PEM = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
AWS_ACCESS_KEY_ID = re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])")
# Secret-sounding variables that by convention hold a location, not the secret itself.
LOCATION_SUFFIXES = ("_FILE", "_PATH", "_DIR", "_FILENAME")
LOCATION_NAMES = {"GOOGLE_APPLICATION_CREDENTIALS"}


def secret_pattern(value: Any) -> str | None:
    """What kind of secret a value visibly holds (never the value itself), else None."""
    if not isinstance(value, str):
        return None
    if PRIVATE_KEY_PEM.search(value):
        return "a private key (PEM block)"
    if AWS_ACCESS_KEY_ID.search(value):
        return "an AWS access key id"
    return None


def names_a_location(name: str) -> bool:
    upper = name.upper()
    return upper in LOCATION_NAMES or upper.endswith(LOCATION_SUFFIXES)


def plain_env(name: str, value: Any) -> str | None:
    """Why a literal environment variable puts a secret in plain sight, else None."""
    if not isinstance(value, str) or value == "":
        return None
    found = secret_pattern(value)
    if found:
        return f"holds {found} as a literal value"
    if facts.secret_named(name) and not names_a_location(name):
        return "is named like a secret and has a literal value (not valueFrom)"
    return None


def env_findings(spec: Mapping[str, Any] | None) -> Iterator[str]:
    """`container 'c' env 'NAME' <why>` for each offending env entry of a pod spec."""
    for container in facts.containers(spec):
        for entry in facts.items(container.get("env")):
            entry = facts.mapping(entry)
            name = str(entry.get("name", ""))
            why = plain_env(name, entry.get("value"))
            if why:
                yield f"container {container.get('name')!r} env {name!r} {why}"


def task_env_findings(config: Mapping[str, Any]) -> Iterator[str]:
    for section, variables in facts.task_defaults(config, "environment_variables"):
        # A list of NAME=value, or one list per kind of task ({cpu: [...], gpu: [...]}).
        groups = (
            [(f".{kind}", v) for kind, v in variables.items()]
            if isinstance(variables, Mapping)
            else [("", variables)]
        )
        for suffix, entries in groups:
            for entry in facts.items(entries):
                name, _, value = str(entry).partition("=")
                why = plain_env(name, value)
                if why:
                    yield f"master.yaml {section}.environment_variables{suffix}: {name!r} {why}"


def _report_pods(
    resource: Any,
    spec: Mapping[str, Any] | None,
    findings: Callable[[Mapping[str, Any] | None], Iterator[str]],
    report: Report,
) -> facts.MasterConfig | None:
    """Report `findings` of a workload's pod spec (`spec`), or of every task pod spec when
    `resource` is the master's config Secret, whose master.yaml it returns for more checks."""
    if spec is not None:
        for finding in findings(spec):
            report(f"{workload_name(resource)}: {finding}")
        return None
    master = facts.master_config_of(resource)
    if master is not None:
        for task in facts.task_pod_specs(master.config):
            for finding in findings(task.spec):
                report(f"master.yaml {task.where}: {finding} (from {task.key})")
    return master


def no_secrets_in_plain_sight(context: Context, resource: Any, report: Report) -> None:
    if resource.resource_type == facts.CONFIG_MAP:
        name = facts.object_name(resource)
        for field in ("data", "binaryData"):
            for key, value in facts.mapping(facts.get(resource.props, field)).items():
                if facts.secret_named(str(key)):
                    report(f"ConfigMap {name}: {field} key {key!r} is named like a secret")
                elif field == "data" and (found := secret_pattern(value)):
                    report(f"ConfigMap {name}: data key {key!r} holds {found}")
        return
    master = _report_pods(resource, facts.pod_spec_of(resource), env_findings, report)
    if master is None:
        return
    for finding in task_env_findings(master.config):
        report(f"{finding} (from determined:taskContainerDefaults.env)")


# --- system-pods-off-gpu-and-spot -------------------------------------------------------------

NAME_LABEL = "app.kubernetes.io/name"
PART_OF_LABEL = "app.kubernetes.io/part-of"
GPU_RESOURCE = "nvidia.com/gpu"
# (type, app.kubernetes.io/name) -> metadata.name (None: any; the Job is named by a hash).
SYSTEM_PODS = {
    (facts.DEPLOYMENT, constants.MASTER_COMPONENT): constants.MASTER_NAME,
    (facts.STATEFUL_SET, constants.DB_COMPONENT): constants.DB_NAME,
    (facts.JOB, constants.WORKSPACES_COMPONENT): None,
}


def system_pods(resources: Sequence[Any]) -> list[Any]:
    """The master Deployment, the in-cluster database StatefulSet and the workspace Job."""
    found = []
    for resource in resources:
        labels = facts.labels(resource)
        if labels.get(PART_OF_LABEL) != "determined":
            continue
        key = (resource.resource_type, labels.get(NAME_LABEL))
        if key in SYSTEM_PODS and SYSTEM_PODS[key] in (None, facts.metadata(resource).get("name")):
            found.append(resource)
    return found


def tolerates_gpu(toleration: Any) -> bool:
    """A toleration that lets the pod onto GPU nodes (their nvidia.com/gpu taint, or any)."""
    toleration = facts.mapping(toleration)
    key = toleration.get("key") or ""
    return key == facts.GPU_TAINT_KEY or (key == "" and toleration.get("operator") == "Exists")


def requests_gpu(container: Mapping[str, Any]) -> bool:
    resources = facts.mapping(container.get("resources"))
    return any(GPU_RESOURCE in facts.mapping(resources.get(k)) for k in ("requests", "limits"))


def system_pods_off_gpu_and_spot(context: Context, resources: Sequence[Any], report: Report) -> None:
    pools = facts.node_pools(resources)
    for resource in system_pods(resources):
        spec = facts.mapping(facts.pod_spec_of(resource))
        name = workload_name(resource)
        if pools:
            selector = facts.mapping(spec.get("nodeSelector"))
            selected = [pool for pool in pools if pool.selected_by(selector)]
            if not selector:
                report(f"{name}: no nodeSelector, so it may run on any node pool, GPU or spot", resource.urn)
            elif not selected:
                report(
                    f"{name}: nodeSelector {dict(selector)} selects no node pool of the stack", resource.urn
                )
            for pool in selected:
                kinds = [kind for kind, bad in (("GPU", pool.gpu), ("spot", pool.spot)) if bad]
                if kinds:
                    report(
                        f"{name}: nodeSelector selects node pool {pool.name!r}, a {' and '.join(kinds)} pool",
                        resource.urn,
                    )
        if any(tolerates_gpu(t) for t in facts.items(spec.get("tolerations"))):
            report(f"{name}: tolerates the {facts.GPU_TAINT_KEY} taint of GPU nodes", resource.urn)
        for container in facts.containers(spec):
            if requests_gpu(container):
                report(f"{name}: container {container.get('name')!r} requests {GPU_RESOURCE}", resource.urn)


# --- no-privileged-pods -----------------------------------------------------------------------

HOST_NAMESPACES = ("hostNetwork", "hostPID", "hostIPC")
POWERFUL_CAPABILITIES = {"SYS_ADMIN", "NET_ADMIN", "ALL"}


def _tcpxo_daemon(container: Mapping[str, Any]) -> bool:
    """The project's TCPXO sidecar as the project writes it (its name, pinned image and
    capabilities): Google's receive-datapath daemon programs the GPU NICs' flow steering,
    which needs NET_ADMIN (container-engine-accelerators@992db81 gpudirect-tcpxo/
    nccl-test-latest.yaml)."""
    security = facts.mapping(container.get("securityContext"))
    added = tuple(str(c) for c in facts.items(facts.get(security, "capabilities", "add")))
    return (
        container.get("name") == constants.TCPXO_DAEMON
        and container.get("image") == constants.TCPXO_DAEMON_IMAGE
        and added == constants.TCPXO_DAEMON_CAPABILITIES
        and security.get("privileged") is not True
    )


def privilege_findings(spec: Mapping[str, Any] | None) -> Iterator[str]:
    spec = facts.mapping(spec)
    for field in HOST_NAMESPACES:
        if spec.get(field) is True:
            yield f"{field}: true"
    for container in facts.containers(spec):
        name = container.get("name")
        security = facts.mapping(container.get("securityContext"))
        if security.get("privileged") is True:
            yield f"container {name!r} is privileged"
        if _tcpxo_daemon(container):
            continue
        added = [str(c) for c in facts.items(facts.get(security, "capabilities", "add"))]
        powerful = [c for c in added if c.upper().removeprefix("CAP_") in POWERFUL_CAPABILITIES]
        if powerful:
            yield f"container {name!r} adds capabilities {', '.join(powerful)}"


def no_privileged_pods(context: Context, resource: Any, report: Report) -> None:
    master = _report_pods(resource, own_pod_spec(resource), privilege_findings, report)
    if master is None:
        return
    # One message for the one setting the program writes into the top and every pool.
    hosts = [
        section
        for section, mode in facts.task_defaults(master.config, "network_mode")
        if str(mode).lower() == "host"
    ]
    if hosts:
        report(
            f"master.yaml network_mode is host in {', '.join(hosts)}: task pods share the node's "
            "network (from determined:taskContainerDefaults.networkMode)"
        )


RULES: list[Rule] = [
    Rule(
        name="images-pinned",
        description="Every container image, in the project's workloads and in every task pod spec and "
        "task image of master.yaml, names a version tag or digest, never `latest` or none.",
        remediation="name a tag or digest in determined:master.image, "
        "determined:taskContainerDefaults.images, or the pod spec's containers "
        "(determined:resourcePools[].podSpec, determined:taskContainerDefaults.*PodSpec)",
        dev="mandatory",
        prod="mandatory",
        area="workloads",
        resource=images_pinned,
        why="An unpinned image changes under a running cluster: a restart pulls something nobody reviewed.",
    ),
    Rule(
        name="containers-have-requests-and-limits",
        description="Every container (init containers too) of the project's workloads requests CPU and "
        "memory and limits memory (a limit alone counts as the request, as in Kubernetes). Task pod "
        "specs in master.yaml are exempt: Determined sets task resources itself.",
        remediation="set requests and a memory limit in determined:master.resources or "
        "determined:database.resources",
        dev="advisory",
        prod="mandatory",
        area="workloads",
        resource=containers_have_requests_and_limits,
        why="Without requests the scheduler packs the master and database onto nodes that cannot hold "
        "them, and without a memory limit one leak takes the node's memory from everything else. CPU "
        "limits are deliberately not required: CFS throttling stalls the master's API and the "
        "database under short bursts while the CPU sits idle; the CPU request already guarantees "
        "each its share.",
    ),
    Rule(
        name="no-secrets-in-plain-sight",
        description="No ConfigMap key named like a secret, or holding a private key PEM block or an AWS "
        "access key id; no container env (project workloads and master.yaml task pod specs) or task "
        "environment variable named like a secret with a literal value (valueFrom is fine).",
        remediation="keep secrets out of determined:master.env and determined:taskContainerDefaults.env: "
        "reference a Kubernetes Secret (env valueFrom.secretKeyRef) in a pod spec "
        "(determined:taskContainerDefaults.*PodSpec, determined:resourcePools[].podSpec), or use the "
        "key made for the secret (its values are Pulumi secrets)",
        dev="mandatory",
        prod="mandatory",
        area="workloads",
        resource=no_secrets_in_plain_sight,
        why="ConfigMaps, pod specs and task environments are readable by everyone who can read the "
        "namespace or view a task's configuration; Secrets get RBAC of their own and encryption at rest.",
    ),
    Rule(
        name="system-pods-off-gpu-and-spot",
        description="The master Deployment, the in-cluster database StatefulSet and the workspace-binding "
        "Job select (nodeSelector) only node pools of the stack without GPUs and not spot, tolerate no "
        "nvidia.com/gpu taint and request no nvidia.com/gpu (on existing clusters: the last two only).",
        remediation="set determined:master.nodePool to an untainted on-demand CPU node pool",
        dev="mandatory",
        prod="mandatory",
        area="workloads",
        stack=system_pods_off_gpu_and_spot,
        why="A spot reclaim takes the master and its database down mid-run, and a system pod on a GPU "
        "node keeps an expensive node from scaling down and can block a whole-node GPU task.",
    ),
    Rule(
        name="no-privileged-pods",
        description="The project's workloads and every task pod spec of master.yaml run unprivileged: no "
        "privileged containers, no hostNetwork/hostPID/hostIPC, no added SYS_ADMIN, NET_ADMIN or ALL "
        "capabilities, and task_container_defaults (top and per pool) network_mode is not host. "
        "hostPath volumes are not judged here, nor the NET_ADMIN of the TCPXO daemon the project pins "
        "for fabric tcpxo pools.",
        remediation="remove the privilege from determined:resourcePools[].podSpec or "
        "determined:taskContainerDefaults.*PodSpec, and set determined:taskContainerDefaults.networkMode "
        "to bridge",
        dev="mandatory",
        prod="mandatory",
        area="workloads",
        resource=no_privileged_pods,
        why="Tasks run user code: a privileged or host-namespace pod turns any notebook into root on the "
        "node and a view of every other tenant's traffic and processes. Google's NVIDIA driver "
        "installer DaemonSet (kube-system/nvidia-driver-installer), applied verbatim, is exempt: "
        "installing kernel drivers is its job.",
    ),
]
