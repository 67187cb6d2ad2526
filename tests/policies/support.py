"""Building what CrossGuard hands a policy, by hand (as pulumi-policy's own tests do), and
running one rule of the pack on it.

Props reach a rule as they reach it from the engine: marshalled the way the engine marshals
them for a policy pack (plan.policy_check.properties: a Struct, so every number a double,
secrets in Pulumi's signature object) and read back the way pulumi_policy's analyzer reads
them (json_format.MessageToDict, then its deserialize_properties). Every rule test therefore
feeds its rule engine-shaped values: a count written 0 here arrives as 0.0."""

from __future__ import annotations

from typing import Any

import yaml
from google.protobuf import json_format
from pulumi_policy import (
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
)
from pulumi_policy.deserialize import deserialize_properties
from pulumi_policy.proxy import unknown_checking_proxy

from plan.policy_check import properties
from policies.catalog import RULES
from policies.rule import Context, Rule

DEV = Context(environment="dev", cloud="existing")
PROD = Context(environment="prod", cloud="existing")


def ctx(environment: str = "dev", cloud: str = "existing", allow_data_deletion: bool = False) -> Context:
    return Context(environment=environment, cloud=cloud, allow_data_deletion=allow_data_deletion)


def rule(name: str) -> Rule:
    (found,) = [r for r in RULES if r.name == name]
    return found


def engine_shaped(props: dict[str, Any]) -> dict[str, Any]:
    """`props` as pulumi_policy hands them to a rule after the engine sent them."""
    return deserialize_properties(json_format.MessageToDict(properties(props)))


def options(protect: bool = False) -> PolicyResourceOptions:
    return PolicyResourceOptions(protect, [], None, [], PolicyCustomTimeouts(0, 0, 0), [])


def args(
    resource_type: str, props: dict[str, Any], name: str = "r", protect: bool = False
) -> ResourceValidationArgs:
    """One resource as a resource policy gets it (props behind CrossGuard's unknown proxy)."""
    urn = f"urn:pulumi:test::determined::{resource_type}::{name}"
    return ResourceValidationArgs(
        resource_type, unknown_checking_proxy(engine_shaped(props)), urn, name, options(protect), None
    )


def resource(
    resource_type: str,
    props: dict[str, Any],
    name: str = "r",
    protect: bool = False,
    depends: dict[str, list[PolicyResource]] | None = None,
) -> PolicyResource:
    """One resource of a stack as a stack policy gets it; `depends`: property -> resources
    its value comes from."""
    urn = f"urn:pulumi:test::determined::{resource_type}::{name}"
    found = PolicyResource(
        resource_type,
        unknown_checking_proxy(engine_shaped(props)),
        urn,
        name,
        options(protect),
        None,
        None,
        [],
        {},
    )
    found.property_dependencies = dict(depends or {})
    return found


def check(name: str, subject: Any, context: Context = DEV) -> list[str]:
    """The messages rule `name` reports for a resource (ResourceValidationArgs) or a stack
    (a list of PolicyResource), without the remediation the pack appends."""
    found: list[str] = []
    the_rule = rule(name)

    def report(message: str, urn: str | None = None) -> None:
        found.append(message)

    if the_rule.resource is not None:
        assert not isinstance(subject, list), f"{name} is a resource rule"
        the_rule.resource(context, subject, report)
    else:
        assert isinstance(subject, list), f"{name} is a stack rule"
        assert the_rule.stack is not None
        the_rule.stack(context, subject, report)
    return found


def master_config(config: dict[str, Any], version: str | None = "0.38.1") -> dict[str, Any]:
    """The master's config Secret as the program writes it, holding `config` as master.yaml."""
    meta: dict[str, Any] = {
        "labels": {
            "app.kubernetes.io/instance": "determined",
            "app.kubernetes.io/name": "master",
            "app.kubernetes.io/part-of": "determined",
        },
        "name": "determined-master-config",
        "namespace": "determined",
    }
    if version is not None:
        meta["annotations"] = {"determined.ai/master-version": version}
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": meta,
        "stringData": {"master.yaml": yaml.safe_dump(config)},
        "type": "Opaque",
    }
