"""master.yaml checked against the Determined master's own configuration structs, per version.

`check(document, "0.38.1")` walks a master.yaml document (a dict) through
`data/master-yaml-keys.json` (every key the master accepts, per release, with its Go type;
derived from the master's config structs, releases 0.26.0 to 0.38.1) and returns one
`"<key.path>: <problem>"` line per problem; an empty list means the master takes the file
as written. A problem is anything the master refuses (it stops at start-up) *or* silently
ignores (a setting with no effect): both mean the file does not say what the project meant.

How the master reads the file (master/cmd/determined-master, v0.38.1), and so how values
are judged:

- YAML becomes JSON, decoded with unknown fields disallowed. Types with their own JSON
  decoding (`cu` in the data: `task_container_defaults`, `resource_pools[]`, the resource
  manager, ...) decode their contents *without* that check, so below them an unknown key
  is ignored; at the top of a union (`resource_manager`, `checkpoint_storage`, `logging`,
  a pool's `scheduler`/`provider`) the master checks the keys itself and refuses unknown
  ones. A key outside its version range is an unknown key for that release. (Go matches
  keys case-insensitively: a key spelt in another case is read, and reported for its
  spelling.)
- Scalars: `str` takes a string; `int` an integer (a whole float such as 2.0 too: the file
  is re-encoded to JSON first, which writes it as 2); `float` any number; `bool` a boolean;
  `duration` a Go duration string ("30s", "1h30m"); `any` anything; `runtime_item` a string
  or a map of `cpu`/`cuda`/`gpu`/`rocm` to strings; `runtime_items` a list of strings or such
  a map to lists of strings; `log_action` a `{type: cancel_retries|exclude_node}` map (and,
  from 0.38.0, the bare string). `null` is refused everywhere except `any`: it sets nothing.
- Keys the master also takes as command-line flags (`registered` in the data: `db.*`,
  `port`, `log.*`, ...) pass through its flag parser, which casts the file's value to the
  flag's type before decoding. So `db.port: 5432` (an int) reaches the master as "5432" and
  is accepted; a value the cast cannot carry over (a non-numeric string for `port`, which
  becomes 0; a map for a string) is a problem.
- `pod` is a Kubernetes v1 Pod, validated strictly (unknown fields are errors: the master's
  Go types would drop them) against the Kubernetes 1.33 schema by kubernetes-validate, the
  way the project validates its own manifests. The master names task pods itself, so a
  missing `metadata.name` (and a missing apiVersion/kind) is filled in before validation.
  The master's own pod rules apply too: no name, namespace or hostNetwork, and none of the
  task container's fields Determined sets (image, command, ports, probes, ...).

Beyond key paths and types, `MASTER_RULES` holds the few value checks the master's
`Validate` methods make on keys the project writes (each with its source); they too stop
the master at start-up.

Pure and fast: the key data is read once, on first use.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from components import versions
from components.config.errors import format_path
from components.config.resource_pools import determined_owned
from components.kube import validation
from components.kube.schema import KUBERNETES_SCHEMA_VERSION

# Every key the master accepts, per release 0.26.0 to 0.38.1, derived from the master's Go
# config structs (determined-ai/determined master/internal/config at each release tag).
DATA_FILE = Path(__file__).resolve().parent / "data" / "master-yaml-keys.json"


Version = tuple[int, int, int]
PodValidator = Callable[[dict[str, Any]], list[tuple[str, str]]]


# --- the key data ----------------------------------------------------------------------------


@functools.cache
def key_data() -> dict[str, Any]:
    """master-yaml-keys.json, loaded once."""
    return json.loads(DATA_FILE.read_text())


def parse_version(version: str | Version) -> Version:
    """'0.38.1', 'v0.38.1' or (0, 38, 1) -> (0, 38, 1)."""
    if isinstance(version, tuple):
        return version
    try:
        return versions.parse_version(version.strip().removeprefix("v"))
    except ValueError:
        raise ValueError(f"not a Determined version: {version!r} (expected X.Y.Z)") from None


def format_version(version: Version) -> str:
    return ".".join(map(str, version))


def known_range() -> tuple[Version, Version]:
    """(oldest, newest) release the key data describes."""
    tags = [parse_version(tag) for tag in key_data()["tags"]]
    return min(tags), max(tags)


def in_range(version: str | Version, ranges: str | None) -> bool:
    """Whether `version` is in a 'versions' value of the data: '' or None is every release;
    'A-B' is A <= version < B ('A-': from A on, '-B': before B); ranges are comma-separated."""
    if not ranges:
        return True
    v = parse_version(version)
    for part in ranges.split(","):
        low, _, high = part.strip().partition("-")
        if (not low or v >= parse_version(low)) and (not high or v < parse_version(high)):
            return True
    return False


def describe_range(ranges: str | None) -> str:
    """'0.29.0-' -> 'from 0.29.0 on'; '-0.35.0' -> 'before 0.35.0'; '0.29.1-0.38.0' ->
    'from 0.29.1, before 0.38.0'."""
    if not ranges:
        return "in every release"
    texts = []
    for part in ranges.split(","):
        low, _, high = part.strip().partition("-")
        if low and high:
            texts.append(f"from {low}, before {high}")
        elif low:
            texts.append(f"from {low} on")
        else:
            texts.append(f"before {high}")
    return "; ".join(texts)


# --- pods ------------------------------------------------------------------------------------


def validate_pod(pod: dict[str, Any]) -> list[tuple[str, str]]:
    """Problems of a task pod spec as (path inside the pod, message): a strict v1 Pod for
    the Kubernetes version the project validates against."""
    named = {"apiVersion": "v1", "kind": "Pod", **pod}
    if (named["apiVersion"], named["kind"]) != ("v1", "Pod"):
        return [("", f"must be a v1 Pod (got apiVersion {named['apiVersion']!r}, kind {named['kind']!r})")]
    return [
        (_join(*path), f"not a valid Kubernetes {KUBERNETES_SCHEMA_VERSION} Pod: {message}")
        for path, message in validation.template_problems(named)
    ]


# --- the walk --------------------------------------------------------------------------------

_TYPE_NAMES = {
    "str": "a string",
    "int": "an integer",
    "float": "a number",
    "bool": "true or false",
    "duration": 'a duration string such as "30s"',
}

_RUNTIME_KEYS = ("cpu", "cuda", "gpu", "rocm")
_LOG_ACTIONS = ("cancel_retries", "exclude_node")
_GO_BOOL_STRINGS = {"1", "t", "T", "TRUE", "true", "True", "0", "f", "F", "FALSE", "false", "False"}
_DURATION = re.compile(r"[-+]?(0|((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+)")  # Go time.ParseDuration
_INTEGER = re.compile(r"[-+]?\d+")

REFUSED = "the master refuses to start"
IGNORED = "the master ignores it (a setting with no effect)"


def _join(*parts: Any) -> str:
    """A key path from parts, leaving out empty ones (the document's root has no name)."""
    return format_path(part for part in parts if part is not None and part != "")


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({value!r})"
    if isinstance(value, int):
        return f"an integer ({value!r})"
    if isinstance(value, float):
        return f"a float ({value!r})"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


class _Walk:
    def __init__(self, version: Version, pod_validator: PodValidator | None):
        self.version = version
        self.pod_validator = pod_validator
        self.data = key_data()
        self.problems: list[str] = []

    def add(self, path: str, message: str) -> None:
        self.problems.append(f"{path or '(top level)'}: {message}")

    # A registered key's dotted path without list indexes ('db.port').
    def registered(self, key_path: str) -> str | None:
        entry = self.data["registered"].get(key_path)
        if entry and in_range(self.version, entry.get("versions")):
            return entry["type"]
        return None

    def value(self, path: str, key_path: str, value: Any, type_: Any, lenient: bool) -> None:
        """Check `value` (at `path`, registered-key path `key_path`) against a type of the data."""
        if isinstance(type_, str):
            self.scalar(path, key_path, value, type_, lenient)
        elif "ref" in type_:
            entry = self.data["types"][type_["ref"]]
            if not isinstance(value, dict):
                self.add(path, f"expected a mapping ({type_['ref']}), got {_kind(value)}: {REFUSED}")
            elif entry["kind"] == "union":
                self.union(path, key_path, value, type_["ref"], entry, lenient)
            else:
                self.struct(path, key_path, value, type_["ref"], entry, lenient)
        elif "list" in type_:
            if not isinstance(value, list):
                self.add(path, f"expected a list, got {_kind(value)}: {REFUSED}")
                return
            for i, item in enumerate(value):
                self.value(f"{path}[{i}]", key_path + "[]", item, type_["list"], lenient)
        elif "map" in type_:
            if not isinstance(value, dict):
                self.add(path, f"expected a mapping, got {_kind(value)}: {REFUSED}")
                return
            for key, item in value.items():
                if not isinstance(key, str):
                    self.add(_join(path, key), f"map keys must be strings, got {_kind(key)}")
                self.value(_join(path, key), key_path + ".*", item, type_["map"], lenient)
        else:
            raise ValueError(f"unknown type form in the key data: {type_!r}")

    def fields(
        self,
        path: str,
        key_path: str,
        value: dict[str, Any],
        fields: dict[str, Any],
        lenient: bool,
        skip: Iterable[str] = (),
        unknown: Callable[[str], str] | None = None,
        lenient_below: bool | None = None,
    ) -> None:
        """Check the keys of a mapping. `lenient`: unknown keys here are ignored by the master
        (else refused); `lenient_below`: the same for what is below (default: `lenient`)."""
        consequence = IGNORED if lenient else REFUSED
        below = lenient if lenient_below is None else lenient_below
        for key, item in value.items():
            if key in skip:
                continue
            field = fields.get(key)
            if field is None:
                if unknown:
                    self.add(_join(path, key), unknown(key))
                    continue
                near = [name for name in fields if str(key).lower() == name.lower()]
                if near:
                    # Go's JSON decoding matches keys case-insensitively: it is read, as `near`.
                    self.add(_join(path, key), f"write it as {near[0]!r}, the master's spelling")
                    self.value(
                        _join(path, key), _join(key_path, near[0]), item, fields[near[0]]["type"], below
                    )
                else:
                    self.add(_join(path, key), f"unknown key: {consequence}")
                continue
            if not in_range(self.version, field.get("versions")):
                self.add(
                    _join(path, key),
                    f"not a key of Determined {format_version(self.version)} "
                    f"(it exists {describe_range(field['versions'])}): {consequence}",
                )
                continue
            self.value(_join(path, key), _join(key_path, key), item, field["type"], below)

    def struct(self, path: str, key_path: str, value: dict, name: str, entry: dict, lenient: bool) -> None:
        # Below a type with its own JSON decoding, unknown keys are no longer refused.
        self.fields(path, key_path, value, entry["fields"], lenient or bool(entry.get("cu")))

    def union(self, path: str, key_path: str, value: dict, name: str, entry: dict, lenient: bool) -> None:
        disc = entry["union"]
        variants = entry["variants"]
        available = [v for v, (_, versions, _) in variants.items() if in_range(self.version, versions)]
        selected = value.get(disc)
        if selected is None:
            self.add(_join(path, disc), f"required: one of {', '.join(sorted(available))}")
            return
        if not isinstance(selected, str) or selected not in variants:
            self.add(
                _join(path, disc), f"{selected!r} is not one of {', '.join(sorted(available))}: {REFUSED}"
            )
            return
        ref, versions, _ = variants[selected]
        if not in_range(self.version, versions):
            self.add(
                _join(path, disc),
                f"{selected!r} is not accepted by Determined {format_version(self.version)} "
                f"(it is {describe_range(versions)}): {REFUSED}",
            )
            return
        variant = self.data["types"][ref["ref"]]
        own = {**variant["fields"], **entry["fields"]}

        def unknown(key: str) -> str:
            others = sorted(
                other
                for other, (other_ref, _, _) in variants.items()
                if other != selected and key in self.data["types"][other_ref["ref"]]["fields"]
            )
            if others:
                return f"belongs to {disc} {' / '.join(others)}, not {selected}: {REFUSED}"
            return f"unknown key for {disc} {selected}: {REFUSED}"

        # The union checks its own top-level keys even inside leniently decoded types; what
        # is below them is decoded leniently (the variant's own decoding).
        lenient_below = lenient or bool(entry.get("cu")) or bool(variant.get("cu"))
        self.fields(
            path, key_path, value, own, False, skip=[disc], unknown=unknown, lenient_below=lenient_below
        )

    def scalar(self, path: str, key_path: str, value: Any, type_: str, lenient: bool) -> None:
        if type_ == "any":
            return
        if value is None:
            self.add(path, "null sets nothing: omit the key or give a value")
            return
        registered = self.registered(key_path)
        if registered == type_:
            problem = _cast_problem(value, type_)
            if problem:
                self.add(path, problem)
            return
        if type_ == "pod":
            self.pod(path, value)
            return
        ok = {
            "str": lambda v: isinstance(v, str),
            "int": lambda v: (
                (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer())
            ),
            "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
            "bool": lambda v: isinstance(v, bool),
            "duration": lambda v: isinstance(v, str) and bool(_DURATION.fullmatch(v)),
            "runtime_item": _is_runtime_item,
            "runtime_items": _is_runtime_items,
            "log_action": lambda v: _is_log_action(v, self.version),
        }.get(type_)
        if ok is None:
            raise ValueError(f"unknown scalar type in the key data: {type_!r} at {path}")
        if not ok(value):
            expected = (
                _TYPE_NAMES.get(type_)
                or {
                    "runtime_item": "a string or a mapping of cpu/cuda/gpu/rocm to strings",
                    "runtime_items": "a list of strings or a mapping of cpu/cuda/gpu/rocm to lists of "
                    "strings",
                    "log_action": "{type: cancel_retries|exclude_node}"
                    + (" or one of those names" if self.version >= (0, 38, 0) else ""),
                }[type_]
            )
            self.add(path, f"expected {expected}, got {_kind(value)}: {REFUSED}")

    def pod(self, path: str, value: Any) -> None:
        if not isinstance(value, dict):
            self.add(path, f"expected a Kubernetes Pod (a mapping), got {_kind(value)}")
            return
        for inner, message in _master_pod_problems(value):
            self.add(_join(path, inner), message)
        if self.pod_validator is None:
            return
        for inner, message in self.pod_validator(value):
            self.add(_join(path, inner), message)


def _master_pod_problems(pod: dict[str, Any]) -> list[tuple[str, str]]:
    """What the master refuses in a task pod spec (the fields Determined sets itself)."""
    return [
        (_join(*path), f"not configurable: {reason}; {REFUSED}") for path, reason in determined_owned(pod)
    ]


def _cast_problem(value: Any, type_: str) -> str | None:
    """What the master's flag parser (viper with typed defaults, spf13/cast) does to a file
    value of a registered key; None when the value arrives intact."""
    if type_ == "str":
        if isinstance(value, (str, int, float, bool)):
            return None
        return f"expected a string, got {_kind(value)} (the master's flag parser makes it ''): {REFUSED}"
    if type_ == "int":
        if isinstance(value, bool):
            return f"expected an integer, got {_kind(value)} (the master's flag parser makes it {int(value)})"
        if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
            return None
        if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
            return None
        return f"expected an integer, got {_kind(value)} (the master's flag parser makes it 0)"
    if type_ == "bool":
        if isinstance(value, bool) or (isinstance(value, str) and value in _GO_BOOL_STRINGS):
            return None
        return f"expected true or false, got {_kind(value)} (the master's flag parser makes it false)"
    raise ValueError(f"unknown registered type in the key data: {type_!r}")


def _is_runtime_item(value: Any) -> bool:
    if isinstance(value, str):
        return True
    return (
        isinstance(value, dict)
        and set(value) <= set(_RUNTIME_KEYS)
        and all(isinstance(v, str) for v in value.values())
    )


def _is_runtime_items(value: Any) -> bool:
    def strings(items: Any) -> bool:
        return isinstance(items, list) and all(isinstance(v, str) for v in items)

    if strings(value):
        return True
    return isinstance(value, dict) and set(value) <= set(_RUNTIME_KEYS) and all(map(strings, value.values()))


def _is_log_action(value: Any, version: Version) -> bool:
    if isinstance(value, dict):
        return set(value) == {"type"} and value["type"] in _LOG_ACTIONS
    return version >= (0, 38, 0) and value in _LOG_ACTIONS


# --- value rules of the master's Validate methods ----------------------------------------------


def _get(document: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        if not isinstance(document, dict):
            return None
        document = document.get(key)
    return document


def _kubernetes_rm(document: dict[str, Any]) -> dict[str, Any] | None:
    rm = document.get("resource_manager")
    return rm if isinstance(rm, dict) and rm.get("type") == "kubernetes" else None


def _rule_max_slots(document: dict[str, Any], version: Version) -> list[str]:
    # master/internal/config/config.go (Resolve, 0.26.1+; resource_config.go from 0.29.0):
    # "must provide exactly one of resource_manager.max_slots_per_pod and
    # task_container_defaults.kubernetes.max_slots_per_pod".
    rm = _kubernetes_rm(document)
    if rm is None or version < (0, 26, 1) or document.get("additional_resource_managers"):
        return []
    in_rm = rm.get("max_slots_per_pod") is not None
    in_tcd = _get(document, "task_container_defaults", "kubernetes", "max_slots_per_pod") is not None
    if in_rm == in_tcd:
        return [
            "resource_manager.max_slots_per_pod: exactly one of it and "
            "task_container_defaults.kubernetes.max_slots_per_pod must be set "
            f"({'both are' if in_rm else 'neither is'}): {REFUSED}"
        ]
    return []


def _rule_scheduler(document: dict[str, Any], version: Version) -> list[str]:
    # resource_manager_config.go KubernetesResourceManagerConfig.Validate, 0.36.0+:
    # "only blank or ``coscheduler`` values allowed for Kubernetes scheduler".
    rm = _kubernetes_rm(document)
    value = rm.get("default_scheduler") if rm else None
    if version >= (0, 36, 0) and value not in (None, "", "coscheduler"):
        return [
            f"resource_manager.default_scheduler: {value!r}: only blank or 'coscheduler' (0.36+): {REFUSED}"
        ]
    return []


def _rule_slot_type(document: dict[str, Any], version: Version) -> list[str]:
    # KubernetesResourceManagerConfig: "gpu" is read as "cuda"; Validate accepts cuda and cpu
    # (and rocm from 0.36.0); cpu slots need slot_resource_requests.cpu > 0.
    rm = _kubernetes_rm(document)
    if rm is None:
        return []
    problems = []
    slot_type = rm.get("slot_type")
    allowed = ["cpu", "cuda", "gpu"] + (["rocm"] if version >= (0, 36, 0) else [])
    if slot_type is not None and slot_type not in allowed:
        problems.append(
            f"resource_manager.slot_type: {slot_type!r} is not one of {', '.join(allowed)}: {REFUSED}"
        )
    cpu = _get(rm, "slot_resource_requests", "cpu")
    if slot_type == "cpu" and not (isinstance(cpu, (int, float)) and not isinstance(cpu, bool) and cpu > 0):
        problems.append(f"resource_manager.slot_resource_requests.cpu: must be > 0 for cpu slots: {REFUSED}")
    return problems


MASTER_RULES: list[Callable[[dict[str, Any], Version], list[str]]] = [
    _rule_max_slots,
    _rule_scheduler,
    _rule_slot_type,
]


# --- entry points ----------------------------------------------------------------------------


def check(
    document: Any,
    version: str | Version,
    *,
    pod_validator: PodValidator | None = validate_pod,
    rules: bool = True,
) -> list[str]:
    """Problems of a master.yaml document for Determined `version`, as
    `"<key.path>: <problem>"` lines (empty: the master takes it as written).

    `pod_validator=None` checks only that pod specs are mappings (no kubernetes-validate);
    `rules=False` checks key paths and types only. Raises ValueError for a version outside
    the releases the key data describes (it cannot vouch for those)."""
    v = parse_version(version)
    oldest, newest = known_range()
    if not oldest <= v <= newest:
        raise ValueError(
            f"Determined {format_version(v)} is outside the releases the key data describes "
            f"({format_version(oldest)} to {format_version(newest)})"
        )
    walk = _Walk(v, pod_validator)
    if not isinstance(document, dict):
        walk.add("", f"expected a mapping, got {_kind(document)}")
        return walk.problems
    walk.value("", "", document, {"ref": key_data()["root"]}, lenient=False)
    if rules:
        for rule in MASTER_RULES:
            walk.problems += rule(document, v)
    return walk.problems


def accepts(key_path: str, version: str | Version) -> bool:
    """Whether Determined `version` accepts the key at `key_path` (dotted; list items are
    entered transparently, e.g. 'resource_pools.kubernetes_namespace'). Below a union, a
    key is looked up among the common fields, then in every variant (accepted if any
    variant accepts it). Raises KeyError for a path that no release knows."""
    data = key_data()
    type_: Any = {"ref": data["root"]}
    for key in key_path.split("."):
        while isinstance(type_, dict) and ("list" in type_ or "map" in type_):
            type_ = type_.get("list", type_.get("map"))
        if not (isinstance(type_, dict) and "ref" in type_):
            raise KeyError(key_path)
        entry = data["types"][type_["ref"]]
        candidates = [entry["fields"]]
        if entry["kind"] == "union":
            candidates += [
                data["types"][ref["ref"]]["fields"]
                for ref, versions, _ in entry["variants"].values()
                if in_range(version, versions)
            ]
        found = [fields[key] for fields in candidates if key in fields]
        if not found:
            raise KeyError(key_path)
        accepted = [f for f in found if in_range(version, f.get("versions"))]
        if not accepted:
            return False
        type_ = accepted[0]["type"]
    return True


def first_version(key_path: str) -> str | None:
    """The oldest release (of those the data lists) that accepts `key_path`; None if none."""
    for tag in sorted(key_data()["tags"], key=parse_version):
        if accepts(key_path, tag):
            return tag
    return None


def last_version(key_path: str) -> str | None:
    """The newest release (of those the data lists) that accepts `key_path`; None if none."""
    for tag in sorted(key_data()["tags"], key=parse_version, reverse=True):
        if accepts(key_path, tag):
            return tag
    return None
