"""The random provider: generated passwords and IDs, derived from the resource's name.

Every generated password is distinctive (the plan's last check looks for it, with its hash,
in every output: PlanMocks records them in `Recorder.generated_secrets`).
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from plan.mocks.model import Request, ResourceModel


def mock_secret(seed: str, length: int = 24) -> str:
    """A generated password: distinctive (the plan's last check looks for it), of the
    requested length (at least 12) and meeting Determined's password rule."""
    return ("MockSecret" + hashlib.sha256(seed.encode()).hexdigest() * 2)[: max(length, 12) - 1] + "0"


def _random_password(req: Request) -> dict[str, Any]:
    length = req.inputs.get("length", 24)
    value = mock_secret(req.seed, int(length) if isinstance(length, (int, float)) else 24)
    salt = base64.b64encode(hashlib.sha256(value.encode()).digest()).decode()
    bcrypt = "$2a$10$" + (salt.replace("+", ".").replace("=", "") * 2)[:53]
    return {"result": value, "bcryptHash": bcrypt}


def _random_id(req: Request) -> dict[str, Any]:
    length = req.inputs.get("byteLength", 8)
    raw = hashlib.sha256(req.seed.encode()).digest()[: int(length) if isinstance(length, (int, float)) else 8]
    url = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    return {
        "hex": raw.hex(),
        "dec": str(int.from_bytes(raw, "big")),
        "b64Std": base64.b64encode(raw).decode(),
        "b64Url": url,
    }


# The type whose results PlanMocks records as generated secrets.
PASSWORD_TYPE = "random:index/randomPassword:RandomPassword"

RESOURCES: dict[str, ResourceModel] = {
    PASSWORD_TYPE: ResourceModel(create=_random_password, ident=lambda _: "none"),
    "random:index/randomId:RandomId": ResourceModel(
        create=_random_id, ident=lambda req: _random_id(req)["b64Url"]
    ),
}
