"""Every problem of a stack in one run: values that fail validation, what model validators
and cross-section rules find in the others (components/config/partial.py), never a rule judging
a value the user did not write."""

from __future__ import annotations

import copy
import itertools

import pytest
import yaml
from conftest import ROOT

from components.config import ConfigError, load_config, partial
from components.config.resource_pools import QuotaConfig

BASES = yaml.safe_load((ROOT / "tests" / "fixtures" / "bad-config" / "bases.yaml").read_text())


def stack(base: str = "existing", **keys) -> dict:
    raw = {k.removeprefix("determined:"): v for k, v in copy.deepcopy(BASES[base]).items()}
    return {**raw, **keys}


def problems(raw: dict) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(raw)
    return [str(p) for p in info.value.problems]


# Ten problems in six sections, three of them in one list. Before components.config.partial the
# first five came alone: a failed key was dropped (then at its default) and every rule
# reading it skipped, so the other seven appeared one fix at a time.
MANY = stack(
    namespace="kube-system",
    nodePools=[
        {"name": "system", "nodeSelector": {"pool": "system"}},
        {"name": "a100", "gpu": {"type": "nvidia-tesla-a100", "count": 4}, "nodeSelector": {"pool": "a100"}},
        {"name": "a100", "nodeSelector": {"pool": "other"}},
    ],
    database={"mode": "managed", "tier": "nope!"},
    master={"cpu": "lots"},
    resourcePools=[
        {"name": "a100", "nodePool": "a100", "namespace": "det-a100", "quota": {"cpu": "-4"}},
        {"name": "aux", "nodePool": "system", "namespace": "det-aux", "description": ["not", "text"]},
        {"name": "h100", "nodePool": "h100", "namespace": "det-h100"},
    ],
    defaultComputePool="nowhere",
    slots={"type": "tpu"},
    gpuOperator={"enabled": True},
    imagePullSecrets=["regcred", "regcred"],
)
MANY_LINES = [
    # Values that fail validation:
    "determined:master.cpu: 'lots' is not a Kubernetes quantity",
    "determined:database.tier: 'nope!' is not a Cloud SQL tier",
    "determined:resourcePools[0].quota.cpu: '-4' is not a Kubernetes quantity",
    "determined:resourcePools[1].description: must be a string, not a list",
    "determined:slots.type: must be one of 'gpu' or 'cpu' (got 'tpu')",
    # Rules between the other values:
    "determined:nodePools[2].name: duplicate node pool name 'a100'",
    "determined:namespace: 'kube-system' belongs to the cluster itself",
    "determined:resourcePools[2].nodePool: no node pool named 'h100'",
    "determined:defaultComputePool: no resource pool named 'nowhere'",
    "determined:database.mode: managed databases are created only for cloud gke",
    "determined:gpuOperator.enabled: the GPU operator is installed on clusters the stack creates",
    "determined:imagePullSecrets[1]: 'regcred' is already imagePullSecrets[0]",
]


def test_every_problem_across_sections_is_reported_in_one_run():
    lines = problems(MANY)
    for expected in MANY_LINES:
        assert sum(line.startswith(expected) for line in lines) == 1, (expected, lines)
    assert len(lines) == len(MANY_LINES), lines


def test_each_problem_is_independent_of_the_others():
    """Fixing one leaves every other line as it was: no problem hides another."""
    fixes = {
        "determined:master.cpu": {"master": {}},
        "determined:database.tier": {"database": {"mode": "managed", "tier": "db-custom-2-8192"}},
        "determined:slots.type": {"slots": {}},
        "determined:namespace": {"namespace": "determined"},
        "determined:imagePullSecrets": {"imagePullSecrets": ["regcred"]},
    }
    full = problems(MANY)
    for prefix, fix in fixes.items():
        lines = problems({**MANY, **fix})
        assert [line for line in full if not line.startswith(prefix)] == lines, prefix


def test_a_model_validator_runs_beside_a_field_that_failed():
    quota = {"gpu": -1, "cpu": "64", "limits": {"cpu": "32"}}
    raw = stack(
        resourcePools=[
            {"name": "a100", "nodePool": "a100", "namespace": "det-a100", "quota": quota},
            {"name": "aux", "nodePool": "system", "namespace": "det-aux"},
        ]
    )
    lines = problems(raw)
    assert lines[0].startswith("determined:resourcePools[0].quota.gpu: must be at least 0")
    assert lines[1].startswith("determined:resourcePools[0].quota.limits.cpu: 32 is below cpu (64)")
    assert len(lines) == 2, lines


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        # The task namespace needs 0.35+: not judged against a version that failed (it would
        # be "needs master.version 0.35.0" against a default, or a crash).
        ({"master": {"version": "latest"}, "taskNamespace": "det-tasks"}, "determined:master.version:"),
        # The pool quota rules read the node pools, which failed.
        (
            {
                "nodePools": "system",
                "resourcePools": [{"name": "a", "nodePool": "x", "quota": {"gpu": 2}}],
            },
            "determined:nodePools: must be a list",
        ),
        # environment failed: the prod-only rules are not run against dev.
        ({"environment": "production", "allowDataDeletion": True}, "determined:environment:"),
    ],
)
def test_no_rule_judges_a_value_that_failed(keys, expected):
    lines = problems(stack(**keys))
    assert len(lines) == 1 and lines[0].startswith(expected), lines


def test_a_broken_value_stops_whoever_reads_it():
    broken = partial.BROKEN
    for use in (
        lambda: broken.name,
        lambda: bool(broken),
        lambda: broken == "dev",
        lambda: hash(broken),
        lambda: list(broken),
        lambda: f"{broken}",
        lambda: broken + 1,
        lambda: "x" in broken,
    ):
        with pytest.raises(partial.Unreliable):
            use()
    assert copy.deepcopy(broken) is broken


# Values of the wrong kind for every top-level key of every base, alone and in pairs: the
# refusal lists each, never crashes (partial building and every rule survive any mix).
WRONG = [None, 7, "x!", [], {"unknown": 1}]


def _variants():
    for base in ("existing", "gke", "eks"):
        keys = sorted(stack(base))
        for key, value in itertools.product(keys, WRONG):
            yield base, {key: value}
        for (a, b), value in zip(itertools.combinations(keys, 2), itertools.cycle(WRONG)):
            yield base, {a: value, b: WRONG[(WRONG.index(value) + 1) % len(WRONG)]}


@pytest.mark.parametrize("base", ["existing", "gke", "eks"])
def test_any_mix_of_failed_values_is_refused_line_by_line(base):
    for _, keys in (v for v in _variants() if v[0] == base):
        raw = stack(base, **keys)
        try:
            load_config(raw)
        except ConfigError as exc:
            lines = [str(p) for p in exc.problems]
            assert lines and len(lines) == len(set(lines)), (keys, lines)
            assert all("\n" not in line for line in lines), (keys, lines)
        else:
            # A value that happens to fit (e.g. {} where a section has defaults).
            assert all(value in ({}, []) or key == "namespace" for key, value in keys.items()), keys


def test_pools_sharing_a_namespace_with_one_quota_are_accepted():
    raw = stack(
        resourcePools=[
            {"name": "a100", "nodePool": "a100", "namespace": "team", "quota": {"gpu": 4, "cpu": "8"}},
            {"name": "aux", "nodePool": "system", "namespace": "team"},
        ]
    )
    cfg = load_config(raw)
    assert [rp.namespace_name for rp in cfg.resource_pools] == ["team", "team"]


def test_a_quota_whose_limits_equal_its_requests_is_accepted():
    quota = {"cpu": "2", "memory": "8Gi", "limits": {"cpu": "2000m", "memory": "8192Mi"}}
    assert QuotaConfig.model_validate(quota).limits.cpu == "2000m"
