"""GKE node pool arguments beyond machine and GPUs: the initial size per zone within maxNodes,
private nodes set on every pool, GPU pools upgraded without a surge node, and Arm pools whose
taint GKE adds itself."""

from __future__ import annotations

import copy

import pytest
import yaml
from conftest import GKE
from planning import of_type, plan_for, planned

import stack_args
from components.cluster.gke import node_pools
from components.config import load_config
from components.config.node_pools import ARM_TAINT

A100 = GKE["nodePools"][1]


def gke(*pools, **cluster):
    raw = copy.deepcopy(GKE)
    raw["cluster"] = {**raw["cluster"], **cluster}
    raw["nodePools"] = [raw["nodePools"][0], *copy.deepcopy(list(pools))]
    raw["resourcePools"] = [
        *({"name": p["name"], "nodePool": p["name"]} for p in pools if p.get("gpu")),
        {"name": "aux", "nodePool": "system"},
    ]
    if any(not p.get("gpu") for p in pools):
        raw["slots"] = {"maxSlotsPerPod": 1}
    return raw


def args_of(raw, name):
    args = stack_args.gke_cluster_args(load_config(raw))
    pool = next(p for p in args.node_pools if p.name == name)
    return node_pools.node_pool_args(args, pool, "cluster-id", "nodes@p.iam.gserviceaccount.com")


# --- initial size ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("min_nodes", "max_nodes", "zones", "per_zone"),
    [
        (0, 4, 3, 0),
        (1, 3, 2, 1),  # gke-dev's system pool: 2 nodes, within 3
        (2, 4, 2, 1),  # gke-prod's system pool
        (5, 8, 4, 2),  # 8 nodes: within 8
        (1, 1, 3, 0),  # 1 per zone would be 3 nodes over a maximum of 1
        (1, 2, 3, 0),
        (4, 6, 3, 2),  # 2 per zone: 6
        (4, 5, 3, 1),  # 2 per zone would be 6 > 5: 1 per zone, below minNodes until pods wait
        (3, 3, None, 1),  # GKE's three zones
    ],
)
def test_the_initial_size_never_passes_max_nodes(min_nodes, max_nodes, zones, per_zone):
    pool = load_config(gke({**A100, "minNodes": min_nodes, "maxNodes": max_nodes})).node_pools[1]
    locations = [f"us-central1-{z}" for z in "abcf"[:zones]] if zones else None
    assert node_pools.initial_node_count(pool, locations) == per_zone
    assert per_zone * (zones or node_pools.DEFAULT_ZONE_COUNT) <= max_nodes


def test_an_h100_pool_of_one_node_over_three_zones_starts_empty():
    h100 = {"name": "h100", "machineType": "a3-highgpu-8g", "gpu": {"type": "h100", "count": 8}}
    args = args_of(gke({**h100, "minNodes": 1, "maxNodes": 1}), "h100")
    assert len(args["node_locations"]) == 3
    assert args["initial_node_count"] == 0
    assert args["autoscaling"]["total_min_node_count"] == 1


# --- private nodes ---------------------------------------------------------------------------


@pytest.mark.parametrize("private", [True, False])
def test_every_pool_says_whether_its_nodes_are_private(private):
    raw = gke(A100, privateNodes=private)
    for name in ("system", "a100"):
        assert args_of(raw, name)["network_config"] == {"enable_private_nodes": private}


@pytest.mark.parametrize(("stack", "private"), [("gke-prod", True), ("gke-dev", False)])
def test_shipped_stacks_send_the_clusters_private_nodes_setting(stack, private):
    for pool in of_type(planned(stack), "container/nodePool:NodePool"):
        assert pool["inputs"]["networkConfig"] == {"enablePrivateNodes": private}, pool["name"]


# --- upgrades --------------------------------------------------------------------------------


def test_gpu_pools_upgrade_one_node_at_a_time_without_a_surge_node():
    raw = gke(A100)
    assert args_of(raw, "a100")["upgrade_settings"] == {
        "strategy": "SURGE",
        "max_surge": 0,
        "max_unavailable": 1,
    }
    # CPU pools keep GKE's default (a surge node).
    assert "upgrade_settings" not in args_of(raw, "system")


# --- Arm pools -------------------------------------------------------------------------------


def test_an_arm_pool_is_not_sent_the_taint_gke_adds_itself():
    raw = gke({"name": "arm", "machineType": "c4a-standard-16", "maxNodes": 4})
    args = args_of(raw, "arm")
    assert args["node_config"]["taints"] == []
    assert "taint_config" not in args["node_config"]
    # ... but the pods sent there tolerate it.
    assert load_config(raw).node_pools[1].all_taints == [ARM_TAINT]


def test_an_arm_gpu_pool_is_sent_the_gpu_taint_only():
    gb200 = {
        "name": "gb200",
        "machineType": "a4x-highgpu-4g",
        "gpu": {"type": "gb200", "count": 4},
        "zones": ["us-central1-b"],
        "spot": True,
    }
    args = args_of(gke(gb200), "gb200")
    assert args["node_config"]["taints"] == [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}
    ]


def test_arm_pool_pods_and_kueue_flavors_tolerate_the_arm_taint():
    raw = gke({"name": "arm", "machineType": "c4a-standard-16", "maxNodes": 4})
    raw["resourcePools"].insert(0, {"name": "arm", "nodePool": "arm"})
    raw["scheduler"] = "kueue"
    result = plan_for(raw, stack="arm-pool")
    (flavor,) = [
        m
        for m in result.manifests
        if m["kind"] == "ResourceFlavor" and m["spec"]["nodeLabels"].get("determined.ai/node-pool") == "arm"
    ]
    assert ARM_TAINT.toleration in flavor["spec"]["tolerations"]
    (pool,) = [p for p in yaml.safe_load(result.master_yaml)["resource_pools"] if p["pool_name"] == "arm"]
    assert pool["task_container_defaults"]["cpu_pod_spec"]["spec"]["tolerations"] == [ARM_TAINT.toleration]
