"""Policies on where GPU capacity comes from: GPU pools bounded (node pools, node groups,
Karpenter NodePools), prod GPU pools not on spot alone, and Karpenter NodePools and a
ComputeClass's node pools seen by the pinning and system-pool rules.

Karpenter NodePools are shaped as karpenter.sh/v1 documents them (aws/karpenter-provider-aws
@v1.14.1 website/content/en/docs/concepts/nodepools.md) and as components/kube/register.py
registers them (a generic CustomResource: kubernetes:karpenter.sh/v1:NodePool)."""

from __future__ import annotations

import copy
from typing import Any

from policies import gpu
from tests.policies.support import args, check, ctx, master_config, resource, rule
from tests.policies.test_gpu import (
    EKS_GROUP,
    GKE_POOL,
    GPU_TOLERATION,
    SECRET,
    eks_group,
    gke_pool,
    gke_system_pool,
    pod,
    pool_entry,
)

NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
PROD_EKS = ctx("prod", "eks")
PROD_GKE = ctx("prod", "gke")
DEV_EKS = ctx("dev", "eks")
K8S_GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


def karpenter_pool(
    name: str = "l4",
    instance_types: list[str] | None = None,
    capacity: list[str] | None = None,
    limits: dict[str, Any] | None = None,
    gpu_label: bool = True,
    taints: list[dict] | None = None,
    requirements: list[dict] | None = None,
) -> dict[str, Any]:
    labels = {"determined.ai/node-pool": name}
    if gpu_label:
        labels["nvidia.com/gpu.present"] = "true"
    reqs = [
        {
            "key": "node.kubernetes.io/instance-type",
            "operator": "In",
            "values": instance_types or ["g6.12xlarge"],
        },
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": capacity or ["spot", "on-demand"]},
    ]
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": name},
                    "requirements": reqs if requirements is None else requirements,
                    "taints": [K8S_GPU_TAINT] if taints is None else taints,
                    "expireAfter": "720h",
                },
            },
            "limits": {"nvidia.com/gpu": "24", "cpu": "288"} if limits is None else limits,
            "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "5m"},
        },
    }


# --- gpu-pools-bounded -----------------------------------------------------------------------------


def test_bounded_passes_the_projects_pools():
    assert check("gpu-pools-bounded", args(NODE_POOL, karpenter_pool()), DEV_EKS) == []
    assert check("gpu-pools-bounded", args(GKE_POOL, gke_pool()), PROD_GKE) == []
    assert check("gpu-pools-bounded", args(EKS_GROUP, eks_group()), PROD_EKS) == []
    # A GKE pool of a fixed size is bounded; a CPU NodePool needs no GPU limit.
    assert check("gpu-pools-bounded", args(GKE_POOL, gke_pool(min_nodes=None)), PROD_GKE) == []
    cpu = karpenter_pool("cpu", ["m6i.xlarge"], gpu_label=False, taints=[], limits={"cpu": "64"})
    assert check("gpu-pools-bounded", args(NODE_POOL, cpu), DEV_EKS) == []


def test_bounded_refuses_a_gpu_nodepool_without_a_gpu_limit():
    (message,) = check("gpu-pools-bounded", args(NODE_POOL, karpenter_pool(limits={"cpu": "288"})), DEV_EKS)
    assert "Karpenter NodePool 'l4'" in message and "spec.limits sets no nvidia.com/gpu" in message
    assert "cpu=288" in message
    (message,) = check("gpu-pools-bounded", args(NODE_POOL, karpenter_pool(limits={})), DEV_EKS)
    assert "limits: none" in message
    assert rule("gpu-pools-bounded").dev == rule("gpu-pools-bounded").prod == "mandatory"


def test_bounded_tells_gpu_nodepools_by_taint_label_instances_or_no_restriction():
    # Only its instance types say so (no GPU label or taint): a g6 family.
    by_type = karpenter_pool(gpu_label=False, taints=[], limits={})
    assert len(check("gpu-pools-bounded", args(NODE_POOL, by_type), DEV_EKS)) == 1
    # By family or category.
    for key, values in (
        ("karpenter.k8s.aws/instance-family", ["p5"]),
        ("karpenter.k8s.aws/instance-category", ["g"]),
    ):
        reqs = [{"key": key, "operator": "In", "values": values}]
        pool = karpenter_pool(gpu_label=False, taints=[], limits={}, requirements=reqs)
        assert len(check("gpu-pools-bounded", args(NODE_POOL, pool), DEV_EKS)) == 1, key
    # A GPU count above zero.
    reqs = [{"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "Gt", "values": ["0"]}]
    pool = karpenter_pool(gpu_label=False, taints=[], limits={}, requirements=reqs)
    assert len(check("gpu-pools-bounded", args(NODE_POOL, pool), DEV_EKS)) == 1
    # Nothing restricts its instance types: Karpenter may launch GPU instances for a GPU pod.
    open_pool = karpenter_pool(gpu_label=False, taints=[], limits={}, requirements=[])
    assert len(check("gpu-pools-bounded", args(NODE_POOL, open_pool), DEV_EKS)) == 1
    # Restricted to CPU families, categories or no GPUs: not a GPU pool.
    for key, op, values in (
        ("karpenter.k8s.aws/instance-family", "In", ["m6i", "c7g"]),
        ("karpenter.k8s.aws/instance-category", "In", ["c", "m", "r"]),
        ("karpenter.k8s.aws/instance-gpu-count", "DoesNotExist", []),
    ):
        reqs = [{"key": key, "operator": op, "values": values}]
        pool = karpenter_pool(gpu_label=False, taints=[], limits={}, requirements=reqs)
        assert check("gpu-pools-bounded", args(NODE_POOL, pool), DEV_EKS) == [], key


def test_bounded_refuses_node_pools_without_a_maximum():
    unbounded = gke_pool()
    del unbounded["autoscaling"]["totalMaxNodeCount"]
    (message,) = check("gpu-pools-bounded", args(GKE_POOL, unbounded), PROD_GKE)
    assert "GKE node pool 'l4'" in message and "maxNodeCount or totalMaxNodeCount" in message
    per_zone = copy.deepcopy(unbounded)
    per_zone["autoscaling"]["maxNodeCount"] = 2
    assert check("gpu-pools-bounded", args(GKE_POOL, per_zone), PROD_GKE) == []
    group = eks_group()
    del group["scalingConfig"]["maxSize"]
    (message,) = check("gpu-pools-bounded", args(EKS_GROUP, group), PROD_EKS)
    assert "EKS node group 'l4'" in message and "scalingConfig.maxSize" in message
    # CPU pools are not this rule's concern.
    cpu = gke_system_pool()
    del cpu["autoscaling"]["totalMaxNodeCount"]
    assert check("gpu-pools-bounded", args(GKE_POOL, cpu), PROD_GKE) == []


# --- prod-gpu-pools-not-spot-only ------------------------------------------------------------------


def test_spot_only_levels_are_prod_advice():
    found = rule("prod-gpu-pools-not-spot-only")
    assert (found.dev, found.prod) == ("off", "advisory")


def test_spot_only_advises_a_spot_only_gpu_pool_on_every_kind_of_pool():
    gke = [resource(GKE_POOL, gke_system_pool(), "system"), resource(GKE_POOL, gke_pool(), "l4")]
    (message,) = check("prod-gpu-pools-not-spot-only", gke, PROD_GKE)
    assert "GPU node pool 'l4' (GKE node pool 'l4') runs on spot capacity only" in message
    assert "max_restarts" in message
    eks = [
        resource(EKS_GROUP, eks_group("system", "m6i.xlarge", min_size=1), "system"),
        resource(EKS_GROUP, eks_group()),
    ]
    (message,) = check("prod-gpu-pools-not-spot-only", eks, PROD_EKS)
    assert "EKS node group 'l4'" in message
    karpenter = [resource(NODE_POOL, karpenter_pool(capacity=["spot"]), "l4")]
    (message,) = check("prod-gpu-pools-not-spot-only", karpenter, PROD_EKS)
    assert "Karpenter NodePool 'l4'" in message


def test_spot_only_passes_fallbacks_and_cpu_pools():
    assert check("prod-gpu-pools-not-spot-only", [resource(NODE_POOL, karpenter_pool())], PROD_EKS) == []
    reserved = karpenter_pool(capacity=["reserved", "on-demand"])
    assert check("prod-gpu-pools-not-spot-only", [resource(NODE_POOL, reserved)], PROD_EKS) == []
    # No capacity-type requirement: not restricted to spot.
    reqs = [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["g6.12xlarge"]}]
    open_types = karpenter_pool(requirements=reqs)
    assert check("prod-gpu-pools-not-spot-only", [resource(NODE_POOL, open_types)], PROD_EKS) == []
    on_demand = gke_pool()
    on_demand["nodeConfig"]["spot"] = False
    assert check("prod-gpu-pools-not-spot-only", [resource(GKE_POOL, on_demand)], PROD_GKE) == []
    spot_cpu = gke_system_pool()
    spot_cpu["nodeConfig"]["spot"] = True
    assert check("prod-gpu-pools-not-spot-only", [resource(GKE_POOL, spot_cpu)], PROD_GKE) == []


def test_spot_only_counts_every_cloud_pool_of_a_configured_pool():
    """A ComputeClass pool is a GKE node pool per purchase option, all labelled with its name:
    a spot one beside an on-demand one is a fallback, not spot alone."""
    spot = gke_pool("l4-spot", labels={"determined.ai/node-pool": "l4"})
    on_demand = gke_pool("l4-od", labels={"determined.ai/node-pool": "l4"})
    on_demand["nodeConfig"]["spot"] = False
    both = [resource(GKE_POOL, spot, "l4-spot"), resource(GKE_POOL, on_demand, "l4-od")]
    assert check("prod-gpu-pools-not-spot-only", both, PROD_GKE) == []
    (message,) = check("prod-gpu-pools-not-spot-only", both[:1], PROD_GKE)
    assert "GPU node pool 'l4' (GKE node pool 'l4-spot')" in message


# --- Karpenter NodePools and ComputeClass node pools in the other rules ----------------------------


def _karpenter_stack(tolerations: list | None, selector: dict | None = None) -> list:
    gpu_pod = pod(selector or {"determined.ai/node-pool": "l4"}, tolerations)
    aux_pod = pod({"determined.ai/node-pool": "system"})
    master = {
        "resource_pools": [
            pool_entry("l4", gpu_pod, copy.deepcopy(gpu_pod)),
            pool_entry("aux", aux_pod, copy.deepcopy(aux_pod)),
        ]
    }
    return [
        resource(EKS_GROUP, eks_group("system", "m6i.xlarge", min_size=1), "system"),
        resource(NODE_POOL, karpenter_pool(), "l4"),
        resource(SECRET, master_config(master), "determined/determined-master-config"),
    ]


def test_tasks_pinned_to_a_karpenter_nodepool():
    assert check("gpu-pool-tasks-pinned", _karpenter_stack([GPU_TOLERATION]), DEV_EKS) == []
    problems = check("gpu-pool-tasks-pinned", _karpenter_stack(None), DEV_EKS)
    assert len(problems) == 2  # cpu_pod_spec and gpu_pod_spec
    assert (
        "selects Karpenter NodePool 'l4' but does not tolerate its taint(s) nvidia.com/gpu=present:NoSchedule"
        in (problems[0])
    )


def test_tasks_pinned_to_the_node_pools_of_a_compute_class():
    labels = {"determined.ai/node-pool": "l4", "cloud.google.com/compute-class": "det-l4"}
    spot = gke_pool("l4-spot", labels=labels)
    on_demand = gke_pool("l4-od", labels=labels)
    gpu_pod = pod({"cloud.google.com/compute-class": "det-l4"}, [GPU_TOLERATION])
    master = {"resource_pools": [pool_entry("l4", gpu_pod, copy.deepcopy(gpu_pod))]}
    stack = [
        resource(GKE_POOL, gke_system_pool(), "system"),
        resource(GKE_POOL, spot, "l4-spot"),
        resource(GKE_POOL, on_demand, "l4-od"),
        resource(SECRET, master_config(master), "determined/determined-master-config"),
    ]
    assert check("gpu-pool-tasks-pinned", stack, ctx("dev", "gke")) == []
    # Pools of two configured pools are still two pools.
    other = gke_pool(
        "a100", labels={"determined.ai/node-pool": "a100", "cloud.google.com/compute-class": "det-l4"}
    )
    problems = check("gpu-pool-tasks-pinned", [*stack, resource(GKE_POOL, other, "a100")], ctx("dev", "gke"))
    assert problems and all("selects several node pools" in p for p in problems)


def test_system_pool_untainted_with_karpenter_gpu_pools_only():
    assert check("system-pool-untainted", [resource(NODE_POOL, karpenter_pool(), "l4")], DEV_EKS)
    stack = [resource(EKS_GROUP, eks_group("system", "m6i.xlarge", min_size=1), "system")]
    assert (
        check("system-pool-untainted", [*stack, resource(NODE_POOL, karpenter_pool(), "l4")], DEV_EKS) == []
    )


def test_karpenter_pool_reading():
    pool = gpu.karpenter_pool(
        resource(NODE_POOL, karpenter_pool(instance_types=["g6.12xlarge", "g6e.12xlarge"]))
    )
    assert pool is not None and pool.gpu and pool.gpus == 4
    assert pool.machine_types == ("g6.12xlarge", "g6e.12xlarge")
    assert pool.labels["determined.ai/node-pool"] == "l4" and not pool.spot
    assert [(t.key, t.effect) for t in pool.taints] == [("nvidia.com/gpu", "NoSchedule")]
    assert gpu.karpenter_pool(resource(GKE_POOL, gke_pool())) is None


# --- the pack over a planned stack -----------------------------------------------------------------


def test_a_prod_karpenter_pool_on_spot_alone_is_advised_in_the_plan():
    """eks-capacity's L4 pool with spot alone, planned: the pack reads the NodePool the program
    makes (its labels, requirements) and advises, naming the key to change."""
    import json

    from plan import runner, stackfile

    config, _ = stackfile.load_stack_file(stackfile.STACKS_DIR / "Pulumi.eks-capacity.yaml")
    pools = json.loads(config["determined:nodePools"])
    (l4,) = [p for p in pools if p["name"] == "l4"]
    l4["capacity"]["types"] = ["spot"]
    config["determined:nodePools"] = json.dumps(pools)
    found = runner.plan(config, [], "eks-capacity-spot", policies=None).violations
    mine = [v for v in found if v["policy"] == "prod-gpu-pools-not-spot-only"]
    assert [v["level"] for v in mine] == ["advisory"]
    assert "GPU node pool 'l4' (Karpenter NodePool 'l4')" in mine[0]["message"]
    assert "determined:nodePools[].capacity.types" in mine[0]["message"]
    assert not [v for v in found if v["level"] == "mandatory"]
