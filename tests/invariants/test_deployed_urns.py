"""Deployed stacks keep every resource: each URN a stack or fixture was planned with before the
library moved to components/ (commit c402482) is planned again, under its URN or an alias the
engine matches it by. A URN neither planned nor aliased is a resource `pulumi up` would delete
and create anew (a cluster, a database, a bucket...).

The URNs are the plan's (the SDK's mock monitor makes them: the parent's own type, not its
whole chain); aliases are recorded the same way (plan/mocks/recording.py `alias_urns`).
"""

from __future__ import annotations

import json
import re

import pytest
from conftest import ROOT
from stack_plans import plan

DEPLOYED = json.loads((ROOT / "tests" / "data" / "deployed-urns.json").read_text())
# Replaced by design: the workspace-binding Job's name carries a digest of its script and
# mapping, and a finished Job cannot change, so a new script is a new Job (delete before
# replace; components/determined/workspaces.py). The move changed a path in its docstring.
REPLACED = re.compile(r"kubernetes:batch/v1:Job::[^:]+/determined-bind-workspaces-[0-9a-f]+-[0-9a-f]+$")


def kept(resources: list[dict]) -> set[str]:
    """Every URN the engine would match to a planned resource: its own and its aliases'."""
    return {urn for r in resources for urn in [r["urn"], *(r.get("options") or {}).get("aliases", [])]}


@pytest.mark.parametrize("name", sorted(DEPLOYED))
def test_every_deployed_resource_is_planned_under_its_urn_or_an_alias(name):
    planned = kept(plan(name).result.resources)
    lost = [urn for urn in DEPLOYED[name] if urn not in planned and not REPLACED.search(urn)]
    assert lost == [], f"{name}: these deployed resources would be deleted and created anew"


def test_the_renamed_components_are_matched_by_their_aliases_only():
    """The check can fail: the renamed components' deployed URNs are not planned as such."""
    resources = plan("gke-dev").result.resources
    own = {r["urn"] for r in resources}
    renamed = [urn for urn in DEPLOYED["gke-dev"] if "determined:gke:Platform" in urn]
    assert renamed and not set(renamed) & own
    assert set(renamed) <= kept(resources)
