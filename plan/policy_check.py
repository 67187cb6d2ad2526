"""Running the pack's policies over recorded registrations, offline, as CrossGuard would.

Policies see what the engine gives a policy pack: each resource's inputs with secret values
in the clear (here the plan's stand-ins, never the user's secrets) and, in a first preview,
values not known yet as CrossGuard's unknown sentinels, which raise when a policy reads them;
such a policy is reported as not runnable during preview (advisory), as the engine does.
Stack policies also get each resource's parent, dependencies and property dependencies.
Messages are checked for secrets before they reach policy.json.
"""

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
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, UnknownValueError, unknown_checking_proxy

from deploy.defaults import REDACTED
from plan.mocks import Registration
from plan.redaction import is_secret, is_unknown

NOT_RUNNABLE = "can't run policy"


def not_runnable(violation: dict[str, str]) -> bool:
    """A finding that says a policy could not run yet (a first preview), not a violation."""
    return violation["message"].startswith(NOT_RUNNABLE)


def engine_view(value: Any) -> Any:
    """A registered value as the engine hands it to a policy pack: secrets unwrapped,
    unknowns as CrossGuard's sentinel."""
    if is_secret(value):
        return engine_view(value.get("value"))
    if is_unknown(value):
        return UNKNOWN_STRING_VALUE
    if isinstance(value, dict):
        return {str(key): engine_view(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [engine_view(item) for item in value]
    return value


def _options(reg: Registration) -> PolicyResourceOptions:
    # Only what the engine passes: retainOnDelete is not among an analyzer's options.
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


def _scrub(message: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        if secret and secret in message:
            message = message.replace(secret, REDACTED)
    return message


def stack_resources(registrations: list[Registration]) -> list[PolicyResource]:
    """The stack as a stack policy sees it, parents and dependencies linked."""
    by_urn = {
        reg.urn: PolicyResource(
            reg.type,
            unknown_checking_proxy(engine_view(reg.inputs)),
            reg.urn,
            reg.name,
            _options(reg),
            None,
            None,
            [],
            {},
        )
        for reg in registrations
    }
    for reg in registrations:
        resource = by_urn[reg.urn]
        resource.parent = by_urn.get(reg.parent) if reg.parent else None
        resource.dependencies = [by_urn[u] for u in reg.depends_on if u in by_urn]
        resource.property_dependencies = {
            prop: [by_urn[u] for u in urns if u in by_urn] for prop, urns in reg.property_dependencies.items()
        }
    return list(by_urn.values())


def evaluate(
    policies: Iterable[Policy],
    registrations: list[Registration],
    secrets: Iterable[str] = (),
) -> list[dict[str, str]]:
    """Violations as {policy, level, resource, message}."""
    secrets = sorted(set(secrets), key=len, reverse=True)
    violations: list[dict[str, str]] = []
    # Built once: policies only read them.
    stack = stack_resources(registrations)
    views = [(reg, resource.props) for reg, resource in zip(registrations, stack, strict=True)]
    for policy in policies:
        level = policy.enforcement_level or EnforcementLevel.ADVISORY
        if level == EnforcementLevel.DISABLED:
            continue

        def report(message: str, urn: str | None = None, _policy=policy, _level=level) -> None:
            violations.append(
                {
                    "policy": _policy.name,
                    "level": _level.value,
                    "resource": urn or "",
                    "message": _scrub(message, secrets),
                }
            )

        def not_runnable(error: UnknownValueError, urn: str = "", _policy=policy) -> None:
            violations.append(
                {
                    "policy": _policy.name,
                    "level": EnforcementLevel.ADVISORY.value,
                    "resource": urn,
                    "message": f"{NOT_RUNNABLE} '{_policy.name}' during preview: {error.message}",
                }
            )

        if isinstance(policy, ResourceValidationPolicy):
            for reg, props in views:
                args = ResourceValidationArgs(reg.type, props, reg.urn, reg.name, _options(reg), None, {})
                try:
                    _run(policy.validate(args, lambda m, u=None, r=reg: report(m, u or r.urn)))
                except UnknownValueError as error:
                    not_runnable(error, reg.urn)
        elif isinstance(policy, StackValidationPolicy):
            try:
                _run(policy.validate(StackValidationArgs(stack, {}), report))
            except UnknownValueError as error:
                not_runnable(error)
    return violations
