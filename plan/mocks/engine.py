"""What the Pulumi engine answers itself: provider resources (`pulumi:providers:*`) and its
own functions (`pulumi:pulumi:*`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plan.mocks.model import Request, ResourceModel, uid

# A provider resource answers with its inputs; its ID is a UUID, as the engine gives it.
PROVIDER = ResourceModel(ident=uid)

INVOKES: dict[str, Callable[[Request], dict[str, Any]]] = {
    # The stack's own outputs from its last update: the plan is of a stack never deployed.
    "pulumi:pulumi:readStackOutputs": lambda req: {
        "name": req.inputs.get("name", ""),
        "outputs": {},
        "secretOutputNames": [],
    },
}
