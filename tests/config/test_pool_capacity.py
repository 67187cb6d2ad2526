"""`nodePools[].capacity` and `cluster.autoscaler`: defaults, and what each cloud refuses, one
line per problem naming the key path."""

from __future__ import annotations

import pytest
from conftest import EKS, GKE, config_problems, make_config, with_pool

EKS_KARPENTER = {**EKS, "cluster": {**EKS["cluster"], "autoscaler": "karpenter"}}


problems = config_problems


def test_without_capacity_a_pool_is_on_demand_or_spot_with_its_machine_type():
    cfg = make_config(**with_pool(EKS, 1, spot=True))
    system, gpu = cfg.node_pools
    assert system.capacity_types == ["onDemand"] and gpu.capacity_types == ["spot"]
    assert gpu.machine_types == ["p4d.24xlarge"]
    assert cfg.cluster.autoscaler == "clusterAutoscaler"


def test_capacity_orders_types_and_adds_instance_types():
    capacity = {"types": ["spot", "onDemand"], "instanceTypes": ["p4de.24xlarge"]}
    cfg = make_config(**with_pool(EKS_KARPENTER, 1, capacity=capacity))
    pool = cfg.node_pools[1]
    assert pool.capacity_types == ["spot", "onDemand"]
    assert pool.machine_types == ["p4d.24xlarge", "p4de.24xlarge"]
    assert pool.capacity.fallback


@pytest.mark.parametrize(
    ("capacity", "key", "says"),
    [
        ({"types": ["spot", "spot"]}, "nodePools[1].capacity.types", "listed twice"),
        ({"types": []}, "nodePools[1].capacity.types", ""),
        ({"types": ["reserved"]}, "nodePools[1].capacity.types[0]", ""),
        ({"types": ["reservation"]}, "nodePools[1].capacity", "needs `reservation`"),
        ({"reservation": {"ids": ["cr-0123456789abcdef0"]}}, "nodePools[1].capacity", "does not list"),
        ({"types": ["spot"], "queued": True}, "nodePools[1].capacity", "flexStart"),
        (
            {"types": ["reservation"], "reservation": {"ids": ["cr-123"]}},
            "nodePools[1].capacity.reservation.ids[0]",
            "capacity reservation id",
        ),
    ],
)
def test_the_section_refuses_what_says_nothing_or_contradicts_itself(capacity, key, says):
    found = problems(with_pool(EKS, 1, capacity=capacity))
    assert any(line.startswith(f"{key}:") and says in line for line in found), found


def test_spot_and_capacity_together_are_refused():
    found = problems(with_pool(EKS, 1, spot=True, capacity={"types": ["spot"]}))
    assert any(line.startswith("nodePools[1]:") and "capacity.types" in line for line in found), found


@pytest.mark.parametrize(
    ("capacity", "key", "says"),
    [
        ({"types": ["spot", "onDemand"]}, "nodePools[1].capacity", "cluster.autoscaler: karpenter"),
        ({"types": ["onDemand"], "instanceTypes": ["p4de.24xlarge"]}, "nodePools[1].capacity", "karpenter"),
    ],
)
def test_eks_fallback_needs_karpenter(capacity, key, says):
    found = problems(with_pool(EKS, 1, capacity=capacity))
    assert any(line.startswith(f"{key}:") and says in line for line in found), found
    assert not [
        line for line in problems(with_pool(EKS_KARPENTER, 1, capacity=capacity)) if "capacity" in line
    ]


@pytest.mark.parametrize(
    ("capacity", "key", "says"),
    [
        ({"types": ["flexStart"]}, "nodePools[1].capacity.types", "GKE"),
        ({"types": ["flexStart"], "queued": True}, "nodePools[1].capacity.queued", "GKE"),
        (
            {"types": ["reservation"], "reservation": {"name": "a100-res"}},
            "nodePools[1].capacity.reservation",
            "`ids` or `tags`",
        ),
    ],
)
def test_eks_refuses_what_only_gke_offers(capacity, key, says):
    found = problems(with_pool(EKS_KARPENTER, 1, capacity=capacity))
    assert any(line.startswith(f"{key}:") and says in line for line in found), found


def test_the_eks_system_pool_stays_a_managed_node_group():
    capacity = {"types": ["onDemand"], "instanceTypes": ["m6i.4xlarge"]}
    found = problems(with_pool(EKS_KARPENTER, 0, capacity=capacity))
    assert any(
        line.startswith("nodePools[0].capacity:") and "managed node group" in line for line in found
    ), found


@pytest.mark.parametrize(
    ("pool", "capacity", "key", "says"),
    [
        (
            1,
            {"types": ["reservation"], "reservation": {"ids": ["cr-0123456789abcdef0"]}},
            "reservation",
            "`name`",
        ),
        (0, {"types": ["flexStart"]}, "types", "GPU pools"),
        (1, {"types": ["flexStart"], "queued": True}, "queued", "scheduler: kueue"),
    ],
)
def test_gke_refusals(pool, capacity, key, says):
    found = problems(with_pool(GKE, pool, capacity=capacity))
    assert any(line.startswith(f"nodePools[{pool}].capacity.{key}:") and says in line for line in found), (
        found
    )


def test_the_autoscaler_is_eks_only():
    found = problems({**GKE, "cluster": {**GKE["cluster"], "autoscaler": "karpenter"}})
    assert any(line.startswith("cluster.autoscaler:") for line in found), found


GKE_RESERVED = {"types": ["reservation", "onDemand"], "reservation": {"name": "a100-res"}}


def test_a_gke_reservation_names_its_zone_one_of_the_pools():
    found = problems(with_pool(GKE, 1, capacity=GKE_RESERVED))
    assert any(line.startswith("nodePools[1].capacity.reservation.zone:") for line in found), found
    elsewhere = {**GKE_RESERVED, "reservation": {"name": "a100-res", "zone": "europe-west4-a"}}
    found = problems(with_pool(GKE, 1, capacity=elsewhere))
    assert any("is not one of the pool's zones" in line for line in found), found


def test_a_gpu_pool_split_over_cloud_node_pools_needs_a_gpu_quota_to_bound_them_together():
    capacity = {**GKE_RESERVED, "reservation": {"name": "a100-res", "zone": "us-central1-a"}}
    raw = with_pool(GKE, 1, capacity=capacity)
    found = problems(raw)
    assert any(
        line.startswith("resourcePools[0].quota.gpu:") and "falls back over 2" in line for line in found
    )
    pools = [dict(rp) for rp in raw["resourcePools"]]
    pools[0]["quota"] = {"gpu": 8}
    assert not [line for line in problems({**raw, "resourcePools": pools}) if "quota" in line]
