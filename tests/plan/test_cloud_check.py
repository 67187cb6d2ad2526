"""The plan's own check of its cloud resources (plan.cloud_check): what a cloud API would
refuse stops the plan as an internal error (exit 3)."""

from __future__ import annotations

import copy

import pytest
from conftest import EKS, GKE, raw_config
from planning import plan_for

from components import cloud_limits
from components.cluster.eks import database as eks_database
from plan import cloud_check, runner
from plan.errors import PlanFailure


def _res(kind: str, inputs: dict, name: str = "r") -> dict:
    return {"type": kind, "name": name, "urn": f"urn:{kind}::{name}", "inputs": inputs, "options": {}}


@pytest.mark.parametrize(
    ("resource", "found"),
    [
        (_res("aws:rds/instance:Instance", {"identifier": "ml--research-db"}), "two hyphens"),
        (_res("aws:rds/instance:Instance", {"identifier": "2026-gpu-lab-db"}), "starting with a letter"),
        (_res("gcp:container/nodePool:NodePool", {"name": "p" * 41}), "1 to 40"),
        (
            _res("gcp:serviceaccount/account:Account", {"accountId": "a-very-long-cluster-name-storage"}),
            "6 to 30",
        ),
        (_res("aws:eks/nodeGroup:NodeGroup", {"labels": {"k" * 64: "v"}}), "EKS takes at most 63"),
        (_res("aws:eks/nodeGroup:NodeGroup", {"labels": {"k": ""}}), "values of 1 to 63"),
        (
            _res(
                "aws:eks/nodeGroup:NodeGroup",
                {"taints": [{"key": "t" * 64, "value": "", "effect": "NO_SCHEDULE"}]},
            ),
            "EKS takes at most 63",
        ),
        (
            _res(
                "aws:eks/nodeGroup:NodeGroup", {"taints": [{"key": "t", "value": "", "effect": "NoSchedule"}]}
            ),
            "taint effect",
        ),
        (
            _res(
                "aws:eks/nodeGroup:NodeGroup",
                {"taints": [{"key": "eks.amazonaws.com/gpu", "value": "", "effect": "NO_SCHEDULE"}]},
            ),
            "EKS refuses node group taints under eks.amazonaws.com",
        ),
        (
            _res(
                "aws:autoscaling/tag:Tag",
                {"tag": {"key": "k8s.io/cluster-autoscaler/node-template/label/" + "x" * 90, "value": "1"}},
            ),
            "AWS takes 1 to 128",
        ),
        (_res("aws:s3/bucket:Bucket", {"bucket": "b", "tags": {"aws:owner": "me"}}), "reserved"),
        (_res("aws:iam/role:Role", {"tags": {f"k{i}": "v" for i in range(51)}}), "at most 50"),
        (
            _res("gcp:storage/bucket:Bucket", {"name": "bucket-x", "labels": {"Team": "ml"}}),
            "not a Google Cloud label key",
        ),
        (_res("gcp:container/nodePool:NodePool", {"nodeConfig": {"labels": {"a/b/c": "x"}}}), "label key"),
        (
            _res(
                "gcp:container/nodePool:NodePool",
                {
                    "nodeConfig": {
                        "guestAccelerators": [{"gpuDriverInstallationConfig": {"gpuDriverVersion": "NEWEST"}}]
                    }
                },
            ),
            "is not one of",
        ),
        (
            _res("gcp:container/nodePool:NodePool", {"autoscaling": {"locationPolicy": "SPREAD"}}),
            "is not one of",
        ),
        (_res("aws:eks/nodeGroup:NodeGroup", {"capacityType": "spot"}), "is not one of"),
        (
            _res(
                "gcp:container/nodePool:NodePool",
                {"nodeConfig": {"machineType": "c4-standard-8", "diskType": "pd-balanced"}},
            ),
            "c4-standard-8 boots from hyperdisk-balanced",
        ),
        (
            _res(
                "gcp:container/nodePool:NodePool",
                {"nodeConfig": {"machineType": "n2-standard-8", "diskType": "hyperdisk-balanced"}},
            ),
            "n2-standard-8 boots from pd-",
        ),
        (
            _res(
                "gcp:container/nodePool:NodePool",
                {
                    "location": "us-central1",
                    "nodeConfig": {
                        "machineType": "g2-standard-8",
                        "diskType": "pd-balanced",
                        "guestAccelerators": [{"type": "nvidia-l4"}],
                    },
                },
            ),
            "without nodeLocations",
        ),
        (
            _res(
                "gcp:container/nodePool:NodePool",
                {
                    "location": "europe-west4",
                    "nodeLocations": ["europe-west4-a", "europe-west4-z"],
                    "nodeConfig": {
                        "machineType": "a3-highgpu-8g",
                        "diskType": "pd-balanced",
                        "guestAccelerators": [{"type": "nvidia-h100-80gb"}],
                    },
                },
            ),
            "nvidia-h100-80gb is not offered in europe-west4-z",
        ),
    ],
)
def test_what_a_cloud_refuses_is_found(resource, found):
    problems = cloud_check.problems([resource])
    assert any(found in p for p in problems), problems


def test_two_resources_of_one_type_may_not_share_a_name():
    roles = [
        _res("aws:iam/role:Role", {"name": "Det-Nodes"}, "a"),
        _res("aws:iam/role:Role", {"name": "det-nodes"}, "b"),
    ]
    (problem,) = cloud_check.problems(roles)
    assert "is also aws:iam/role:Role a's" in problem


def test_names_per_resource_may_repeat():
    """An inline policy's name is unique per role: every role may have one called the same."""
    policies = [_res("aws:iam/rolePolicy:RolePolicy", {"name": "p"}, n) for n in "ab"]
    assert cloud_check.problems(policies) == []


def test_values_not_known_yet_are_not_judged():
    assert (
        cloud_check.problems([_res("aws:rds/instance:Instance", {"identifier": "[unknown until apply]"})])
        == []
    )


def test_limits_walk_lists_and_skip_missing_steps():
    inputs = {"a": [{"b": 1}, {"b": 2}, {}]}
    assert list(cloud_limits.values_at(inputs, "a[].b")) == [1, 2]
    assert list(cloud_limits.values_at(inputs, "x.y")) == []


def test_a_derivation_that_breaks_a_rule_stops_the_plan(monkeypatch):
    """Break the code: an RDS identifier built as it was before (a digit first passes)."""
    raw = raw_config(**copy.deepcopy(EKS))
    raw["cluster"]["name"] = "2026-gpu-lab"
    raw["database"] = {"mode": "managed", "tier": "db.m6g.large"}
    assert plan_for(raw).resources  # the real derivation gives names RDS accepts

    original = eks_database.instance_args

    def legacy(cfg, *args, **kwargs):
        args_ = original(cfg, *args, **kwargs)
        return args_ | {"identifier": f"{cfg.cluster.name}-db"}

    monkeypatch.setattr(eks_database, "instance_args", legacy)
    with pytest.raises(
        PlanFailure,
        match=r"a cloud API would refuse the plan: aws:rds/instance:Instance database: '2026-gpu-lab-db'",
    ):
        plan_for(raw)


def test_the_check_runs_in_every_plan(monkeypatch):
    seen = []
    monkeypatch.setattr(runner.cloud_check, "check", lambda resources: seen.append(len(resources)))
    plan_for(raw_config(**copy.deepcopy(GKE)))
    assert seen and seen[0] > 0


def test_a_boot_disk_the_machine_cannot_use_stops_the_plan(monkeypatch):
    """Break the code: every pool boots from pd-balanced, as before (C4 takes Hyperdisk only)."""
    from components.cluster.gke import node_pools

    raw = raw_config(**copy.deepcopy(GKE))
    raw["nodePools"][0]["machineType"] = "c4-standard-8"
    assert plan_for(raw).resources
    monkeypatch.setattr(node_pools, "disk_type", lambda pool: "pd-balanced")
    with pytest.raises(PlanFailure, match="c4-standard-8 boots from hyperdisk-balanced"):
        plan_for(raw)


def test_gpu_zones_that_lack_the_gpu_stop_the_plan(monkeypatch):
    """Break the code: a GPU pool spread over every zone of the region, as before."""
    from components.cluster.gke import node_pools

    raw = raw_config(**copy.deepcopy(GKE))
    raw["cluster"] |= {
        "region": "europe-west4",
        "zones": ["europe-west4-a", "europe-west4-b", "europe-west4-c"],
    }
    assert plan_for(raw).resources  # the A100 pool goes to europe-west4-a and -b only
    original = node_pools.node_pool_args

    def everywhere(cfg, pool, *args):
        return original(cfg, pool, *args) | {"node_locations": list(cfg.cluster.zones)}

    monkeypatch.setattr(node_pools, "node_pool_args", everywhere)
    with pytest.raises(PlanFailure, match="nvidia-tesla-a100 is not offered in europe-west4-c"):
        plan_for(raw)
