"""Every rule of the pack, by area. The pack (policies/__main__.py) and the offline plan
(plan/policy_check.py) both serve `RULES` with the levels of the stack's environment."""

from __future__ import annotations

from policies import data, determined, exposure, gpu, identity, workloads
from policies.rule import Context, Rule, policies_for

RULES: list[Rule] = [
    *gpu.RULES,
    *data.RULES,
    *identity.RULES,
    *exposure.RULES,
    *workloads.RULES,
    *determined.RULES,
]


def policies(context: Context):
    """The CrossGuard policies of every rule, at the levels of `context`'s environment."""
    return policies_for(RULES, context)
