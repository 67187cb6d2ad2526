"""Pulumi mocks that record every registration, with its parent, dependencies and options.

The stock mock monitor hands `Mocks.new_resource` only the inputs; this monitor also keeps
what the engine would see of the resource options that protect data.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import pulumi
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import rpc

SECRET = "[secret]"


def is_secret(value: Any) -> bool:
    return isinstance(value, dict) and value.get(rpc._special_sig_key) == rpc._special_secret_sig


def restore_ints(value: Any) -> Any:
    """Numbers cross the RPC boundary as doubles; give whole numbers back their int type."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: restore_ints(item) for key, item in value.items()}
    if isinstance(value, list):
        return [restore_ints(item) for item in value]
    return value


def mock_secret(seed: str) -> str:
    """A generated secret that is recognisable (for redaction) and meets password rules."""
    return "MockSecret" + hashlib.sha256(seed.encode()).hexdigest()[:12] + "0"


@dataclass
class Registration:
    urn: str
    type: str
    name: str
    parent: str | None
    custom: bool
    provider: str | None
    inputs: dict[str, Any]
    depends_on: list[str]
    options: dict[str, Any]


@dataclass
class Recorder:
    resources: list[Registration] = field(default_factory=list)
    stack_outputs: dict[str, Any] = field(default_factory=dict)
    # Secret values the mocks generated (random passwords): redacted from every output.
    generated_secrets: set[str] = field(default_factory=set)
    # What the program returned (the Determined component), for what it exposes to previews.
    deployment: Any = None


class PlanMocks(pulumi.runtime.Mocks):
    """Outputs = inputs, plus what providers would compute that the program reads."""

    def __init__(self, recorder: Recorder):
        self.recorder = recorder

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
        outputs = dict(args.inputs)
        if args.typ == "random:index/randomPassword:RandomPassword":
            value = mock_secret(args.name)
            self.recorder.generated_secrets.add(value)
            outputs["result"] = value
        return f"{args.name}-id", outputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict:
        return {}


class RecordingMonitor(pulumi_mocks.MockMonitor):
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
        self.recorder.resources.append(
            Registration(
                urn=response.urn,
                type=request.type,
                name=request.name,
                parent=request.parent or None,
                custom=request.custom,
                provider=request.provider or None,
                inputs=restore_ints(rpc.deserialize_properties(request.object, keep_unknowns=True)),
                depends_on=sorted(set(request.dependencies)),
                options=options,
            )
        )
        return response

    def RegisterResourceOutputs(self, request):
        if "::pulumi:pulumi:Stack::" in request.urn:
            self.recorder.stack_outputs = restore_ints(rpc.deserialize_properties(request.outputs))
        return super().RegisterResourceOutputs(request)
