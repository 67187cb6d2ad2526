"""The policy pack over whole stacks: every stack of stacks/ and every fixture plans with no
mandatory violation; prod stacks that break a prod promise exit 1 naming the key to change."""

from __future__ import annotations

import contextlib
import io
import json
from functools import cache

import pytest
import yaml
from planning import FIXTURE_STACKS, planned, stack_name

from plan import cli, policy_check, runner, stackfile
from plan.policy_check import not_runnable
from policies import catalog
from policies.rule import context_from_config

STACKS = sorted(stackfile.STACKS_DIR.glob("Pulumi.*.yaml"))
FIXTURES = sorted(FIXTURE_STACKS.glob("*.yaml"))


@cache
def violations(name: str, preview: bool = False) -> list[dict[str, str]]:
    """The pack's findings for a planned stack, at the levels of its environment."""
    path = stackfile.STACKS_DIR / f"Pulumi.{name}.yaml"
    if not path.exists():
        path = FIXTURE_STACKS / f"Pulumi.{name}.yaml"
    config, _ = stackfile.load_stack_file(path)
    result = planned(name, preview)
    ordered = sorted(result.recorder.resources, key=lambda r: r.urn)
    return policy_check.evaluate(catalog.policies(context_from_config(config)), ordered, result.secrets)


# Advisories stacks keep on purpose. The dev stacks: their API endpoint admits any address
# (with the cloud's authentication) until the user lists the networks they deploy from. The
# prod stacks: their L4 pools stay spot only as deployed (a fallback moves a pool to Karpenter
# or a ComputeClass's node pools, replacing its node group); eks-capacity and gke-capacity
# show the fallback.
KEPT_ADVICE = {
    "gke-dev": {"control-plane-endpoint-fenced"},
    "eks-dev": {"control-plane-endpoint-fenced"},
    "gke-prod": {"prod-gpu-pools-not-spot-only"},
    "eks-prod": {"prod-gpu-pools-not-spot-only"},
}
# What fixtures show on purpose: chart-parity renders networkMode host, which the pack refuses.
FIXTURE_REFUSALS = {"chart-parity": {"no-privileged-pods"}}


@pytest.mark.parametrize("preview", [False, True], ids=["update", "preview"])
@pytest.mark.parametrize("path", STACKS, ids=stack_name)
def test_every_stack_passes_every_policy(path, preview):
    name = stack_name(path)
    found = violations(name, preview)
    # In a first preview master.yaml is not known yet (it holds a generated password): the
    # rules that read it say they cannot run, as `pulumi preview` does. Nothing else.
    assert {v["policy"] for v in found if not not_runnable(v)} == KEPT_ADVICE.get(name, set())
    assert [v for v in found if v["level"] == "mandatory"] == []
    assert preview or not [v for v in found if not_runnable(v)]


@pytest.mark.parametrize("path", FIXTURES, ids=stack_name)
def test_no_fixture_breaks_a_mandatory_policy_unless_it_shows_one(path):
    name = stack_name(path)
    mandatory = {v["policy"] for v in violations(name) if v["level"] == "mandatory"}
    assert mandatory == FIXTURE_REFUSALS.get(name, set())


def _prod(name: str, **changes) -> dict[str, str]:
    config, _ = stackfile.load_stack_file(stackfile.STACKS_DIR / f"Pulumi.{name}.yaml")
    for key, value in changes.items():
        config[f"determined:{key}"] = value if isinstance(value, str) else json.dumps(value)
    return config


def _with(config: dict[str, str], key: str, **fields) -> dict:
    return {**json.loads(config[f"determined:{key}"]), **fields}


GKE = _prod("gke-prod")
EKS = _prod("eks-prod")
# One gke-prod stack breaking three prod promises, one eks-prod stack breaking a fourth:
# each finding must be mandatory and name the key to change.
BROKEN_GKE = _prod(
    "gke-prod",
    checkpointStorage={"type": "sharedFs"},
    database={
        "mode": "external",
        "host": "db.example.com",
        "user": "determined",
        "password": "Not-A-Real-Password-1",
        "sslMode": "disable",
    },
    master=_with(GKE, "master", image="determinedai/determined-master:latest"),
)
BROKEN_EKS = _prod("eks-prod", cluster=_with(EKS, "cluster", endpoint={"publicAccessCidrs": ["0.0.0.0/0"]}))
EXPECTED = {
    "gke": [
        ("no-sharedfs-checkpoints-in-prod", "determined:checkpointStorage.type"),
        ("database-tls", "determined:database.sslMode"),
        ("images-pinned", "determined:master.image"),
    ],
    "eks": [("control-plane-endpoint-fenced", "determined:cluster.endpoint.publicAccessCidrs")],
}


@pytest.fixture(scope="module")
def broken_gke(tmp_path_factory) -> tuple[int, str, list[dict[str, str]]]:
    """The broken gke-prod stack planned as a user would: `python -m plan --config`."""
    tmp = tmp_path_factory.mktemp("broken")
    path = tmp / "Pulumi.broken.yaml"
    path.write_text(yaml.safe_dump({"config": BROKEN_GKE}))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main(["--config", str(path), "--out", str(tmp / "out")])
    return code, out.getvalue(), json.loads((tmp / "out" / "policy.json").read_text())


def test_a_broken_prod_stack_exits_1_and_says_why(broken_gke):
    code, out, _ = broken_gke
    assert code == 1
    for policy, key in EXPECTED["gke"]:
        assert f"[mandatory] {policy}" in out and key in out
    assert "Not-A-Real-Password-1" not in out


@pytest.mark.parametrize(
    ("cloud", "policy", "key"), [(c, p, k) for c, pairs in EXPECTED.items() for p, k in pairs]
)
def test_each_broken_prod_promise_is_a_mandatory_violation_naming_the_key(broken_gke, cloud, policy, key):
    found = broken_gke[2] if cloud == "gke" else eks_violations()
    mine = [v for v in found if v["policy"] == policy]
    assert mine and all(v["level"] == "mandatory" and key in v["message"] for v in mine)
    assert "Not-A-Real-Password-1" not in json.dumps(found)


@cache
def eks_violations() -> list[dict[str, str]]:
    return runner.plan(BROKEN_EKS, [], "broken-eks", policies=None).violations
