"""Pool quotas that Determined's pods satisfy: a LimitRange beside every ResourceQuota on cpu or
memory, and pool pod specs that declare the limits a quota on limits needs.

A quota on cpu or memory refuses any pod with a container that does not declare them, init
containers included (kubernetes pkg/quota/v1/evaluator/core/pods.go, Constraints). Determined's
init container declares nothing (master/internal/rm/kubernetesrm/spec.go:825-843 at v0.38.1,
:802 at 0.34.0, :653 at 0.33.0) and its task container only its slots (spec.go:57-105 at v0.38.1).
The placement model (tests/invariants/test_task_placement.py) checks the outcome on every stack.
"""

from __future__ import annotations

import pytest
from conftest import make_config

from components.config import ConfigError
from components.determined import resource_pools
from components.kube import manifests


def quota_object(namespace, hard, name="q"):
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"hard": hard},
    }


def test_a_quota_on_requests_gets_default_requests_for_what_it_constrains():
    (obj,) = resource_pools.limit_ranges(
        [
            quota_object(
                "det-a100", {"requests.cpu": "64", "requests.memory": "256Gi", "requests.nvidia.com/gpu": "8"}
            )
        ]
    )
    assert obj["kind"] == "LimitRange" and obj["apiVersion"] == "v1"
    assert obj["metadata"]["namespace"] == "det-a100"
    assert obj["metadata"]["name"] == "determined-container-defaults"
    assert obj["spec"] == {
        "limits": [{"type": "Container", "defaultRequest": {"cpu": "100m", "memory": "128Mi"}}]
    }
    (only_cpu,) = resource_pools.limit_ranges([quota_object("ns", {"cpu": "4"})])
    assert only_cpu["spec"]["limits"][0] == {"type": "Container", "defaultRequest": {"cpu": "100m"}}


def test_a_quota_on_gpus_alone_needs_no_defaults():
    """Kubernetes requires declared values for cpu and memory only (extended resources such
    as nvidia.com/gpu are never required per container)."""
    assert resource_pools.limit_ranges([quota_object("ns", {"requests.nvidia.com/gpu": "16"})]) == []
    cfg = make_config()  # BASE: no quotas
    assert (
        resource_pools.limit_ranges([q for rp in cfg.resource_pools if (q := resource_pools.quota(rp))]) == []
    )


def test_a_quota_on_limits_gets_default_limits_and_requests():
    (obj,) = resource_pools.limit_ranges([quota_object("ns", {"limits.memory": "1Ti", "requests.cpu": "8"})])
    assert obj["spec"]["limits"] == [
        {
            "type": "Container",
            "default": {"memory": "128Mi"},
            "defaultRequest": {"cpu": "100m", "memory": "128Mi"},
        }
    ]


def test_one_limit_range_per_namespace_for_all_its_quotas():
    found = resource_pools.limit_ranges(
        [
            quota_object("a", {"requests.cpu": "1"}, "one"),
            quota_object("a", {"requests.memory": "1Gi"}, "two"),
            quota_object("b", {"requests.memory": "1Gi"}),
        ]
    )
    assert [(o["metadata"]["namespace"], o["spec"]["limits"][0]["defaultRequest"]) for o in found] == [
        ("a", {"cpu": "100m", "memory": "128Mi"}),
        ("b", {"memory": "128Mi"}),
    ]
    assert all(o["metadata"]["labels"] == manifests.labels("resource-pool") for o in found)


def test_the_defaults_are_small_quantities():
    # Sized for the init container (it untars at most a ConfigMap's 1 MiB); a floor, not a cap.
    assert resource_pools.CONTAINER_DEFAULTS == {"cpu": "100m", "memory": "128Mi"}


# --- quota.limits: pod specs declare the limits the LimitRange would otherwise cap -----------

POOLS = [
    {"name": "a100", "nodePool": "a100", "namespace": "det-a100"},
    {"name": "aux", "nodePool": "system", "namespace": "det-aux"},
]
LIMITED = {"limits": {"memory": "512Gi"}}
WITH_LIMIT = {
    "spec": {"containers": [{"name": "determined-container", "resources": {"limits": {"memory": "64Gi"}}}]}
}


def problems(**overrides):
    with pytest.raises(ConfigError) as info:
        make_config(**overrides)
    return [str(p) for p in info.value.problems]


def test_a_quota_on_limits_needs_every_pod_spec_landing_there_to_declare_them():
    pools = [{**POOLS[0], "quota": LIMITED}, POOLS[1]]
    found = problems(resourcePools=pools)
    # 0.35+: the a100 namespace holds the tasks of both pools (aux is the default aux pool).
    assert found == [
        f"determined:resourcePools[0].quota.limits.memory: tasks with resourcePools[{j}].podSpec ({key}) run in "
        "namespace 'det-a100', where this quota limits memory, and its container(s) determined-container declare "
        "no memory limit: Determined sets none, and the namespace's default (sized for Determined's init "
        "container) would cap them; give them resources.limits.memory there"
        for j in (0, 1)
        for key in ("cpu_pod_spec", "gpu_pod_spec")
    ]
    # Declared in every pod spec that lands there: accepted.
    make_config(
        resourcePools=[
            {**POOLS[0], "quota": LIMITED, "podSpec": WITH_LIMIT},
            {**POOLS[1], "podSpec": WITH_LIMIT},
        ]
    )
    make_config(
        resourcePools=[{**POOLS[0], "quota": LIMITED}, POOLS[1]],
        taskContainerDefaults={"cpuPodSpec": WITH_LIMIT, "gpuPodSpec": WITH_LIMIT},
    )


def test_before_0_35_only_the_pools_own_specs_and_checkpoint_gc_land_in_its_namespace():
    pools = [{**POOLS[0], "quota": LIMITED}, POOLS[1]]
    make_config(
        master={"version": "0.34.0"},
        resourcePools=[{**POOLS[0], "quota": LIMITED, "podSpec": WITH_LIMIT}, POOLS[1]],
    )
    found = problems(master={"version": "0.34.0"}, resourcePools=pools)
    assert {p.split(" run in")[0] for p in found} == {
        "determined:resourcePools[0].quota.limits.memory: tasks with resourcePools[0].podSpec (cpu_pod_spec)",
        "determined:resourcePools[0].quota.limits.memory: tasks with resourcePools[0].podSpec (gpu_pod_spec)",
    }
    # The aux pool's namespace holds checkpoint GC (the default aux pool's): its spec too.
    pools = [POOLS[0], {**POOLS[1], "quota": LIMITED}]
    found = problems(
        master={"version": "0.34.0"},
        resourcePools=pools,
        taskContainerDefaults={
            "cpuPodSpec": WITH_LIMIT,
            "gpuPodSpec": WITH_LIMIT,
            "checkpointGcPodSpec": {"spec": {"priorityClassName": "x"}},
        },
    )
    assert [p.split(" run in")[0] for p in found] == [
        "determined:resourcePools[1].quota.limits.memory: tasks with taskContainerDefaults.checkpointGcPodSpec"
    ]


def test_cpu_slots_declare_their_own_cpu_limit():
    pools = [
        {"name": "cpu", "nodePool": "system", "namespace": "det-cpu", "quota": {"limits": {"cpu": "64"}}}
    ]
    make_config(resourcePools=pools, slots={"type": "cpu", "cpuPerSlot": 2, "maxSlotsPerPod": 4})
