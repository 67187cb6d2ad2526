"""The offline policy runner: policies see the resources and report as CrossGuard would."""

from __future__ import annotations

from pulumi.output import Unknown
from pulumi.runtime import rpc
from pulumi_policy import EnforcementLevel, ResourceValidationPolicy, StackValidationPolicy

from plan.mocks import Registration
from plan.policy_check import engine_view, evaluate


def reg(
    type_: str, name: str, inputs: dict | None = None, deps: dict | None = None, **options
) -> Registration:
    return Registration(
        urn=f"urn:pulumi:s::determined::{type_}::{name}",
        type=type_,
        name=name,
        parent=None,
        custom=True,
        provider=None,
        inputs=inputs if inputs is not None else {"metadata": {"name": name}},
        depends_on=[],
        options=options,
        property_dependencies=deps or {},
    )


CLAIM = "kubernetes:core/v1:PersistentVolumeClaim"
RESOURCES = [reg(CLAIM, "data", protect=True), reg(CLAIM, "scratch", retainOnDelete=True)]


def protected(level):
    def validate(args, report):
        if args.resource_type == CLAIM and not args.opts.protect:
            report(f"{args.props['metadata']['name']} is not protected")

    return ResourceValidationPolicy("claims-protected", "claims are protected", validate, level)


def test_resource_policy_reports_the_failing_resource_only():
    # retainOnDelete is not among the options the engine gives a policy: not seen here either.
    (violation,) = evaluate([protected(EnforcementLevel.MANDATORY)], RESOURCES)
    assert violation == {
        "policy": "claims-protected",
        "level": "mandatory",
        "resource": f"urn:pulumi:s::determined::{CLAIM}::scratch",
        "message": "scratch is not protected",
    }


def test_passing_resources_report_nothing():
    assert evaluate([protected(EnforcementLevel.ADVISORY)], RESOURCES[:1]) == []


def test_disabled_policies_do_not_run():
    assert evaluate([protected(EnforcementLevel.DISABLED)], RESOURCES) == []


def test_stack_policy_sees_all_resources_and_their_property_dependencies():
    seen = {}
    bucket = reg("aws:s3/bucket:Bucket", "b")
    block = reg(
        "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", "pab", deps={"bucket": [bucket.urn]}
    )

    def validate(args, report):
        seen["names"] = [r.name for r in args.resources]
        seen["deps"] = {
            r.name: [d.name for d in r.property_dependencies.get("bucket", [])] for r in args.resources
        }
        report("stack-level finding")

    policy = StackValidationPolicy("stack", "whole stack", validate, EnforcementLevel.ADVISORY)
    (violation,) = evaluate([policy], [bucket, block])
    assert seen == {"names": ["b", "pab"], "deps": {"b": [], "pab": ["b"]}}
    assert violation["level"] == "advisory" and violation["resource"] == ""


def test_policies_see_secrets_in_the_clear_and_messages_are_scrubbed():
    secret = {rpc._special_sig_key: rpc._special_secret_sig, "value": "Stand-In-Secret-1"}
    secret_reg = reg("kubernetes:core/v1:Secret", "s", {"stringData": {"password": secret}})

    def validate(args, report):
        if args.resource_type == "kubernetes:core/v1:Secret":
            report(f"saw {args.props['stringData']['password']}")

    policy = ResourceValidationPolicy("echo", "echo", validate, EnforcementLevel.MANDATORY)
    (violation,) = evaluate([policy], [secret_reg], secrets={"Stand-In-Secret-1"})
    assert violation["message"] == "saw [secret]"


def test_a_value_not_known_yet_makes_the_policy_not_runnable_as_in_preview():
    pending = reg("kubernetes:core/v1:Secret", "s", {"stringData": Unknown()})
    assert engine_view(pending.inputs)["stringData"] != {}

    def validate(args, report):
        report(str(args.props["stringData"]))

    policy = ResourceValidationPolicy("reads", "reads", validate, EnforcementLevel.MANDATORY)
    (violation,) = evaluate([policy], [pending])
    assert violation["level"] == "advisory"
    assert violation["message"].startswith("can't run policy 'reads' during preview: ")
    assert ".stringData" in violation["message"]
