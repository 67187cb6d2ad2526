"""What EKS with Karpenter refuses of `nodePools[]` (components/config/capacity_rules.py, EKS part):
instance types that do not carry the pool's GPUs, reservation selectors Karpenter cannot take,
minNodes, label domains, NodePool names, cluster tags an EC2NodeClass refuses."""

from __future__ import annotations

import copy

import pytest
from conftest import EKS, config_problems, with_pool

KARPENTER = {**EKS, "cluster": {**EKS["cluster"], "autoscaler": "karpenter"}}
CR = "cr-0123456789abcdef0"


problems = config_problems


def has(found, key, says):
    return any(line.startswith(f"{key}:") and says in line for line in found)


def test_a_karpenter_stack_with_every_capacity_shape_passes():
    raw = with_pool(
        KARPENTER,
        1,
        capacity={
            "types": ["reservation", "onDemand", "spot"],
            "reservation": {"ids": [CR], "tags": {"team": "ml"}, "capacityBlock": True},
            "instanceTypes": ["p4de.24xlarge"],
        },
    )
    raw["nodePools"].append(
        {
            "name": "cpu",
            "machineType": "c7i.4xlarge",
            "capacity": {"types": ["spot", "onDemand"], "instanceTypes": ["m7i.4xlarge"]},
        }
    )
    raw["resourcePools"][0]["quota"] = {"gpu": 8}  # the A100 pool is two NodePools
    assert problems(raw) == []


@pytest.mark.parametrize(
    ("instance_type", "says"),
    [
        ("p5.48xlarge", "carries 8 nvidia-h100-80gb GPU(s), not the pool's 8 nvidia-tesla-a100"),
        ("g5.12xlarge", "carries 4 nvidia-a10g"),
        ("m7i.4xlarge", "carries no GPU(s)"),
        ("p5.4xlarge", "carries 1 nvidia-h100-80gb"),
        ("g5g.16xlarge", "ARM (Graviton)"),
        ("p2.8xlarge", "driver 470"),
        ("g6.7xlarge", "not a size EC2 offers"),
        ("P4d", "not an EC2 instance type"),
    ],
)
def test_instance_types_carry_the_gpus_of_the_pool(instance_type, says):
    capacity = {"types": ["spot", "onDemand"], "instanceTypes": [instance_type]}
    found = problems(with_pool(KARPENTER, 1, capacity=capacity))
    assert has(found, "nodePools[1].capacity.instanceTypes[0]", says), found


@pytest.mark.parametrize(("instance_type", "says"), [("g6.xlarge", "a CPU pool's"), ("m7g.xlarge", "Arm")])
def test_a_cpu_pools_instance_types_carry_no_gpus_and_are_x86(instance_type, says):
    raw = copy.deepcopy(KARPENTER)
    raw["nodePools"].append(
        {"name": "cpu", "machineType": "c7i.4xlarge", "capacity": {"instanceTypes": [instance_type]}}
    )
    found = problems(raw)
    assert has(found, "nodePools[2].capacity.instanceTypes[0]", says), found


def test_the_same_gpu_in_another_memory_size_is_accepted():
    capacity = {"instanceTypes": ["p4de.24xlarge"]}
    assert problems(with_pool(KARPENTER, 1, capacity=capacity)) == []


@pytest.mark.parametrize(
    ("reservation", "key", "says"),
    [
        ({"tags": {"team": ""}}, "nodePools[1].capacity.reservation.tags.team", "non-empty tag values"),
        ({"tags": {f"k{i}": "v" for i in range(21)}}, "nodePools[1].capacity.reservation.tags", "at most 20"),
        ({"ids": [CR, CR]}, "nodePools[1].capacity.reservation.ids", "listed twice"),
        (
            {"ids": [f"cr-{i:017x}" for i in range(30)], "tags": {"a": "b"}},
            "nodePools[1].capacity.reservation.ids",
            "at most 30",
        ),
    ],
)
def test_reservation_selectors_karpenter_cannot_take_are_refused(reservation, key, says):
    capacity = {"types": ["reservation", "onDemand"], "reservation": reservation}
    found = problems(with_pool(KARPENTER, 1, capacity=capacity))
    assert has(found, key, says), found


def test_a_karpenter_pool_keeps_no_minimum_but_the_system_pool_does():
    found = problems(with_pool(KARPENTER, 1, minNodes=1, maxNodes=2))
    assert has(found, "nodePools[1].minNodes", "Karpenter keeps no idle nodes"), found
    assert not [line for line in problems(with_pool(KARPENTER, 0, minNodes=1)) if "minNodes" in line]
    # Node groups keep their minimum as before.
    assert not [line for line in problems(with_pool(EKS, 1, minNodes=1, maxNodes=2)) if "minNodes" in line]


@pytest.mark.parametrize(
    "key", ["karpenter.sh/pool", "karpenter.k8s.aws/instance-family", "x.karpenter.sh/y"]
)
def test_labels_in_karpenters_domains_are_refused_on_its_pools(key):
    found = problems(with_pool(KARPENTER, 1, labels={key: "v"}))
    assert any(
        "nodePools[1].labels" in line and "karpenter.sh and karpenter.k8s.aws" in line for line in found
    ), found
    assert not [line for line in problems(with_pool(EKS, 1, labels={key: "v"})) if "Karpenter" in line]


def test_node_pool_names_fit_the_nodepool_label_and_do_not_collide():
    long_name = "a" * 60
    raw = with_pool(KARPENTER, 1, name=long_name, capacity={"types": ["onDemand", "spot"]})
    raw["resourcePools"][0]["nodePool"] = long_name
    assert has(problems(raw), "nodePools[1].name", f"{long_name}-spot"), problems(raw)
    raw = with_pool(KARPENTER, 1, capacity={"types": ["onDemand", "spot"]})
    raw["nodePools"].append({"name": "a100-spot", "machineType": "c7i.4xlarge"})
    found = problems(raw)
    assert has(found, "nodePools[2].name", "'a100-spot' is also nodePools[1]'s"), found


@pytest.mark.parametrize(
    "tag", ["kubernetes.io/cluster/det", "karpenter.sh/nodepool", "eks:eks-cluster-name"]
)
def test_cluster_tags_an_ec2nodeclass_refuses(tag):
    found = problems({**KARPENTER, "cluster": {**KARPENTER["cluster"], "tags": {tag: "x"}}})
    assert any(line.startswith("cluster.tags") and "Karpenter sets this tag" in line for line in found), found
    assert not [
        line
        for line in problems({**EKS, "cluster": {**EKS["cluster"], "tags": {tag: "x"}}})
        if "Karpenter" in line
    ]
