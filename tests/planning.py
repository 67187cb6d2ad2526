"""Running the program under the plan's recording mocks from tests."""

from __future__ import annotations

import functools
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from conftest import ROOT, pulumi_config

from plan import runner, stackfile
from plan.runner import PlanResult

FIXTURE_STACKS = ROOT / "tests" / "fixtures" / "stacks"


def plan_for(
    raw: dict[str, Any], stack: str = "test", secret_keys=(), policies=(), preview: bool = False
) -> PlanResult:
    return runner.plan(pulumi_config(raw), list(secret_keys), stack, policies=list(policies), preview=preview)


def plan_file(path: Path, preview: bool = False, policies=()) -> PlanResult:
    """Plan a stack file as `python -m plan --config <path>` does."""
    config, secret_keys = stackfile.load_stack_file(path)
    return runner.plan(config, secret_keys, stack_name(path), policies=list(policies), preview=preview)


def stack_name(path: Path) -> str:
    return path.name.removeprefix("Pulumi.").rsplit(".", 1)[0]


def stack_files() -> Iterator[Path]:
    """Every stack in stacks/ and every fixture stack (found when the tests are collected)."""
    yield from sorted(stackfile.STACKS_DIR.glob("Pulumi.*.yaml"))
    yield from sorted(FIXTURE_STACKS.glob("*.yaml"))


def run_cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """`python -m plan ARGS` in a fresh process, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "plan", *args], cwd=cwd, capture_output=True, text=True, check=False
    )


def by_kind(result: PlanResult, kind: str) -> list[dict[str, Any]]:
    return [m for m in result.manifests if m["kind"] == kind]


def one(result: PlanResult, kind: str, name: str) -> dict[str, Any]:
    (match,) = [m for m in by_kind(result, kind) if m["metadata"]["name"] == name]
    return match


def planned(name: str, preview: bool = False) -> PlanResult:
    """A stack of stacks/ or tests/fixtures/stacks/ by name, planned once per test session
    (however the arguments are spelled: the cache sees them normalized)."""
    return _planned(name, bool(preview))


@functools.cache
def _planned(name: str, preview: bool) -> PlanResult:
    path = stackfile.STACKS_DIR / f"Pulumi.{name}.yaml"
    if not path.exists():
        path = FIXTURE_STACKS / f"Pulumi.{name}.yaml"
    return plan_file(path, preview=preview)


def grants(rules: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    """(API group, resource, verb) of every right an RBAC role's rules give."""
    return {
        (group, resource, verb)
        for rule in rules
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }


def of_type(result: PlanResult, type_suffix: str) -> list[dict[str, Any]]:
    return [r for r in result.resources if r["type"].endswith(type_suffix)]


def resource(result: PlanResult, type_suffix: str, name: str) -> dict[str, Any]:
    (match,) = [r for r in result.resources if r["type"].endswith(type_suffix) and r["name"] == name]
    return match


def files(out: Path) -> dict[str, bytes]:
    """Every file of a plan directory by relative path, with its bytes."""
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
