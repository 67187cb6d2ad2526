"""The pack's findings on a plan, reached the way `pulumi preview --policy-pack policies`
reaches them.

The plan does not call the rules: it starts the pack (policies/) as its own process, as the
Pulumi CLI does, and speaks the analyzer protocol to it (plan/analyzer.py), sending what the
engine sends (pulumi/pulumi v3.259.0, pkg/resource/components/step_generator.go):
- `Analyze` for every registered resource (the root stack, components and providers too, and
  the default provider the engine registers for a package used without an explicit one):
  its inputs as the provider's Check returns them (the mocks' model, plan/mocks/), its
  options (protect, ignoreChanges, deleteBeforeReplace, additionalSecretOutputs,
  customTimeouts, parent; aliases: the one URN the engine matched in the stack's old state,
  so none for a plan, which has no state) and its provider with that provider's inputs;
- `AnalyzeStack` once, with each resource's outputs as the engine's state holds them (the
  provider's answer after an apply; in a first preview the checked inputs; made secret where
  the input was or additionalSecretOutputs names them, step_executor.go), its parent,
  dependencies and non-empty property dependencies.
Properties are marshalled as the engine marshals them (pkg/resource/plugin/rpc.go
MarshalProperties with KeepUnknowns, KeepSecrets, SkipInternalKeys): a protobuf Struct, so
every number arrives as a double (0.0, not 0); secrets as Pulumi's secret signature object;
values not known yet (a first preview) as the unknown-string sentinel. The pack's SDK unwraps
the secrets; a rule that reads an unknown makes it report that it can't run during preview.

The diagnostics become policy.json: {policy, level, resource, message}, in the pack's policy
order, the message as the rule wrote it (the SDK puts the policy's description first: dropped
here), secrets scrubbed. A resource rule's finding names the analyzed resource (the engine
ignores the URN a resource rule passes); a stack rule's names the resource it passes, or none.

Like the engine, it analyzes no read (`Resource.get`): reads are not among a deployment's
new resources. A pack that fails to start, answer or stop in time is a PlanFailure (exit 3).

Policies given as objects (tests) are served in this process by the SDK's own analyzer
servicer and reached over the same protocol, with the same requests.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.protobuf import struct_pb2
from pulumi.runtime import rpc
from pulumi.runtime.proto import analyzer_pb2

from components.config import PROJECT
from components.constants import REDACTED
from plan import analyzer
from plan.errors import PlanFailure
from plan.mocks import Registration, Request, UnmodelledError, model_for
from plan.mocks import checked as provider_check
from plan.redaction import is_secret, is_unknown

PACK = Path(__file__).resolve().parent.parent / "policies"
# The name policies/__main__.py gives the pack (it appears in the SDK's "can't run" messages).
PACK_NAME = "determined"
NOT_RUNNABLE = "can't run policy"
ROOT_STACK = "pulumi:pulumi:Stack"
# The unknown sentinel the SDKs send and the engine passes on for an unknown string
# (rpc.go UnknownStringValue; the Python SDK's rpc.UNKNOWN).
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
LEVELS = {
    analyzer_pb2.ADVISORY: "advisory",
    analyzer_pb2.MANDATORY: "mandatory",
    # The engine reports a remediation policy's remaining violation as mandatory.
    analyzer_pb2.REMEDIATE: "mandatory",
}


def not_runnable(violation: dict[str, str]) -> bool:
    """A finding that says a policy could not run yet (a first preview), not a violation."""
    return violation["message"].startswith(NOT_RUNNABLE)


@dataclass(frozen=True)
class Deployment:
    """What the engine knows of one run when it calls a policy pack."""

    stack: str
    registrations: Sequence[Registration]
    # The stack's config as the CLI decrypts it ("<namespace>:<key>" -> string).
    config: Mapping[str, str] = field(default_factory=dict)
    secret_keys: Sequence[str] = ()
    preview: bool = False
    # The stack's exports (the root stack resource's outputs).
    outputs: Mapping[str, Any] = field(default_factory=dict)
    project: str = PROJECT

    @classmethod
    def of(cls, registrations: Sequence[Registration], preview: bool = False) -> Deployment:
        """Registrations alone: the stack and project their URNs name."""
        stack, project = "stack", PROJECT
        if registrations:
            parts = registrations[0].urn.split("::")
            stack, project = parts[0].removeprefix("urn:pulumi:"), parts[1]
        return cls(stack, registrations, preview=preview, project=project)

    def session(self) -> analyzer.Session:
        return analyzer.Session(
            project=self.project,
            stack=self.stack,
            config=dict(self.config),
            secret_keys=tuple(self.secret_keys),
            dry_run=self.preview,
        )

    @property
    def root(self) -> str:
        return f"urn:pulumi:{self.stack}::{self.project}::{ROOT_STACK}::{self.project}-{self.stack}"


# --- values as the engine marshals them --------------------------------------------------


def _secret(value: Any) -> dict[str, Any]:
    return {rpc._special_sig_key: rpc._special_secret_sig, "value": value}


def engine_value(value: Any) -> Any:
    """A value as the engine marshals it for a policy pack (plain data for a Struct)."""
    if is_secret(value):
        return _secret(engine_value(value.get("value")))
    if is_unknown(value):
        return UNKNOWN
    if isinstance(value, dict):
        return {str(key): engine_value(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [engine_value(item) for item in value]
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)):
        return float(value)
    raise PlanFailure(f"a registered value of type {type(value).__name__} has no engine form in the plan")


def properties(values: Mapping[str, Any]) -> struct_pb2.Struct:
    """A property map as a Struct; internal keys ("__...") left out at the top, as the engine
    does for analyzers."""
    struct = struct_pb2.Struct()
    struct.update({key: engine_value(value) for key, value in values.items() if not key.startswith("__")})
    return struct


_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def seconds(duration: str) -> float:
    """A custom timeout as the engine reads it (Go's time.ParseDuration, in seconds)."""
    if not duration:
        return 0.0
    parts = _DURATION.findall(duration.lstrip("+"))
    if "".join(a + b for a, b in parts) != duration.lstrip("+"):
        raise PlanFailure(f"custom timeout {duration!r} is not a duration the engine reads")
    return sum(float(amount) * _UNIT[unit] for amount, unit in parts)


# --- the engine's view of the stack ------------------------------------------------------


@dataclass
class _Resource:
    urn: str
    type: str
    name: str
    inputs: dict[str, Any]
    outputs: dict[str, Any]
    options: analyzer_pb2.AnalyzerResourceOptions
    parent: str = ""
    provider: str = ""  # the provider resource's URN
    dependencies: list[str] = field(default_factory=list)
    property_dependencies: dict[str, list[str]] = field(default_factory=dict)


def _is_provider(type_: str) -> bool:
    return type_.startswith("pulumi:providers:")


def _checked(reg: Registration) -> dict[str, Any]:
    """The inputs as the provider's Check returns them (a component has no provider)."""
    if not reg.custom:
        return dict(reg.inputs)
    try:
        inputs = provider_check(Request(reg.type, reg.name, reg.inputs, {}), model_for(reg.type))
    except UnmodelledError:
        inputs = dict(reg.inputs)
    version = getattr(reg.request, "version", "")
    if _is_provider(reg.type) and version:
        # The engine records the plugin version among a provider's inputs (SetProviderVersion).
        inputs["version"] = version
    return inputs


def _options(reg: Registration) -> analyzer_pb2.AnalyzerResourceOptions:
    request = reg.request
    options = analyzer_pb2.AnalyzerResourceOptions(
        protect=bool(reg.options.get("protect")),
        ignoreChanges=list(reg.options.get("ignoreChanges", [])),
        parent=reg.parent or "",
    )
    if request is None:
        if "deleteBeforeReplace" in reg.options:
            options.deleteBeforeReplace = bool(reg.options["deleteBeforeReplace"])
            options.deleteBeforeReplaceDefined = True
        options.customTimeouts.SetInParent()
        return options
    options.deleteBeforeReplaceDefined = request.deleteBeforeReplaceDefined
    options.deleteBeforeReplace = request.deleteBeforeReplace and request.deleteBeforeReplaceDefined
    options.additionalSecretOutputs.extend(request.additionalSecretOutputs)
    timeouts = request.customTimeouts
    options.customTimeouts.create = seconds(timeouts.create)
    options.customTimeouts.update = seconds(timeouts.update)
    options.customTimeouts.delete = seconds(timeouts.delete)
    return options


def _outputs(reg: Registration, inputs: dict[str, Any]) -> dict[str, Any]:
    """The outputs the engine's state holds, made secret as the step executor makes them."""
    outputs = dict(reg.outputs) if reg.outputs is not None else dict(inputs)
    extra = set(getattr(reg.request, "additionalSecretOutputs", ())) - {"id"}
    for key, value in outputs.items():
        if not is_secret(value) and (key in extra or is_secret(inputs.get(key))):
            outputs[key] = _secret(value)
    return outputs


def _default_provider_name(version: str) -> str:
    """providers.ProviderRequest.DefaultName: "default" and the version's parts."""
    if not version:
        return "default"
    core, _, build = version.partition("+")
    core, _, pre = core.partition("-")
    parts = core.split(".") + (pre.split(".") if pre else []) + (build.split(".") if build else [])
    return "_".join(["default", *parts])


def _default_provider(deployment: Deployment, reg: Registration) -> _Resource:
    package = reg.type.split(":", 1)[0]
    version = getattr(reg.request, "version", "")
    name = _default_provider_name(version)
    # The package's config as its default provider's inputs (target.go GetPackageConfig).
    inputs: dict[str, Any] = {}
    for key, value in deployment.config.items():
        namespace, _, short = key.partition(":")
        if namespace == package:
            inputs[short] = _secret(value) if key in deployment.secret_keys else value
    if version:
        inputs["version"] = version
    options = analyzer_pb2.AnalyzerResourceOptions()
    options.customTimeouts.SetInParent()
    return _Resource(
        urn=f"urn:pulumi:{deployment.stack}::{deployment.project}::pulumi:providers:{package}::{name}",
        type=f"pulumi:providers:{package}",
        name=name,
        inputs=inputs,
        outputs=dict(inputs),
        options=options,
    )


def engine_state(deployment: Deployment) -> list[_Resource]:
    """Every resource the engine's deployment holds: the root stack first, then each
    registration (a default provider just before the first resource that uses it)."""
    options = analyzer_pb2.AnalyzerResourceOptions()
    options.customTimeouts.SetInParent()
    state = [
        _Resource(
            urn=deployment.root,
            type=ROOT_STACK,
            name=f"{deployment.project}-{deployment.stack}",
            inputs={},
            outputs=dict(deployment.outputs),
            options=options,
        )
    ]
    defaults: dict[str, _Resource] = {}
    for reg in deployment.registrations:
        provider = reg.provider.rsplit("::", 1)[0] if reg.provider else ""
        if reg.custom and not provider and not _is_provider(reg.type):
            default = _default_provider(deployment, reg)
            if default.urn not in defaults:
                defaults[default.urn] = default
                state.append(default)
            provider = default.urn
        inputs = _checked(reg)
        state.append(
            _Resource(
                urn=reg.urn,
                type=reg.type,
                name=reg.name,
                inputs=inputs,
                outputs=_outputs(reg, inputs),
                options=_options(reg),
                parent=reg.parent or "",
                provider=provider,
                dependencies=list(reg.depends_on),
                property_dependencies={k: list(v) for k, v in reg.property_dependencies.items() if v},
            )
        )
    return state


def _provider(
    resource: _Resource, by_urn: Mapping[str, _Resource]
) -> analyzer_pb2.AnalyzerProviderResource | None:
    found = by_urn.get(resource.provider) if resource.provider else None
    if found is None:
        return None
    return analyzer_pb2.AnalyzerProviderResource(
        urn=found.urn, type=found.type, name=found.name, properties=properties(found.inputs)
    )


# --- judging -----------------------------------------------------------------------------


def _scrub(message: str, secrets: Sequence[str]) -> str:
    for secret in secrets:
        if secret and secret in message:
            message = message.replace(secret, REDACTED)
    return message


def _violation(diagnostic: Any, resource: str, secrets: Sequence[str]) -> dict[str, str]:
    message = diagnostic.message
    # pulumi_policy reports "<description>\n<message>".
    if diagnostic.description and message.startswith(diagnostic.description + "\n"):
        message = message[len(diagnostic.description) + 1 :]
    return {
        "policy": diagnostic.policyName,
        "level": LEVELS.get(diagnostic.enforcementLevel, "advisory"),
        "resource": resource,
        "message": _scrub(message, secrets),
    }


def judge(
    client: analyzer.Analyzer, deployment: Deployment, secrets: Iterable[str] = ()
) -> list[dict[str, str]]:
    """The engine's calls to a connected pack, its diagnostics as violations."""
    secrets = sorted(set(secrets), key=len, reverse=True)
    client.configure_stack(deployment.session())
    info = client.info()
    client.configure(info)
    order = {p.name: index for index, p in enumerate(info.policies)}
    remediates = any(p.enforcementLevel == analyzer_pb2.REMEDIATE for p in info.policies)

    state = engine_state(deployment)
    by_urn = {r.urn: r for r in state}
    found: list[dict[str, str]] = []
    for resource in state:
        request = analyzer_pb2.AnalyzeRequest(
            urn=resource.urn,
            type=resource.type,
            name=resource.name,
            properties=properties(resource.inputs),
            options=resource.options,
            provider=_provider(resource, by_urn),
        )
        if remediates:
            # The engine remediates first and analyzes what the remediations leave.
            response = client.remediate(request)
            for remediation in response.remediations if response is not None else []:
                if remediation.diagnostic:
                    found.append(
                        {
                            "policy": remediation.policyName,
                            "level": "advisory",
                            "resource": resource.urn,
                            "message": _scrub(remediation.diagnostic, secrets),
                        }
                    )
                else:
                    request.properties.CopyFrom(remediation.properties)
        for diagnostic in client.analyze(request).diagnostics:
            found.append(_violation(diagnostic, resource.urn, secrets))
    stack = [
        analyzer_pb2.AnalyzerResource(
            urn=r.urn,
            type=r.type,
            name=r.name,
            properties=properties(r.outputs),
            options=r.options,
            provider=_provider(r, by_urn),
            parent=r.parent,
            dependencies=r.dependencies,
            propertyDependencies={
                k: analyzer_pb2.AnalyzerPropertyDependencies(urns=v)
                for k, v in r.property_dependencies.items()
            },
        )
        for r in state
    ]
    for diagnostic in client.analyze_stack(stack).diagnostics:
        # The engine shows a stack finding under the resource it names, else under the stack.
        resource = diagnostic.urn if diagnostic.urn in by_urn and diagnostic.urn != deployment.root else ""
        found.append(_violation(diagnostic, resource, secrets))
    return sorted(found, key=lambda v: order.get(v["policy"], len(order)))


def _failure(exc: Exception, secrets: Iterable[str]) -> PlanFailure:
    # One line, as every message of the plan.
    return PlanFailure(" ".join(_scrub(str(exc), sorted(set(secrets), key=len, reverse=True)).split()))


def run_pack(
    deployment: Deployment, secrets: Iterable[str] = (), pack: Path | None = None
) -> list[dict[str, str]]:
    """The pack at `pack` (policies/) started as the CLI starts it and judged over the
    analyzer protocol."""
    secrets = list(secrets)
    try:
        spec = analyzer.launch(pack or PACK, deployment.session())
    except analyzer.PackError as exc:
        raise _failure(exc, secrets) from None
    try:
        with analyzer.started(spec) as (port, _stderr), analyzer.connected(port) as client:
            return judge(client, deployment, secrets)
    except analyzer.PackError as exc:
        raise _failure(exc, secrets) from None


def evaluate(
    policies: Iterable[Any],
    deployment: Deployment | Sequence[Registration],
    secrets: Iterable[str] = (),
) -> list[dict[str, str]]:
    """Policies given as objects, served in this process and judged over the same protocol."""
    policies = list(policies)
    if not isinstance(deployment, Deployment):
        deployment = Deployment.of(list(deployment))
    if not policies:
        return []
    secrets = list(secrets)
    try:
        with analyzer.served(policies, PACK_NAME) as port, analyzer.connected(port) as client:
            return judge(client, deployment, secrets)
    except analyzer.PackError as exc:
        raise _failure(exc, secrets) from None
