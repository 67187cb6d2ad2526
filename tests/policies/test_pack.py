"""The pack as a whole: its rules, their levels per environment, how the pack is served."""

from __future__ import annotations

import json
import re
import runpy
from pathlib import Path

import pytest
from pulumi_policy import EnforcementLevel, ResourceValidationPolicy, StackValidationPolicy

import policies.catalog as catalog
from policies import table
from policies.rule import Context, Rule, context_from_config

ROOT = Path(__file__).resolve().parents[2]
AREAS = {"gpu", "data", "identity", "exposure", "workloads", "determined"}


def test_at_least_25_rules_with_unique_names_in_every_area():
    names = [r.name for r in catalog.RULES]
    assert len(names) >= 25
    assert len(set(names)) == len(names)
    assert {r.area for r in catalog.RULES} == AREAS
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", n) for n in names)


@pytest.mark.parametrize("rule", catalog.RULES, ids=lambda r: r.name)
def test_every_rule_says_what_why_and_which_key_to_change(rule: Rule):
    assert rule.description.strip() and rule.why.strip()
    assert "determined:" in rule.remediation
    assert rule.dev in ("advisory", "mandatory", "off") and rule.prod in ("advisory", "mandatory", "off")
    # Prod is never laxer than dev (a rule relaxed in prod would be a surprise), but for rules
    # about dev alone, which say so by their name.
    order = ["off", "advisory", "mandatory"]
    assert order.index(rule.prod) >= order.index(rule.dev) or (
        rule.name.startswith("dev-") and rule.prod == "off"
    )
    # Off in dev: about what only prod promises (mandatory there), or advice for prod alone,
    # which says so by its name.
    assert rule.dev != "off" or rule.prod == "mandatory" or rule.name.startswith("prod-")


def test_every_rule_has_tests():
    text = "".join(
        p.read_text() for p in (ROOT / "tests" / "policies").glob("test_*.py") if p.name != "test_pack.py"
    )
    untested = [r.name for r in catalog.RULES if f'"{r.name}"' not in text]
    assert untested == []


def test_prod_raises_the_rules_marked_so():
    dev = {p.name: p.enforcement_level for p in catalog.policies(Context(environment="dev"))}
    prod = {p.name: p.enforcement_level for p in catalog.policies(Context(environment="prod"))}
    raised = [r.name for r in catalog.RULES if r.dev == "advisory" and r.prod == "mandatory"]
    assert raised, "some advisory rules are mandatory in prod"
    for name in raised:
        assert dev[name] == EnforcementLevel.ADVISORY and prod[name] == EnforcementLevel.MANDATORY
    prod_only = [r.name for r in catalog.RULES if r.dev == "off"]
    for name in prod_only:
        assert dev[name] == EnforcementLevel.DISABLED


def test_policies_carry_the_remediation_and_the_kind_of_check():
    for rule, policy in zip(catalog.RULES, catalog.policies(Context()), strict=True):
        assert policy.remediation_steps == rule.remediation
        kind = ResourceValidationPolicy if rule.resource else StackValidationPolicy
        assert isinstance(policy, kind)


def test_violations_end_with_the_remediation():
    seen = []

    def check(context, args, report):
        report("a finding")

    rule = Rule("x", "d", "set determined:x", "mandatory", "mandatory", "gpu", resource=check, why="w")
    from policies.rule import policy

    policy(rule, Context()).validate(object(), lambda message, urn=None: seen.append(message))
    assert seen == ["a finding. Fix: set determined:x"]


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({}, Context("dev", "existing", False)),
        ({"determined:environment": "prod", "determined:cloud": "gke"}, Context("prod", "gke", False)),
        ({"determined:allowDataDeletion": "true", "determined:cloud": "eks"}, Context("dev", "eks", True)),
        ({"determined:allowDataDeletion": "false"}, Context("dev", "existing", False)),
        ({"other:environment": "prod"}, Context()),
    ],
)
def test_the_context_comes_from_the_stack_config_the_cli_passes(config, expected):
    assert context_from_config(config) == expected


def test_the_pack_entry_point_only_assembles_the_pack_with_the_stacks_levels(monkeypatch):
    import pulumi.runtime
    import pulumi_policy

    served = {}

    def pack(**kwargs):
        served.update(kwargs)

    monkeypatch.setattr(pulumi_policy, "PolicyPack", pack)
    monkeypatch.setattr(pulumi.runtime, "get_config_env", lambda: {"determined:environment": "prod"})
    runpy.run_path(str(ROOT / "policies" / "__main__.py"), run_name="__main__")
    assert served["name"] == "determined"
    levels = {p.name: p.enforcement_level for p in served["policies"]}
    from policies.rule import LEVELS

    assert levels == {r.name: LEVELS[r.prod] for r in catalog.RULES}
    source = (ROOT / "policies" / "__main__.py").read_text()
    assert "Rule(" not in source and "def " not in source


def test_policy_config_env_is_what_the_cli_sets():
    # The Pulumi CLI passes the stack's config to a pack as JSON in PULUMI_CONFIG; the SDK
    # reads it with get_config_env.
    import os

    import pulumi.runtime

    before = os.environ.get("PULUMI_CONFIG")
    os.environ["PULUMI_CONFIG"] = json.dumps({"determined:environment": "prod"})
    try:
        assert context_from_config(pulumi.runtime.get_config_env()).prod
    finally:
        if before is None:
            del os.environ["PULUMI_CONFIG"]
        else:
            os.environ["PULUMI_CONFIG"] = before


# The pack's own requirements (none of the program's SDKs) and what a published pack loads:
# tests/plan/test_policy_pack.py.


def test_the_policies_page_table_is_the_rules_table():
    readme = (ROOT / "docs/concepts/policies.md").read_text()
    assert table.markdown() in readme
