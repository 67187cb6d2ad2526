"""The plan's policy findings: policies reached over the analyzer protocol, sent what the engine
sends (plan/policy_check.py). Policies here are objects, served in this process by
pulumi_policy's own servicer; tests/plan/test_policy_pack.py starts packs as processes."""

from __future__ import annotations

import pytest
from google.protobuf import json_format
from pulumi.output import Unknown
from pulumi.runtime import rpc
from pulumi.runtime.proto import alias_pb2, resource_pb2
from pulumi_policy import EnforcementLevel, ResourceValidationPolicy, StackValidationPolicy

from plan.errors import PlanFailure
from plan.mocks import Registration
from plan.policy_check import Deployment, engine_state, evaluate, not_runnable, properties, seconds

STACK = "urn:pulumi:s::determined::pulumi:pulumi:Stack::determined-s"


def reg(
    type_: str,
    name: str,
    inputs: dict | None = None,
    deps: dict | None = None,
    request: resource_pb2.RegisterResourceRequest | None = None,
    outputs: dict | None = None,
    custom: bool = True,
    provider: str | None = None,
    **options,
) -> Registration:
    return Registration(
        urn=f"urn:pulumi:s::determined::{type_}::{name}",
        type=type_,
        name=name,
        parent=STACK,
        custom=custom,
        provider=provider,
        inputs=inputs if inputs is not None else {"metadata": {"name": name}},
        depends_on=sorted({u for urns in (deps or {}).values() for u in urns}),
        options=options,
        property_dependencies=deps or {},
        request=request,
        outputs=outputs,
    )


def seen_by(look, registrations, preview: bool = False, **deployment):
    """What a resource policy saw of each of `registrations` (not of the root stack or of
    default providers), by name."""
    seen = {}
    names = {r.name for r in registrations}

    def validate(args, report):
        if args.name in names:
            seen[args.name] = look(args)

    policy = ResourceValidationPolicy("look", "looks", validate, EnforcementLevel.ADVISORY)
    evaluate([policy], Deployment("s", registrations, preview=preview, **deployment))
    return seen


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


def test_a_resource_finding_names_the_analyzed_resource_whatever_urn_the_rule_passes():
    def validate(args, report):
        if args.resource_type == CLAIM:
            report("elsewhere", "urn:pulumi:s::determined::x:y:Z::other")

    policy = ResourceValidationPolicy("p", "d", validate, EnforcementLevel.ADVISORY)
    (violation,) = evaluate([policy], RESOURCES[:1])
    assert violation["resource"] == RESOURCES[0].urn


def test_stack_policy_sees_the_engines_stack_and_property_dependencies():
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
        seen["parents"] = {r.name: r.parent.name if r.parent else None for r in args.resources}
        report("stack-level finding")

    policy = StackValidationPolicy("stack", "whole stack", validate, EnforcementLevel.ADVISORY)
    (violation,) = evaluate([policy], [bucket, block])
    # The root stack and the default provider the engine registers for aws are resources too.
    assert seen["names"] == ["determined-s", "default", "b", "pab"]
    assert seen["deps"]["pab"] == ["b"] and seen["deps"]["b"] == []
    assert seen["parents"]["b"] == "determined-s" and seen["parents"]["determined-s"] is None
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


def test_secrets_travel_in_pulumis_secret_signature():
    secret = {rpc._special_sig_key: rpc._special_secret_sig, "value": "x"}
    wire = json_format.MessageToDict(properties({"a": {"b": secret}}))
    assert wire == {
        "a": {"b": {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "value": "x"}}
    }


def test_a_value_not_known_yet_makes_the_policy_not_runnable_as_in_preview():
    pending = reg("kubernetes:core/v1:Secret", "s", {"stringData": Unknown()})
    assert json_format.MessageToDict(properties(pending.inputs)) == {
        "stringData": "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
    }

    def validate(args, report):
        if args.resource_type == "kubernetes:core/v1:Secret":
            report(str(args.props["stringData"]))

    policy = ResourceValidationPolicy("reads", "reads", validate, EnforcementLevel.MANDATORY)
    (violation,) = evaluate([policy], [pending])
    assert violation["level"] == "advisory" and not_runnable(violation)
    assert violation["message"] == (
        "can't run policy 'reads' from policy pack 'determined@v0.0.1' during preview: "
        "string value at .stringData can't be known during preview"
    )
    assert violation["resource"] == pending.urn


def test_numbers_arrive_as_doubles():
    deployment = reg("kubernetes:apps/v1:Deployment", "d", {"spec": {"replicas": 0, "paused": False}})
    seen = seen_by(lambda args: (args.props["spec"]["replicas"], args.props["spec"]["paused"]), [deployment])
    replicas, paused = seen["d"]
    assert type(replicas) is float and replicas == 0.0 and paused is False


def test_a_policy_sees_inputs_as_the_providers_check_returns_them():
    # The kubernetes provider names an object without metadata.name (the mocks' model of Check).
    unnamed = reg("kubernetes:core/v1:ConfigMap", "settings", {"metadata": {"namespace": "n"}})
    seen = seen_by(lambda args: args.props["metadata"]["name"], [unnamed])
    assert seen["settings"].startswith("settings-")


def request(**fields) -> resource_pb2.RegisterResourceRequest:
    return resource_pb2.RegisterResourceRequest(**fields)


def test_options_as_the_engine_passes_them():
    timeouts = resource_pb2.RegisterResourceRequest.CustomTimeouts(create="1h30m", update="90s")
    job = reg(
        "kubernetes:batch/v1:Job",
        "backup",
        request=request(
            deleteBeforeReplace=True,
            deleteBeforeReplaceDefined=True,
            customTimeouts=timeouts,
            additionalSecretOutputs=["status"],
            aliases=[alias_pb2.Alias(spec=alias_pb2.Alias.Spec(name="old"))],
        ),
        protect=True,
        ignoreChanges=["spec"],
        deleteBeforeReplace=True,
    )

    def look(args):
        o = args.opts
        timeouts = (o.custom_timeouts.create_seconds, o.custom_timeouts.update_seconds)
        return (
            o.protect,
            list(o.ignore_changes),
            o.delete_before_replace,
            timeouts,
            list(o.aliases),
            o.parent,
        )

    seen = seen_by(look, [job])
    # A stack without state matched no alias: the engine passes none.
    assert seen["backup"] == (True, ["spec"], True, (5400.0, 90.0), [], STACK)
    assert seen_by(lambda args: args.opts.delete_before_replace, [reg(CLAIM, "c")])["c"] is None


def test_each_resource_comes_with_its_provider():
    provider = reg(
        "pulumi:providers:kubernetes",
        "k8s",
        {"context": "kind"},
        request=request(version="4.34.2"),
    )
    explicit = reg(CLAIM, "c", provider=f"{provider.urn}::some-id")
    default = reg(
        "random:index/randomPassword:RandomPassword", "pw", {"length": 24}, request=request(version="4.21.4")
    )
    seen = seen_by(
        lambda args: args.provider and (args.provider.urn, dict(args.provider.props)),
        [provider, explicit, default],
        config={"random:seed": "x", "determined:cloud": "gke"},
    )
    assert seen["c"] == (provider.urn, {"context": "kind", "version": "4.34.2"})
    assert seen["pw"] == (
        "urn:pulumi:s::determined::pulumi:providers:random::default_4_21_4",
        {"seed": "x", "version": "4.21.4"},
    )
    assert seen["k8s"] is None


def test_stack_policies_see_outputs_made_secret_as_the_engine_makes_them():
    secret = {rpc._special_sig_key: rpc._special_secret_sig, "value": "in"}
    password = reg(
        "random:index/randomPassword:RandomPassword",
        "pw",
        {"length": 24, "keepers": secret},
        request=request(additionalSecretOutputs=["result"]),
        outputs={"length": 24, "keepers": "in", "result": "MockSecret0"},
    )
    deployment = Deployment("s", [password])
    (root, _default, state) = engine_state(deployment)
    assert root.type == "pulumi:pulumi:Stack"
    wire = json_format.MessageToDict(properties(state.outputs))
    sig = rpc._special_sig_key
    assert wire["result"][sig] == wire["keepers"][sig] == rpc._special_secret_sig
    assert wire["length"] == 24.0
    # In a first preview a custom resource's outputs are its checked inputs.
    pending = reg(CLAIM, "c", outputs=None)
    assert engine_state(Deployment("s", [pending], preview=True))[-1].outputs == {"metadata": {"name": "c"}}


def test_the_root_stack_carries_the_exports():
    seen = {}

    def validate(args, report):
        (root,) = [r for r in args.resources if r.resource_type == "pulumi:pulumi:Stack"]
        seen.update(root.props)

    policy = StackValidationPolicy("root", "d", validate, EnforcementLevel.ADVISORY)
    evaluate([policy], Deployment("s", RESOURCES, outputs={"url": "https://det", "port": 8080}))
    assert seen == {"url": "https://det", "port": 8080.0}


@pytest.mark.parametrize(
    ("duration", "expected"), [("", 0.0), ("10m", 600.0), ("1h30m", 5400.0), ("1.5s", 1.5), ("300ms", 0.3)]
)
def test_custom_timeouts_are_read_as_go_durations(duration, expected):
    assert seconds(duration) == pytest.approx(expected)


def test_a_timeout_the_engine_cannot_read_stops_the_plan():
    with pytest.raises(PlanFailure):
        seconds("ten minutes")


def test_a_policy_that_fails_stops_the_plan_naming_the_pack_without_secrets():
    def validate(args, report):
        raise RuntimeError("broken with Stand-In-Secret-1")

    policy = ResourceValidationPolicy("boom", "d", validate, EnforcementLevel.ADVISORY)
    with pytest.raises(PlanFailure) as failure:
        evaluate([policy], RESOURCES[:1], secrets={"Stand-In-Secret-1"})
    assert "Stand-In-Secret-1" not in str(failure.value) and "policy pack" in str(failure.value)


def test_remediations_come_first_and_analysis_sees_what_they_leave():
    def remediate(args):
        if args.resource_type == CLAIM:
            return {**args.props, "metadata": {**args.props["metadata"], "labels": {"fixed": "yes"}}}
        return None

    def validate(args, report):
        if args.resource_type == CLAIM and args.props["metadata"].get("labels") == {"fixed": "yes"}:
            report("saw the remediated claim")

    fix = ResourceValidationPolicy(
        "fix", "d", remediate=remediate, enforcement_level=EnforcementLevel.REMEDIATE
    )
    look = ResourceValidationPolicy("look", "d", validate, EnforcementLevel.ADVISORY)
    found = evaluate([fix, look], RESOURCES[:1])
    assert [(v["policy"], v["message"]) for v in found] == [("look", "saw the remediated claim")]
