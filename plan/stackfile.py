"""Reading a stack file (stacks/Pulumi.<stack>.yaml) the way Pulumi hands it to a program.

Pulumi passes each config key as a string: plain strings as they are, everything else
as JSON. Values set with `pulumi config set --secret` are stored encrypted (`secure:`);
offline there is no key to decrypt them, so the plan substitutes a stand-in that meets
every rule a secret has to meet (Determined's password rule included) and marks the key
secret. The stand-in never reaches an output: secrets are redacted there.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

# Meets Determined's password rule; distinctive so that redaction can find it.
ENCRYPTED_STAND_IN = "OfflinePlanSecret0"

STACKS_DIR = Path(__file__).resolve().parent.parent / "stacks"


class StackFileError(Exception):
    pass


def stack_path(stack: str) -> Path:
    return STACKS_DIR / f"Pulumi.{stack}.yaml"


def _replace_encrypted(value: Any) -> tuple[Any, bool]:
    """(value with every `{secure: ...}` replaced by the stand-in, whether any was)."""
    if isinstance(value, dict):
        if set(value) == {"secure"}:
            return ENCRYPTED_STAND_IN, True
        found = False
        result = {}
        for key, item in value.items():
            result[key], item_found = _replace_encrypted(item)
            found = found or item_found
        return result, found
    if isinstance(value, list):
        pairs = [_replace_encrypted(item) for item in value]
        return [item for item, _ in pairs], any(found for _, found in pairs)
    return value, False


def load_stack_file(path: Path) -> tuple[dict[str, str], list[str]]:
    """(config as Pulumi passes it to the program, keys holding encrypted values)."""
    try:
        document = yaml.safe_load(path.read_text()) or {}
    except FileNotFoundError:
        raise StackFileError(f"no stack file {path}") from None
    except yaml.YAMLError as exc:
        raise StackFileError(f"{path} is not valid YAML: {exc}") from None
    if not isinstance(document, dict) or not isinstance(document.get("config", {}), dict):
        raise StackFileError(f"{path}: expected a mapping with a 'config' mapping")

    config: dict[str, str] = {}
    secret_keys: list[str] = []
    for key, raw in (document.get("config") or {}).items():
        value, encrypted = _replace_encrypted(raw)
        if encrypted:
            secret_keys.append(key)
        config[key] = value if isinstance(value, str) else json.dumps(value)
    return config, secret_keys
