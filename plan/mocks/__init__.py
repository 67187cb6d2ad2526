"""Pulumi mocks that answer as the providers do, and record every registration.

`PlanMocks` gives back, per resource type, what the real provider would: the inputs as its
Check returns them (auto-names filled in) and, on create, the outputs it computes. In a
first preview (`preview=True`) only the checked inputs come back, so whatever the provider
computes stays unknown, as in a real first `pulumi preview`. Every type is modelled in
`RESOURCES` (cloud types must be: an unmodelled one stops the plan); `kubernetes:*` and
`pulumi:providers:*` types not in the table get the generic behaviour of their provider.
Provider functions (invokes) are modelled in `INVOKES`; an unknown token stops the plan.

One module per provider holds its types and functions: `kubernetes` (with Helm releases),
`random`, `gcp`, `aws`, and `engine` (provider resources, the engine's own functions);
`model` is how a type is modelled, `recording` what the engine would see
(`RecordingMonitor`, `Recorder`). Tests change a provider's answer by replacing an entry of
`RESOURCES` or `INVOKES` here: these two tables are the ones `PlanMocks` reads.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import pulumi

from plan.mocks import aws, engine, gcp, kubernetes, random
from plan.mocks.aws import AWS_ACCOUNT, _aws_id, _eks_cluster, _s3_bucket
from plan.mocks.gcp import _gcs_bucket
from plan.mocks.model import Request, ResourceModel, UnmodelledError, checked, merge
from plan.mocks.recording import Recorder, RecordingMonitor, Registration

__all__ = [
    "AWS_ACCOUNT",
    "INVOKES",
    "PROVIDERS",
    "RESOURCES",
    "PlanMocks",
    "Recorder",
    "RecordingMonitor",
    "Registration",
    "Request",
    "ResourceModel",
    "UnmodelledError",
    # Answers tests build a changed answer on (tests/cluster/), by the names they have always had.
    "_aws_id",
    "_eks_cluster",
    "_gcs_bucket",
    "_s3_bucket",
    "checked",
    "model_for",
]

# Resource types by token, every provider's. Output names are the providers' (see the SDKs'
# output-only properties); only what a program could read is modelled.
RESOURCES: dict[str, ResourceModel] = {
    **random.RESOURCES,
    **kubernetes.RESOURCES,
    **gcp.RESOURCES,
    **aws.RESOURCES,
}

# Provider functions by token.
INVOKES: dict[str, Callable[[Request], dict[str, Any]]] = {
    **aws.INVOKES,
    **gcp.INVOKES,
    **engine.INVOKES,
}


# Each provider's module, by the package its tokens start with ("pulumi": the engine's own).
PROVIDERS: dict[str, ModuleType] = {
    "random": random,
    "kubernetes": kubernetes,
    "gcp": gcp,
    "aws": aws,
    "pulumi": engine,
}


def _where_to_add(token: str) -> str:
    """Where the model of a token goes: its provider's module, or a new one."""
    package = token.split(":", 1)[0]
    if package in PROVIDERS:
        return f"add it to plan/mocks/{PROVIDERS[package].__name__.rsplit('.', 1)[-1]}.py"
    return f"add a module for provider {package} to plan/mocks/"


def model_for(type_: str) -> ResourceModel:
    """The model of a resource type: its entry in RESOURCES, else its provider's generic one."""
    if type_ in RESOURCES:
        return RESOURCES[type_]
    if type_.startswith("kubernetes:"):
        return kubernetes.KUBERNETES
    if type_.startswith("pulumi:providers:"):
        return engine.PROVIDER
    raise UnmodelledError(f"the plan's mocks do not model resource type {type_} ({_where_to_add(type_)})")


class PlanMocks(pulumi.runtime.Mocks):
    """The providers' answers: checked inputs, plus computed outputs unless previewing."""

    def __init__(self, recorder: Recorder, preview: bool = False):
        self.recorder = recorder
        self.preview = preview

    def _provider_inputs(self, provider: str | None) -> dict[str, Any]:
        # A provider reference is "<urn>::<id>".
        if not provider:
            return {}
        return self.recorder.inputs_by_urn.get(provider.rsplit("::", 1)[0], {})

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
        if args.custom is False:
            return "", {}  # a component: its outputs are what it registers itself
        model = model_for(args.typ)
        req = Request(args.typ, args.name, dict(args.inputs), self._provider_inputs(args.provider))
        inputs = checked(req, model)
        # A read (`Resource.get`) finds a resource that exists: everything is known.
        reading = args.custom is None and bool(args.resource_id)
        if reading:
            self.recorder.reads.append((args.typ, args.resource_id))
        if self.preview and not reading:
            return "", inputs
        req = Request(req.type, req.name, inputs, req.provider)
        outputs = merge(inputs, model.create(req))
        self.recorder.outputs[(args.typ, args.name)] = outputs
        if args.typ == random.PASSWORD_TYPE:
            self.recorder.generated_secrets |= {outputs["result"], outputs["bcryptHash"]}
        return args.resource_id or model.ident(req), outputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict:
        try:
            answer = INVOKES[args.token]
        except KeyError:
            raise UnmodelledError(
                f"the plan's mocks do not model function {args.token} ({_where_to_add(args.token)})"
            ) from None
        return answer(Request(args.token, "", dict(args.args), self._provider_inputs(args.provider)))
