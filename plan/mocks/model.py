"""How a provider's answer for one resource type is modelled, and the values providers make.

Every provider module (kubernetes, random, gcp, aws, engine) describes its types as
`ResourceModel`s over a `Request`; `checked` is what a provider's Check returns (auto-names
filled in). The value makers (`digest`, `ip_address`, `pem`, `uid`) derive everything from
the resource's type and name, so that plans stay byte-for-byte reproducible.
"""

from __future__ import annotations

import base64
import hashlib
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pulumi.runtime import config as runtime_config

from plan.redaction import is_secret

# A fixed time for server-set timestamps, so that plans stay byte-for-byte reproducible.
CREATED_AT = "2025-01-01T00:00:00Z"


class UnmodelledError(Exception):
    """The program uses a resource type or function the mocks do not model."""


@dataclass(frozen=True)
class Request:
    """What a resource model sees of one registration."""

    type: str
    name: str
    inputs: dict[str, Any]
    # Inputs of the explicit provider the resource goes through ({} for a default provider).
    provider: dict[str, Any]

    def setting(self, key: str, package: str, default: str) -> str:
        """A provider setting: the resource's own input, its provider's, the stack config's."""
        for source in (self.inputs, self.provider):
            value = source.get(key)
            if isinstance(value, str) and value:
                return value
        configured = runtime_config.get_config(f"{package}:{key}")
        return configured if isinstance(configured, str) and configured else default

    @property
    def seed(self) -> str:
        return f"{self.type}::{self.name}"


def digest(*parts: str, length: int = 12) -> str:
    """`length` hex digits of the parts' SHA-256: a stable stand-in for what a cloud generates."""
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:length]


def uid(req: Request) -> str:
    """A UUID of the resource (Kubernetes UIDs, AWS association IDs)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, req.seed))


def ip_address(seed: str, prefix: tuple[int, int]) -> str:
    """An IPv4 address in `prefix` (its first two octets), stable per seed."""
    raw = hashlib.sha256(seed.encode()).digest()
    return f"{prefix[0]}.{prefix[1]}.{raw[0]}.{max(raw[1], 1)}"


def pem(seed: str) -> str:
    """A base64-encoded PEM certificate, as clusters report their CA."""
    body = base64.b64encode(hashlib.sha256(seed.encode()).digest() * 3).decode()
    return base64.b64encode(
        f"-----BEGIN CERTIFICATE-----\n{body}\n-----END CERTIFICATE-----\n".encode()
    ).decode()


def no_outputs(_: Request) -> dict[str, Any]:
    """A type whose provider computes nothing a program reads."""
    return {}


def _name_id(req: Request) -> str:
    return f"{req.name}-{digest(req.seed, length=8)}"


@dataclass(frozen=True)
class ResourceModel:
    """How a provider answers for one resource type.

    `autoname`: the input (a dotted path) the provider names itself when it is absent (`<name>-<7 hex>`,
    as Pulumi's auto-naming does; known in a preview, since Check does it). `create`: the
    outputs the provider computes on create, merged over the inputs (unknown in a first
    preview). `ident`: the resource's ID (unknown in a first preview).
    """

    create: Callable[[Request], dict[str, Any]] = no_outputs
    autoname: str | None = None
    ident: Callable[[Request], str] = _name_id


def merge(base: Any, extra: Any) -> Any:
    """`extra` over `base`, mapping by mapping (a secret is replaced whole)."""
    if isinstance(base, dict) and isinstance(extra, dict) and not is_secret(base):
        merged = dict(base)
        for key, value in extra.items():
            merged[key] = merge(base[key], value) if key in base else value
        return merged
    return extra


def checked(req: Request, model: ResourceModel) -> dict[str, Any]:
    """The inputs as the provider's Check returns them: auto-named where a name is missing."""
    if not model.autoname:
        return dict(req.inputs)
    *parents, key = model.autoname.split(".")
    name = f"{req.name}-{digest(req.seed, length=7)}".lower()
    outer = inputs = dict(req.inputs)
    for part in parents:
        inner = outer.get(part)
        if is_secret(inner) or (inner is not None and not isinstance(inner, dict)):
            return inputs  # a secret or an unknown holds the name: leave it to the provider
        outer[part] = outer = dict(inner or {})
    if not outer.get(key):
        outer[key] = name
    return inputs
