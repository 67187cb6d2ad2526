"""Cloud names over every stack and fixture: nothing a cloud refuses, existing stacks keep the
names they were deployed with, and two stacks of one project or account share none."""

from __future__ import annotations

import copy
import json

import pytest
from conftest import EKS, GKE, ROOT, raw_config
from planning import plan_for
from stack_plans import NAMES, plan

from components import names
from components.cluster import eks, gke
from plan import cloud_check

# Every cloud name each stack and fixture was planned with before components.names existed (the
# release of stop 17): what their deployments are called.
DEPLOYED = json.loads((ROOT / "tests" / "data" / "cloud-names-deployed.json").read_text())
# Component types renamed since, each with the alias that keeps its deployed URNs.
RENAMED = {gke.OLD_TYPE: gke.TYPE, eks.OLD_TYPE: eks.TYPE}


def current_urn(urn: str) -> str:
    """The URN a deployed resource is planned under now (its component's alias maps it back)."""
    for old, new in RENAMED.items():
        urn = urn.replace(f"::{old}$", f"::{new}$")
    return urn


@pytest.mark.parametrize("name", NAMES)
def test_the_clouds_accept_every_planned_resource(name):
    assert cloud_check.problems(plan(name).result.resources) == []


@pytest.mark.parametrize("name", sorted(DEPLOYED))
def test_existing_stacks_keep_every_cloud_name(name):
    """A name that changes replaces its resource (a cluster, node pool, database, bucket or
    role): each must be planned as deployed, or be a name fixed at creation whose
    `ignore_changes` keeps the deployed one."""
    resources = {r["urn"]: r for r in plan(name).result.resources}
    for key, deployed in DEPLOYED[name].items():
        urn, prop = key.rsplit("#", 1)
        urn = current_urn(urn)
        assert urn in resources, f"{name}: {urn} is gone (its deployment would be deleted)"
        res = resources[urn]
        planned = res["inputs"][prop]
        if planned != deployed:
            assert prop in names.kept_at_creation(res["type"], prop), (
                f"{name}: {urn} renamed {deployed} -> {planned}"
            )
            assert prop in res["options"].get("ignoreChanges", []), f"{name}: {urn} would be replaced"


@pytest.mark.parametrize("name", NAMES)
def test_every_name_fixed_at_creation_is_ignored_on_update(name):
    for res in plan(name).result.resources:
        for rule in names.rules_for(res["type"]):
            if rule.kept and rule.prop in res["inputs"]:
                assert rule.prop in res["options"].get("ignoreChanges", []), res["urn"]


def _stack(base: dict, stack: str, **cluster) -> set:
    raw = raw_config(**copy.deepcopy(base))
    raw["cluster"] |= cluster
    raw["database"] = {"mode": "managed", "tier": "db-custom-2-8192" if base is GKE else "db.m6g.large"}
    return cloud_check.scoped_names(plan_for(raw, stack=stack).resources, raw["cluster"]["region"])


@pytest.mark.parametrize(
    ("base", "one", "other"),
    [
        # One AWS account, one cluster name, two regions (IAM roles are account-wide).
        (
            EKS,
            ("prod", {"name": "ml", "region": "us-east-1"}),
            ("prod", {"name": "ml", "region": "eu-west-1"}),
        ),
        # One Google Cloud project: dev and prod whose long names share their first 25 characters.
        (
            GKE,
            ("dev", {"name": "determined-gpu-training-dev", "region": "us-central1"}),
            ("prod", {"name": "determined-gpu-training-prod", "region": "us-central1"}),
        ),
        # One project, one cluster name, two regions (networks, accounts, Cloud SQL are project-wide).
        (
            GKE,
            ("dev", {"name": "det", "region": "us-central1"}),
            ("prod", {"name": "det", "region": "europe-west4"}),
        ),
    ],
)
def test_two_stacks_of_one_project_or_account_share_no_name(base, one, other):
    first = _stack(base, one[0], **one[1])
    second = _stack(base, other[0], **other[1])
    assert len(first) > 5
    assert first & second == set()
