"""Reading a stack file (stacks/Pulumi.<stack>.yaml) the way Pulumi hands it to a program.

Pulumi passes each config key as a string: plain strings as they are, everything else
as JSON. Values set with `pulumi config set --secret` are stored encrypted (`secure:`);
offline there is no key to decrypt them, so the plan substitutes a stand-in that meets
every rule a secret has to meet (Determined's password rule included) and marks the key
secret. The stand-in never reaches an output (the plan's last check makes sure).

Every problem with the file is a `StackFileError` with a one-line message that never
quotes the file's text (a line of it may hold a password).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from plan.errors import UsageError

# Meets Determined's password rule; distinctive so that the plan's last check can find it.
ENCRYPTED_STAND_IN = "OfflinePlanSecret0"

STACKS_DIR = Path(__file__).resolve().parent.parent / "stacks"

# Pulumi's rule for stack names (matched whole: `$` would let a trailing newline through).
_STACK_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")
# A config key: <namespace>:<key>.
_CONFIG_KEY = re.compile(r"[^:]+:.+")


class StackFileError(UsageError):
    pass


def check_stack_name(stack: str) -> str:
    if not _STACK_NAME.fullmatch(stack) or stack in (".", ".."):
        raise StackFileError(f"{stack!r} is not a stack name (letters, digits, '-', '_' and '.' only)")
    return stack


def stack_path(stack: str) -> Path:
    return STACKS_DIR / f"Pulumi.{stack}.yaml"


class DuplicateKeyError(yaml.MarkedYAMLError):
    """A mapping that holds a key twice (Pulumi's YAML parser refuses it)."""

    def __init__(self, key: str, mark: yaml.Mark):
        super().__init__(problem=f"the key {key!r} appears twice", problem_mark=mark)


class _Loader(yaml.SafeLoader):
    """YAML as Pulumi reads stack files (YAML 1.2 scalars): dates stay strings and only
    true/false are booleans (`yes`, `no`, `on`, `off` stay strings). A key twice in one
    mapping, at any depth, is an error (go-yaml v3: "mapping key ... already defined"),
    not the last one winning."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        # As go-yaml compares keys: by their text, before any merge (`<<`) is applied.
        seen: set[str] = set()
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                if key_node.value in seen:
                    raise DuplicateKeyError(key_node.value, key_node.start_mark)
                seen.add(key_node.value)
        return super().construct_mapping(node, deep=deep)


_Loader.yaml_implicit_resolvers = {
    first: [
        (tag, regexp)
        for tag, regexp in resolvers
        if tag not in ("tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:bool")
    ]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool",
    # PyYAML calls `match`: anchored at the start, and at the very end by \Z.
    re.compile(r"(?:true|True|TRUE|false|False|FALSE)\Z"),
    list("tTfF"),
)


# What YAML quotes that is its own syntax, not the file's text: one punctuation character
# (',', '}', ':'), or a marker such as '<stream end>'.
_SYNTAX_TOKEN = re.compile(r"'([^\w\s]|<[a-z ]+>)'")


def _scrub(problem: str) -> str:
    """A YAML problem without anything it quotes from the file (tags, characters, names);
    quoted syntax tokens stay, so "expected ',' or '}'" still reads."""
    text = problem.splitlines()[0] if problem else ""
    text = re.sub(r"'[^']*'|\"[^\"]*\"", lambda m: m[0] if _SYNTAX_TOKEN.fullmatch(m[0]) else "", text)
    return re.sub(r"\s+", " ", text).strip(" ,:") or "syntax error"


def _yaml_error(path: Path, text: str, exc: yaml.YAMLError) -> StackFileError:
    mark = getattr(exc, "problem_mark", None)
    if isinstance(exc, yaml.reader.ReaderError):
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        return StackFileError(
            f"{path} is not valid YAML: a character YAML does not allow at line {line}, column {column}"
        )
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    # A duplicate key's message quotes the key (a config name, never a secret); any other
    # problem is scrubbed of what it quotes.
    if isinstance(exc, DuplicateKeyError):
        problem = exc.problem
    else:
        problem = _scrub(getattr(exc, "problem", None) or "")
    return StackFileError(f"{path} is not valid YAML{where}: {problem}")


def _read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise StackFileError(f"no stack file {path}") from None
    except IsADirectoryError:
        raise StackFileError(f"{path} is a directory, not a stack file") from None
    except PermissionError:
        raise StackFileError(f"cannot read {path}: permission denied") from None
    except OSError as exc:
        raise StackFileError(f"cannot read {path}: {exc.strerror or type(exc).__name__}") from None
    if b"\0" in data:
        raise StackFileError(f"{path} is not a text file (it holds NUL bytes)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise StackFileError(f"{path} is not UTF-8 text (an invalid byte on line {line})") from None


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


def _to_json(path: Path, key: str, value: Any) -> str:
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        raise StackFileError(
            f"{path}: the value of {key} holds YAML that has no JSON form (binary data, a set, "
            "or a mapping with non-string keys)"
        ) from None
    except RecursionError:
        raise StackFileError(f"{path}: the value of {key} is nested too deeply") from None


def load_stack_file(path: Path) -> tuple[dict[str, str], list[str]]:
    """(config as Pulumi passes it to the program, keys holding encrypted values)."""
    text = _read_text(path)
    try:
        document = yaml.load(text, Loader=_Loader)  # a SafeLoader
    except yaml.YAMLError as exc:
        raise _yaml_error(path, text, exc) from None
    except RecursionError:
        raise StackFileError(f"{path} is not valid YAML: nested too deeply") from None
    if document is None:
        document = {}
    if not isinstance(document, dict):
        raise StackFileError(f"{path}: expected a mapping at the top level (with a 'config' mapping)")
    entries = document.get("config")
    if entries is None:
        entries = {}
    if not isinstance(entries, dict):
        raise StackFileError(f"{path}: 'config' must be a mapping of '<namespace>:<key>' to values")

    config: dict[str, str] = {}
    secret_keys: list[str] = []
    for key, raw in entries.items():
        if not isinstance(key, str) or not _CONFIG_KEY.fullmatch(key):
            hint = f" (for example determined:{key})" if isinstance(key, str) and ":" not in key else ""
            shown = repr(key) if isinstance(key, str) else f"a {type(key).__name__}"
            raise StackFileError(f"{path}: config key {shown} is not of the form <namespace>:<key>{hint}")
        value, encrypted = _replace_encrypted(raw)
        if encrypted:
            secret_keys.append(key)
        config[key] = value if isinstance(value, str) else _to_json(path, key, value)
    return config, secret_keys
