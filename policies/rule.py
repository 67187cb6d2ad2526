"""What a policy of this pack is, and how the pack turns one into a CrossGuard policy.

A `Rule` is a plain check with its levels in dev and prod; `policies_for(context)` makes the
`pulumi_policy` objects the pack serves (policies/__main__.py) and the offline plan runs
(plan/policy_check.py), with the levels of the stack's environment. Nothing here starts a
policy server, so every rule can be imported and tested.

A check receives what CrossGuard gives it: for a resource rule one resource (type, props in
camelCase, urn, name, opts: a `ResourceValidationArgs`), for a stack rule every resource of
the stack (`PolicyResource`s, with `property_dependencies`). Both are read the same way
(`resource_type`, `props`, `urn`, `name`, `opts`), so helpers in policies/facts.py take either.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    ResourceValidationPolicy,
    StackValidationPolicy,
)

Level = Literal["advisory", "mandatory", "off"]
LEVELS: dict[Level, EnforcementLevel] = {
    "advisory": EnforcementLevel.ADVISORY,
    "mandatory": EnforcementLevel.MANDATORY,
    "off": EnforcementLevel.DISABLED,
}

PREFIX = "determined:"


@dataclass(frozen=True)
class Context:
    """What a rule knows of the stack beyond its resources: from the stack's own config,
    which the Pulumi CLI hands every policy pack (PULUMI_CONFIG) and the plan reads too."""

    environment: Literal["dev", "prod"] = "dev"
    cloud: str = "existing"  # gke | eks | existing
    allow_data_deletion: bool = False

    @property
    def prod(self) -> bool:
        return self.environment == "prod"


def _flag(value: str | None) -> bool:
    if value is None:
        return False
    try:
        return json.loads(value) is True
    except ValueError:
        return value.strip().lower() == "true"


def context_from_config(config: Mapping[str, str]) -> Context:
    """The context of a stack from its config as Pulumi passes it: "determined:<key>" ->
    string. Absent keys take the program's defaults (dev, no data deletion)."""
    environment = config.get(f"{PREFIX}environment", "dev")
    return Context(
        environment="prod" if environment == "prod" else "dev",
        cloud=config.get(f"{PREFIX}cloud", "existing"),
        allow_data_deletion=_flag(config.get(f"{PREFIX}allowDataDeletion")),
    )


class Report(Protocol):
    def __call__(self, message: str, urn: str | None = None) -> None: ...


ResourceCheck = Callable[[Context, Any, Report], None]
StackCheck = Callable[[Context, Sequence[Any], Report], None]


@dataclass(frozen=True)
class Rule:
    """One policy. `remediation` names the stack config key to change; it is CrossGuard's
    remediation steps and ends every violation message, so the plan's policy.json says it too.
    `dev`/`prod`: the enforcement level in each environment ("off": not run there, for rules
    about what only prod promises, such as versioned buckets)."""

    name: str
    description: str
    remediation: str
    dev: Level
    prod: Level
    area: str
    resource: ResourceCheck | None = None
    stack: StackCheck | None = None
    # Why the rule exists, for the README's table.
    why: str = ""

    def __post_init__(self) -> None:
        if (self.resource is None) == (self.stack is None):
            raise ValueError(f"rule {self.name}: exactly one of resource or stack")

    def level(self, context: Context) -> Level:
        return self.prod if context.prod else self.dev


def _reporter(rule: Rule, report: Report) -> Report:
    def with_remediation(message: str, urn: str | None = None) -> None:
        report(f"{message}. Fix: {rule.remediation}", urn)

    return with_remediation


def policy(rule: Rule, context: Context) -> Policy:
    """The CrossGuard policy of `rule` in `context`."""
    level = LEVELS[rule.level(context)]
    common = {
        "name": rule.name,
        "description": rule.description,
        "enforcement_level": level,
        "remediation_steps": rule.remediation,
    }
    if rule.resource is not None:
        check = rule.resource
        return ResourceValidationPolicy(
            validate=lambda args, report: check(context, args, _reporter(rule, report)), **common
        )
    stack_check = rule.stack
    assert stack_check is not None
    return StackValidationPolicy(
        validate=lambda args, report: stack_check(context, args.resources, _reporter(rule, report)), **common
    )


def policies_for(rules: Sequence[Rule], context: Context) -> list[Policy]:
    return [policy(rule, context) for rule in rules]
