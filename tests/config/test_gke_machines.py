"""What Compute Engine sells and attaches, per machine type (components.config.gke_machines): machine
types not sold on demand need `spot`, N1 machines carry GPUs only up to a size, and Arm machines
come tainted by GKE, so their pools are never the system pool and their pods tolerate it."""

from __future__ import annotations

import copy

import pytest
from conftest import GKE

from components.config import ConfigError, gke_machines, load_config
from components.config.node_pools import ARM_TAINT

SYSTEM = {"name": "system", "machineType": "e2-standard-8"}
# CPU-only resource pools need it (the plan does not know the nodes' CPUs).
CPU_SLOTS = {"slots": {"maxSlotsPerPod": 1}}


def gke(*pools, system=SYSTEM, **top):
    raw = copy.deepcopy(GKE) | top
    raw["nodePools"] = [copy.deepcopy(system), *copy.deepcopy(list(pools))]
    raw["resourcePools"] = [
        *({"name": p["name"], "nodePool": p["name"]} for p in pools),
        {"name": "aux", "nodePool": system["name"]},
    ]
    return raw


def problems(raw) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(raw)
    return [str(p) for p in info.value.problems]


def gpu_pool(machine, gpu, count, **more):
    return {"name": "gpu", "machineType": machine, "gpu": {"type": gpu, "count": count}, **more}


# --- machine types not sold on demand ------------------------------------------------------


# Google's consumption option table (secondary: cluster-toolkit PR #6279, gpuhunt gcp.py):
# A4, A4X and A3 Ultra never on demand, A3 High on demand with 8 GPUs only.
@pytest.mark.parametrize(
    ("machine", "on_demand"),
    [
        ("a4-highgpu-8g", False),
        ("a4x-highgpu-4g", False),
        ("a3-ultragpu-8g", False),
        ("a3-highgpu-1g", False),
        ("a3-highgpu-2g", False),
        ("a3-highgpu-4g", False),
        ("a3-highgpu-8g", True),
        ("a3-megagpu-8g", True),
        ("a2-highgpu-1g", True),
        ("g2-standard-8", True),
        ("n1-standard-8", True),
        ("e2-standard-8", True),
    ],
)
def test_machine_types_sold_on_demand(machine, on_demand):
    assert gke_machines.sold_on_demand(machine) is on_demand


@pytest.mark.parametrize(
    ("machine", "gpu", "count"),
    [("a4-highgpu-8g", "b200", 8), ("a3-ultragpu-8g", "h200", 8), ("a3-highgpu-2g", "h100", 2)],
)
def test_a_pool_of_a_machine_type_not_sold_on_demand_must_be_spot(machine, gpu, count):
    lines = problems(gke(gpu_pool(machine, gpu, count)))
    assert any(
        line.startswith(
            f"determined:nodePools[1].spot: required for {machine}: Compute Engine does not sell it on "
            "demand, only as Spot VMs, through flex-start or from a reservation"
        )
        for line in lines
    ), lines
    cfg = load_config(gke(gpu_pool(machine, gpu, count, spot=True)))
    assert cfg.node_pools[1].spot


def test_a3_high_with_eight_gpus_is_sold_on_demand():
    load_config(gke(gpu_pool("a3-highgpu-8g", "h100", 8)))
    (line,) = [x for x in problems(gke(gpu_pool("a3-highgpu-4g", "h100", 4))) if ".spot:" in x]
    assert line.endswith("set spot: true, or a3-highgpu-8g, sold on demand")
    (line,) = [x for x in problems(gke(gpu_pool("a4-highgpu-8g", "b200", 8))) if ".spot:" in x]
    assert line.endswith("set spot: true")


# --- N1 machines with GPUs -------------------------------------------------------------------


# Compute Engine's N1 GPU table (as SkyPilot's gcp_catalog.py and gpuhunt copy it): GPU count ->
# the most vCPUs and GB of memory.
@pytest.mark.parametrize(
    ("gpu", "limits"),
    [
        ("nvidia-tesla-t4", {1: (48, 312), 2: (48, 312), 4: (96, 624)}),
        ("nvidia-tesla-v100", {1: (12, 78), 2: (24, 156), 4: (48, 312), 8: (96, 624)}),
        ("nvidia-tesla-p100", {1: (16, 104), 2: (32, 208), 4: (96, 624)}),
        ("nvidia-tesla-p4", {1: (24, 156), 2: (48, 312), 4: (96, 624)}),
    ],
)
def test_n1_gpu_limits(gpu, limits):
    assert gke_machines.N1_GPU_LIMITS[gpu] == limits
    assert gke_machines.N1_ACCELERATORS[gpu] == tuple(limits)


@pytest.mark.parametrize(
    ("machine", "shape"),
    [
        ("n1-standard-8", (8, 30)),
        ("n1-highmem-12", (12, 78)),
        ("n1-highcpu-16", (16, 14.4)),
        ("n1-custom-12-79872", (12, 78)),
        ("n1-megamem-96", None),
        ("e2-standard-8", None),
    ],
)
def test_n1_shapes_from_the_name(machine, shape):
    found = gke_machines.n1_shape(machine)
    assert found == shape if shape is None else found == pytest.approx(shape)


@pytest.mark.parametrize(
    ("machine", "gpu", "count"),
    [
        ("n1-highmem-12", "v100", 1),  # 12 vCPUs, 78 GB: the limit exactly
        ("n1-custom-12-79872", "v100", 1),
        ("n1-standard-48", "t4", 1),
        ("n1-highmem-96", "v100", 8),
        ("n1-standard-32", "v100", 4),
    ],
)
def test_n1_machines_within_the_limits_are_accepted(machine, gpu, count):
    load_config(gke(gpu_pool(machine, gpu, count)))


@pytest.mark.parametrize(
    ("machine", "gpu", "count", "expected"),
    [
        (
            "n1-standard-32",
            "v100",
            1,
            "n1-standard-32 has 32 vCPUs and 120 GB of memory; with 1 nvidia-tesla-v100 GPU(s) an N1 machine "
            "takes at most 12 vCPUs and 78 GB (Compute Engine's N1 GPU limits): use n1-standard-8 or smaller, "
            "or attach 4 GPUs",
        ),
        ("n1-highmem-16", "v100", 1, "n1-highmem-16 has 16 vCPUs and 104 GB of memory; with 1"),
        ("n1-custom-12-80128", "v100", 1, "n1-custom-12-80128 has 12 vCPUs and 78.25 GB of memory"),
        (
            "n1-standard-64",
            "t4",
            2,
            "n1-standard-64 has 64 vCPUs and 240 GB of memory; with 2 nvidia-tesla-t4",
        ),
        ("n1-standard-32", "p100", 1, "n1-standard-32 has 32 vCPUs"),
    ],
)
def test_n1_machines_over_the_limits_are_refused(machine, gpu, count, expected):
    lines = problems(gke(gpu_pool(machine, gpu, count)))
    assert any(line.startswith(f"determined:nodePools[1].machineType: {expected}") for line in lines), lines


# --- Arm machines ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("machine", "arm"),
    [
        ("t2a-standard-4", True),
        ("c4a-standard-16", True),
        ("n4a-standard-8", True),
        ("a4x-highgpu-4g", True),
        ("t2d-standard-4", False),
        ("c4-standard-8", False),
        ("n4-standard-8", False),
        ("a4-highgpu-8g", False),
    ],
)
def test_arm_machine_types(machine, arm):
    assert gke_machines.is_arm(machine) is arm


def test_gkes_arm_taint():
    assert ARM_TAINT.node_taint == {"key": "kubernetes.io/arch", "value": "arm64", "effect": "NO_SCHEDULE"}


def test_an_arm_pool_carries_gkes_arm_taint_so_its_pods_tolerate_it():
    cfg = load_config(gke({"name": "arm", "machineType": "c4a-standard-16", "maxNodes": 4}, **CPU_SLOTS))
    arm = cfg.node_pools[1]
    assert arm.all_taints == [ARM_TAINT]
    assert cfg.node_pools[0].all_taints == []
    assert cfg.master_node_pool.name == "system"
    gb200 = load_config(gke(gpu_pool("a4x-highgpu-4g", "gb200", 4, spot=True, zones=["us-central1-b"])))
    assert [t.key for t in gb200.node_pools[1].all_taints] == ["nvidia.com/gpu", "kubernetes.io/arch"]


def test_an_arm_pool_is_not_the_system_pool():
    arm_system = {"name": "system", "machineType": "t2a-standard-4", "minNodes": 1, "maxNodes": 2}
    lines = problems(gke(gpu_pool("a3-highgpu-8g", "h100", 8), system=arm_system))
    assert (
        "determined:nodePools: at least one untainted CPU pool is needed for system pods (CoreDNS, the "
        "master, the database); GKE taints Arm nodes kubernetes.io/arch=arm64:NoSchedule: system "
        "(t2a-standard-4)"
    ) in lines, lines
    raw = gke({"name": "arm", "machineType": "c4a-standard-8"}, master={"nodePool": "arm"}, **CPU_SLOTS)
    assert any(
        line.startswith("determined:master.nodePool: node pool 'arm' is tainted")
        and line.endswith("GKE taints Arm nodes kubernetes.io/arch=arm64:NoSchedule: arm (c4a-standard-8)")
        for line in problems(raw)
    ), problems(raw)


def test_an_arm_pool_takes_no_other_arch_taint():
    pool = {
        "name": "arm",
        "machineType": "c4a-standard-8",
        "taints": [{"key": "kubernetes.io/arch", "value": "amd64", "effect": "NoSchedule"}],
    }
    assert any(
        line.startswith("determined:nodePools[1].taints[0]: c4a-standard-8 is Arm: GKE taints its nodes")
        for line in problems(gke(pool, **CPU_SLOTS))
    )
    # GKE's own taint, written out, is the same taint: accepted.
    pool["taints"][0]["value"] = "arm64"
    assert load_config(gke(pool, **CPU_SLOTS)).node_pools[1].all_taints == [ARM_TAINT]
