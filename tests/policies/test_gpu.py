"""Policies on GPU node pools, the task pods master.yaml pins to them, and the GPU operator.

Props are copied from the offline plans' resources.json (gke-dev, eks-dev, eks-prod and the
gke-operator fixture), trimmed to what the rules read plus a little context."""

from __future__ import annotations

import copy
from typing import Any

from policies import gpu
from tests.policies.support import args, check, ctx, master_config, resource, rule

GKE_POOL = "gcp:container/nodePool:NodePool"
EKS_GROUP = "aws:eks/nodeGroup:NodeGroup"
TAG = "aws:autoscaling/tag:Tag"
SECRET = "kubernetes:core/v1:Secret"
RELEASE = "kubernetes:helm.sh/v3:Release"
QUOTA = "kubernetes:core/v1:ResourceQuota"
DAEMON_SET = "kubernetes:apps/v1:DaemonSet"
GPU_TAINT = {"effect": "NO_SCHEDULE", "key": "nvidia.com/gpu", "value": "present"}

GKE = ctx("dev", "gke")
EKS = ctx("dev", "eks")
EXISTING = ctx("dev", "existing")


# --- resources as the plans show them ----------------------------------------------------------


def gke_pool(
    name: str = "l4",
    machine: str = "g2-standard-8",
    gpus: int = 1,
    accelerator: str = "nvidia-l4",
    taints: list[dict] | None = None,
    labels: dict | None = None,
    min_nodes: int | None = 0,
    driver: str = "DEFAULT",
) -> dict[str, Any]:
    config: dict[str, Any] = {
        "diskSizeGb": 100,
        "imageType": "COS_CONTAINERD",
        "labels": {"determined.ai/node-pool": name, **(labels or {})},
        "machineType": machine,
        "serviceAccount": "det-dev-nodes@my-gcp-project.iam.gserviceaccount.com",
        "spot": True,
        "taints": [GPU_TAINT] if taints is None and gpus else list(taints or []),
        "workloadMetadataConfig": {"mode": "GKE_METADATA"},
    }
    if gpus:
        config["guestAccelerators"] = [
            {"count": gpus, "gpuDriverInstallationConfig": {"gpuDriverVersion": driver}, "type": accelerator}
        ]
    props: dict[str, Any] = {
        "cluster": "projects/my-gcp-project/locations/us-central1/clusters/det-dev",
        "location": "us-central1",
        "name": name,
        "nodeConfig": config,
    }
    if min_nodes is not None:
        props["autoscaling"] = {
            "locationPolicy": "ANY",
            "totalMaxNodeCount": 2,
            "totalMinNodeCount": min_nodes,
        }
    else:
        props["nodeCount"] = 1
    return props


def gke_system_pool(taints: list[dict] | None = None) -> dict[str, Any]:
    props = gke_pool("system", "e2-standard-4", gpus=0, taints=taints or [], min_nodes=1)
    props["nodeConfig"]["spot"] = False
    return props


def eks_group(
    name: str = "l4",
    instance: str = "g6.xlarge",
    taints: list[dict] | None = None,
    min_size: int = 0,
    ami: str | None = None,
) -> dict[str, Any]:
    gpu_group = instance.startswith(("g", "p"))
    labels = {"determined.ai/node-pool": name}
    if gpu_group:
        labels["nvidia.com/gpu.present"] = "true"
    return {
        "amiType": ami or ("AL2023_x86_64_NVIDIA" if gpu_group else "AL2023_x86_64_STANDARD"),
        "capacityType": "SPOT" if gpu_group else "ON_DEMAND",
        "clusterName": "det-dev",
        "instanceTypes": [instance],
        "labels": labels,
        "nodeGroupName": name,
        "nodeRoleArn": "arn:aws:iam::123456789012:role/det-dev-nodes",
        "scalingConfig": {"desiredSize": min_size, "maxSize": 2, "minSize": min_size},
        "taints": [GPU_TAINT] if taints is None and gpu_group else list(taints or []),
    }


def asg_tag(key: str, value: str) -> dict[str, Any]:
    return {
        "autoscalingGroupName": "eks-l4-7b931d7c-495c-580d-941d-d0ddd6156767",
        "tag": {"key": key, "propagateAtLaunch": False, "value": value},
    }


TEMPLATE = "k8s.io/cluster-autoscaler/node-template"


def eks_stack(gpu_tag: str | None = "1", instance: str = "g6.xlarge", min_size: int = 0) -> list:
    """eks-dev's node groups and the node-template tags on their Auto Scaling groups."""
    system = resource(EKS_GROUP, eks_group("system", "m6i.xlarge", min_size=1), "system")
    l4 = resource(EKS_GROUP, eks_group("l4", instance, min_size=min_size), "l4")
    tags = [
        resource(TAG, asg_tag(f"{TEMPLATE}/label/determined.ai/node-pool", "system"), "system-template-0"),
        resource(TAG, asg_tag(f"{TEMPLATE}/label/determined.ai/node-pool", "l4"), "l4-template-0"),
        resource(TAG, asg_tag(f"{TEMPLATE}/taint/nvidia.com/gpu", "present:NoSchedule"), "l4-template-3"),
    ]
    tags[0].property_dependencies = {"autoscalingGroupName": [system], "tag": []}
    for tag in tags[1:]:
        tag.property_dependencies = {"autoscalingGroupName": [l4], "tag": []}
    if gpu_tag is not None:
        tags.append(
            resource(
                TAG,
                asg_tag(f"{TEMPLATE}/resources/nvidia.com/gpu", gpu_tag),
                "l4-template-2",
                depends={"autoscalingGroupName": [l4], "tag": []},
            )
        )
    return [system, l4, *tags]


GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}


def pod(selector: dict | None, tolerations: list | None = None, **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "determined-container"}],
        "serviceAccountName": "determined-task",
        **extra,
    }
    if selector is not None:
        spec["nodeSelector"] = selector
    if tolerations:
        spec["tolerations"] = tolerations
    return {"apiVersion": "v1", "kind": "Pod", "spec": spec}


def pool_entry(name: str, cpu: dict | None, gpu_spec: dict | None) -> dict[str, Any]:
    tcd: dict[str, Any] = {"shm_size_bytes": 4294967296, "network_mode": "bridge"}
    if cpu is not None:
        tcd["cpu_pod_spec"] = cpu
    if gpu_spec is not None:
        tcd["gpu_pod_spec"] = gpu_spec
    tcd["checkpoint_gc_pod_spec"] = pod(None)  # never pinned: not the rule's business
    return {"pool_name": name, "description": name, "task_container_defaults": tcd}


def gke_dev_master(l4: dict | None = None, aux: dict | None = None) -> dict[str, Any]:
    """gke-dev's master.yaml, the parts the rule reads: l4 pinned to the GPU pool, aux to system."""
    l4_pod = pod({"determined.ai/node-pool": "l4"}, [GPU_TOLERATION])
    aux_pod = pod({"determined.ai/node-pool": "system"})
    return {
        "resource_manager": {"type": "kubernetes", "default_namespace": "determined"},
        "resource_pools": [
            pool_entry("l4", **(l4 or {"cpu": l4_pod, "gpu_spec": copy.deepcopy(l4_pod)})),
            pool_entry("aux", **(aux or {"cpu": aux_pod, "gpu_spec": copy.deepcopy(aux_pod)})),
        ],
        "task_container_defaults": {"checkpoint_gc_pod_spec": pod(None)},
    }


def gke_dev_stack(master: dict, l4: dict | None = None, system: dict | None = None) -> list:
    return [
        resource(GKE_POOL, system or gke_system_pool(), "system"),
        resource(GKE_POOL, l4 or gke_pool(), "l4"),
        resource(SECRET, master_config(master), "determined/determined-master-config"),
    ]


# --- gpu-pools-tainted -----------------------------------------------------------------------


def test_gpu_pools_tainted_passes_tainted_gpu_pools_and_cpu_pools():
    assert check("gpu-pools-tainted", args(GKE_POOL, gke_pool()), GKE) == []
    assert check("gpu-pools-tainted", args(GKE_POOL, gke_system_pool()), GKE) == []
    assert check("gpu-pools-tainted", args(EKS_GROUP, eks_group()), EKS) == []
    assert check("gpu-pools-tainted", args(EKS_GROUP, eks_group("system", "m6i.xlarge")), EKS) == []
    # Any value will do; an extra taint beside it too.
    other = [
        {"effect": "NO_SCHEDULE", "key": "nvidia.com/gpu", "value": "true"},
        {**GPU_TAINT, "key": "team"},
    ]
    assert check("gpu-pools-tainted", args(GKE_POOL, gke_pool(taints=other)), GKE) == []


def test_gpu_pools_tainted_refuses_an_untainted_gke_gpu_pool():
    found = check("gpu-pools-tainted", args(GKE_POOL, gke_pool("a100", "a2-highgpu-4g", 4, taints=[])), GKE)
    assert len(found) == 1
    assert found[0].startswith("GKE node pool 'a100' has 4 GPU(s) per node")
    assert "no taint nvidia.com/gpu:NoSchedule" in found[0]


def test_gpu_pools_tainted_wants_no_schedule_not_another_effect():
    taints = [{**GPU_TAINT, "effect": "PREFER_NO_SCHEDULE"}]
    found = check("gpu-pools-tainted", args(GKE_POOL, gke_pool(taints=taints)), GKE)
    assert len(found) == 1 and "'l4'" in found[0]


def test_gpu_pools_tainted_refuses_an_untainted_eks_gpu_group_and_nvidia_image():
    found = check("gpu-pools-tainted", args(EKS_GROUP, eks_group(taints=[])), EKS)
    assert len(found) == 1 and found[0].startswith("EKS node group 'l4' has 1 GPU(s) per node")
    # An NVIDIA AMI on an instance without GPUs is still a GPU group.
    props = eks_group("cpu", "m6i.xlarge", taints=[], ami="AL2023_x86_64_NVIDIA")
    found = check("gpu-pools-tainted", args(EKS_GROUP, props), EKS)
    assert len(found) == 1 and "EKS node group 'cpu' has an NVIDIA image" in found[0]


def test_gpu_pools_tainted_ignores_other_resources():
    assert check("gpu-pools-tainted", args(SECRET, {"metadata": {"name": "x"}}), GKE) == []


# --- system-pool-untainted -------------------------------------------------------------------


def test_system_pool_untainted_passes_a_plain_cpu_pool():
    stack = [resource(GKE_POOL, gke_system_pool(), "system"), resource(GKE_POOL, gke_pool(), "l4")]
    assert check("system-pool-untainted", stack, GKE) == []
    # PreferNoSchedule does not keep system pods off.
    soft = [{"effect": "PREFER_NO_SCHEDULE", "key": "batch", "value": "yes"}]
    assert check("system-pool-untainted", [resource(GKE_POOL, gke_system_pool(soft))], GKE) == []
    eks = [resource(EKS_GROUP, eks_group("system", "m6i.xlarge")), resource(EKS_GROUP, eks_group())]
    assert check("system-pool-untainted", eks, EKS) == []


def test_system_pool_untainted_refuses_only_gpu_and_tainted_pools():
    taint = [{"effect": "NO_EXECUTE", "key": "dedicated", "value": "infra"}]
    stack = [resource(GKE_POOL, gke_system_pool(taint), "system"), resource(GKE_POOL, gke_pool(), "l4")]
    found = check("system-pool-untainted", stack, GKE)
    assert len(found) == 1
    assert "no node pool is left for system pods" in found[0]
    assert "'system' (taint dedicated=infra:NoExecute)" in found[0]
    assert "'l4' (has GPUs, taint nvidia.com/gpu=present:NoSchedule)" in found[0]


def test_system_pool_untainted_sees_the_taint_gke_puts_on_arm_nodes():
    """GKE taints Arm nodes kubernetes.io/arch=arm64:NoSchedule itself: the pool's inputs do
    not carry it, yet system pods without its toleration cannot run there."""
    arm = gke_system_pool()
    arm["nodeConfig"]["machineType"] = "t2a-standard-4"
    found = check("system-pool-untainted", [resource(GKE_POOL, arm, "system")], GKE)
    assert len(found) == 1 and "'system' (taint kubernetes.io/arch=arm64:NoSchedule)" in found[0]


def test_system_pool_untainted_refuses_eks_with_gpu_groups_only():
    found = check("system-pool-untainted", [resource(EKS_GROUP, eks_group())], EKS)
    assert len(found) == 1 and "'l4' (has GPUs" in found[0]


def test_system_pool_untainted_does_not_count_an_untainted_gpu_pool():
    found = check("system-pool-untainted", [resource(GKE_POOL, gke_pool(taints=[]), "l4")], GKE)
    assert len(found) == 1 and "'l4' (has GPUs)" in found[0]


def test_system_pool_untainted_does_not_apply_to_existing_clusters():
    secret = resource(SECRET, master_config({"notebook_timeout": 3600}))
    assert check("system-pool-untainted", [secret], EXISTING) == []


# --- gpu-pool-tasks-pinned -------------------------------------------------------------------


def test_tasks_pinned_passes_the_projects_pinning():
    assert check("gpu-pool-tasks-pinned", gke_dev_stack(gke_dev_master()), GKE) == []


def test_tasks_pinned_refuses_a_gpu_pool_spec_without_its_toleration():
    untolerated = pod({"determined.ai/node-pool": "l4"})
    master = gke_dev_master(
        l4={"cpu": pod({"determined.ai/node-pool": "l4"}, [GPU_TOLERATION]), "gpu_spec": untolerated}
    )
    found = check("gpu-pool-tasks-pinned", gke_dev_stack(master), GKE)
    assert found == [
        "resource pool 'l4': master.yaml resource_pools[l4].task_container_defaults.gpu_pod_spec selects "
        "GKE node pool 'l4' but does not tolerate its taint(s) nvidia.com/gpu=present:NoSchedule "
        "(its tasks stay pending)"
    ]


def test_tasks_pinned_accepts_an_exists_toleration_and_wants_every_taint():
    exists = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    spec = pod({"determined.ai/node-pool": "l4"}, exists)
    master = gke_dev_master(l4={"cpu": spec, "gpu_spec": copy.deepcopy(spec)})
    assert check("gpu-pool-tasks-pinned", gke_dev_stack(master), GKE) == []
    team = {"effect": "NO_SCHEDULE", "key": "team", "value": "research"}
    found = check("gpu-pool-tasks-pinned", gke_dev_stack(master, l4=gke_pool(taints=[GPU_TAINT, team])), GKE)
    assert len(found) == 2 and all("team=research:NoSchedule" in m for m in found)
    assert "cpu_pod_spec" in found[0] and "gpu_pod_spec" in found[1]


def test_tasks_pinned_refuses_selectors_that_select_no_or_several_pools():
    nowhere = pod({"determined.ai/node-pool": "h100"}, [GPU_TOLERATION])
    master = gke_dev_master(l4={"cpu": nowhere, "gpu_spec": copy.deepcopy(nowhere)})
    found = check("gpu-pool-tasks-pinned", gke_dev_stack(master), GKE)
    assert len(found) == 2
    assert "resource_pools[l4].task_container_defaults.cpu_pod_spec has nodeSelector " in found[0]
    assert "determined.ai/node-pool=h100, which selects no node pool of the stack" in found[0]

    both = pod({"team": "research"}, [GPU_TOLERATION])
    master = gke_dev_master(aux={"cpu": both, "gpu_spec": copy.deepcopy(both)})
    stack = gke_dev_stack(
        master,
        l4=gke_pool(labels={"team": "research"}),
        system=gke_pool("system", "e2-standard-4", 0, taints=[], labels={"team": "research"}),
    )
    found = check("gpu-pool-tasks-pinned", stack, GKE)
    assert len(found) == 2 and "resource pool 'aux'" in found[0]
    assert "selects several node pools ('system', 'l4'), not one" in found[0]


def test_tasks_pinned_refuses_unpinned_and_missing_pod_specs():
    master = gke_dev_master(aux={"cpu": pod(None), "gpu_spec": None})
    found = check("gpu-pool-tasks-pinned", gke_dev_stack(master), GKE)
    assert found == [
        "resource pool 'aux': master.yaml resource_pools[aux].task_container_defaults.cpu_pod_spec has no "
        "nodeSelector, so its tasks are pinned to no node pool",
        "resource pool 'aux': master.yaml resource_pools[aux].task_container_defaults.gpu_pod_spec is "
        "missing, so its tasks are pinned to no node pool",
    ]


def test_tasks_pinned_wants_the_taints_of_a_cpu_pool_tolerated_too():
    infra = {"effect": "NO_EXECUTE", "key": "dedicated", "value": "infra"}
    found = check(
        "gpu-pool-tasks-pinned", gke_dev_stack(gke_dev_master(), system=gke_system_pool([infra])), GKE
    )
    assert len(found) == 2
    assert found[0].startswith(
        "resource pool 'aux': master.yaml resource_pools[aux].task_container_defaults.cpu_pod_spec"
    )
    assert (
        "selects GKE node pool 'system' but does not tolerate its taint(s) dedicated=infra:NoExecute"
        in found[0]
    )


def test_tasks_pinned_on_eks():
    l4 = resource(EKS_GROUP, eks_group(), "l4")
    system = resource(EKS_GROUP, eks_group("system", "m6i.xlarge"), "system")
    secret = resource(SECRET, master_config(gke_dev_master()))
    assert check("gpu-pool-tasks-pinned", [system, l4, secret], EKS) == []
    no_toleration = pod({"determined.ai/node-pool": "l4"})
    master = gke_dev_master(l4={"cpu": no_toleration, "gpu_spec": copy.deepcopy(no_toleration)})
    found = check("gpu-pool-tasks-pinned", [system, l4, resource(SECRET, master_config(master))], EKS)
    assert len(found) == 2 and "selects EKS node group 'l4' but does not tolerate" in found[0]


def test_tasks_pinned_on_an_existing_cluster_wants_a_selector_or_required_affinity():
    local = gke_dev_master(
        l4={
            "cpu": pod({"determined.ai/node-pool": "gpu"}),
            "gpu_spec": pod({"determined.ai/node-pool": "gpu"}),
        }
    )
    assert check("gpu-pool-tasks-pinned", [resource(SECRET, master_config(local))], EXISTING) == []
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}]
            }
        }
    }
    pinned = gke_dev_master(
        l4={"cpu": pod(None, affinity=affinity), "gpu_spec": pod(None, affinity=affinity)}
    )
    assert check("gpu-pool-tasks-pinned", [resource(SECRET, master_config(pinned))], EXISTING) == []
    loose = gke_dev_master(l4={"cpu": pod({}), "gpu_spec": pod(None, affinity={"nodeAffinity": {}})})
    found = check("gpu-pool-tasks-pinned", [resource(SECRET, master_config(loose))], EXISTING)
    assert len(found) == 2
    assert found[0] == (
        "resource pool 'l4': master.yaml resource_pools[l4].task_container_defaults.cpu_pod_spec has no "
        "nodeSelector or required node affinity, so its tasks may run on any node"
    )


def test_tasks_pinned_needs_master_yaml():
    assert check("gpu-pool-tasks-pinned", [resource(GKE_POOL, gke_pool())], GKE) == []


# --- gpu-count-matches-machine ---------------------------------------------------------------


def test_gpu_count_passes_matching_and_per_pool_machines():
    stack = [
        resource(GKE_POOL, gke_system_pool(), "system"),
        resource(GKE_POOL, gke_pool(), "l4"),
        resource(GKE_POOL, gke_pool("a100", "a2-highgpu-4g", 4, "nvidia-tesla-a100"), "a100"),
        # N1: the pool chooses its GPUs.
        resource(GKE_POOL, gke_pool("t4", "n1-standard-8", 3, "nvidia-tesla-t4"), "t4"),
    ]
    assert check("gpu-count-matches-machine", stack, GKE) == []


def test_gpu_count_refuses_a_count_other_than_the_machines():
    stack = [resource(GKE_POOL, gke_pool("l4", "g2-standard-24", 1), "l4")]
    assert check("gpu-count-matches-machine", stack, GKE) == [
        "GKE node pool 'l4': nodeConfig.guestAccelerators declares 1 GPU(s) per node, but machine type "
        "g2-standard-24 carries 2"
    ]


def test_gpu_count_refuses_undeclared_gpus_and_gpus_on_general_purpose_machines():
    undeclared = gke_pool("a100", "a2-highgpu-4g", 0)
    found = check("gpu-count-matches-machine", [resource(GKE_POOL, undeclared)], GKE)
    assert len(found) == 1
    assert found[0].startswith("GKE node pool 'a100': machine type a2-highgpu-4g carries 4 GPU(s), but")
    general = gke_pool("cpu", "e2-standard-4", 1)
    found = check("gpu-count-matches-machine", [resource(GKE_POOL, general)], GKE)
    assert found == [
        "GKE node pool 'cpu': machine type e2-standard-4 cannot carry GPUs, yet nodeConfig.guestAccelerators "
        "declares 1"
    ]


def test_gpu_count_refuses_the_wrong_accelerator_type():
    wrong = gke_pool("l4", "g2-standard-8", 1, "nvidia-tesla-t4")
    found = check("gpu-count-matches-machine", [resource(GKE_POOL, wrong)], GKE)
    assert found == [
        "GKE node pool 'l4': nodeConfig.guestAccelerators declares nvidia-tesla-t4, but machine type "
        "g2-standard-8 carries nvidia-l4"
    ]


def test_gpu_count_passes_eks_tags_that_match():
    assert check("gpu-count-matches-machine", eks_stack(), EKS) == []
    assert check("gpu-count-matches-machine", eks_stack("4", "g6.12xlarge"), EKS) == []


def test_gpu_count_refuses_an_eks_tag_with_another_count():
    stack = eks_stack("4")
    found = check("gpu-count-matches-machine", stack, EKS)
    assert len(found) == 1
    assert found[0].startswith(
        "EKS node group 'l4': its Auto Scaling group tag "
        "k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu says '4' GPU(s) per node, but "
        "instance type g6.xlarge carries 1"
    )
    assert len(check("gpu-count-matches-machine", eks_stack("one"), EKS)) == 1


def test_gpu_count_refuses_a_gpu_group_scaling_from_zero_without_the_tag():
    found = check("gpu-count-matches-machine", eks_stack(None), EKS)
    assert len(found) == 1
    assert found[0].startswith("EKS node group 'l4' has 1 GPU(s) per node and scales from zero, but its")
    # With nodes always there, the autoscaler learns from them.
    assert check("gpu-count-matches-machine", eks_stack(None, min_size=1), EKS) == []


def test_gpu_count_does_not_guess_a_tags_group():
    stack = eks_stack("4")
    stack[-1].property_dependencies = {}
    assert check("gpu-count-matches-machine", stack, EKS) == []


# --- dev-gpu-pools-scale-to-zero -------------------------------------------------------------


def test_scale_to_zero_levels():
    assert rule("dev-gpu-pools-scale-to-zero").level(ctx("dev")) == "advisory"
    # Prod may keep GPU nodes warm: the rule does not run there.
    assert rule("dev-gpu-pools-scale-to-zero").level(ctx("prod")) == "off"


def test_scale_to_zero_passes_pools_at_zero_and_cpu_pools():
    assert check("dev-gpu-pools-scale-to-zero", args(GKE_POOL, gke_pool()), GKE) == []
    assert check("dev-gpu-pools-scale-to-zero", args(GKE_POOL, gke_system_pool()), GKE) == []
    assert check("dev-gpu-pools-scale-to-zero", args(EKS_GROUP, eks_group()), EKS) == []
    assert (
        check(
            "dev-gpu-pools-scale-to-zero", args(EKS_GROUP, eks_group("system", "m6i.xlarge", min_size=2)), EKS
        )
        == []
    )


def test_scale_to_zero_refuses_gpu_pools_kept_up():
    found = check("dev-gpu-pools-scale-to-zero", args(GKE_POOL, gke_pool(min_nodes=1)), GKE)
    assert found == [
        "GKE node pool 'l4' keeps 1 GPU node(s) running when idle (minimum size 1); a dev GPU pool should "
        "scale to zero"
    ]
    found = check("dev-gpu-pools-scale-to-zero", args(EKS_GROUP, eks_group(min_size=2)), EKS)
    assert len(found) == 1 and found[0].startswith("EKS node group 'l4' keeps 2 GPU node(s)")
    found = check("dev-gpu-pools-scale-to-zero", args(GKE_POOL, gke_pool(min_nodes=None)), GKE)
    assert found == ["GKE node pool 'l4' has GPUs and no autoscaling minimum, so its nodes never go away"]


# --- gpu-operator-fits-cloud -----------------------------------------------------------------


def operator_release(values: dict) -> dict[str, Any]:
    return {
        "atomic": True,
        "chart": "gpu-operator",
        "name": "gpu-operator",
        "namespace": "gpu-operator",
        "repositoryOpts": {"repo": "https://helm.ngc.nvidia.com/nvidia"},
        "values": values,
        "version": "v26.7.0",
    }


DAEMONSETS_DEFAULT = [{"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}]
NFD_DEFAULT = [
    {
        "effect": "NoSchedule",
        "key": "node-role.kubernetes.io/control-plane",
        "operator": "Equal",
        "value": "",
    },
    {"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"},
]
TEAM_TAINT = {"effect": "NO_SCHEDULE", "key": "team", "value": "research"}
TEAM_TOLERATION = {"effect": "NoSchedule", "key": "team", "operator": "Equal", "value": "research"}


def eks_values() -> dict[str, Any]:
    """eks-prod's values."""
    return {
        "daemonsets": {"tolerations": copy.deepcopy(DAEMONSETS_DEFAULT)},
        "driver": {"enabled": False},
        "node-feature-discovery": {"worker": {"tolerations": copy.deepcopy(NFD_DEFAULT)}},
        "toolkit": {"enabled": False},
    }


def gke_values() -> dict[str, Any]:
    """The gke-operator fixture's values (its h100 pool has an extra taint)."""
    return {
        "daemonsets": {"tolerations": [*copy.deepcopy(DAEMONSETS_DEFAULT), TEAM_TOLERATION]},
        "driver": {"enabled": False},
        "hostPaths": {"driverInstallDir": "/home/kubernetes/bin/nvidia"},
        "node-feature-discovery": {"worker": {"tolerations": [*copy.deepcopy(NFD_DEFAULT), TEAM_TOLERATION]}},
        "toolkit": {
            "env": [{"name": "RUNTIME_CONFIG_SOURCE", "value": "file"}],
            "installDir": "/home/kubernetes/bin/nvidia",
        },
    }


def critical_quota(classes: tuple[str, ...] = ("system-node-critical", "system-cluster-critical")) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "gpu-operator-critical-pods", "namespace": "gpu-operator"},
        "spec": {
            "hard": {"pods": "100"},
            "scopeSelector": {
                "matchExpressions": [
                    {"operator": "In", "scopeName": "PriorityClass", "values": list(classes)}
                ]
            },
        },
    }


DRIVER_INSTALLER = {
    "apiVersion": "apps/v1",
    "kind": "DaemonSet",
    "metadata": {"name": "nvidia-driver-installer", "namespace": "kube-system"},
    "spec": {"template": {"spec": {"priorityClassName": "system-node-critical"}}},
}


def operator_gke_pool(**changes: Any) -> dict[str, Any]:
    options = {
        "name": "h100",
        "machine": "a3-highgpu-8g",
        "gpus": 8,
        "accelerator": "nvidia-h100-80gb",
        "taints": [GPU_TAINT, TEAM_TAINT],
        "labels": {"gke-no-default-nvidia-gpu-device-plugin": "true"},
        "driver": "INSTALLATION_DISABLED",
    }
    return gke_pool(**{**options, **changes})


def gke_operator_stack(
    values: dict | None = None, quota: dict | None = None, installer: bool = True, pool: dict | None = None
) -> list:
    stack = [
        resource(GKE_POOL, gke_system_pool(), "system"),
        resource(GKE_POOL, pool or operator_gke_pool(), "h100"),
        resource(RELEASE, operator_release(values or gke_values()), "gpu-operator"),
        resource(QUOTA, quota or critical_quota(), "gpu-operator/gpu-operator-critical-pods"),
    ]
    if installer:
        stack.append(resource(DAEMON_SET, DRIVER_INSTALLER, "kube-system/nvidia-driver-installer"))
    return stack


def eks_operator_stack(values: dict | None = None) -> list:
    return [*eks_stack(), resource(RELEASE, operator_release(values or eks_values()), "gpu-operator")]


PREFIX = "GPU operator (Helm release gpu-operator/gpu-operator): "


def test_operator_passes_the_projects_settings():
    assert check("gpu-operator-fits-cloud", eks_operator_stack(), EKS) == []
    assert check("gpu-operator-fits-cloud", gke_operator_stack(), GKE) == []


def test_operator_on_eks_leaves_driver_and_toolkit_to_the_ami():
    values = eks_values()
    values["driver"] = {"enabled": True}
    del values["toolkit"]
    found = check("gpu-operator-fits-cloud", eks_operator_stack(values), EKS)
    assert found == [
        PREFIX + "values driver.enabled is not false: the EKS NVIDIA AMI ships the drivers, the operator's "
        "would fight them",
        PREFIX + "values toolkit.enabled is not false: the EKS NVIDIA AMI ships the container toolkit",
    ]


def test_operator_on_gke_leaves_drivers_to_gke_and_points_at_its_directory():
    values = gke_values()
    del values["driver"]
    values["toolkit"]["installDir"] = "/usr/local/nvidia"
    del values["hostPaths"]
    found = check("gpu-operator-fits-cloud", gke_operator_stack(values), GKE)
    assert len(found) == 3
    assert "driver.enabled is not false: GKE's driver installer puts the drivers on the nodes" in found[0]
    assert "values toolkit.installDir is '/usr/local/nvidia', not '/home/kubernetes/bin/nvidia'" in found[1]
    assert "values hostPaths.driverInstallDir is not set" in found[2]


def test_operator_on_gke_needs_the_critical_pods_quota():
    found = check(
        "gpu-operator-fits-cloud", gke_operator_stack(quota=critical_quota(("system-node-critical",))), GKE
    )
    assert found == [
        PREFIX
        + "no ResourceQuota in namespace 'gpu-operator' admits the PriorityClasses system-node-critical "
        "and system-cluster-critical: GKE refuses the operator's pods there"
    ]
    elsewhere = critical_quota()
    elsewhere["metadata"]["namespace"] = "kube-system"
    assert len(check("gpu-operator-fits-cloud", gke_operator_stack(quota=elsewhere), GKE)) == 1


def test_operator_on_gke_needs_the_driver_installer_and_pools_left_to_it():
    found = check("gpu-operator-fits-cloud", gke_operator_stack(installer=False), GKE)
    assert found == [
        PREFIX + "there is no DaemonSet kube-system/nvidia-driver-installer: nothing installs the GPU drivers"
    ]
    pool = operator_gke_pool(labels={}, driver="DEFAULT")
    found = check("gpu-operator-fits-cloud", gke_operator_stack(pool=pool), GKE)
    assert len(found) == 2
    assert "GKE node pool 'h100' lacks the label gke-no-default-nvidia-gpu-device-plugin=true" in found[0]
    assert (
        "GKE node pool 'h100' does not set gpuDriverInstallationConfig.gpuDriverVersion INSTALLATION_DISABLED"
        in found[1]
    )


def test_operator_daemonsets_tolerate_every_gpu_pool_taint():
    values = gke_values()
    values["daemonsets"]["tolerations"] = copy.deepcopy(DAEMONSETS_DEFAULT)
    found = check("gpu-operator-fits-cloud", gke_operator_stack(values), GKE)
    assert found == [
        PREFIX + "values daemonsets.tolerations do not tolerate GKE node pool 'h100''s taint(s) "
        "team=research:NoSchedule, so its GPUs are never offered to pods"
    ]


def test_operator_ignores_other_releases_and_existing_clusters():
    other = operator_release(eks_values() | {"driver": {"enabled": True}})
    other["chart"] = "nvidia-device-plugin"
    assert check("gpu-operator-fits-cloud", [*eks_stack(), resource(RELEASE, other)], EKS) == []
    values = eks_values() | {"driver": {"enabled": True}}
    assert check("gpu-operator-fits-cloud", [resource(RELEASE, operator_release(values))], EXISTING) == []


def test_constants_are_the_projects():
    from components.addons import gke_driver_installer, gpu_operator
    from components.cluster.eks import node_groups
    from components.cluster.gke import node_pools

    assert gpu.GKE_NVIDIA_DIR == gpu_operator.GKE_NVIDIA_DIR
    assert gpu.GPU_OPERATOR_CHART == gpu_operator.versions.GPU_OPERATOR_CHART
    assert gpu.NO_GKE_DEVICE_PLUGIN == node_pools.NO_GKE_DEVICE_PLUGIN
    assert f"{gke_driver_installer.NAMESPACE}/{gke_driver_installer.NAME}" == gpu.GKE_DRIVER_INSTALLER
    assert f"{node_groups.TEMPLATE}/resources/nvidia.com/gpu" == gpu.GPU_RESOURCE_TAG
    quota = gpu_operator.critical_pods_quota()
    assert set(gpu.CRITICAL_PRIORITY_CLASSES) == set(
        quota["spec"]["scopeSelector"]["matchExpressions"][0]["values"]
    )
