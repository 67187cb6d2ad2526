"""Running the project's CrossGuard policies over recorded registrations, offline."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Iterable
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from plan.mocks import Registration


def _options(reg: Registration) -> PolicyResourceOptions:
    return PolicyResourceOptions(
        protect=bool(reg.options.get("protect")),
        ignore_changes=list(reg.options.get("ignoreChanges", [])),
        delete_before_replace=reg.options.get("deleteBeforeReplace"),
        aliases=[],
        custom_timeouts=PolicyCustomTimeouts(0, 0, 0),
        additional_secret_outputs=[],
        parent=reg.parent,
    )


def _run(result: Any) -> None:
    """Wait for an async policy's validation: on a loop of its own, closed afterwards."""
    if inspect.isawaitable(result):

        async def wait() -> None:
            await result

        asyncio.run(wait())


def evaluate(
    policies: Iterable[Policy],
    resources: list[tuple[Registration, dict[str, Any]]],
    config: dict[str, Any] | None = None,
) -> list[dict[str, str]]:
    """Violations as {policy, level, resource, message}. `resources` pairs each
    registration with the inputs policies see (secrets already redacted)."""
    violations: list[dict[str, str]] = []
    for policy in policies:
        level = policy.enforcement_level or EnforcementLevel.ADVISORY
        if level == EnforcementLevel.DISABLED:
            continue

        def report(message: str, urn: str | None = None, _policy=policy, _level=level) -> None:
            violations.append(
                {"policy": _policy.name, "level": _level.value, "resource": urn or "", "message": message}
            )

        if isinstance(policy, ResourceValidationPolicy):
            for reg, props in resources:
                args = ResourceValidationArgs(
                    reg.type, props, reg.urn, reg.name, _options(reg), None, config or {}
                )
                _run(policy.validate(args, lambda m, u=None, r=reg: report(m, u or r.urn)))
        elif isinstance(policy, StackValidationPolicy):
            stack = [
                PolicyResource(reg.type, props, reg.urn, reg.name, _options(reg), None, None, [], {})
                for reg, props in resources
            ]
            _run(policy.validate(StackValidationArgs(stack, config or {}), report))
    return violations
