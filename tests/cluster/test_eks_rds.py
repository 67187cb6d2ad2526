"""RDS as AWS takes it over an instance's life: a final snapshot name no earlier instance used,
storage autoscaling within what gp3 allows, and changes applied when `pulumi up` makes them."""

from __future__ import annotations

import importlib.util
import re

import pytest
from conftest import ROOT
from planning import planned, resource

from components.cluster.eks import database


def _compare_plans():
    spec = importlib.util.spec_from_file_location("compare_plans", ROOT / "scripts" / "compare_plans.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_final_snapshot_is_named_once_per_instance():
    result = planned("eks-prod")
    instance = resource(result, "rds/instance:Instance", "database")["inputs"]
    suffix = resource(result, "randomId:RandomId", "database-final-snapshot")
    # A new RandomId with each new instance identifier: a later instance of the same name
    # gets another suffix, so DeleteDBInstance never meets the earlier final snapshot.
    assert suffix["inputs"]["keepers"] == {"identifier": instance["identifier"]}
    assert suffix["inputs"]["byteLength"] == database.FINAL_SNAPSHOT_SUFFIX_BYTES
    hex_digits = 2 * database.FINAL_SNAPSHOT_SUFFIX_BYTES
    assert re.fullmatch(rf"det-prod-db-final-[0-9a-f]{{{hex_digits}}}", instance["finalSnapshotIdentifier"])


def test_a_new_final_snapshot_name_updates_an_existing_instance_in_place():
    # final_snapshot_identifier is read at deletion only (not ForceNew in the provider): the
    # replacement check of compare_plans does not watch it.
    watched = _compare_plans().WATCHED["aws:rds/instance:Instance"]
    assert not any("finalSnapshotIdentifier".startswith(w) for w in watched)
    assert not any("applyImmediately".startswith(w) or "maxAllocatedStorage".startswith(w) for w in watched)


def test_dev_instances_take_no_final_snapshot_and_no_suffix():
    result = planned("eks-existing-vpc")
    instance = resource(result, "rds/instance:Instance", "database")["inputs"]
    assert instance["skipFinalSnapshot"] is True and "finalSnapshotIdentifier" not in instance
    assert not [r for r in result.resources if r["type"].endswith("randomId:RandomId")]


@pytest.mark.parametrize("stack", ["eks-prod", "eks-existing-vpc"])
def test_changes_apply_when_pulumi_up_makes_them(stack):
    instance = resource(planned(stack), "rds/instance:Instance", "database")["inputs"]
    assert instance["applyImmediately"] is True


@pytest.mark.parametrize(
    ("start", "bound"), [(20, 80), (100, 400), (16384, 65536), (20000, 65536), (65000, 65536), (65536, None)]
)
def test_storage_autoscaling_stops_at_the_gp3_maximum(start, bound):
    # RDS for PostgreSQL gp3: 20 to 65536 GiB (CreateDBInstance AllocatedStorage).
    assert database.STORAGE_MAX_GB == 65536
    assert database.max_storage_gb(start) == bound
