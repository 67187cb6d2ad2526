"""The two rules over the task pods the Determined component renders (components.config.
task_pods): the config cannot import the component, so they run with the task pods the
composition root hands over (stack_args.load_stack) and are skipped without them."""

from __future__ import annotations

import pytest
from conftest import raw_config

import stack_args
from components.config import ConfigError, load_config
from components.determined import resource_pools

POOLS = [
    {"name": "a100", "nodePool": "a100", "namespace": "det-a100", "quota": {"limits": {"memory": "512Gi"}}},
    {"name": "aux", "nodePool": "system", "namespace": "det-aux"},
]
GC_MOUNT = {
    "checkpointGcPodSpec": {
        "containers": [{"name": "gc", "volumeMounts": [{"name": "x", "mountPath": "/x"}]}]
    }
}


def problems(raw) -> list[str]:
    with pytest.raises(ConfigError) as info:
        stack_args.load_stack(raw)
    return [str(p) for p in info.value.problems]


def test_a_quota_on_limits_is_checked_against_the_rendered_task_pods():
    raw = raw_config(resourcePools=POOLS)
    load_config(raw)  # the config alone cannot tell
    found = problems(raw)
    assert found and all(
        p.startswith("determined:resourcePools[0].quota.limits.memory: tasks with ") for p in found
    )


def test_a_checkpoint_gc_mount_is_checked_against_the_volumes_the_project_gives():
    raw = raw_config(taskContainerDefaults=GC_MOUNT)
    load_config(raw)
    assert problems(raw) == [
        "determined:taskContainerDefaults.checkpointGcPodSpec.containers[0].volumeMounts[0].name: no volume "
        "named 'x' in this pod spec, the other pod specs or the ones Determined's master adds (Kubernetes "
        "refuses the pod: volume not found)"
    ]


def test_the_task_pods_are_the_components_for_the_args_the_root_maps():
    cfg = stack_args.load_stack(raw_config())
    pods = stack_args.DeterminedTaskPods()
    rp = cfg.resource_pools[0]
    args = stack_args.determined_args(cfg)
    assert pods.pool_pod_specs(cfg, rp) == resource_pools.pool_pod_specs(args, rp)
    assert pods.pool_namespaces(cfg, rp) == resource_pools.pool_namespaces(args, rp)
    assert pods.project_layer(cfg) == resource_pools.project_layer(args)
