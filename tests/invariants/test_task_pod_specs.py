"""The task pod specs in master.yaml of every stack (stacks/ and fixtures), against the
configuration the user wrote: each pool's tasks carry the pool's podSpec (CPU and GPU tasks
alike), stay on the pool's node pool (its node selector, a toleration for each taint), and
zero-GPU tasks on GPU nodes do not see the GPUs."""

from __future__ import annotations

import copy

import pytest
import stack_plans

from components.config import eks_instances, gke_machines

TASK_CONTAINER = "determined-container"
# docs/contract.md §1: every GPU node pool carries this taint.
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
POD_KEYS = {"apiVersion", "kind", "metadata", "spec"}
# The label the project puts on the nodes of every node pool it creates (gke, eks).
NODE_POOL_LABEL = "determined.ai/node-pool"


@pytest.fixture(scope="module", params=stack_plans.NAMES)
def stack(request):
    return stack_plans.plan(request.param)


def as_pod(spec):
    """A Pod or a bare PodSpec, as a Pod."""
    return spec if POD_KEYS & set(spec) else {"spec": spec}


def contains(actual, wanted):
    """Whether `actual` carries everything `wanted` says (maps key by key, list items each
    found in the list, null: the key is gone)."""
    if isinstance(wanted, dict):
        return isinstance(actual, dict) and all(
            (key not in actual) if value is None else (key in actual and contains(actual[key], value))
            for key, value in wanted.items()
        )
    if isinstance(wanted, list):
        return isinstance(actual, list) and all(any(contains(a, w) for a in actual) for w in wanted)
    return actual == wanted


def pools(stack):
    """(pool config, its node pool config, its master.yaml entry) of every resource pool."""
    node_pools = {p["name"]: p for p in stack.raw["nodePools"]}
    entries = {p["pool_name"]: p for p in stack.master["resource_pools"]}
    assert set(entries) == {rp["name"] for rp in stack.raw["resourcePools"]}
    return [(rp, node_pools[rp["nodePool"]], entries[rp["name"]]) for rp in stack.raw["resourcePools"]]


def task_specs(entry):
    tcd = entry["task_container_defaults"]
    return {key: tcd[key] for key in ("cpu_pod_spec", "gpu_pod_spec")}


def task_env(pod):
    for container in pod["spec"].get("containers", []):
        if container["name"] == TASK_CONTAINER:
            return {e["name"]: e.get("value") for e in container.get("env", [])}
    return {}


def test_every_pool_has_cpu_and_gpu_pod_specs(stack):
    for _, _, entry in pools(stack):
        for key, pod in task_specs(entry).items():
            assert pod.get("kind") == "Pod" and pod.get("apiVersion") == "v1", f"{entry['pool_name']}.{key}"
            assert TASK_CONTAINER in [c["name"] for c in pod["spec"]["containers"]]


def node_selector(node_pool):
    # docs/contract.md §1 (existing clusters): nodeSelector, else the pool's labels; created pools
    # (gke, eks) are selected by the label the project puts on their nodes.
    if "machineType" in node_pool:
        return {NODE_POOL_LABEL: node_pool["name"]}
    return node_pool.get("nodeSelector") or node_pool.get("labels") or {}


def created_node_pools(stack):
    """What each configured node pool's nodes can be, by its name: a list of (node labels,
    taints as Kubernetes writes them, machine types, GPUs per machine), one per cloud node
    pool, node group or Karpenter NodePool made for it (a pool a ComputeClass or Karpenter
    serves has several: every one must be able to run its tasks)."""
    effects = {
        "NO_SCHEDULE": "NoSchedule",
        "PREFER_NO_SCHEDULE": "PreferNoSchedule",
        "NO_EXECUTE": "NoExecute",
    }
    created = {}

    def add(labels, taints, machines, gpus):
        created.setdefault(labels.get(NODE_POOL_LABEL), []).append((labels, taints, machines, gpus))

    def ec2_gpus(machine):
        # eks_instances.gpu_count is for GPU instance types (1 for any other).
        return eks_instances.gpu_count(machine) if eks_instances.accelerator(machine) else 0

    for reg in stack.registrations("container/nodePool:NodePool"):  # GKE
        config = reg.inputs["nodeConfig"]
        taints = [{**t, "effect": effects[t["effect"]]} for t in config.get("taints", [])]
        machine = config["machineType"]
        attached = sum(int(a["count"]) for a in config.get("guestAccelerators", []))
        add(config.get("labels", {}), taints, [machine], [gke_machines.gpu_count(machine) or attached])
    for reg in stack.registrations("eks/nodeGroup:NodeGroup"):  # EKS
        taints = [{**t, "effect": effects[t["effect"]]} for t in reg.inputs.get("taints", [])]
        machines = list(reg.inputs.get("instanceTypes") or [])
        add(reg.inputs.get("labels", {}), taints, machines, [ec2_gpus(m) for m in machines])
    for pool in stack.manifests("NodePool"):  # Karpenter (karpenter.sh/v1)
        template = pool["spec"]["template"]
        requirements = {r["key"]: r for r in template["spec"]["requirements"]}
        machines = list(requirements["node.kubernetes.io/instance-type"]["values"])
        labels = template["metadata"]["labels"]
        add(
            labels,
            list(template["spec"].get("taints") or []),
            machines,
            [ec2_gpus(m) for m in machines],
        )
    return created


def without_pinned_keys(pod, node_pool):
    """A pod spec less the node selector keys the pinning sets (the pinning wins)."""
    pod = copy.deepcopy(as_pod(pod))
    spec = pod.get("spec") or {}
    if spec.get("nodeSelector"):
        spec["nodeSelector"] = {
            k: v for k, v in spec["nodeSelector"].items() if k not in node_selector(node_pool)
        }
    return pod


def test_a_pools_pod_spec_applies_to_its_cpu_and_gpu_tasks(stack):
    defaults = stack.raw.get("taskContainerDefaults") or {}
    for rp, node_pool, entry in pools(stack):
        specs = task_specs(entry)
        if rp.get("podSpec"):
            wanted = without_pinned_keys(rp["podSpec"], node_pool)
            for key, pod in specs.items():
                assert contains(pod, wanted), f"{stack.name}: pool {rp['name']}'s podSpec is not in its {key}"
        else:
            # Nothing to override the task container defaults: they apply as configured.
            for key, configured in (("cpu_pod_spec", "cpuPodSpec"), ("gpu_pod_spec", "gpuPodSpec")):
                if defaults.get(configured):
                    assert contains(specs[key], without_pinned_keys(defaults[configured], node_pool)), (
                        f"{stack.name}: taskContainerDefaults.{configured} is not in pool {rp['name']}'s {key}"
                    )


def test_tasks_select_the_nodes_of_their_node_pool(stack):
    for rp, node_pool, entry in pools(stack):
        selector = node_selector(node_pool)
        assert selector, f"{stack.name}: node pool {node_pool['name']} has nothing to select it by"
        for key, pod in task_specs(entry).items():
            assert selector.items() <= (pod["spec"].get("nodeSelector") or {}).items(), (
                f"{stack.name}: pool {rp['name']} {key} does not select node pool {node_pool['name']}"
            )


def test_tasks_land_on_the_nodes_the_stack_creates(stack):
    """On gke/eks: what task pods select is on every kind of node the stack creates for their
    pool (each fallback of a ComputeClass or Karpenter pool too), every taint those nodes
    carry is tolerated, and each machine type there carries the pool's GPUs (a task sized for
    the pool fits whichever capacity it gets)."""
    created = created_node_pools(stack)
    if stack.raw["cloud"] == "existing":
        assert not created
        return
    assert set(created) == {p["name"] for p in stack.raw["nodePools"]}
    for rp, node_pool, entry in pools(stack):
        gpus = (node_pool.get("gpu") or {}).get("count", 0)
        for labels, taints, machines, counts in created[node_pool["name"]]:
            assert machines and all(count == gpus for count in counts), (
                f"{stack.name}: {node_pool['name']}: {machines} carry {counts} GPUs, the pool {gpus}"
            )
            for key, pod in task_specs(entry).items():
                spec = pod["spec"]
                assert (spec.get("nodeSelector") or {}).items() <= labels.items(), (
                    f"{stack.name}: {rp['name']} {key} does not select {labels}"
                )
                for taint in taints:
                    assert any(
                        t["key"] == taint["key"]
                        and t["effect"] == taint["effect"]
                        and (t["operator"] == "Exists" or t.get("value") == taint.get("value"))
                        for t in spec.get("tolerations") or []
                    ), f"{stack.name}: {rp['name']} {key} does not tolerate {taint}"
                # Running tasks are not for the autoscalers to move (resource_pools.NO_DISRUPTION).
                annotations = (pod.get("metadata") or {}).get("annotations") or {}
                assert annotations.get("karpenter.sh/do-not-disrupt") == "true", f"{stack.name}: {rp['name']}"
                assert annotations.get("cluster-autoscaler.kubernetes.io/safe-to-evict") == "false"


def test_tasks_tolerate_every_taint_of_their_node_pool(stack):
    for rp, node_pool, entry in pools(stack):
        taints = ([GPU_TAINT] if node_pool.get("gpu") else []) + list(node_pool.get("taints") or [])
        for key, pod in task_specs(entry).items():
            tolerations = pod["spec"].get("tolerations") or []
            for taint in taints:
                if taint.get("value"):
                    wanted = {
                        "key": taint["key"],
                        "operator": "Equal",
                        "value": taint["value"],
                        "effect": taint["effect"],
                    }
                else:
                    # A taint without a value is tolerated by its key: Exists, no value.
                    wanted = {"key": taint["key"], "operator": "Exists", "effect": taint["effect"]}
                matching = [
                    t
                    for t in tolerations
                    if t.get("key") == taint["key"] and t.get("effect") == taint["effect"]
                ]
                assert any(t == wanted for t in matching), (
                    f"{stack.name}: pool {rp['name']} {key}: {matching or 'no toleration'} for taint {taint}, want {wanted}"
                )


def test_zero_gpu_tasks_on_gpu_nodes_do_not_see_the_gpus(stack):
    for rp, node_pool, entry in pools(stack):
        specs = task_specs(entry)
        hidden = task_env(specs["cpu_pod_spec"]).get("NVIDIA_VISIBLE_DEVICES") == "void"
        assert hidden == bool(node_pool.get("gpu")), f"{stack.name}: pool {rp['name']} cpu_pod_spec"
        # GPU tasks must see the GPUs the device plugin gives them.
        assert task_env(specs["gpu_pod_spec"]).get("NVIDIA_VISIBLE_DEVICES") != "void"


def test_slots_per_pod_fit_the_gpus_of_each_node(stack):
    # A multi-pod task takes max_slots_per_pod GPUs per pod: it must divide a node's GPUs.
    per_pool = {
        e["pool_name"]: (e["task_container_defaults"].get("kubernetes") or {}).get("max_slots_per_pod")
        for e in stack.master["resource_pools"]
    }
    top = (stack.master.get("task_container_defaults") or {}).get("kubernetes", {}).get("max_slots_per_pod")
    top = top or stack.master["resource_manager"].get("max_slots_per_pod")
    for rp, node_pool, _ in pools(stack):
        if node_pool.get("gpu") and stack.master["resource_manager"].get("slot_type", "cuda") in (
            "cuda",
            "gpu",
        ):
            count = node_pool["gpu"]["count"]
            slots = per_pool[rp["name"]] or top
            assert slots and count % slots == 0, (
                f"{stack.name}: pool {rp['name']}: {slots} slots per pod on {count}-GPU nodes"
            )


def test_contains_reads_pod_specs_as_intended():
    pod = {
        "spec": {
            "containers": [{"name": "c", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]}]
        }
    }
    assert contains(pod, {"spec": {"containers": [{"name": "c", "env": [{"name": "B", "value": "2"}]}]}})
    assert not contains(pod, {"spec": {"containers": [{"name": "c", "env": [{"name": "B", "value": "3"}]}]}})
    assert not contains(pod, {"spec": {"volumes": []}})
    assert contains(pod, {"spec": {"hostNetwork": None}})
