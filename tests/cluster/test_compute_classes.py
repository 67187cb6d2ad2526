"""GKE pools with a capacity fallback (components/cluster/gke/compute_classes.py): one node pool
per purchase option and machine type, each labelled and tainted for the pool's ComputeClass,
the class listing them in the user's order and valid against GKE's CRD schema, the pool's task
pods selecting the class and tolerating its nodes' taints, GPU settings on every node pool, and
the refusals of what GKE cannot do."""

from __future__ import annotations

import copy

import pytest
import yaml
from conftest import GKE
from crds import crd_problems
from planning import by_kind, of_type, planned

import stack_args
from components import cloud_limits
from components.cluster.gke import compute_classes, node_pools
from components.config import ConfigError, load_config
from components.config.node_pools import COMPUTE_CLASS_LABEL

STACK = "compute-class-gke"
NODE_POOL = "gcp:container/nodePool:NodePool"


@pytest.fixture(scope="module")
def plan():
    return planned(STACK)


def node_pools_of(plan) -> dict[str, dict]:
    return {r["inputs"]["name"]: r["inputs"] for r in of_type(plan, NODE_POOL)}


# --- node pools per purchase option and machine type ----------------------------------------


def test_each_purchase_option_and_machine_type_is_a_node_pool_in_order(plan):
    assert sorted(node_pools_of(plan)) == sorted(
        [
            "system",
            *("a3-res", "a3-od", "a3-spot"),
            *("l4-spot", "l4-flex"),
            *("l4x1-od", "l4x1-od-1", "l4x1-od-2", "l4x1-spot", "l4x1-spot-1", "l4x1-spot-2"),
        ]
    )
    machines = {name: p["nodeConfig"]["machineType"] for name, p in node_pools_of(plan).items()}
    assert machines["l4x1-od-1"] == machines["l4x1-spot-1"] == "g2-standard-12"
    assert machines["l4x1-od-2"] == "g2-standard-16"
    # A reservation holds the pool's machineType only.
    assert machines["a3-res"] == "a3-highgpu-8g"


def test_how_each_node_pool_buys_its_vms(plan):
    pools = node_pools_of(plan)
    res = pools["a3-res"]["nodeConfig"]
    assert res["reservationAffinity"] == {
        "consumeReservationType": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": ["projects/shared-project/reservations/a3-reserved"],
    }
    assert res["spot"] is False and "flexStart" not in res
    # A specific reservation is in one zone: its node pool scales there only.
    assert pools["a3-res"]["nodeLocations"] == ["us-central1-a"]
    assert len(pools["a3-od"]["nodeLocations"]) > 1
    assert pools["a3-od"]["nodeConfig"]["spot"] is False
    assert "reservationAffinity" not in pools["a3-od"]["nodeConfig"]
    assert pools["a3-spot"]["nodeConfig"]["spot"] is True
    # Spot VMs consume no reservation (Google's node pool module requires it said).
    assert pools["a3-spot"]["nodeConfig"]["reservationAffinity"] == {
        "consumeReservationType": "NO_RESERVATION"
    }
    flex = pools["l4-flex"]
    assert flex["nodeConfig"]["flexStart"] is True and flex["nodeConfig"]["spot"] is False
    assert flex["nodeConfig"]["reservationAffinity"] == {"consumeReservationType": "NO_RESERVATION"}
    # GKE's flex-start node pools go without auto-repair (node_pools.management).
    assert flex["management"]["autoRepair"] is False
    assert pools["l4-spot"]["management"]["autoRepair"] is True
    assert flex["autoscaling"]["totalMinNodeCount"] == 0 and flex["initialNodeCount"] == 0
    policies = {name: p["autoscaling"]["locationPolicy"] for name, p in pools.items()}
    assert policies["a3-od"] == policies["l4x1-od-2"] == "BALANCED"
    assert policies["a3-res"] == policies["a3-spot"] == policies["l4-flex"] == "ANY"


def test_every_node_pool_of_a_pool_keeps_its_gpus_labels_taints_and_max(plan):
    pools = node_pools_of(plan)
    for name, gpu, maximum in (
        ("a3", "nvidia-h100-80gb", 2),
        ("l4", "nvidia-l4", 4),
        ("l4x1", "nvidia-l4", 8),
    ):
        group = {n: p for n, p in pools.items() if n.startswith(f"{name}-")}
        for pool in group.values():
            config = pool["nodeConfig"]
            (accelerator,) = config["guestAccelerators"]
            assert accelerator["type"] == gpu
            assert accelerator["gpuDriverInstallationConfig"] == {"gpuDriverVersion": "DEFAULT"}
            assert config["labels"] == {
                "determined.ai/node-pool": name,
                COMPUTE_CLASS_LABEL: f"determined-{name}",
            }
            assert {
                "key": COMPUTE_CLASS_LABEL,
                "value": f"determined-{name}",
                "effect": "NO_SCHEDULE",
            } in config["taints"]
            assert {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"} in config["taints"]
            assert pool["autoscaling"]["totalMaxNodeCount"] == maximum
            assert pool["upgradeSettings"] == {"strategy": "SURGE", "maxSurge": 0, "maxUnavailable": 1}


def test_the_system_pool_is_left_alone(plan):
    system = node_pools_of(plan)["system"]
    assert system["nodeConfig"]["labels"] == {"determined.ai/node-pool": "system"}
    assert system["nodeConfig"]["taints"] == []
    assert "reservationAffinity" not in system["nodeConfig"]


# --- the ComputeClass ------------------------------------------------------------------------


def test_each_class_lists_its_node_pools_in_order_and_fits_the_crd_schema(plan):
    classes = {c["metadata"]["name"]: c for c in by_kind(plan, "ComputeClass")}
    assert sorted(classes) == ["determined-a3", "determined-l4", "determined-l4x1"]
    order = {
        "determined-a3": ["a3-res", "a3-od", "a3-spot"],
        "determined-l4": ["l4-spot", "l4-flex"],
        "determined-l4x1": ["l4x1-od", "l4x1-od-1", "l4x1-od-2", "l4x1-spot", "l4x1-spot-1", "l4x1-spot-2"],
    }
    pools = node_pools_of(plan)
    for name, obj in classes.items():
        assert obj["apiVersion"] == "cloud.google.com/v1"
        assert crd_problems(obj) == []
        spec = obj["spec"]
        # The CRD's CEL rule (not evaluated by crd_problems): a nodepools priority holds nothing else.
        assert all(list(p) == ["nodepools"] and len(p["nodepools"]) == 1 for p in spec["priorities"])
        assert [p["nodepools"][0] for p in spec["priorities"]] == order[name]
        assert spec["nodePoolAutoCreation"] == {"enabled": False}
        assert spec["whenUnsatisfiable"] == "DoNotScaleUp"
        assert spec["activeMigration"] == {"optimizeRulePriority": False}
        for listed in order[name]:
            assert pools[listed]["nodeConfig"]["labels"][COMPUTE_CLASS_LABEL] == name


def test_the_crd_schema_refuses_what_gke_would():
    obj = compute_classes.compute_class(load_config(_fixture()).node_pools[1])
    bad = copy.deepcopy(obj)
    bad["spec"]["whenUnsatisfiable"] = "Sometimes"
    assert crd_problems(bad)
    bad = copy.deepcopy(obj)
    bad["spec"]["priorities"][0]["nodePools"] = ["a3-res"]
    assert crd_problems(bad)


def test_a_class_is_registered_after_its_node_pools(plan):
    (res,) = [
        r for r in plan.resources if r["type"].endswith("ComputeClass") and r["name"] == "determined-a3"
    ]
    assert sorted(u.rsplit("::", 1)[1] for u in res["dependsOn"]) == ["a3-od", "a3-res", "a3-spot"]


# --- task pods ---------------------------------------------------------------------------------


def test_task_pods_select_the_class_and_tolerate_every_node_pools_taints(plan):
    pools = node_pools_of(plan)
    effects = {
        "NO_SCHEDULE": "NoSchedule",
        "NO_EXECUTE": "NoExecute",
        "PREFER_NO_SCHEDULE": "PreferNoSchedule",
    }
    master = yaml.safe_load(plan.master_yaml)
    checked = 0
    for rp in master["resource_pools"]:
        if rp["pool_name"] not in ("a3", "l4", "l4x1"):
            continue
        for key in ("gpu_pod_spec", "cpu_pod_spec"):
            spec = rp["task_container_defaults"][key]["spec"]
            assert spec["nodeSelector"][COMPUTE_CLASS_LABEL] == f"determined-{rp['pool_name']}"
            tolerations = spec["tolerations"]
            for name, pool in pools.items():
                if not name.startswith(f"{rp['pool_name']}-"):
                    continue
                config = pool["nodeConfig"]
                assert spec["nodeSelector"].items() <= config["labels"].items()
                for taint in config["taints"]:
                    toleration = {
                        "key": taint["key"],
                        "operator": "Equal",
                        "value": taint["value"],
                        "effect": effects[taint["effect"]],
                    }
                    assert toleration in tolerations, (name, taint)
                    checked += 1
    assert checked


# --- arguments ----------------------------------------------------------------------------------


def _fixture() -> dict:
    from planning import _stack_path

    raw = yaml.safe_load(_stack_path(STACK).read_text())["config"]
    return {k.removeprefix("determined:"): v for k, v in raw.items()}


def _args(raw):
    return stack_args.gke_cluster_args(load_config(raw))


def test_min_nodes_go_to_the_first_node_pool_only():
    raw = _fixture()
    raw["nodePools"][1]["minNodes"] = 2
    pool = _args(raw).node_pools[1]
    assert [(s.name, s.min_nodes, s.max_nodes) for s in compute_classes.sub_pools(pool)] == [
        ("a3-res", 2, 2),
        ("a3-od", 0, 2),
        ("a3-spot", 0, 2),
    ]


def test_with_the_gpu_operator_every_node_pool_leaves_drivers_and_device_plugin_to_it():
    raw = _fixture()
    raw["gpuOperator"] = {"enabled": True}
    for pool in raw["nodePools"][1:]:
        pool["imageType"] = "UBUNTU_CONTAINERD"
    args = _args(raw)
    seen = 0
    for pool in args.node_pools[1:]:
        for sub in compute_classes.sub_pools(pool):
            inputs = node_pools.node_pool_args(args, pool, "cluster-id", "sa@p.iam.gserviceaccount.com", sub)
            config = inputs["node_config"]
            (accelerator,) = config["guest_accelerators"]
            assert accelerator["gpu_driver_installation_config"] == {
                "gpu_driver_version": "INSTALLATION_DISABLED"
            }
            assert config["labels"][node_pools.NO_GKE_DEVICE_PLUGIN] == "true"
            assert config["shielded_instance_config"]["enable_secure_boot"] is False
            seen += 1
    assert seen == 11


def test_single_purchase_options_need_no_class():
    raw = copy.deepcopy(GKE)
    raw["nodePools"][1] = {
        **raw["nodePools"][1],
        "capacity": {"types": ["reservation"], "reservation": {"name": "a100-res", "zone": "us-central1-a"}},
    }
    args = _args(raw)
    pool = args.node_pools[1]
    assert pool.compute_class is None and pool.selector == {"determined.ai/node-pool": "a100"}
    inputs = node_pools.node_pool_args(args, pool, "cluster-id", "sa@p.iam.gserviceaccount.com")
    assert inputs["name"] == "a100"
    assert inputs["node_config"]["reservation_affinity"]["values"] == ["a100-res"]
    assert compute_classes.compute_classes(args.node_pools) == []


def test_the_class_label_passes_the_plan_check_and_stays_refused_from_users():
    check = cloud_limits._node_labels_problems("gke")
    assert check({COMPUTE_CLASS_LABEL: "determined-a3"}) == []
    assert check({"cloud.google.com/other": "x"})
    raw = copy.deepcopy(GKE)
    raw["nodePools"][1] = {**raw["nodePools"][1], "labels": {COMPUTE_CLASS_LABEL: "mine"}}
    with pytest.raises(ConfigError):
        load_config(raw)


# --- refusals ----------------------------------------------------------------------------------


def problems(raw) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(raw)
    return [str(p) for p in info.value.problems]


def with_pool(**pool) -> dict:
    raw = copy.deepcopy(GKE)
    raw["nodePools"][1] = {**raw["nodePools"][1], **pool}
    return raw


@pytest.mark.parametrize(
    ("pool", "key", "words"),
    [
        # a2-highgpu-4g carries 4 A100s; a2-highgpu-8g 8, g2-standard-8 one L4.
        (
            {"capacity": {"types": ["onDemand", "spot"], "instanceTypes": ["a2-highgpu-8g"]}},
            "nodePools[1].capacity.instanceTypes[0]",
            "does not carry 4 nvidia-tesla-a100",
        ),
        (
            {"capacity": {"types": ["onDemand"], "instanceTypes": ["g2-standard-8"]}},
            "nodePools[1].capacity.instanceTypes[0]",
            "does not carry 4 nvidia-tesla-a100",
        ),
        (
            {"capacity": {"types": ["flexStart", "spot"]}, "minNodes": 1, "maxNodes": 2},
            "nodePools[1].minNodes",
            "flex-start keeps no nodes",
        ),
        (
            {"name": "a" * 38, "capacity": {"types": ["onDemand", "spot"]}},
            "nodePools[1].name",
            "GKE takes at most 40",
        ),
    ],
)
def test_refusals_one_line_per_problem(pool, key, words):
    found = problems(with_pool(**pool))
    hits = [p for p in found if p.startswith(f"determined:{key}") and words in p]
    assert len(hits) == 1, found


def test_a_node_pool_name_taken_twice_is_refused():
    raw = with_pool(capacity={"types": ["onDemand", "spot"]})
    raw["nodePools"].append({"name": "a100-od", "machineType": "e2-standard-4"})
    found = problems(raw)
    assert any(
        "'a100-od' is also nodePools[2]" in p or "'a100-od' is also nodePools[1]" in p for p in found
    ), found


def test_cpu_instance_types_on_other_architectures_are_refused():
    raw = copy.deepcopy(GKE)
    raw["nodePools"].append(
        {
            "name": "cpu",
            "machineType": "n2-standard-8",
            "taints": [{"key": "dedicated", "value": "cpu", "effect": "NoSchedule"}],
            "capacity": {"types": ["spot", "onDemand"], "instanceTypes": ["c4a-standard-8", "a2-highgpu-1g"]},
        }
    )
    found = problems(raw)
    assert [
        p for p in found if p.startswith("determined:nodePools[2].capacity.instanceTypes[0]") and "Arm" in p
    ]
    assert [
        p for p in found if p.startswith("determined:nodePools[2].capacity.instanceTypes[1]") and "GPUs" in p
    ]


def test_the_fixture_is_accepted():
    load_config(_fixture())


# a3-highgpu-1g/2g/4g are sold only as Spot VMs, through flex-start or from a reservation
# (components/config/gke_machines.py NOT_ON_DEMAND, with its source).
H100X4 = {"machineType": "a3-highgpu-4g", "gpu": {"type": "nvidia-h100-80gb", "count": 4}}


def test_on_demand_of_a_machine_not_sold_on_demand_is_refused_per_purchase_option():
    found = problems(with_pool(**H100X4, capacity={"types": ["onDemand", "spot"]}))
    assert [p for p in found if p.startswith("determined:nodePools[1].capacity.types:") and "on demand" in p]
    # The same machine from a reservation, then flex-start: nothing to refuse.
    reserved = {"types": ["reservation", "flexStart"], "reservation": {"name": "r", "zone": "us-central1-a"}}
    raw = with_pool(**H100X4, capacity=reserved)
    raw["resourcePools"][0]["quota"] = {"gpu": 4}  # two node pools: bounded together
    load_config(raw)


def test_on_demand_of_an_instance_type_not_sold_on_demand_is_refused():
    # No second 4-GPU A3 size exists: machineType listed again shows the instance type's check.
    capacity = {"types": ["spot", "onDemand"], "instanceTypes": ["a3-highgpu-4g"]}
    found = problems(with_pool(**H100X4, capacity=capacity))
    assert [p for p in found if "capacity.instanceTypes[0]" in p and "not sold on demand" in p], found


def test_the_gpu_operators_daemonsets_tolerate_the_class_taint():
    from components.addons import gpu_operator

    pools = load_config(_fixture()).node_pools
    tolerations = gpu_operator.with_gpu_pool_taints([], pools)
    for name in ("a3", "l4", "l4x1"):
        assert {
            "key": COMPUTE_CLASS_LABEL,
            "operator": "Equal",
            "value": f"determined-{name}",
            "effect": "NoSchedule",
        } in tolerations
