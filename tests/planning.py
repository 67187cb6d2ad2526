"""Running the program under the plan's recording mocks from tests."""

from __future__ import annotations

from typing import Any

from conftest import pulumi_config

from plan import runner
from plan.runner import PlanResult


def plan_for(raw: dict[str, Any], stack: str = "test", secret_keys=(), policies=()) -> PlanResult:
    return runner.plan(pulumi_config(raw), list(secret_keys), stack, policies=list(policies))


def by_kind(result: PlanResult, kind: str) -> list[dict[str, Any]]:
    return [m for m in result.manifests if m["kind"] == kind]


def one(result: PlanResult, kind: str, name: str) -> dict[str, Any]:
    (match,) = [m for m in by_kind(result, kind) if m["metadata"]["name"] == name]
    return match


def resource(result: PlanResult, type_suffix: str, name: str) -> dict[str, Any]:
    (match,) = [r for r in result.resources if r["type"].endswith(type_suffix) and r["name"] == name]
    return match
