"""Resource pools: pinning to node pools, pod spec layering, quotas and slots per pod."""

from __future__ import annotations

from conftest import BASE, make_config

from components import constants
from components.determined import resource_pools

GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}


def pool(cfg, name):
    return next(rp for rp in cfg.resource_pools if rp.name == name)


def test_gpu_pool_tasks_tolerate_the_gpu_taint_and_select_their_nodes():
    cfg = make_config()
    specs = resource_pools.pool_pod_specs(cfg, pool(cfg, "a100"))
    for key in ("cpu_pod_spec", "gpu_pod_spec"):
        spec = specs[key]["spec"]
        assert spec["nodeSelector"] == {"pool": "a100"}
        assert spec["tolerations"] == [GPU_TOLERATION]


def test_cpu_pool_tasks_select_their_nodes_and_tolerate_nothing():
    cfg = make_config()
    spec = resource_pools.pool_pod_specs(cfg, pool(cfg, "aux"))["cpu_pod_spec"]["spec"]
    assert spec["nodeSelector"] == {"pool": "system"}
    assert "tolerations" not in spec


def test_extra_taints_are_tolerated_too():
    node_pools = [
        BASE["nodePools"][0],
        {**BASE["nodePools"][1], "taints": [{"key": "team", "value": "research", "effect": "NoExecute"}]},
    ]
    cfg = make_config(nodePools=node_pools)
    spec = resource_pools.pool_pod_specs(cfg, pool(cfg, "a100"))["gpu_pod_spec"]["spec"]
    assert spec["tolerations"] == [
        GPU_TOLERATION,
        {"key": "team", "operator": "Equal", "value": "research", "effect": "NoExecute"},
    ]


def test_zero_gpu_tasks_on_gpu_nodes_do_not_see_the_gpus():
    cfg = make_config()
    cpu_spec = resource_pools.pool_pod_specs(cfg, pool(cfg, "a100"))["cpu_pod_spec"]["spec"]
    container = next(c for c in cpu_spec["containers"] if c["name"] == constants.TASK_CONTAINER)
    assert {"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"} in container["env"]
    # GPU tasks get their GPUs from the device plugin; CPU pools have none to hide.
    gpu_spec = resource_pools.pool_pod_specs(cfg, pool(cfg, "a100"))["gpu_pod_spec"]["spec"]
    aux_spec = resource_pools.pool_pod_specs(cfg, pool(cfg, "aux"))["cpu_pod_spec"]["spec"]
    for spec in (gpu_spec, aux_spec):
        assert spec["containers"] == [{"name": constants.TASK_CONTAINER}]


def test_pool_pod_spec_is_merged_over_the_defaults_and_pinning_wins():
    tcd = {
        "gpuPodSpec": {
            "spec": {
                "volumes": [{"name": "data", "hostPath": {"path": "/data"}}],
                "containers": [
                    {"name": "determined-container", "volumeMounts": [{"name": "data", "mountPath": "/data"}]}
                ],
            }
        }
    }
    pools = [
        {
            **BASE["resourcePools"][0],
            "podSpec": {
                # Reusing the name replaces the source (retainKeys), no `hostPath: null` needed.
                "volumes": [{"name": "data", "nfs": {"server": "nfs", "path": "/x"}}],
                "nodeSelector": {"pool": "elsewhere", "zone": "a"},
            },
        },
        BASE["resourcePools"][1],
    ]
    cfg = make_config(taskContainerDefaults=tcd, resourcePools=pools)
    spec = resource_pools.pool_pod_specs(cfg, pool(cfg, "a100"))["gpu_pod_spec"]["spec"]
    assert spec["volumes"] == [{"name": "data", "nfs": {"server": "nfs", "path": "/x"}}]
    assert spec["containers"][0]["volumeMounts"] == [{"name": "data", "mountPath": "/data"}]
    # The pool may add selectors but cannot move its tasks off its node pool.
    assert spec["nodeSelector"] == {"pool": "a100", "zone": "a"}


def test_pool_tolerations_are_kept_beside_the_pinning_ones():
    own = {"key": "spot", "operator": "Exists", "effect": "NoSchedule"}
    pools = [
        {**BASE["resourcePools"][0], "podSpec": {"tolerations": [own, GPU_TOLERATION]}},
        {**BASE["resourcePools"][1], "podSpec": {"tolerations": [own]}},
    ]
    cfg = make_config(resourcePools=pools)
    for key in ("cpu_pod_spec", "gpu_pod_spec"):
        spec = resource_pools.pool_pod_specs(cfg, pool(cfg, "a100"))[key]["spec"]
        # Strategic merge replaces tolerations (an atomic list); pinning only adds its own.
        assert spec["tolerations"] == [GPU_TOLERATION, own]
    aux = resource_pools.pool_pod_specs(cfg, pool(cfg, "aux"))["cpu_pod_spec"]["spec"]
    assert aux["tolerations"] == [own]


def test_a_pool_command_replaces_the_default_one():
    # command is an atomic list: the pool's replaces the default's; other fields stay.
    prep = {"name": "prep", "image": "busybox:1.36", "command": ["sh", "-c", "a"]}
    tcd = {"cpuPodSpec": {"initContainers": [prep]}}
    pools = [
        BASE["resourcePools"][0],
        {**BASE["resourcePools"][1], "podSpec": {"initContainers": [{"name": "prep", "command": ["b"]}]}},
    ]
    cfg = make_config(taskContainerDefaults=tcd, resourcePools=pools)
    spec = resource_pools.pool_pod_specs(cfg, pool(cfg, "aux"))["cpu_pod_spec"]["spec"]
    assert spec["initContainers"] == [{"name": "prep", "image": "busybox:1.36", "command": ["b"]}]


def test_master_pools_carry_namespaces_only_before_0_35():
    old = resource_pools.master_resource_pools(make_config(master={"version": "0.34.0"}))
    new = resource_pools.master_resource_pools(make_config(master={"version": "0.35.0"}))
    assert [p["kubernetes_namespace"] for p in old] == ["det-a100", "det-aux"]
    assert all("kubernetes_namespace" not in p for p in new)


def test_gpu_pools_get_their_own_slots_per_pod_where_supported():
    node_pools = [*BASE["nodePools"], {"name": "t4", "gpu": {"count": 1}, "nodeSelector": {"pool": "t4"}}]
    pools = [*BASE["resourcePools"], {"name": "t4", "nodePool": "t4"}]
    cfg = make_config(nodePools=node_pools, resourcePools=pools, master={"version": "0.26.1"})
    by_name = {
        p["pool_name"]: p["task_container_defaults"] for p in resource_pools.master_resource_pools(cfg)
    }
    assert by_name["a100"]["kubernetes"] == {"max_slots_per_pod": 4}
    assert by_name["t4"]["kubernetes"] == {"max_slots_per_pod": 1}
    assert "kubernetes" not in by_name["aux"]  # the global value applies

    older = make_config(nodePools=node_pools, resourcePools=pools, master={"version": "0.26.0"})
    assert all(
        "kubernetes" not in p["task_container_defaults"] for p in resource_pools.master_resource_pools(older)
    )


def test_a_namespace_shared_by_two_pools_is_created_once():
    pools = [BASE["resourcePools"][0], {"name": "aux", "nodePool": "system", "namespace": "det-a100"}]
    cfg = make_config(resourcePools=pools)
    assert [ns["metadata"]["name"] for ns in resource_pools.namespaces(cfg)] == [
        "determined-tasks",
        "det-a100",
    ]


def test_quota_caps_requests_in_the_pool_namespace():
    pools = [
        {**BASE["resourcePools"][0], "quota": {"gpu": 16, "cpu": 64, "memory": "256Gi"}},
        BASE["resourcePools"][1],
    ]
    cfg = make_config(resourcePools=pools)
    quota = resource_pools.quota(pool(cfg, "a100"))
    assert quota["metadata"]["namespace"] == "det-a100"
    assert quota["spec"]["hard"] == {
        "requests.nvidia.com/gpu": "16",
        "requests.cpu": "64",
        "requests.memory": "256Gi",
    }
    assert resource_pools.quota(pool(cfg, "aux")) is None
