"""Kubernetes objects over every stack and fixture: nothing the API server refuses beyond
its schema (plan.kube_check, with the rules of components.kube.api_rules)."""

from __future__ import annotations

import pytest
from stack_plans import NAMES, plan

from components.config import load_config, master_config_size
from plan import kube_check


@pytest.mark.parametrize("name", NAMES)
def test_the_api_server_accepts_every_planned_object(name):
    result = plan(name).result
    assert kube_check.violations(result.resources, result.master_yaml) == []


@pytest.mark.parametrize("name", NAMES)
def test_the_config_time_size_of_the_master_config_is_not_below_the_planned_one(name):
    """The config refuses a master.yaml too large for its Secret by building it from the
    config alone: that estimate must not fall below what the plan writes."""
    stack = plan(name)
    planned = len(stack.result.master_yaml.encode()) if stack.result.master_yaml else 0
    assert master_config_size.master_config_size(load_config(stack.raw)) >= planned
