"""Go's duration and cron syntax, as the Determined master reads its log retention schedule.

The master takes `retention_policy.schedule` when Go's time.ParseDuration reads it, else when
robfig/cron v3.0.1's ParseStandard does (LogRetentionPolicy.Validate, determined
master/pkg/model/logging_config.go at v0.38.1, read 2026-11); it then schedules a duration
with gocron v2.1.1's DurationJob, which refuses a zero interval, and a cron line with its
CronJob, which parses it again with ParseStandard (master/internal/logretention at v0.38.1;
go.mod pins robfig/cron v3.0.1 and gocron v2.1.1). The master does not start when either
refuses it.

Sources (read 2026-11): https://github.com/robfig/cron/blob/v3.0.1/parser.go (Parse,
ParseStandard, getRange, parseDescriptor), https://github.com/golang/go/blob/go1.22.8/src/time/format.go
(ParseDuration) and https://github.com/go-co-op/gocron/blob/v2.1.1/job.go (DurationJob).
"""

from __future__ import annotations

import re

# Go's time.ParseDuration units, in nanoseconds (both micro signs, U+00B5 and U+03BC).
DURATION_UNITS = {
    "ns": 1,
    "us": 1_000,
    "\u00b5s": 1_000,
    "\u03bcs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}
_MAX_DURATION = 1 << 63
_DURATION_PART = re.compile(r"([0-9]*)(?:\.([0-9]*))?([^0-9.]*)")


def parse_duration(text: str) -> int | None:
    """Nanoseconds of a Go duration ("1h30m", "90s", "-1.5h", "0"), None when Go refuses it."""
    s = text
    negative = s[:1] == "-"
    if s[:1] in ("-", "+"):
        s = s[1:]
    if s == "0":
        return 0
    if not s:
        return None
    total = 0
    while s:
        if not (s[0] == "." or "0" <= s[0] <= "9"):
            return None
        match = _DURATION_PART.match(s)
        assert match is not None
        whole, fraction, unit = match.groups()
        if not whole and not fraction:  # ".s"
            return None
        if unit not in DURATION_UNITS:
            return None
        scale = DURATION_UNITS[unit]
        value = int(whole or "0") * scale
        if fraction:
            value += int(float(int(fraction)) * (scale / 10 ** len(fraction)))
        total += value
        if total > _MAX_DURATION:
            return None
        s = s[match.end() :]
    if not negative and total > _MAX_DURATION - 1:
        return None
    return -total if negative else total


_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
# robfig/cron v3.0.1's fields of ParseStandard: (name, lowest, highest, names).
CRON_FIELDS = (
    ("minute", 0, 59, {}),
    ("hour", 0, 23, {}),
    ("day of month", 1, 31, {}),
    (
        "month",
        1,
        12,
        {m: i for i, m in enumerate(_MONTHS, 1)},
    ),
    ("day of week", 0, 6, {d: i for i, d in enumerate(_WEEKDAYS)}),
)
CRON_DESCRIPTORS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
# Time zones a TZ= or CRON_TZ= prefix may name: the master image (ubuntu:22.04, master/Dockerfile
# at v0.38.1) installs no time zone database and the master does not embed Go's, so Go's
# time.LoadLocation finds only these ("" is UTC).
CRON_ZONES = ("", "UTC", "Local")
# Go's strings.Fields splits on unicode.IsSpace.
_GO_SPACE = re.compile(r"[\t\n\v\f\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+")
_GO_TRIM = re.compile(rf"^{_GO_SPACE.pattern}|{_GO_SPACE.pattern}$")
_GO_INT = re.compile(r"[+-]?[0-9]+")


def _number(text: str, names: dict[str, int]) -> int:
    """robfig's parseIntOrName: a name of the field, else Go's strconv.Atoi, not negative."""
    if text.lower() in names:
        return names[text.lower()]
    if not _GO_INT.fullmatch(text) or int(text) < 0:
        raise ValueError(f"{text!r} is not a number or a name")
    return int(text)


def _range_problem(expr: str, low: int, high: int, names: dict[str, int]) -> str | None:
    """robfig's getRange: number | number-number | * | ?, then an optional /step."""
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    try:
        if low_and_high[0] in ("*", "?"):
            start, end = low, high
        else:
            start = _number(low_and_high[0], names)
            if len(low_and_high) > 2:
                return f"{expr!r} has too many '-'"
            end = _number(low_and_high[1], names) if len(low_and_high) == 2 else start
        if len(range_and_step) > 2:
            return f"{expr!r} has too many '/'"
        step = _number(range_and_step[1], {}) if len(range_and_step) == 2 else 1
    except ValueError as exc:
        return str(exc)
    if start < low or end > high:
        return f"{expr!r} is outside {low}-{high}"
    if start > end:
        return f"{expr!r} starts after it ends"
    if step == 0:
        return f"{expr!r} has a step of 0"
    return None


def cron_zone(spec: str) -> str | None:
    """The time zone a TZ= or CRON_TZ= prefix of `spec` names, or None without one."""
    if spec.startswith(("TZ=", "CRON_TZ=")) and " " in spec:
        return spec[spec.index("=") + 1 : spec.index(" ")]
    return None


def cron_problem(spec: str, any_zone: bool = False) -> str | None:
    """Why robfig/cron v3.0.1's ParseStandard refuses `spec` (as the master runs it), or None.
    `any_zone`: a master image with its own time zone database (not the stock one) takes any
    zone name (checked there, not here)."""
    if not spec:
        return "is empty"
    if spec.startswith(("TZ=", "CRON_TZ=")):
        if " " not in spec:  # robfig slices up to the first space and panics without one
            return "a TZ= or CRON_TZ= prefix must be followed by a space and the schedule"
        zone = spec[spec.index("=") + 1 : spec.index(" ")]
        if zone not in CRON_ZONES and not any_zone:
            return (
                f"time zone {zone!r}: the stock master image has no time zone database, so only UTC "
                "works (write the schedule in UTC)"
            )
        spec = _GO_TRIM.sub("", spec[spec.index(" ") :])  # strings.TrimSpace
    if spec.startswith("@"):
        if spec in CRON_DESCRIPTORS:
            return None
        if spec.startswith("@every ") and parse_duration(spec[len("@every ") :]) is not None:
            return None
        return f"is not one of {', '.join(CRON_DESCRIPTORS)} or '@every <duration>'"
    fields = [f for f in _GO_SPACE.split(spec) if f]
    if len(fields) != len(CRON_FIELDS):
        return f"has {len(fields)} fields; a cron schedule has 5 (minute hour day-of-month month day-of-week)"
    for text, (name, low, high, names) in zip(fields, CRON_FIELDS, strict=True):
        for expr in (part for part in text.split(",") if part):
            if problem := _range_problem(expr, low, high, names):
                return f"{name}: {problem}"
    return None
