"""How far apart a CronJob's runs can be: the backup alert allows a dump that old.

Kubernetes reads a CronJob's schedule with robfig/cron v3's standard parser
(robfig/cron@v3.0.1): five fields, `*`/`?`, `a`, `a-b`, `/step` (`N/step` means `N-max/step`,
parser.go:252-300), month and weekday names, and the descriptors @yearly ... @hourly
(parser.go:365-420). A day matches when day-of-month AND day-of-week match if either field is
a star (`*` or `?` without a step above 1), else when either matches (spec.go:179-188).
components/config/database.py has already checked the schedule's form.
"""

from __future__ import annotations

import datetime
import functools
import itertools

# The descriptors, as the fields robfig/cron gives them (parser.go:365-420).
_DESCRIPTORS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
# (lowest, highest, names) per field: minute, hour, day of month, month, day of week.
_FIELDS = ((0, 59, ()), (0, 23, ()), (1, 31, ()), (1, 12, _MONTHS), (0, 6, _DAYS))
# The calendar repeats its weekdays and leap days every 28 years (within 1901-2099): every gap
# a schedule can have shows up in a window that long.
_START = datetime.date(2024, 1, 1)
_DAYS_SPAN = 28 * 366


def _value(text: str, low: int, names: tuple[str, ...]) -> int:
    if text.lower() in names:
        return names.index(text.lower()) + low
    return int(text)


def _field(text: str, low: int, high: int, names: tuple[str, ...]) -> tuple[frozenset[int], bool]:
    """The values a field matches, and whether it is a star (robfig's starBit)."""
    values: set[int] = set()
    star = False
    for item in text.split(","):
        span, _, step_text = item.partition("/")
        step = int(step_text) if step_text else 1
        if span in ("*", "?"):
            start, end = low, high
            star = star or step <= 1
        else:
            bounds = span.split("-")
            start = _value(bounds[0], low, names)
            end = _value(bounds[1], low, names) if len(bounds) == 2 else (high if step_text else start)
        values.update(range(start, end + 1, step))
    return frozenset(values), star


@functools.cache
def max_interval_minutes(schedule: str) -> int | None:
    """The longest time between two consecutive runs of a CronJob `schedule` (UTC), in
    minutes; None when it never runs twice (e.g. `0 0 30 2 *`)."""
    fields = _DESCRIPTORS.get(schedule.strip(), schedule).split()
    (minutes, _), (hours, _), (doms, dom_star), (months, _), (dows, dow_star) = (
        _field(text, *spec) for text, spec in zip(fields, _FIELDS, strict=True)
    )
    times = sorted(h * 60 + m for h in hours for m in minutes)
    longest = max((b - a for a, b in itertools.pairwise(times)), default=0)
    previous_day: int | None = None
    days = 0
    for offset in range(_DAYS_SPAN):
        day = _START + datetime.timedelta(days=offset)
        dom, dow = day.day in doms, (day.isoweekday() % 7) in dows
        if day.month not in months or not ((dom and dow) if dom_star or dow_star else (dom or dow)):
            continue
        if previous_day is not None:
            longest = max(longest, (offset - previous_day) * 1440 - times[-1] + times[0])
        previous_day = offset
        days += 1
    return longest if days > 1 else None
