"""Reading a stack file (stacks/Pulumi.<stack>.yaml) the way Pulumi hands it to a program.

Pulumi passes each config key as a string: plain strings as they are, everything else
as JSON. Values set with `pulumi config set --secret` are stored encrypted (`secure:`);
offline there is no key to decrypt them, so the plan substitutes a stand-in that meets
every rule a secret has to meet (Determined's password rule included) and marks the key
secret. The stand-in never reaches an output (the plan's last check makes sure).

Every problem with the file is a `StackFileError` with a one-line message that never
quotes the file's text (a line of it may hold a password); a value too deep or too large
is a `ConfigError` naming its key.

Hostile files are bounded before they cost anything: only a regular file is opened (a FIFO
or a device never is), at most MAX_FILE_BYTES are read, and as the YAML is composed no
value may nest more than MAX_DEPTH levels (components.config.nesting) nor the document hold
more than MAX_VALUES values or MAX_FILE_BYTES of text, its aliases counted as what they
repeat (a "billion laughs" of nine aliases a level is refused at its first level over the
limit, not after it has grown to gigabytes).
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from plan.errors import UsageError

# Meets Determined's password rule; distinctive so that the plan's last check can find it.
ENCRYPTED_STAND_IN = "OfflinePlanSecret0"

STACKS_DIR = Path(__file__).resolve().parent.parent / "stacks"

# Pulumi's rule for stack names (matched whole: `$` would let a trailing newline through).
_STACK_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")
# The project's own keys: a value over a limit there is a configuration problem.
PROJECT_PREFIX = "determined:"
# A config key: <namespace>:<key>.
_CONFIG_KEY = re.compile(r"[^:]+:.+")

# A stack file holds a few kilobytes; the largest value the project takes (a pool's
# description, rendered into a Secret of at most 1 MiB) fits many times over.
MAX_FILE_BYTES = 4 * 1024 * 1024
# Values (mappings, lists, scalars, keys) a stack file may hold, aliases expanded: the
# largest example stack holds a few hundred; parsing 50000 takes under a second.
MAX_VALUES = 50_000
# This many levels of nesting at most below a config key (one limit for every value).
MAX_DEPTH = 64  # components.config.nesting.MAX_DEPTH (checked by a test: that module loads pydantic)


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


class _Refused(Exception):
    """A value over a limit, found while composing: where (the path from the document's
    root: key nodes, list indexes, None for a key being composed), what, and the mark."""

    def __init__(self, path: list[Any], message: str, mark: yaml.Mark):
        super().__init__(message)
        self.path = list(path)
        self.message = message
        self.mark = mark


class _Loader(yaml.SafeLoader):
    """YAML as Pulumi reads stack files (YAML 1.2 scalars): dates stay strings and only
    true/false are booleans (`yes`, `no`, `on`, `off` stay strings). A key twice in one
    mapping, at any depth, is an error (go-yaml v3: "mapping key ... already defined"),
    not the last one winning.

    Composition is measured as it goes (see the module's docstring): each node's size
    expanded (values, text, height) is kept, so an alias costs what it repeats at once."""

    def __init__(self, stream: str):
        super().__init__(stream)
        self._path: list[Any] = []
        # id(node) -> (values, characters of text, levels of nesting), aliases expanded.
        self._measures: dict[int, tuple[int, int, int]] = {}
        self._values = 0
        self._text = 0

    def _level(self) -> int:
        """The nesting level of the node being composed: 1 for a config key's value (or the
        document itself, outside `config`)."""
        path = self._path
        in_config = len(path) >= 3 and isinstance(path[1], yaml.ScalarNode) and path[1].value == "config"
        return len(path) - 2 if in_config else len(path)

    def _count(self, values: int, text: int, height: int, mark: yaml.Mark) -> None:
        if height and self._level() + height - 1 > MAX_DEPTH:
            raise _Refused(self._path, f"nested more than {MAX_DEPTH} levels deep", mark)
        self._values += values
        self._text += text
        over = None
        if self._values > MAX_VALUES:
            over = f"{MAX_VALUES} values"
        elif self._text > MAX_FILE_BYTES:
            over = f"{_mib(MAX_FILE_BYTES)} of text"
        if over:
            message = (
                f"the stack file holds more than {over} by here, YAML aliases counted as what they repeat"
            )
            raise _Refused(self._path[:3], message, mark)

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        self._path.append(index)
        try:
            event = self.peek_event()
            if isinstance(event, yaml.AliasEvent):
                node = self.anchors.get(event.anchor)
                if node is not None:
                    measure = self._measures.get(id(node))
                    if measure is None:  # still being composed: the alias is inside it
                        raise _Refused(self._path, "a YAML alias inside the value it names", event.start_mark)
                    self._count(*measure, event.start_mark)
                return super().compose_node(parent, index)
            if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                self._count(0, 0, 1, event.start_mark)  # before going a level deeper
            node = super().compose_node(parent, index)
            if isinstance(node, yaml.ScalarNode):
                measure = (1, len(node.value), 0)
                self._count(1, len(node.value), 0, event.start_mark)
            else:
                pairs = (
                    node.value if isinstance(node, yaml.MappingNode) else [(child,) for child in node.value]
                )
                children = [child for pair in pairs for child in pair]
                inner = [self._measures[id(child)] for child in children]
                measure = (
                    1 + sum(m[0] for m in inner),
                    sum(m[1] for m in inner),
                    1 + max((m[2] for m in inner), default=0),
                )
                self._count(1, 0, 0, event.start_mark)
            self._measures[id(node)] = measure
            return node
        finally:
            self._path.pop()

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        # As go-yaml compares keys: by their text, before any merge (`<<`) is applied.
        seen: set[str] = set()
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                if key_node.value in seen:
                    raise DuplicateKeyError(key_node.value, key_node.start_mark)
                seen.add(key_node.value)
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        try:
            return super().construct_yaml_int(node)
        except ValueError:  # Python reads at most 4300 digits (sys.get_int_max_str_digits)
            raise yaml.constructor.ConstructorError(
                None, None, "a number too long to read", node.start_mark
            ) from None


_Loader.add_constructor("tag:yaml.org,2002:int", _Loader.construct_yaml_int)


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):.3g} MiB"


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


# What a file that is not a stack file is, by the type of its inode.
_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a named pipe (FIFO)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def _refuse_unless_regular(path: Path, status: os.stat_result) -> None:
    if not stat.S_ISREG(status.st_mode):
        kind = _KINDS.get(stat.S_IFMT(status.st_mode), "not a regular file")
        raise StackFileError(f"{path} is {kind}, not a stack file")
    if status.st_size > MAX_FILE_BYTES:
        raise StackFileError(
            f"{path} is larger than a stack file may be "
            f"({_mib(status.st_size)}; at most {_mib(MAX_FILE_BYTES)})"
        )


def _os_error(path: Path, exc: OSError) -> StackFileError:
    if isinstance(exc, FileNotFoundError):
        return StackFileError(f"no stack file {path}")
    if isinstance(exc, PermissionError):
        return StackFileError(f"cannot read {path}: permission denied")
    return StackFileError(f"cannot read {path}: {exc.strerror or type(exc).__name__}")


def check_file(path: Path) -> None:
    """Refuse, without opening it, what cannot be a stack file: a directory, a FIFO, a
    device, a socket, a file over MAX_FILE_BYTES (StackFileError)."""
    try:
        status = os.stat(path)
    except OSError as exc:
        raise _os_error(path, exc) from None
    _refuse_unless_regular(path, status)


def _read_bytes(path: Path) -> bytes:
    """The file's bytes: a regular file only, opened without blocking (if it was swapped for
    a FIFO since it was checked) and read up to the limit."""
    check_file(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise _os_error(path, exc) from None
    try:
        _refuse_unless_regular(path, os.fstat(fd))
        chunks = []
        left = MAX_FILE_BYTES + 1
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise _os_error(path, exc) from None
    finally:
        os.close(fd)
    if left <= 0:  # it grew since it was checked
        raise StackFileError(f"{path} is larger than a stack file may be (at most {_mib(MAX_FILE_BYTES)})")
    return b"".join(chunks)


# Byte order marks of the encodings YAML allows besides UTF-8 (YAML 1.2.2 §5.2), longest first.
_MARKS = (
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\xfe\xff", "UTF-16"),
    (b"\xff\xfe", "UTF-16"),
)


def _wide_encoding(data: bytes) -> str | None:
    """UTF-16 or UTF-32, by its byte order mark, or without one by where its NUL bytes are
    (text in ASCII letters: every other byte, or three bytes of four)."""
    for mark, name in _MARKS:
        if data.startswith(mark):
            return name
    head = data[:64]
    for width, name in ((4, "UTF-32"), (2, "UTF-16")):
        if len(head) < 2 * width:
            continue
        for letter in (0, width - 1):  # little-endian: the letter first; big-endian: last
            lanes = [head[i::width] for i in range(width)]
            if 0 not in lanes[letter] and all(not any(lane) for i, lane in enumerate(lanes) if i != letter):
                return name
    return None


# Pulumi's YAML reader (go-yaml v3, readerc.go yaml_parser_determine_encoding) decodes UTF-16
# that starts with a byte order mark; anything else without a UTF-8 one is read as UTF-8.
_UTF16_MARKS = (b"\xfe\xff", b"\xff\xfe")


def _read_text(path: Path) -> str:
    data = _read_bytes(path)
    wide = _wide_encoding(data)
    if wide == "UTF-16" and data.startswith(_UTF16_MARKS):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError:
            raise StackFileError(f"{path} is not UTF-16 text (it starts as such, then breaks)") from None
        if "\0" in text:
            raise StackFileError(f"{path} is not a text file (it holds NUL characters)")
        return text
    if wide:
        raise StackFileError(
            f"{path} is {wide} text without the byte order mark Pulumi reads it by; save it as UTF-8"
        )
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
        # Go's encoding/json, which Pulumi hands values through, has no NaN or infinity.
        return json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        raise StackFileError(
            f"{path}: the value of {key} holds YAML that has no JSON form (binary data, a set, "
            ".inf or .nan, or a mapping with non-string keys)"
        ) from None


def _shown_key(key: Any) -> str:
    """A config key that is not a string, as the user wrote it, in words."""
    if key is None:
        return "null (an empty key)"
    if isinstance(key, bool):
        return f"{str(key).lower()} (a boolean)"
    if isinstance(key, (int, float)):
        return f"{key!r} (a number)"
    return "not a string"  # a list or mapping key is refused as unhashable first


def _refused(path: Path, exc: _Refused) -> Exception:
    """A value over a limit: a ConfigError naming its key path for a `determined:` key, else
    a StackFileError naming where it is."""
    from components.config import ConfigError, Problem, nesting

    parts: list[str | int] = []
    for index in exc.path[1:]:
        if isinstance(index, int):
            parts.append(index)
        else:
            parts.append(index.value if isinstance(index, yaml.ScalarNode) else "(a key)")
    where = f"line {exc.mark.line + 1}, column {exc.mark.column + 1}"
    prefix = PROJECT_PREFIX
    if len(parts) >= 2 and parts[0] == "config" and str(parts[1]).startswith(prefix):
        key_path = [str(parts[1])[len(prefix) :], *parts[2:]]
        return ConfigError([Problem(nesting.shown_path(key_path), f"{exc.message} ({where})")])
    shown = nesting.shown_path(parts) if parts else "the document"
    return StackFileError(f"{path}: {shown}: {exc.message} ({where})")


def _null_keys(value: Any, where: list[str | int]) -> Iterator[list[str | int]]:
    """Key paths of the mappings in `value` that hold a null key."""
    if isinstance(value, dict):
        if None in value:
            yield where
        for key, item in value.items():
            yield from _null_keys(item, [*where, str(key)])
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _null_keys(item, [*where, i])


def _null_key_error(config: dict[str, Any]) -> Exception | None:
    """A ConfigError for null keys inside `determined:` values (`null:`, `~:`, `? :`).
    json.dumps would write them as "null"; Pulumi turns a non-string key into its Go text,
    a null one into "<nil>" (sdk/go/common/resource/config/object.go unmarshalObject,
    `m[fmt.Sprintf("%v", k)]`, read 2026-11-25): neither is a name anyone meant."""
    from components.config import ConfigError, Problem, nesting

    message = (
        "holds a null key (null, ~ or an empty key): write the name it stands for; Pulumi would "
        "read it as the text '<nil>'"
    )
    problems = [
        Problem(nesting.shown_path([key[len(PROJECT_PREFIX) :], *where]), message)
        for key, raw in config.items()
        if key.startswith(PROJECT_PREFIX)
        for where in _null_keys(raw, [])
    ]
    return ConfigError(problems) if problems else None


class StackFile(NamedTuple):
    config: dict[str, str]  # as Pulumi passes it to the program
    secret_keys: list[str]  # keys holding encrypted values
    environments: list[str]  # the Pulumi ESC environments it imports (see esc_environments)


# A name shown as it is written; anything else is quoted (it may hold a line break or an
# escape sequence for the terminal).
_PLAIN_NAME = re.compile(r"[A-Za-z0-9._/-]{1,100}")
# Environments named in a warning; the rest are counted.
_NAMES_SHOWN = 5


def _environment_name(item: Any) -> str:
    if isinstance(item, dict) and len(item) == 1:
        item = next(iter(item))  # `- name: {merge: false}`
    if isinstance(item, str) and _PLAIN_NAME.fullmatch(item):
        return item
    return repr(item)[:60] if isinstance(item, str) else _shown_key(item)


def esc_environments(value: Any) -> list[str]:
    """What the stack file's top-level `environment:` imports from Pulumi ESC: a list of
    environment names, or an inline environment definition (its `imports`, and its own
    `values` as "its inline values"). Pulumi opens them at `pulumi up` and their
    `pulumiConfig` becomes stack config; offline they cannot be opened.
    Source: https://github.com/pulumi/pulumi/blob/master/sdk/go/common/workspace/project.go
    (ProjectStack.Environment, Environment.UnmarshalYAML and Imports) and
    https://www.pulumi.com/docs/esc/integrations/infrastructure/pulumi-iac/ (read 2026-11)"""
    if value is None or value == [] or value == {}:
        return []
    if isinstance(value, list):
        return [_environment_name(item) for item in value]
    if isinstance(value, dict):
        imports = value.get("imports")
        names = [_environment_name(i) for i in imports] if isinstance(imports, list) else []
        return names + (["its inline values"] if value.get("values") else [])
    return ["a value Pulumi would not read as environments"]


def environments_warning(names: list[str]) -> str:
    """One line: which environments the plan did not open, and what that means."""
    shown = ", ".join(names[:_NAMES_SHOWN])
    if len(names) > _NAMES_SHOWN:
        shown += f" and {len(names) - _NAMES_SHOWN} more"
    return (
        f"the stack imports Pulumi ESC environments ({shown}) that the offline plan cannot open: "
        "config they supply (pulumiConfig) is not in this plan, and `pulumi up` would use it"
    )


def load_stack_file(path: Path) -> tuple[dict[str, str], list[str]]:
    """(config as Pulumi passes it to the program, keys holding encrypted values): see
    read_stack_file."""
    loaded = read_stack_file(path)
    return loaded.config, loaded.secret_keys


def read_stack_file(path: Path) -> StackFile:
    """The stack file as Pulumi reads it. StackFileError for a file that cannot be read as
    a stack file; ConfigError for a `determined:` value over a limit."""
    text = _read_text(path)
    try:
        document = yaml.load(text, Loader=_Loader)  # a SafeLoader
    except yaml.YAMLError as exc:
        raise _yaml_error(path, text, exc) from None
    except _Refused as exc:
        raise _refused(path, exc) from None
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
            shown = repr(key) if isinstance(key, str) else _shown_key(key)
            raise StackFileError(f"{path}: config key {shown} is not of the form <namespace>:<key>{hint}")
        value, encrypted = _replace_encrypted(raw)
        if encrypted:
            secret_keys.append(key)
        config[key] = value if isinstance(value, str) else _to_json(path, key, value)
    if error := _null_key_error(entries):
        raise error
    return StackFile(config, secret_keys, esc_environments(document.get("environment")))
