"""The offline policy runner: policies see the resources and report as CrossGuard would."""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, ResourceValidationPolicy, StackValidationPolicy

from plan.mocks import Registration
from plan.policy_check import evaluate


def reg(type_: str, name: str, **options) -> tuple[Registration, dict]:
    props = {"metadata": {"name": name}}
    registration = Registration(
        urn=f"urn:pulumi:s::determined::{type_}::{name}",
        type=type_,
        name=name,
        parent=None,
        custom=True,
        provider=None,
        inputs=props,
        depends_on=[],
        options=options,
    )
    return registration, props


RESOURCES = [
    reg("kubernetes:core/v1:PersistentVolumeClaim", "data", protect=True),
    reg("kubernetes:core/v1:PersistentVolumeClaim", "scratch"),
]


def retained(level):
    def validate(args, report):
        if args.resource_type.endswith("PersistentVolumeClaim") and not args.opts.protect:
            report(f"{args.props['metadata']['name']} is not kept")

    return ResourceValidationPolicy("claims-kept", "claims are kept", validate, level)


def test_resource_policy_reports_the_failing_resource_only():
    (violation,) = evaluate([retained(EnforcementLevel.MANDATORY)], RESOURCES)
    assert violation == {
        "policy": "claims-kept",
        "level": "mandatory",
        "resource": "urn:pulumi:s::determined::kubernetes:core/v1:PersistentVolumeClaim::scratch",
        "message": "scratch is not kept",
    }


def test_passing_resources_report_nothing():
    assert evaluate([retained(EnforcementLevel.ADVISORY)], RESOURCES[:1]) == []


def test_disabled_policies_do_not_run():
    assert evaluate([retained(EnforcementLevel.DISABLED)], RESOURCES) == []


def test_stack_policy_sees_all_resources_and_config():
    seen = {}

    def validate(args, report):
        seen["names"] = [r.name for r in args.resources]
        seen["config"] = dict(args.get_config())
        report("stack-level finding")

    policy = StackValidationPolicy("stack", "whole stack", validate, EnforcementLevel.ADVISORY)
    violations = evaluate([policy], RESOURCES, {"environment": "prod"})
    assert seen == {"names": ["data", "scratch"], "config": {"environment": "prod"}}
    assert violations[0]["level"] == "advisory"
