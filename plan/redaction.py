"""What the plan shows of a value: secrets and unknowns by their Pulumi markings.

A value is written as "[secret]" because Pulumi marks it secret (the RPC secret wrapper in
the registered inputs and exports), never because its text looks like a secret: field by
field, keeping the shape (a secret mapping keeps its keys). A value Pulumi does not know
yet (the RPC unknown sentinel, only in a first preview) is written as
"[unknown until apply]"; an unknown secret stays "[secret]".
"""

from __future__ import annotations

from typing import Any

from pulumi.output import Unknown
from pulumi.runtime import rpc

from components.constants import NOT_KNOWN_YET, REDACTED

SECRET = REDACTED
UNKNOWN = NOT_KNOWN_YET


def is_secret(value: Any) -> bool:
    return isinstance(value, dict) and value.get(rpc._special_sig_key) == rpc._special_secret_sig


def is_unknown(value: Any) -> bool:
    """The deserialized unknown (or the raw sentinel, which stands for the same)."""
    return isinstance(value, Unknown) or (isinstance(value, str) and value == rpc.UNKNOWN)


def _mask(value: Any) -> Any:
    """Keep the shape of a secret value (so manifests stay valid), hide every scalar."""
    if is_secret(value):
        return _mask(value.get("value"))
    if isinstance(value, dict):
        return {str(key): _mask(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_mask(item) for item in value]
    return SECRET


def redact(value: Any) -> Any:
    """The value as the plan writes it: plain data, secrets and unknowns replaced."""
    if is_secret(value):
        return _mask(value.get("value"))
    if is_unknown(value):
        return UNKNOWN
    if isinstance(value, dict):
        return {str(key): redact(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(item) for item in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    # Resource references and assets: their kind only (the plan has nothing better to show).
    return f"<{type(value).__name__}>"


def unwrap(value: Any) -> Any:
    """The plain value inside secret markers (for tests and content the plan redacts itself)."""
    if is_secret(value):
        return unwrap(value.get("value"))
    if isinstance(value, dict):
        return {key: unwrap(item) for key, item in value.items()}
    if isinstance(value, list):
        return [unwrap(item) for item in value]
    return value


def restore_ints(value: Any) -> Any:
    """Numbers cross the RPC boundary as doubles; give whole numbers back their int type."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: restore_ints(item) for key, item in value.items()}
    if isinstance(value, list):
        return [restore_ints(item) for item in value]
    return value
