"""Every task the master can start, on every stack and fixture, starts: the placement model
(placement.py, written from Determined's source per version) puts each (workspace, pool, task
kind) where the master does and judges it against the stack's own objects. Then the model's
rules, each with the source it comes from, and the model failing when the stack breaks one.
"""

from __future__ import annotations

import copy
import functools

import placement
import pytest
import stack_plans
import yaml
from conftest import raw_config
from planning import plan_for

from components import versions
from components.addons import kueue
from components.determined import resource_pools

WITH_MEMORY_LIMIT = {
    "spec": {"containers": [{"name": "determined-container", "resources": {"limits": {"memory": "64Gi"}}}]}
}
QUEUED_POOLS = [
    {
        "name": "a100",
        "nodePool": "a100",
        "namespace": "det-a100",
        "quota": {"gpu": 8, "cpu": "96", "memory": "1Ti"},
    },
    {"name": "aux", "nodePool": "system", "namespace": "det-aux"},
    {"name": "vision", "nodePool": "a100", "namespace": "det-vision", "quota": {"gpu": 4}},
]
# Besides every stack and fixture: what none of them shows.
VARIANTS = {
    # Kueue on the first master that runs Jobs (pools still map to namespaces).
    "kueue-0.34.0": raw_config(scheduler="kueue", master={"version": "0.34.0"}, resourcePools=QUEUED_POOLS),
    # A quota on limits, the pod specs declaring them (0.35+: every pool lands in det-a100).
    "quota-limits": raw_config(
        resourcePools=[
            {**QUEUED_POOLS[0], "quota": {"gpu": 4, "memory": "256Gi", "limits": {"memory": "512Gi"}}},
            QUEUED_POOLS[1],
        ],
        taskContainerDefaults={"cpuPodSpec": WITH_MEMORY_LIMIT, "gpuPodSpec": WITH_MEMORY_LIMIT},
    ),
}


@functools.cache
def planned(name):
    if name in VARIANTS:
        result = plan_for(VARIANTS[name])
        return stack_plans.Planned(name, VARIANTS[name], result, yaml.safe_load(result.master_yaml))
    return stack_plans.plan(name)


@pytest.fixture(scope="module", params=[*stack_plans.NAMES, *VARIANTS])
def stack(request):
    return planned(request.param)


def test_every_task_of_every_workspace_pool_and_kind_starts(stack):
    verdicts = placement.verdicts(stack)
    master = placement.master_of(stack)
    # Every workspace, every pool it may use, every kind.
    assert {(v.placement.task.workspace, v.placement.task.pool, v.placement.task.kind) for v in verdicts} == {
        (w, p, k) for w in master.workspaces() for p in master.available_pools(w) for k in placement.KINDS
    }
    failed = [f"{v.placement.task} in {v.placement.namespace}: {v.result}" for v in verdicts if v.problems]
    assert failed == [], stack.name


def test_namespaces_with_a_cpu_or_memory_quota_have_container_defaults(stack):
    for quota in stack.manifests("ResourceQuota"):
        if quota["metadata"]["name"].startswith("gpu-operator"):
            continue  # the GPU operator's pod-count quota (its own pods declare their resources)
        if set(quota["spec"]["hard"]) & placement.VALIDATION_SET:
            namespace = quota["metadata"]["namespace"]
            (limits,) = stack.manifests("LimitRange", namespace)
            assert limits["metadata"]["name"] == resource_pools.LIMIT_RANGE_NAME


def test_queued_stacks_have_a_local_queue_wherever_a_task_lands(stack):
    if not stack.manifests("ClusterQueue"):
        pytest.skip("no Kueue")
    for verdict in placement.verdicts(stack):
        name = verdict.placement.labels.get(kueue.QUEUE_LABEL)
        if name is not None:  # (checkpoint GC with a GC pod spec of its own is not queued)
            assert stack.one("LocalQueue", name, verdict.placement.namespace)


# --- the rules, from the master's source --------------------------------------------------------


def one_verdict(stack, workspace, pool, kind, namespace=None):
    found = [
        v
        for v in placement.verdicts(stack)
        if (v.placement.task.workspace, v.placement.task.pool, v.placement.task.kind)
        == (workspace, pool, kind)
        and (namespace is None or v.placement.namespace == namespace)
    ]
    assert found, (workspace, pool, kind, namespace)
    return found[0]


def test_from_0_35_a_task_runs_in_its_workspaces_namespace_whatever_its_pool():
    """kubernetesrm/resource_pool.go:613-616 at 0.35.0 and v0.38.1: the workspace's binding,
    else default_namespace. kueue-gke: workspace l4 is bound to det-l4, the default compute pool
    a100 serves it too."""
    stack = stack_plans.plan("fixture:kueue-gke")
    assert one_verdict(stack, "l4", "a100", "experiment").placement.namespace == "det-l4"
    assert one_verdict(stack, "a100", "aux", "TensorBoard").placement.namespace == "det-a100"
    default = stack.master["resource_manager"]["default_namespace"]
    assert one_verdict(stack, placement.UNCATEGORIZED, "a100", "notebook").placement.namespace == default


def test_from_0_35_a_bound_pool_serves_only_its_workspaces_and_default_pools_serve_all():
    """internal/db/postgres_rp_workspace_bindings.go:212 (ReadRPsAvailableToWorkspace: bound to
    the workspace, or bound to none) and internal/api_resourcepool.go:214-232 (the default
    pools cannot be bound), v0.38.1."""
    master = placement.master_of(stack_plans.plan("fixture:kueue-gke"))
    assert master.available_pools("l4") == ["a100", "l4", "aux"]
    assert master.available_pools("a100") == ["a100", "aux"]
    assert master.available_pools(placement.UNCATEGORIZED) == ["a100", "aux"]


def test_before_0_35_a_task_runs_in_its_pools_namespace_and_checkpoint_gc_in_the_aux_pools():
    """kubernetesrm/resource_pool.go:550 at 0.34.0 (kubernetes_namespace, defaulted to the
    resource manager's namespace: kubernetes_resource_manager.go:91-92); checkpoint GC on the
    default aux pool (internal/checkpoint_gc.go:102 at 0.34.0, :56 at 0.26.0)."""
    stack = stack_plans.plan("fixture:cpu-slots-0.28.1")
    assert (
        one_verdict(stack, placement.UNCATEGORIZED, "highmem", "experiment").placement.namespace
        == "det-highmem"
    )
    gc = one_verdict(stack, placement.UNCATEGORIZED, "highmem", "checkpoint GC")
    assert gc.placement.namespace == "det-general"  # the default aux pool's
    assert gc.placement.spec_from == "highmem.gpu_pod_spec"  # the experiment's (before 0.34)


def test_jobs_from_0_34_bare_pods_before():
    """0.34.0 creates a batch/v1 Job per task (kubernetesrm/request_workers.go:91), 0.33.0 a
    Pod (request_workers.go:73)."""
    for name, kind in (("fixture:checkpoint-gc-0.34.0", "Job"), ("fixture:tcd-0.33.0", "Pod")):
        verdicts = placement.verdicts(stack_plans.plan(name))
        assert {v.placement.kind for v in verdicts} == {kind}, name


def test_checkpoint_gc_takes_the_default_aux_pools_checkpoint_gc_pod_spec_from_0_34():
    """pkg/tasks/task_gc.go:41-44 (0.34.0 to v0.38.1): the GC pod spec where set, else the
    experiment's."""
    stack = stack_plans.plan("fixture:checkpoint-gc-0.34.0")
    gc = one_verdict(stack, placement.UNCATEGORIZED, "gpu", "checkpoint GC")
    assert gc.placement.spec_from == "aux.checkpoint_gc_pod_spec"
    (container,) = [
        c for c in gc.placement.pod["spec"]["containers"] if c["name"] == placement.TASK_CONTAINER
    ]
    assert container["resources"]["limits"] == {"memory": "2Gi"}  # the GC spec's own, no slots
    stack = stack_plans.plan("fixture:kueue-gke")  # no checkpoint_gc_pod_spec: the experiment's
    gc = one_verdict(stack, "l4", "l4", "checkpoint GC")
    assert gc.placement.spec_from == "l4.gpu_pod_spec"
    assert gc.placement.labels[kueue.QUEUE_LABEL] == "determined-l4"


def test_the_init_container_declares_nothing_and_the_task_container_only_its_slots():
    """kubernetesrm/spec.go:825-843 (configureInitContainer: no resources) and :57-105
    (configureResourcesRequirements), v0.38.1; the pod spec's own resources fill in the rest
    (:629-640)."""
    stack = stack_plans.plan("fixture:kueue-gke")
    pod = one_verdict(stack, "a100", "a100", "experiment").placement.pod
    (init,) = pod["spec"]["initContainers"]
    assert init == {"name": "determined-init-container"}
    (task,) = pod["spec"]["containers"]
    assert task["resources"] == {"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}}
    pod = one_verdict(stack, "a100", "aux", "TensorBoard").placement.pod
    assert pod["spec"]["containers"][-1]["resources"] == {"requests": {}, "limits": {}}
    stack = stack_plans.plan("fixture:cpu-slots-0.28.1")  # cpuPerSlot 3.5
    pod = one_verdict(stack, placement.UNCATEGORIZED, "highmem", "command").placement.pod
    assert pod["spec"]["containers"][-1]["resources"] == {
        "requests": {"cpu": "3500m"},
        "limits": {"cpu": "3500m"},
    }


def test_the_job_carries_the_pools_pod_spec_labels_and_determineds():
    """spec.go configureJobSpec (:552-612 at v0.38.1): the pod spec's labels, then Determined's
    own; the Job's labels are the pod template's."""
    stack = stack_plans.plan("fixture:kueue-gke")
    labels = one_verdict(stack, "l4", "l4", "shell").placement.labels
    assert labels[kueue.QUEUE_LABEL] == "determined-l4"
    assert labels["determined.ai/task_type"] == "SHELL"
    assert "determined" in labels


def test_queued_pools_have_local_queues_in_every_namespace_their_jobs_land_in():
    """Every namespace the model lands a queued Job in has its LocalQueue; on 0.35+ every
    queued pool has one in every task namespace (an experiment moved to another workspace keeps
    its pool's queue label: pkg/model/task_container_defaults.go:140-155, internal/experiment/
    bulk_action.go:701 at v0.38.1), on 0.34 exactly where the model lands them."""
    for name in [*stack_plans.NAMES, *VARIANTS]:
        stack = planned(name)
        if (
            not stack.manifests("ClusterQueue")
            or placement.master_of(stack).version < versions.JOB_TASKS_SINCE
        ):
            continue
        landed = {
            (v.placement.labels[kueue.QUEUE_LABEL], v.placement.namespace)
            for v in placement.verdicts(stack)
            if kueue.QUEUE_LABEL in v.placement.labels
        }
        built = {(q["metadata"]["name"], q["metadata"]["namespace"]) for q in stack.manifests("LocalQueue")}
        if placement.master_of(stack).version < versions.WORKSPACE_NAMESPACES_SINCE:
            assert built == landed, name
        else:
            assert landed <= built, name
            # Every queue in every namespace any task lands in.
            everywhere = {ns for _, ns in landed}
            for queue in {q for q, _ in built}:
                assert {ns for q, ns in built if q == queue} == everywhere, (name, queue)


# --- the model fails when the stack breaks a rule -------------------------------------------------


def broken(stack, drop=lambda m: False, change=None):
    manifests = [copy.deepcopy(m) for m in stack.result.manifests if not drop(m)]
    if change:
        for m in manifests:
            change(m)
    return placement.with_manifests(stack, manifests)


def named(kind, name, namespace=None):
    def match(m):
        return (
            m["kind"] == kind
            and m["metadata"]["name"] == name
            and (namespace is None or m["metadata"].get("namespace") == namespace)
        )

    return match


def problems_of(stack):
    return {p for v in placement.verdicts(stack) for p in v.problems}


@pytest.fixture(scope="module")
def queued():
    return stack_plans.plan("fixture:kueue-gke")


def test_a_missing_local_queue_leaves_the_job_suspended(queued):
    default = queued.master["resource_manager"]["default_namespace"]
    found = problems_of(broken(queued, drop=named("LocalQueue", "determined-l4", default)))
    assert found == {f"no LocalQueue determined-l4 in {default}: the Job stays suspended"}


def test_a_cluster_queue_that_admits_only_the_pools_namespace_is_caught(queued):
    def only_own(m):
        if m["kind"] == "ClusterQueue" and m["metadata"]["name"] == "determined-aux":
            m["spec"]["namespaceSelector"] = {"matchLabels": {kueue.NAMESPACE_NAME_LABEL: "det-aux"}}

    found = problems_of(broken(queued, change=only_own))
    assert "ClusterQueue determined-aux does not select namespace det-a100" in found


def test_a_cpu_memory_quota_without_container_defaults_refuses_every_task_pod(queued):
    found = problems_of(broken(queued, drop=named("LimitRange", resource_pools.LIMIT_RANGE_NAME, "det-a100")))
    assert found == {
        f"quota determined-a100 refuses the pod: {container} declares no requests.cpu, requests.memory"
        for container in ("determined-init-container", "determined-container")
    }


def test_a_missing_role_is_caught(queued):
    found = problems_of(broken(queued, drop=named("RoleBinding", "determined-master", "det-l4")))
    assert "the master may not create jobs in det-l4" in found


def test_a_namespace_enforcing_restricted_is_caught(queued):
    def restrict(m):
        if m["kind"] == "Namespace" and m["metadata"]["name"] == "det-aux":
            m["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] = "restricted"

    found = problems_of(broken(queued, change=restrict))
    assert any(p.startswith("Pod Security restricted refuses") for p in found)


def test_a_task_fenced_off_from_the_master_is_caught(queued):
    stack = broken(queued, drop=named("NetworkPolicy", "determined-master"))
    found = problems_of(stack)
    assert "the task cannot reach the master on 8081" in found
    assert "the master cannot reach the task" in found


def test_a_quota_too_small_for_the_task_is_caught(queued):
    def shrink(m):
        if m["kind"] == "ClusterQueue" and m["metadata"]["name"] == "determined-l4":
            for r in m["spec"]["resourceGroups"][0]["flavors"][0]["resources"]:
                if r["name"] == "nvidia.com/gpu":
                    r["nominalQuota"] = "0"

    found = problems_of(broken(queued, change=shrink))
    assert "ClusterQueue determined-l4: nvidia.com/gpu 1 > 0" in found


def test_a_quota_on_limits_meets_pod_specs_that_declare_them():
    stack = planned("quota-limits")
    (limits,) = stack.manifests("LimitRange", "det-a100")
    assert limits["spec"]["limits"][0]["default"] == {"memory": "128Mi"}  # the init container's
    pod = one_verdict(stack, "a100", "aux", "notebook").placement.pod
    admitted, problems = placement.with_limit_ranges(stack, "det-a100", pod)
    assert problems == []
    init, task = admitted["spec"]["initContainers"][-1], admitted["spec"]["containers"][-1]
    assert init["resources"]["limits"] == {"memory": "128Mi"}
    assert task["resources"]["limits"] == {"memory": "64Gi"}


def test_on_0_34_kueue_queues_each_pool_in_its_namespace_and_gc_in_the_aux_pools():
    stack = planned("kueue-0.34.0")
    assert {(q["metadata"]["name"], q["metadata"]["namespace"]) for q in stack.manifests("LocalQueue")} == {
        ("determined-a100", "det-a100"),
        ("determined-a100", "det-aux"),
        ("determined-aux", "det-aux"),
        ("determined-vision", "det-vision"),
        ("determined-vision", "det-aux"),
    }
