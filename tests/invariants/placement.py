"""Where Determined's master puts each task, and whether the cluster the stack builds lets it
start: a model of the master, written from its source per version family, run over a stack's
own plan (master.yaml, the manifests, the workspace Job's mapping).

For every workspace, every pool it may use and every task kind, the model builds the object
the master creates (a batch/v1 Job from 0.34, a bare Pod before), in the namespace the master
picks, with the labels and containers the master gives it, then judges it against what the
stack put in that namespace: the master's rights (RBAC), Pod Security, the LimitRanges and
ResourceQuotas, Kueue's LocalQueue and ClusterQueue, and the NetworkPolicies between the task
and the master. Each rule names the file and tag of Determined's source it comes from
(repository determined-ai/determined; paths under master/).

Run it to print the table of a stack (the test helpers it imports are on PYTHONPATH; the
project is installed, pyproject.toml):
    PYTHONPATH=tests .venv/bin/python tests/invariants/placement.py kueue-gke workspaces-0.35.0
"""

from __future__ import annotations

import copy
import dataclasses
import json
import sys
from dataclasses import dataclass, field
from typing import Any

import stack_plans
import test_network_fencing as fencing
from stack_plans import Planned

from components import config as stack_config
from components import constants, versions
from components.addons import kueue
from components.determined import workspaces
from components.kube import pod_security

# --- the master, by version -------------------------------------------------------------------

# Task kinds and their task type label (pkg/model/task.go:40-50 at v0.38.1).
TASK_TYPES = {
    "experiment": "TRIAL",
    "notebook": "NOTEBOOK",
    "command": "COMMAND",
    "shell": "SHELL",
    "TensorBoard": "TENSORBOARD",
    "checkpoint GC": "CHECKPOINT_GC",
}
KINDS = tuple(TASK_TYPES)
# Slots a kind asks for by default on a pool that has slots: experiments 1 (slots_per_trial,
# schemas/expconf/v0), notebooks, commands and shells 1 (pkg/model/experiment_config.go:128-141,
# ParseJustResources, used by internal/api_command.go:96 at v0.38.1), TensorBoards 0
# (internal/api_tensorboard.go:228 MustZeroSlot). Checkpoint GC asks for none
# (internal/checkpoint_gc.go:177-186: no slots in its AllocateRequest).
DEFAULT_SLOTS = {
    "experiment": 1,
    "notebook": 1,
    "command": 1,
    "shell": 1,
    "TensorBoard": 0,
    "checkpoint GC": 0,
}
# The Determined workspace every task without one belongs to (model.DefaultWorkspaceID).
UNCATEGORIZED = "Uncategorized"
# Determined's containers (spec.go: model.DeterminedK8ContainerName; configureInitContainer).
TASK_CONTAINER = constants.TASK_CONTAINER
INIT_CONTAINER = "determined-init-container"
# pkg/tasks/task_gc.go ToTaskSpec; the GC of a deleted experiment runs with the master's own
# task spec, so in no workspace (internal/api_experiment.go:389 and :1230 at v0.38.1).
DELETED_EXPERIMENT_GC = "checkpoint GC (deleted experiment)"


@dataclass(frozen=True)
class Task:
    workspace: str
    pool: str
    kind: str
    slots: int


@dataclass
class Placement:
    """What the master creates for a task: `kind` Job (0.34+) or Pod, in `namespace`, whose
    pods carry `labels` and `pod` (metadata + spec, Determined's containers included)."""

    task: Task
    kind: str
    namespace: str
    labels: dict[str, str]
    pod: dict[str, Any]
    pods: int
    spec_from: str  # the master.yaml key the pod spec came from
    why: str  # the rule (and source) that chose the namespace


@dataclass
class Verdict:
    placement: Placement
    queue: str | None = None
    quotas: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def result(self) -> str:
        return "starts" if not self.problems else "; ".join(self.problems)


@dataclass
class Master:
    """The master's view of the stack, from master.yaml and the workspace Job's mapping."""

    version: tuple[int, int, int]
    config: dict[str, Any]
    # 0.35+: workspace -> namespace (bound by the workspace Job), pool -> workspaces bound to it.
    workspace_namespaces: dict[str, str]
    pool_workspaces: dict[str, list[str]]
    compute_roles: dict[str, bool]  # pool -> whether its tasks take slots by default

    @property
    def rm(self) -> dict[str, Any]:
        return self.config["resource_manager"]

    @property
    def pools(self) -> dict[str, dict[str, Any]]:
        return {p["pool_name"]: p for p in self.config.get("resource_pools") or []}

    @property
    def default_namespace(self) -> str:
        # 0.35.0 renamed resource_manager.namespace to default_namespace.
        key = "default_namespace" if self.version >= versions.WORKSPACE_NAMESPACES_SINCE else "namespace"
        return self.rm.get(key) or "default"

    @property
    def default_pools(self) -> tuple[str, str]:
        return self.rm["default_compute_resource_pool"], self.rm["default_aux_resource_pool"]

    def workspaces(self) -> list[str]:
        """The configured workspaces and one bound to nothing (Uncategorized, and any a user
        creates without a namespace)."""
        return [*self.workspace_namespaces, UNCATEGORIZED]

    def available_pools(self, workspace: str) -> list[str]:
        """Pools a workspace may use: those bound to it and those bound to none
        (internal/db/postgres_rp_workspace_bindings.go:212 ReadRPsAvailableToWorkspace, used
        by kubernetesrm/kubernetes_resource_manager.go:498 at v0.38.1; the same from 0.34.0).
        Before 0.35 the stack binds nothing."""
        return [
            name
            for name in self.pools
            if not self.pool_workspaces.get(name) or workspace in self.pool_workspaces[name]
        ]

    def task_container_defaults(self, pool: str, key: str) -> dict[str, Any] | None:
        """A pod spec of a pool's task_container_defaults as the master resolves it: the pool's
        section merged over the top one (model.TaskContainerDefaultsConfig.Merge, used by
        kubernetes_resource_manager.go TaskContainerDefaults from 0.32.0); before 0.32.0 the
        pool's section replaces the top one (0.26.0 kubernetes_resource_manager.go:657)."""
        own = (self.pools[pool].get("task_container_defaults") or None) if pool in self.pools else None
        top = self.config.get("task_container_defaults") or {}
        if own is None:
            return top.get(key)
        if self.version >= (0, 32, 0):
            return own.get(key) or top.get(key)
        return own.get(key)

    def slot_resources(self, slots: int) -> dict[str, dict[str, str]]:
        """The task container's resources (kubernetesrm/spec.go:57-105 at v0.38.1, :59 at
        0.34.0; pod spec.go configureResourcesRequirements before): CPU slots request and
        limit slot_resource_requests.cpu x slots; GPU slots nvidia.com/gpu; no slots nothing."""
        if self.rm.get("slot_type") == "cpu":
            millis = int(float(self.rm["slot_resource_requests"]["cpu"]) * slots * 1000)
            return {"requests": {"cpu": f"{millis}m"}, "limits": {"cpu": f"{millis}m"}}
        if slots > 0:
            return {"requests": {"nvidia.com/gpu": str(slots)}, "limits": {"nvidia.com/gpu": str(slots)}}
        return {"requests": {}, "limits": {}}


def master_of(stack: Planned) -> Master:
    version = tuple(int(x) for x in stack.version.split("."))
    cfg = stack_config.load_config(stack.raw)
    roles = {rp.name: cfg.pool_role(rp) == "compute" for rp in cfg.resource_pools}
    workspace_namespaces: dict[str, str] = {}
    pool_workspaces: dict[str, list[str]] = {}
    if version >= versions.WORKSPACE_NAMESPACES_SINCE:
        compute, aux = (
            stack.master["resource_manager"]["default_compute_resource_pool"],
            stack.master["resource_manager"]["default_aux_resource_pool"],
        )
        for entry in workspace_mapping(stack):
            # The workspace Job (components/determined/data/bind_workspaces.py): a workspace is bound to
            # its first entry's namespace; each pool to its workspace, but the master's default
            # pools, which it refuses to bind (internal/api_resourcepool.go:214-232 at v0.38.1).
            workspace_namespaces.setdefault(entry["workspace"], entry["namespace"])
            if entry["pool"] not in (compute, aux):
                pool_workspaces.setdefault(entry["pool"], []).append(entry["workspace"])
    return Master(version, stack.master, workspace_namespaces, pool_workspaces, roles)


def workspace_mapping(stack: Planned) -> list[dict[str, str]]:
    """DET_MAPPING of the stack's workspace Job (none before 0.35)."""
    for job in stack.manifests("Job"):
        if job["metadata"]["name"].startswith(workspaces.JOB_PREFIX):
            (container,) = job["spec"]["template"]["spec"]["containers"]
            env = {e["name"]: e.get("value") for e in container["env"]}
            return json.loads(env["DET_MAPPING"])
    return []


def tasks(master: Master) -> list[Task]:
    found = []
    for workspace in master.workspaces():
        for pool in master.available_pools(workspace):
            for kind in KINDS:
                slots = DEFAULT_SLOTS[kind] if master.compute_roles.get(pool) else 0
                if kind == "checkpoint GC":
                    # `pool`: the experiment's; its GC asks for nothing, on the default aux pool.
                    slots = DEFAULT_SLOTS["experiment"] if master.compute_roles.get(pool) else 0
                found.append(Task(workspace, pool, kind, slots))
    return found


def namespace_of(master: Master, task: Task) -> tuple[str, str]:
    """The namespace the master puts a task in, and why."""
    if master.version >= versions.WORKSPACE_NAMESPACES_SINCE:
        bound = master.workspace_namespaces.get(task.workspace)
        if bound:
            return bound, "its workspace's namespace (kubernetesrm/resource_pool.go:613 at 0.35.0-v0.38.1)"
        return master.default_namespace, "unbound workspace: default_namespace (resource_pool.go:614-615)"
    pool = task.pool
    if task.kind == "checkpoint GC":
        # Checkpoint GC runs on the default aux pool (internal/checkpoint_gc.go:102 at 0.34.0,
        # :56 at 0.26.0: ResolveResourcePool("", -1, 0)).
        pool = master.default_pools[1]
    namespace = master.pools[pool].get("kubernetes_namespace") or master.default_namespace
    # kubernetes_resource_manager.go:91-92 at 0.34.0 (the pool's namespace, else the default).
    return namespace, f"pool {pool}'s kubernetes_namespace (kubernetesrm/resource_pool.go:550 at 0.34.0)"


def pod_spec_of(master: Master, task: Task) -> tuple[dict[str, Any], str]:
    """The pod spec the master starts from: gpu_pod_spec with slots, else cpu_pod_spec
    (internal/spec_util.go:78-86 fillTaskConfig; pkg/model/task_container_defaults.go:140-143
    for experiments); checkpoint GC: the default aux pool's checkpoint_gc_pod_spec where set
    (0.34+), else the experiment's (pkg/tasks/task_gc.go:41-44 at 0.34.0-v0.38.1)."""
    if task.kind == "checkpoint GC" and master.version >= versions.CHECKPOINT_GC_POD_SPEC_SINCE:
        gc = master.task_container_defaults(master.default_pools[1], "checkpoint_gc_pod_spec")
        if gc:
            return gc, f"{master.default_pools[1]}.checkpoint_gc_pod_spec"
    key = "gpu_pod_spec" if task.slots > 0 else "cpu_pod_spec"
    return master.task_container_defaults(task.pool, key) or {}, f"{task.pool}.{key}"


def place(master: Master, task: Task) -> list[Placement]:
    """The objects the master creates for a task (checkpoint GC: one per place it may run)."""
    spec_source, spec_from = pod_spec_of(master, task)
    namespace, why = namespace_of(master, task)
    places = [(namespace, why)]
    if task.kind == "checkpoint GC" and master.version >= versions.WORKSPACE_NAMESPACES_SINCE:
        places.append(
            (master.default_namespace, f"{DELETED_EXPERIMENT_GC}: the master's task spec, no workspace")
        )
    slots = 0 if task.kind == "checkpoint GC" else task.slots
    found = []
    for namespace, reason in places:
        pod = job_pod(master, task, spec_source, slots, namespace)
        kind = "Job" if master.version >= versions.JOB_TASKS_SINCE else "Pod"
        found.append(Placement(task, kind, namespace, pod["metadata"]["labels"], pod, 1, spec_from, reason))
    return found


def job_pod(master: Master, task: Task, source: dict[str, Any], slots: int, namespace: str) -> dict[str, Any]:
    """The pod of the Job (spec.go configureJobSpec, :552-667 at v0.38.1; configurePodSpec
    before 0.34): the pod spec's labels plus Determined's, its containers but Determined's, then
    Determined's task container with the slots' resources (the pod spec's own resources fill in
    what the slots leave out, :629-640), its init containers then Determined's, which declares
    no resources (configureInitContainer, spec.go:825-843)."""
    pod = copy.deepcopy(source)
    spec = pod.get("spec") or {}
    labels = dict((pod.get("metadata") or {}).get("labels") or {})
    labels |= {
        "determined": f"{task.kind}-alloc",
        "determined.ai/workspace": task.workspace,
        "determined.ai/resource_pool": task.pool,
        "determined.ai/task_type": TASK_TYPES[task.kind],
    }
    resources = master.slot_resources(slots)
    others = []
    for container in spec.get("containers") or []:
        if container.get("name") != TASK_CONTAINER:
            others.append(container)
            continue
        own = container.get("resources") or {}
        for part in ("requests", "limits"):
            for name, value in (own.get(part) or {}).items():
                resources[part].setdefault(name, value)
    task_container = {"name": TASK_CONTAINER, "resources": resources}
    spec["containers"] = [*others, task_container]
    spec["initContainers"] = [*(spec.get("initContainers") or []), {"name": INIT_CONTAINER}]
    return {"metadata": {"namespace": namespace, "labels": labels}, "spec": spec}


# --- what the cluster does with it ------------------------------------------------------------


def quantity(text: Any) -> float:
    """A Kubernetes quantity as a number (cores, bytes, counts)."""
    text = str(text)
    suffixes = {
        "Ki": 2**10,
        "Mi": 2**20,
        "Gi": 2**30,
        "Ti": 2**40,
        "Pi": 2**50,
        "Ei": 2**60,
        "m": 1e-3,
        "k": 1e3,
        "M": 1e6,
        "G": 1e9,
        "T": 1e12,
        "P": 1e15,
        "E": 1e18,
    }
    for suffix, factor in suffixes.items():
        if text.endswith(suffix):
            return float(text[: -len(suffix)]) * factor
    return float(text)


def with_limit_ranges(
    stack: Planned, namespace: str, pod: dict[str, Any]
) -> tuple[dict[str, Any], list[str]]:
    """The pod as admitted: API defaulting (a request defaults to its limit), then each
    LimitRange's Container defaults (`default` limits, `defaultRequest` requests) for what a
    container leaves out, then request <= limit (kubernetes plugin/pkg/admission/limitranger;
    https://kubernetes.io/docs/concepts/policy/limit-range/, read 2026-11)."""
    pod = copy.deepcopy(pod)
    problems = []
    items = [
        item
        for obj in stack.manifests("LimitRange", namespace)
        for item in obj["spec"]["limits"]
        if item.get("type") == "Container"
    ]
    spec = pod["spec"]
    for container in [*spec["initContainers"], *spec["containers"]]:
        res = container.setdefault("resources", {})
        requests, limits = res.setdefault("requests", {}), res.setdefault("limits", {})
        for name, value in limits.items():
            requests.setdefault(name, value)
        for item in items:
            for name, value in (item.get("default") or {}).items():
                limits.setdefault(name, value)
            for name, value in (item.get("defaultRequest") or item.get("default") or {}).items():
                requests.setdefault(name, value)
        for name, value in limits.items():
            if name in requests and quantity(requests[name]) > quantity(value):
                problems.append(
                    f"{container['name']}: {name} request {requests[name]} above its limit {value}"
                )
    return pod, problems


def pod_usage(pod: dict[str, Any]) -> dict[str, float]:
    """The pod's requests and limits as a quota counts them: the larger of the sum over its
    containers and each init container (kubernetes pkg/api/v1/resource PodRequests)."""
    usage: dict[str, float] = {}
    spec = pod["spec"]
    for part in ("requests", "limits"):
        names = {
            n for c in [*spec["containers"], *spec["initContainers"]] for n in c["resources"].get(part, {})
        }
        for name in names:
            total = sum(quantity(c["resources"].get(part, {}).get(name, 0)) for c in spec["containers"])
            init = max(quantity(c["resources"].get(part, {}).get(name, 0)) for c in spec["initContainers"])
            usage[f"{part}.{name}"] = max(total, init)
    return usage


# If a quota holds cpu or memory, every container must declare them (kubernetes pkg/quota/v1/
# evaluator/core/pods.go: validationSet, Constraints, podComputeUsageHelper).
VALIDATION_SET = {"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"}


def declared(container: dict[str, Any]) -> set[str]:
    res = container.get("resources") or {}
    found = set()
    for name in ("cpu", "memory"):
        if name in (res.get("requests") or {}):
            found |= {name, f"requests.{name}"}
        if name in (res.get("limits") or {}):
            found.add(f"limits.{name}")
    return found


def quota_problems(stack: Planned, placement: Placement, pod: dict[str, Any]) -> tuple[list[str], list[str]]:
    names, problems = [], []
    usage = pod_usage(pod)
    spec = pod["spec"]
    for quota in stack.manifests("ResourceQuota", placement.namespace):
        hard = quota["spec"]["hard"]
        names.append(quota["metadata"]["name"])
        required = set(hard) & VALIDATION_SET
        for container in [*spec["initContainers"], *spec["containers"]]:
            missing = required - declared(container)
            if missing:
                problems.append(
                    f"quota {quota['metadata']['name']} refuses the pod: {container['name']} declares no "
                    f"{', '.join(sorted(missing))}"
                )
        for key, value in hard.items():
            used = usage.get(key if "." in key else f"requests.{key}", 0) * placement.pods
            if used > quantity(value):
                problems.append(f"quota {quota['metadata']['name']}: {key} {used:g} > {value}")
    return names, problems


def rbac_allows(stack: Planned, namespace: str, verb: str, group: str, resource: str) -> bool:
    """Whether the master's service account may `verb` `resource` in `namespace`: Roles bound
    there, ClusterRoles bound there or cluster-wide."""
    deployment, template, _ = stack_plans.master_workload(stack)
    account = (template["spec"].get("serviceAccountName"), deployment["metadata"]["namespace"])

    def binds(binding: dict[str, Any]) -> bool:
        return any(
            s.get("kind") == "ServiceAccount" and (s.get("name"), s.get("namespace")) == account
            for s in binding.get("subjects") or []
        )

    rules = []
    for binding in stack.manifests("RoleBinding", namespace):
        if binds(binding):
            ref = binding["roleRef"]
            kind_ns = namespace if ref["kind"] == "Role" else None
            rules += [
                r
                for role in stack.manifests(ref["kind"], kind_ns)
                if role["metadata"]["name"] == ref["name"]
                for r in role.get("rules") or []
            ]
    for binding in stack.manifests("ClusterRoleBinding"):
        if binds(binding):
            ref = binding["roleRef"]
            rules += [
                r
                for role in stack.manifests("ClusterRole")
                if role["metadata"]["name"] == ref["name"]
                for r in role.get("rules") or []
            ]
    return any(
        (group in rule.get("apiGroups", []) or "*" in rule.get("apiGroups", []))
        and (resource in rule.get("resources", []) or "*" in rule.get("resources", []))
        and (verb in rule.get("verbs", []) or "*" in rule.get("verbs", []))
        and not rule.get("resourceNames")
        for rule in rules
    )


def rbac_problems(stack: Planned, placement: Placement) -> list[str]:
    """What the master does in a task's namespace: creates the task's ConfigMap and its Job
    (0.34+: kubernetesrm/request_workers.go:81-91) or Pod (before: request_workers.go:63-73 at
    0.33.0), and follows its pods (jobs.go / pods.go informers: list, watch)."""
    wanted = [("create", "", "configmaps"), ("list", "", "pods"), ("watch", "", "pods")]
    if placement.kind == "Job":
        wanted += [("create", "batch", "jobs"), ("list", "batch", "jobs"), ("watch", "batch", "jobs")]
    else:
        wanted.append(("create", "", "pods"))
    return [
        f"the master may not {verb} {resource} in {placement.namespace}"
        for verb, group, resource in wanted
        if not rbac_allows(stack, placement.namespace, verb, group, resource)
    ]


def namespace_labels(stack: Planned, namespace: str) -> dict[str, str] | None:
    found = [n for n in stack.manifests("Namespace") if n["metadata"]["name"] == namespace]
    if not found:
        return None
    return {**(found[0]["metadata"].get("labels") or {}), kueue.NAMESPACE_NAME_LABEL: namespace}


def pod_security_problems(labels: dict[str, str], pod: dict[str, Any]) -> list[str]:
    """Pod Security admission of the namespace. Determined's task containers run as the agent
    user (root unless configured) without the restricted level's settings (spec.go
    configureSecurityContext / getDetContainerSecurityContext), so `restricted` refuses them."""
    level = labels.get(pod_security.LABEL_PREFIX + "enforce", "privileged")
    if level == "restricted":
        return [
            "Pod Security restricted refuses Determined's task pods (root, no seccomp or dropped capabilities)"
        ]
    if level == "baseline":
        return [f"Pod Security baseline: {p}" for p in pod_security.baseline_problems(pod)]
    return []


def queue_problems(stack: Planned, placement: Placement, pod: dict[str, Any]) -> tuple[str | None, list[str]]:
    """Kueue (batch/job integration, Jobs only): a Job labelled with a queue waits, suspended,
    until the LocalQueue of that name in its namespace points at a ClusterQueue that selects the
    namespace, covers every resource its pods request and holds them all. Bare pods (before
    0.34) are not managed (the pod integration is off: components/addons/kueue.py FRAMEWORKS)."""
    name = placement.labels.get(kueue.QUEUE_LABEL)
    if name is None or placement.kind != "Job" or not stack.manifests("ClusterQueue"):
        return None, []
    locals_ = [q for q in stack.manifests("LocalQueue", placement.namespace) if q["metadata"]["name"] == name]
    if not locals_:
        return name, [f"no LocalQueue {name} in {placement.namespace}: the Job stays suspended"]
    target = locals_[0]["spec"]["clusterQueue"]
    queues = [q for q in stack.manifests("ClusterQueue") if q["metadata"]["name"] == target]
    if not queues:
        return name, [f"LocalQueue {name} points at a missing ClusterQueue {target}"]
    spec = queues[0]["spec"]
    labels = namespace_labels(stack, placement.namespace) or {kueue.NAMESPACE_NAME_LABEL: placement.namespace}
    if not fencing.selects(spec.get("namespaceSelector") or {"matchLabels": {"nothing": "x"}}, labels):
        return name, [f"ClusterQueue {target} does not select namespace {placement.namespace}"]
    covered = {r for g in spec["resourceGroups"] for r in g["coveredResources"]}
    nominal = {
        r["name"]: quantity(r["nominalQuota"])
        for g in spec["resourceGroups"]
        for f in g["flavors"]
        for r in f["resources"]
    }
    problems = []
    for key, amount in pod_usage(pod).items():
        part, resource = key.split(".", 1)
        if part != "requests" or amount == 0:
            continue
        if resource not in covered:
            problems.append(f"ClusterQueue {target} does not cover {resource}: the Job is never admitted")
        elif amount * placement.pods > nominal[resource]:
            problems.append(
                f"ClusterQueue {target}: {resource} {amount * placement.pods:g} > {nominal[resource]:g}"
            )
    return name, problems


def network_problems(cluster: fencing.Cluster, placement: Placement) -> list[str]:
    """The task reaches the master's port and cluster DNS (it finds the master by its Service
    name: resource_manager.master_service_name), and the master reaches the task (its proxy to
    notebooks, shells, TensorBoards)."""
    if not cluster.policies:
        return []
    task = fencing.Pod(placement.namespace, placement.labels, name="task")
    problems = []
    if not fencing.allowed(cluster.policies, task, cluster.master, cluster.master_port):
        problems.append(f"the task cannot reach the master on {cluster.master_port}")
    if not fencing.allowed(cluster.policies, task, cluster.dns, fencing.DNS[1], fencing.DNS[0]):
        problems.append("the task cannot resolve names")
    if not fencing.allowed(cluster.policies, cluster.master, task, fencing.TASK_PORT):
        problems.append("the master cannot reach the task")
    return problems


def judge(stack: Planned, placement: Placement, cluster: fencing.Cluster | None = None) -> Verdict:
    verdict = Verdict(placement)
    labels = namespace_labels(stack, placement.namespace)
    if labels is None:
        verdict.problems.append(f"namespace {placement.namespace} is not created by the stack")
        labels = {}
    verdict.problems += rbac_problems(stack, placement)
    verdict.problems += pod_security_problems(labels, placement.pod)
    pod, problems = with_limit_ranges(stack, placement.namespace, placement.pod)
    verdict.problems += problems
    verdict.quotas, problems = quota_problems(stack, placement, pod)
    verdict.problems += problems
    verdict.queue, problems = queue_problems(stack, placement, pod)
    verdict.problems += problems
    verdict.problems += network_problems(cluster or fencing.cluster_of(stack), placement)
    return verdict


def verdicts(stack: Planned) -> list[Verdict]:
    master = master_of(stack)
    cluster = fencing.cluster_of(stack)
    return [judge(stack, p, cluster) for task in tasks(master) for p in place(master, task)]


def with_manifests(stack: Planned, manifests: list[dict[str, Any]]) -> Planned:
    """`stack` with other manifests (to show the model failing when a rule is broken)."""
    return dataclasses.replace(stack, result=dataclasses.replace(stack.result, manifests=manifests))


# --- the table --------------------------------------------------------------------------------


def table(stack: Planned) -> str:
    rows = []
    for v in verdicts(stack):
        t, p = v.placement.task, v.placement
        kind = DELETED_EXPERIMENT_GC if p.why.startswith(DELETED_EXPERIMENT_GC) else t.kind
        rows.append(
            (t.workspace, t.pool, kind, p.namespace, v.queue or "-", ", ".join(v.quotas) or "-", v.result)
        )
    header = ("workspace", "pool", "task kind", "namespace", "queue", "quota", "result")
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(row) + " |" for row in rows),
    ]
    return "\n".join(lines)


def main(names: list[str]) -> None:
    for name in names:
        key = name if name in stack_plans.STACK_FILES else f"fixture:{name}"
        stack = stack_plans.plan(key)
        print(f"### {name} (Determined {stack.version})\n")
        print(table(stack))
        print()


if __name__ == "__main__":
    main(sys.argv[1:] or ["kueue-gke", "workspaces-0.35.0"])
