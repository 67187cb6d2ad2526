"""What the engine would see of every registration, recorded for the plan.

The stock mock monitor hands `Mocks.new_resource` only the inputs; `RecordingMonitor` also
keeps parent, dependencies, the resource options that protect data, and where a registered
value is still unknown, as `Registration`s in a `Recorder`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from google.protobuf import struct_pb2
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import rpc

from plan.redaction import restore_ints

if TYPE_CHECKING:
    from plan.mocks import PlanMocks


@dataclass
class Registration:
    """One resource registration, as the engine gets it."""

    urn: str
    type: str
    name: str
    parent: str | None
    custom: bool
    provider: str | None
    inputs: dict[str, Any]
    depends_on: list[str]
    options: dict[str, Any]
    # Paths of values in `inputs` that are unknown (a first preview; never after an apply).
    unknowns: list[str] = field(default_factory=list)
    # Input property -> URNs of the resources its value comes from (for stack policies).
    property_dependencies: dict[str, list[str]] = field(default_factory=dict)
    # The RegisterResourceRequest as the engine gets it: the options it passes to policy packs.
    request: Any = None
    # The resource's outputs in the engine's state: the provider's answer after an apply, what
    # a component registers; None for a custom resource in a first preview (not known yet).
    outputs: dict[str, Any] | None = None


@dataclass
class Recorder:
    """What one run of the program registered, exported and was answered."""

    resources: list[Registration] = field(default_factory=list)
    stack_outputs: dict[str, Any] = field(default_factory=dict)
    stack_output_unknowns: list[str] = field(default_factory=list)
    # Secret values the mocks generated (random passwords, their hashes): the plan's last
    # check makes sure none of them reaches an output.
    generated_secrets: set[str] = field(default_factory=set)
    # What the program returned (the Determined component), for what it exposes to previews.
    deployment: Any = None
    # Registered inputs by URN: a resource's provider settings (region, project) for the mocks.
    inputs_by_urn: dict[str, dict[str, Any]] = field(default_factory=dict)
    # URN -> the old URNs its aliases stand for (children inherit their parent's).
    aliases: dict[str, list[str]] = field(default_factory=dict)
    # master.yaml as the program previews it (secrets as placeholders).
    master_yaml: str | None = None
    # What the mocks answered for each resource, by (type, name): the computed outputs
    # tests compare with what the program did with them.
    outputs: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    # Existing resources the program reads (`Resource.get`): (type, ID).
    reads: list[tuple[str, str]] = field(default_factory=list)


def unknown_paths(value: struct_pb2.Struct | struct_pb2.Value, path: str = "") -> list[str]:
    """Where the RPC unknown sentinel is in a serialized value, secrets included."""
    if isinstance(value, struct_pb2.Struct):
        if value.fields.get(rpc._special_sig_key) == struct_pb2.Value(string_value=rpc._special_secret_sig):
            inner = value.fields.get("value")
            return unknown_paths(inner, path) if inner is not None else []
        found: list[str] = []
        for key, item in value.fields.items():
            found += unknown_paths(item, f"{path}.{key}" if path else key)
        return found
    kind = value.WhichOneof("kind")
    if kind == "string_value":
        return [path or "(value)"] if value.string_value == rpc.UNKNOWN else []
    if kind == "struct_value":
        return unknown_paths(value.struct_value, path)
    if kind == "list_value":
        found = []
        for index, item in enumerate(value.list_value.values):
            found += unknown_paths(item, f"{path}[{index}]")
        return found
    return []


STACK_TYPE = "pulumi:pulumi:Stack"


def _qualified_type(urn: str) -> str:
    """The type part of a URN: its parents' types and its own, joined by `$`."""
    return urn.split("::")[2]


def alias_urns(request: Any, urn: str, parent_aliases: list[str]) -> list[str]:
    """The URNs the engine matches against the old state for this registration: those its
    aliases name, and those it inherits from its parent's aliases (a child of a renamed
    component keeps its deployed URN). Pulumi's URN: urn:pulumi:<stack>::<project>::
    <parent's qualified type>$<type>::<name>, a child of the stack without a parent type
    (pulumi/pulumi sdk/go/common/resource/urn.go; alias specs: sdk/proto/alias.proto). Made
    the way the SDK's mock monitor makes the plan's URNs (`MockMonitor.make_urn`, pulumi
    3.272.0 runtime/mocks.py: the parent's own type only, not its whole chain), so that they
    compare with the plan's."""
    prefix = urn.split("::")[0] + "::" + urn.split("::")[1]

    def make(parent: str | None, kind: str, name: str) -> str:
        # Without a parent is under the stack (the SDK parents every resource to it).
        parent_type = _qualified_type(parent).split("$")[-1] if parent else STACK_TYPE
        return f"{prefix}::{parent_type}${kind}::{name}"

    parents = [request.parent or None, *parent_aliases]
    found: set[str] = {make(p, request.type, request.name) for p in parents[1:]}
    for alias in request.aliases:
        if alias.HasField("urn"):
            found.add(alias.urn)
            continue
        spec = alias.spec
        kind, name = spec.type or request.type, spec.name or request.name
        if spec.noParent:
            candidates = [None]
        elif spec.parentUrn:
            candidates = [spec.parentUrn]
        else:
            candidates = parents
        found |= {make(p, kind, name) for p in candidates}
    found.discard(urn)
    return sorted(found)


class RecordingMonitor(pulumi_mocks.MockMonitor):
    """The SDK's mock monitor, recording each registration as the engine gets it."""

    def __init__(self, mocks: PlanMocks, recorder: Recorder):
        super().__init__(mocks)
        self.recorder = recorder

    def RegisterResource(self, request):
        response = super().RegisterResource(request)
        if request.type == "pulumi:pulumi:Stack":
            return response
        options: dict[str, Any] = {}
        if request.HasField("protect") and request.protect:
            options["protect"] = True
        if request.HasField("retainOnDelete") and request.retainOnDelete:
            options["retainOnDelete"] = True
        if request.ignoreChanges:
            options["ignoreChanges"] = list(request.ignoreChanges)
        if request.deleteBeforeReplace:
            options["deleteBeforeReplace"] = True
        if request.replaceOnChanges:
            options["replaceOnChanges"] = list(request.replaceOnChanges)
        if request.replace_with:
            options["replaceWith"] = list(request.replace_with)
        aliases = alias_urns(request, response.urn, self.recorder.aliases.get(request.parent, []))
        if aliases:
            self.recorder.aliases[response.urn] = options["aliases"] = aliases
        inputs = restore_ints(rpc.deserialize_properties(request.object, keep_unknowns=True))
        self.recorder.inputs_by_urn[response.urn] = inputs
        self.recorder.resources.append(
            Registration(
                urn=response.urn,
                type=request.type,
                name=request.name,
                parent=request.parent or None,
                custom=request.custom,
                provider=request.provider or None,
                inputs=inputs,
                depends_on=sorted(set(request.dependencies)),
                options=options,
                unknowns=unknown_paths(request.object),
                property_dependencies={
                    prop: sorted(set(deps.urns)) for prop, deps in request.propertyDependencies.items()
                },
                request=request,
                outputs=None
                if self.mocks.preview and request.custom
                else restore_ints(rpc.deserialize_properties(response.object, keep_unknowns=True)),
            )
        )
        return response

    def RegisterResourceOutputs(self, request):
        if "::pulumi:pulumi:Stack::" in request.urn:
            self.recorder.stack_outputs = restore_ints(
                rpc.deserialize_properties(request.outputs, keep_unknowns=True)
            )
            self.recorder.stack_output_unknowns = unknown_paths(request.outputs)
        else:
            for reg in self.recorder.resources:
                if reg.urn == request.urn:
                    reg.outputs = restore_ints(
                        rpc.deserialize_properties(request.outputs, keep_unknowns=True)
                    )
        return super().RegisterResourceOutputs(request)
