"""GKE node pool zones: GPU pools go where their GPU is offered (components.config.gke_gpu_zones),
given zones are checked against the region, cluster.zones and the GPU, and the node pools
carry the result as node locations."""

from __future__ import annotations

import copy
import math

import pytest
from planning import plan_for, resource

from components.config import ConfigError, gke_gpu_zones, gke_machines, load_config
from components.config.gke import pool_zones

SYSTEM = {"name": "system", "machineType": "e2-standard-8"}
A100 = {"name": "a100", "machineType": "a2-highgpu-4g", "gpu": {"type": "nvidia-tesla-a100", "count": 4}}
H100 = {"name": "h100", "machineType": "a3-highgpu-8g", "gpu": {"type": "nvidia-h100-80gb", "count": 8}}
L4 = {"name": "l4", "machineType": "g2-standard-8", "gpu": {"type": "nvidia-l4", "count": 1}}
G4 = {"name": "g4", "machineType": "g4-standard-48", "gpu": {"type": "nvidia-rtx-pro-6000", "count": 1}}


def gke(*pools, region="us-central1", zones=None):
    cluster = {"name": "det", "region": region, "project": "p"}
    if zones is not None:
        cluster["zones"] = zones
    gpu_pools = [{"name": p["name"], "nodePool": p["name"]} for p in pools]
    return {
        "cloud": "gke",
        "cluster": cluster,
        "nodePools": [copy.deepcopy(SYSTEM), *copy.deepcopy(list(pools))],
        "resourcePools": [*gpu_pools, {"name": "aux", "nodePool": "system"}],
    }


def zones_of(raw, name):
    cfg = load_config(raw)
    return pool_zones(cfg, next(p for p in cfg.node_pools if p.name == name))


def problems(raw) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(raw)
    return [str(p) for p in info.value.problems]


# --- the table ------------------------------------------------------------------------------


def every_accelerator() -> set[str]:
    return set(gke_machines.N1_ACCELERATORS) | set(gke_machines.SERIES_ACCELERATOR.values())


def test_the_table_covers_every_gpu_the_machine_types_take():
    assert every_accelerator() == set(gke_gpu_zones.ACCELERATOR_ZONES) | gke_gpu_zones.UNLISTED
    assert not set(gke_gpu_zones.ACCELERATOR_ZONES) & gke_gpu_zones.UNLISTED
    for series in gke_gpu_zones.SERIES_ZONES:
        assert series in gke_machines.SERIES_ACCELERATOR
    for machine in gke_gpu_zones.MACHINE_ZONES:
        assert gke_machines.gpu_machine(machine) is not None, machine


def test_every_zone_belongs_to_its_region_and_series_narrow_their_gpu():
    for accelerator, regions in gke_gpu_zones.ACCELERATOR_ZONES.items():
        assert regions, accelerator
        for region, zones in regions.items():
            assert zones and all(z.rsplit("-", 1)[0] == region for z in zones), (accelerator, region)
    for series, regions in gke_gpu_zones.SERIES_ZONES.items():
        gpu = gke_gpu_zones.ACCELERATOR_ZONES[gke_machines.SERIES_ACCELERATOR[series]]
        for region, zones in regions.items():
            assert set(zones) <= set(gpu[region]), (series, region)
    for machine, regions in gke_gpu_zones.MACHINE_ZONES.items():
        series = gke_gpu_zones.SERIES_ZONES[gke_machines.series(machine)]
        for region, zones in regions.items():
            assert zones and set(zones) <= set(series[region]), (machine, region)


# Rows of the source per machine type (skypilot-catalog catalogs/v8/gcp/vms.csv @006059e, read
# 2026-11-25): a3-highgpu-1g, -2g and -4g have a europe-west8-c row, a3-highgpu-8g none; every
# size has the series' rows elsewhere.
@pytest.mark.parametrize(
    ("machine", "zones"),
    [
        ("a3-highgpu-1g", ("europe-west8-c",)),
        ("a3-highgpu-2g", ("europe-west8-c",)),
        ("a3-highgpu-4g", ("europe-west8-c",)),
        ("a3-highgpu-8g", ()),
    ],
)
def test_machine_types_offered_in_fewer_zones_than_their_series(machine, zones):
    assert gke_gpu_zones.zones("nvidia-h100-80gb", "europe-west8", machine) == zones
    assert gke_gpu_zones.zones("nvidia-h100-80gb", "us-central1", machine) == (
        "us-central1-a",
        "us-central1-b",
        "us-central1-c",
    )
    # The series stands for its widest machine type.
    assert gke_gpu_zones.zones("nvidia-h100-80gb", "europe-west8", "a3-highgpu") == ("europe-west8-c",)


def test_a_pool_takes_the_zones_of_its_machine_type():
    h100_4g = {**H100, "machineType": "a3-highgpu-4g", "gpu": {"type": "h100", "count": 4}, "spot": True}
    assert zones_of(gke(h100_4g, region="europe-west8"), "h100") == ["europe-west8-c"]
    lines = problems(gke(H100, region="europe-west8"))
    assert any(
        line.startswith(
            "determined:nodePools[1].gpu.type: nvidia-h100-80gb (a3-highgpu-8g) is not offered in "
            "europe-west8; other a3-highgpu sizes are, in europe-west8-c; regions that have it: asia-east1,"
        )
        for line in lines
    ), lines


# Rows of the source (skypilot-catalog catalogs/v8/gcp/vms.csv, read 2026-11-25), one per GPU.
@pytest.mark.parametrize(
    ("accelerator", "series", "region", "zones"),
    [
        ("nvidia-tesla-a100", "a2-highgpu", "us-central1", "abcf"),
        ("nvidia-tesla-a100", "a2-megagpu", "asia-southeast1", "ac"),
        ("nvidia-a100-80gb", None, "us-east4", "c"),
        ("nvidia-h100-80gb", "a3-highgpu", "europe-west4", "bc"),
        ("nvidia-h100-80gb", "a3-edgegpu", "asia-northeast3", "ac"),
        ("nvidia-h100-mega-80gb", None, "us-east4", "abc"),
        ("nvidia-h200-141gb", None, "us-central1", "b"),
        ("nvidia-b200", None, "us-west3", "bc"),
        ("nvidia-l4", None, "us-central1", "abc"),
        ("nvidia-tesla-t4", None, "us-central1", "abcf"),
        ("nvidia-tesla-v100", None, "europe-west4", "abc"),
        ("nvidia-tesla-p100", None, "us-central1", "cf"),
        ("nvidia-tesla-p4", None, "us-west2", "bc"),
    ],
)
def test_zones_of_a_gpu_in_a_region(accelerator, series, region, zones):
    assert gke_gpu_zones.zones(accelerator, region, series) == tuple(f"{region}-{z}" for z in zones)


def test_a_region_without_the_gpu_has_no_zones_and_an_unlisted_gpu_is_unknown():
    assert gke_gpu_zones.zones("nvidia-h100-80gb", "southamerica-east1", "a3-highgpu") == ()
    # A3 Edge has zones where A3 High has none.
    assert gke_gpu_zones.zones("nvidia-h100-80gb", "asia-northeast3", "a3-highgpu") == ()
    assert gke_gpu_zones.zones("nvidia-rtx-pro-6000", "us-central1", "g4-standard") is None


# --- default zones -------------------------------------------------------------------------


def test_a_gpu_pool_goes_to_the_zones_of_the_region_that_offer_its_gpu():
    assert zones_of(gke(H100), "h100") == ["us-central1-a", "us-central1-b", "us-central1-c"]
    assert zones_of(gke(A100, region="europe-west4"), "a100") == ["europe-west4-a", "europe-west4-b"]


def test_cluster_zones_narrow_the_gpu_zones_in_their_order():
    raw = gke(A100, zones=["us-central1-f", "us-central1-d", "us-central1-a"])
    assert zones_of(raw, "a100") == ["us-central1-f", "us-central1-a"]


def test_cpu_pools_take_their_zones_else_the_clusters_else_gke_default():
    assert zones_of(gke(L4), "system") is None
    assert zones_of(gke(L4, zones=["us-central1-a", "us-central1-b"]), "system") == [
        "us-central1-a",
        "us-central1-b",
    ]
    raw = gke(L4, zones=["us-central1-a", "us-central1-b"])
    raw["nodePools"][0]["zones"] = ["us-central1-b"]
    assert zones_of(raw, "system") == ["us-central1-b"]


def test_given_zones_win():
    assert zones_of(gke({**L4, "zones": ["us-central1-c"]}), "l4") == ["us-central1-c"]


def test_an_unlisted_gpu_takes_the_zones_given():
    assert zones_of(gke({**G4, "zones": ["us-central1-b"]}), "g4") == ["us-central1-b"]
    assert zones_of(gke(G4, zones=["us-central1-b"]), "g4") == ["us-central1-b"]


# --- refusals ------------------------------------------------------------------------------


BAD = [
    (
        "gpu the region lacks",
        gke(H100, region="southamerica-east1"),
        "determined:nodePools[1].gpu.type: nvidia-h100-80gb (a3-highgpu-8g) is not offered in "
        "southamerica-east1; regions that have it: asia-east1, asia-northeast1,",
    ),
    (
        "given zone lacks the gpu",
        gke({**H100, "zones": ["us-central1-a", "us-central1-f"]}),
        "determined:nodePools[1].zones[1]: 'us-central1-f' does not offer nvidia-h100-80gb (a3-highgpu-8g); "
        "zones of us-central1 that do: us-central1-a, us-central1-b, us-central1-c",
    ),
    (
        "cluster zones lack the gpu",
        gke(H100, zones=["us-central1-f"]),
        "determined:cluster.zones: none of them offers nvidia-h100-80gb (a3-highgpu-8g), which "
        "nodePools[1] (h100) needs; zones of us-central1 that do: us-central1-a, us-central1-b, us-central1-c",
    ),
    (
        "pool zone outside the region",
        gke({**L4, "zones": ["us-east1-b"]}),
        "determined:nodePools[1].zones[0]: 'us-east1-b' is not a zone of cluster.region us-central1",
    ),
    (
        "pool zone outside cluster zones",
        gke({**L4, "zones": ["us-central1-c"]}, zones=["us-central1-a", "us-central1-b"]),
        "determined:nodePools[1].zones[0]: 'us-central1-c' is not one of cluster.zones "
        "(us-central1-a, us-central1-b)",
    ),
    (
        "cpu pool zone outside the region",
        gke(L4) | {"nodePools": [{**SYSTEM, "zones": ["europe-west4-a"]}, L4]},
        "determined:nodePools[0].zones[0]: 'europe-west4-a' is not a zone of cluster.region us-central1",
    ),
    (
        "a zone twice",
        gke({**L4, "zones": ["us-central1-a", "us-central1-a"]}),
        "determined:nodePools[1].zones[1]: 'us-central1-a' is listed twice",
    ),
    (
        "no zone",
        gke({**L4, "zones": []}),
        "determined:nodePools[1].zones: names no zone",
    ),
    (
        "not a zone",
        gke({**L4, "zones": ["us-central1"]}),
        "determined:nodePools[1].zones[0]: 'us-central1' is not a Google Cloud zone",
    ),
    (
        "an unlisted gpu without zones",
        gke(G4),
        "determined:nodePools[1].zones: required for nvidia-rtx-pro-6000: the project's GPU zone table "
        f"(read {gke_gpu_zones.READ}) does not list its zones",
    ),
]


@pytest.mark.parametrize(("raw", "expected"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_zones_name_key_path_and_problem(raw, expected):
    lines = problems(raw)
    assert any(line.startswith(expected) for line in lines), lines


def test_zones_are_for_created_node_pools_only():
    raw = {
        "cloud": "existing",
        "cluster": {"name": "det"},
        "nodePools": [{"name": "system", "nodeSelector": {"pool": "system"}, "zones": ["us-east-1a"]}],
        "resourcePools": [{"name": "aux", "nodePool": "system"}],
        "slots": {"type": "cpu", "maxSlotsPerPod": 1},
    }
    assert any(
        line.startswith("determined:nodePools[0].zones: only for cloud gke or eks") for line in problems(raw)
    )


def test_a_mismatched_gpu_is_reported_once_not_as_a_zone_problem():
    lines = problems(gke({**H100, "machineType": "a2-highgpu-4g"}))
    assert not any(".zones" in line or "not offered" in line for line in lines), lines


# --- what GKE is asked for -----------------------------------------------------------------


def node_pool(result, name):
    return resource(result, "container/nodePool:NodePool", name)["inputs"]


def test_node_pools_carry_their_zones_and_the_initial_size_per_zone():
    pools = [
        {**A100, "minNodes": 5, "maxNodes": 8},
        {**L4, "zones": ["us-central1-a"], "minNodes": 2, "maxNodes": 4},
    ]
    result = plan_for(gke(*pools))
    a100, l4, system = node_pool(result, "a100"), node_pool(result, "l4"), node_pool(result, "system")
    assert a100["nodeLocations"] == ["us-central1-a", "us-central1-b", "us-central1-c", "us-central1-f"]
    assert a100["initialNodeCount"] == math.ceil(5 / 4)
    assert l4["nodeLocations"] == ["us-central1-a"] and l4["initialNodeCount"] == 2
    # GKE's own choice of three zones for a pool that names none.
    assert "nodeLocations" not in system and system["initialNodeCount"] == 0
