"""GKE boot disks per machine series (components.config.gke_machines.DISK_TYPES): the default is
pd-balanced where the series takes it, else hyperdisk-balanced; a diskType the series cannot
use is refused; the in-cluster database's volume takes a type its node pool can attach."""

from __future__ import annotations

import copy

import conftest
import pytest
from planning import by_kind, plan_for, planned, resource

from components.config import ConfigError, gke_machines, load_config
from components.config.gke import database_disk_type

# conftest's smallest GKE stack with an L4 pool (offered in every zone of us-central1 it uses).
GKE = {
    **conftest.GKE,
    "nodePools": [
        {"name": "system", "machineType": "e2-standard-8"},
        {"name": "l4", "machineType": "g2-standard-8", "gpu": {"type": "nvidia-l4", "count": 1}},
    ],
    "resourcePools": [{"name": "l4", "nodePool": "l4"}, {"name": "aux", "nodePool": "system"}],
}


def with_system(**system):
    raw = copy.deepcopy(GKE)
    raw["nodePools"][0].update(system)
    return raw


def problems(raw) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(raw)
    return [str(p) for p in info.value.problems]


# Every series the project expects users to pick, by an example machine type.
SERIES = [
    "e2-standard-8",
    "n1-standard-8",
    "n2-standard-8",
    "n2d-standard-8",
    "t2d-standard-8",
    "t2a-standard-8",
    "c2-standard-8",
    "c2d-standard-8",
    "c3-standard-8",
    "c3d-standard-8",
    "c4-standard-8",
    "c4a-standard-8",
    "c4d-standard-8",
    "n4-standard-8",
    "n4a-standard-8",
    "n4d-standard-8",
    "h3-standard-88",
    "m1-ultramem-40",
    "m2-ultramem-208",
    "m3-ultramem-32",
    "m4-megamem-56",
    "x4-960-16t",
    "z3-highmem-88",
    "a2-highgpu-1g",
    "a2-ultragpu-1g",
    "a3-highgpu-8g",
    "a3-megagpu-8g",
    "a3-edgegpu-8g",
    "a3-ultragpu-8g",
    "a4-highgpu-8g",
    "a4x-highgpu-4g",
    "g2-standard-8",
    "g4-standard-48",
]


@pytest.mark.parametrize("machine", SERIES)
def test_every_series_has_its_boot_disk_types(machine):
    types = gke_machines.disk_types(machine)
    assert types, machine
    assert set(types) <= set(gke_machines.BOOT_DISK_TYPES)


# The facts the table holds, one per kind of series (Compute Engine disk support, read
# 2026-11-25): Hyperdisk only; Persistent Disk only; both; pd-balanced without pd-standard.
@pytest.mark.parametrize(
    ("machine", "types"),
    [
        ("c4-standard-8", ("hyperdisk-balanced",)),
        ("n4-standard-8", ("hyperdisk-balanced",)),
        ("a3-ultragpu-8g", ("hyperdisk-balanced",)),
        ("a4-highgpu-8g", ("hyperdisk-balanced",)),
        ("a4x-highgpu-4g", ("hyperdisk-balanced",)),
        ("g4-standard-48", ("hyperdisk-balanced",)),
        ("e2-standard-8", ("pd-balanced", "pd-ssd", "pd-standard")),
        ("n2-standard-8", ("pd-balanced", "pd-ssd", "pd-standard")),
        ("c2-standard-8", ("pd-balanced", "pd-ssd", "pd-standard")),
        ("c3-standard-8", ("pd-balanced", "pd-ssd", "hyperdisk-balanced")),
        ("a3-highgpu-8g", ("pd-balanced", "pd-ssd", "hyperdisk-balanced")),
        ("g2-standard-8", ("pd-balanced", "pd-ssd")),
    ],
)
def test_boot_disk_types_of_a_series(machine, types):
    assert gke_machines.disk_types(machine) == types


@pytest.mark.parametrize(
    ("machine", "default"),
    [
        ("e2-standard-8", "pd-balanced"),
        ("n2-custom-4-16384", "pd-balanced"),
        ("a3-highgpu-8g", "pd-balanced"),
        ("c4-standard-8", "hyperdisk-balanced"),
        ("n4-highmem-16", "hyperdisk-balanced"),
        ("a3-ultragpu-8g", "hyperdisk-balanced"),
        # A series the table does not know keeps GKE's default.
        ("f1-micro", "pd-balanced"),
    ],
)
def test_the_default_boot_disk_is_pd_balanced_where_the_series_takes_it(machine, default):
    assert gke_machines.default_disk_type(machine) == default


@pytest.mark.parametrize(
    ("machine", "disk", "expected"),
    [
        (
            "c4-standard-8",
            "pd-ssd",
            "c4-standard-8 cannot boot from pd-ssd; its series takes hyperdisk-balanced",
        ),
        ("n4-standard-8", "pd-balanced", "n4-standard-8 cannot boot from pd-balanced; its series takes"),
        (
            "c2-standard-8",
            "hyperdisk-balanced",
            "c2-standard-8 cannot boot from hyperdisk-balanced; its series "
            "takes pd-balanced, pd-ssd, pd-standard",
        ),
        ("c3-standard-8", "pd-standard", "c3-standard-8 cannot boot from pd-standard"),
    ],
)
def test_a_disk_type_the_series_cannot_use_is_refused(machine, disk, expected):
    lines = problems(with_system(machineType=machine, diskType=disk))
    assert f"determined:nodePools[0].diskType: {expected}" in "\n".join(lines), lines


def test_a_disk_type_the_series_takes_is_accepted():
    cfg = load_config(with_system(machineType="c3-standard-8", diskType="hyperdisk-balanced"))
    assert cfg.node_pools[0].disk_type == "hyperdisk-balanced"


def test_node_pools_boot_from_their_series_default():
    raw = copy.deepcopy(GKE)
    raw["nodePools"].append({"name": "c4", "machineType": "c4-standard-8"})
    result = plan_for(raw)
    disks = {
        p["name"]: p["inputs"]["nodeConfig"]["diskType"]
        for p in result.resources
        if p["type"].endswith("container/nodePool:NodePool")
    }
    assert disks == {"system": "pd-balanced", "l4": "pd-balanced", "c4": "hyperdisk-balanced"}


# --- the in-cluster database's volume ------------------------------------------------------


def storage_class(result):
    (sc,) = [m for m in by_kind(result, "StorageClass") if m["metadata"]["name"] == "determined-db"]
    return sc


def test_the_database_volume_stays_pd_balanced_where_the_pool_takes_it():
    assert database_disk_type(load_config(GKE)) == "pd-balanced"
    assert storage_class(planned("gke-dev"))["parameters"] == {"type": "pd-balanced"}


def test_the_database_volume_is_hyperdisk_on_a_pool_that_cannot_attach_pd_balanced():
    raw = with_system(machineType="n4-standard-8")
    assert database_disk_type(load_config(raw)) == "hyperdisk-balanced"
    assert storage_class(plan_for(raw))["parameters"] == {"type": "hyperdisk-balanced"}


def test_a_hyperdisk_database_volume_is_at_least_its_minimum():
    raw = with_system(machineType="c4-standard-8") | {"database": {"storageSize": "2Gi"}}
    assert any(
        line.startswith("determined:database.storageSize: at least 4Gi: the database's node pool (system)")
        for line in problems(raw)
    )
    load_config(with_system(machineType="c4-standard-8") | {"database": {"storageSize": "4Gi"}})
    # pd-balanced volumes: no such bound here.
    load_config(GKE | {"database": {"storageSize": "2Gi"}})


def test_the_boot_disk_floor_holds_for_hyperdisk_too():
    # GKE's floor for boot disks is above Hyperdisk Balanced's smallest volume.
    lines = problems(with_system(machineType="c4-standard-8", diskSizeGb=9))
    assert any(line.startswith("determined:nodePools[0].diskSizeGb: must be at least 10") for line in lines)
    assert gke_machines.HYPERDISK_BALANCED_MIN_GIB < 10


def test_existing_stacks_keep_their_boot_disks():
    for stack in ("gke-dev", "gke-prod"):
        result = planned(stack)
        for pool in result.resources:
            if pool["type"].endswith("container/nodePool:NodePool"):
                assert pool["inputs"]["nodeConfig"]["diskType"] == "pd-balanced", (stack, pool["name"])
    assert (
        resource(planned("gke-prod"), "container/nodePool:NodePool", "a100")["inputs"]["nodeConfig"][
            "diskType"
        ]
        == "pd-balanced"
    )
