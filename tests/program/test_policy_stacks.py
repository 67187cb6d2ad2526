"""The policy pack over whole stacks: every stack of stacks/ and every fixture plans with no
mandatory violation; prod stacks that break a prod promise exit 1 naming the key to change."""

from __future__ import annotations

import json
from functools import cache

import pytest
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


# Advisories the dev stacks keep on purpose: their API endpoint admits any address (with the
# cloud's authentication) until the user lists the networks they deploy from.
DEV_ADVICE = {"gke-dev": {"control-plane-endpoint-fenced"}, "eks-dev": {"control-plane-endpoint-fenced"}}
# What fixtures show on purpose: chart-parity renders networkMode host, which the pack refuses.
FIXTURE_REFUSALS = {"chart-parity": {"no-privileged-pods"}}


@pytest.mark.parametrize("preview", [False, True], ids=["update", "preview"])
@pytest.mark.parametrize("path", STACKS, ids=stack_name)
def test_every_stack_passes_every_policy(path, preview):
    name = stack_name(path)
    found = violations(name, preview)
    # In a first preview master.yaml is not known yet (it holds a generated password): the
    # rules that read it say they cannot run, as `pulumi preview` does. Nothing else.
    assert {v["policy"] for v in found if not not_runnable(v)} == DEV_ADVICE.get(name, set())
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
BROKEN_PROD = {
    "sharedFs checkpoints": (
        _prod("gke-prod", checkpointStorage={"type": "sharedFs"}),
        "no-sharedfs-checkpoints-in-prod",
        "determined:checkpointStorage.type",
    ),
    "a database without TLS": (
        _prod(
            "gke-prod",
            database={
                "mode": "external",
                "host": "db.example.com",
                "user": "determined",
                "password": "Not-A-Real-Password-1",
                "sslMode": "disable",
            },
        ),
        "database-tls",
        "determined:database.sslMode",
    ),
    "an API endpoint open to the world": (
        _prod("eks-prod", cluster=_with(EKS, "cluster", endpoint={"publicAccessCidrs": ["0.0.0.0/0"]})),
        "control-plane-endpoint-fenced",
        "determined:cluster.endpoint.publicAccessCidrs",
    ),
    "an API endpoint without networks": (
        _prod("eks-prod", cluster=_with(EKS, "cluster", endpoint={})),
        "control-plane-endpoint-fenced",
        "determined:cluster.endpoint.publicAccessCidrs",
    ),
    "a latest image": (
        _prod("gke-prod", master=_with(GKE, "master", image="determinedai/determined-master:latest")),
        "images-pinned",
        "determined:master.image",
    ),
}


@pytest.mark.parametrize("case", BROKEN_PROD, ids=str)
def test_a_prod_stack_breaking_a_prod_promise_is_a_mandatory_violation_naming_the_key(case):
    config, policy, key = BROKEN_PROD[case]
    result = runner.plan(config, [], "prod-case", policies=None)
    found = [v for v in result.mandatory_violations if v["policy"] == policy]
    assert found, result.violations
    assert all(key in v["message"] for v in found)
    assert "Not-A-Real-Password-1" not in json.dumps(result.violations)


def test_the_plan_exits_1_on_a_mandatory_violation(tmp_path, capsys):
    config, _, key = BROKEN_PROD["sharedFs checkpoints"]
    path = tmp_path / "Pulumi.shared.yaml"
    import yaml

    path.write_text(yaml.safe_dump({"config": config}))
    assert cli.main(["--config", str(path), "--out", str(tmp_path / "out")]) == 1
    out = capsys.readouterr().out
    assert "[mandatory] no-sharedfs-checkpoints-in-prod" in out and key in out
    written = json.loads((tmp_path / "out" / "policy.json").read_text())
    assert any(v["policy"] == "no-sharedfs-checkpoints-in-prod" for v in written)
