"""``rule_relativeTime``: expected values that depend on today's date.

"Today" is the environment's clock (never an internet lookup), in the task's
``timezone`` when it names one. Phrases: ``today``, ``tomorrow``, ``next <weekday>``,
``next week <weekday>``, ``this month``, ``next month``, ``<N>th next month``,
``first <weekday> <N> months later``; a trailing ``split`` fills the first half of the
expected keys from ``from`` and the second half from ``to``.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any
from zoneinfo import ZoneInfo

from pytest_osworld.errors import GetterError
from pytest_osworld.task.context import TaskContext

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
NUMBERS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}


def environment_now(ctx: TaskContext, timezone: str | None) -> dt.datetime:
    """The environment's current time, in ``timezone`` if given, else in its own time zone.

    Without a ``timezone``, "today" is the environment's local date, as OSWorld's
    ``datetime.now().astimezone()`` on its VM gives.
    """
    result = ctx.guest.execute(["date", "+%s %z"])
    match = re.fullmatch(r"(\d+) ([+-])(\d\d)(\d\d)", result.output.strip())
    if match is None:
        raise GetterError(
            f"rule_relativeTime: cannot read the environment's clock "
            f"({(result.error or result.output).strip()!r})"
        )
    sign = 1 if match[2] == "+" else -1
    offset = dt.timedelta(hours=int(match[3]), minutes=int(match[4])) * sign
    now = dt.datetime.fromtimestamp(int(match[1]), tz=dt.timezone(offset))
    return now.astimezone(ZoneInfo(timezone)) if timezone else now


def _add_months(day: dt.date, months: int) -> dt.date:
    month = day.month - 1 + months
    return dt.date(day.year + month // 12, month % 12 + 1, 1)


def resolve_phrase(phrase: str, today: dt.date) -> dt.date:
    """The date ``phrase`` means, seen from ``today``."""
    text = phrase.lower().replace(" split", "").strip()
    if text == "today":
        return today
    if text == "tomorrow":
        return today + dt.timedelta(days=1)
    if text in ("this month",):
        return today.replace(day=1)
    if text == "next month":
        return _add_months(today, 1)
    match = re.fullmatch(r"next (week )?(\w+)", text)
    if match and match[2] in WEEKDAYS:
        target = WEEKDAYS.index(match[2])
        if match[1]:
            monday = today - dt.timedelta(days=today.weekday()) + dt.timedelta(days=7)
            return monday + dt.timedelta(days=target)
        ahead = (target - today.weekday()) % 7 or 7
        return today + dt.timedelta(days=ahead)
    match = re.fullmatch(r"(\d+)(st|nd|rd|th) next month", text)
    if match:
        return _add_months(today, 1).replace(day=int(match[1]))
    match = re.fullmatch(r"first (\w+) (\w+) months? later", text)
    if match and match[1] in WEEKDAYS:
        months = NUMBERS.get(match[2]) or int(match[2])
        first = _add_months(today, months)
        return first + dt.timedelta(days=(WEEKDAYS.index(match[1]) - first.weekday()) % 7)
    raise GetterError(f"rule_relativeTime: cannot understand the date phrase {phrase!r}")


def fill(template: Any, day: dt.date) -> Any:
    """Replace ``{Year}``, ``{Month}``, ``{DayD}``... in a string (or list of strings)."""
    if isinstance(template, list):
        return [fill(t, day) for t in template]
    if not isinstance(template, str):
        return template
    values = {
        "{Year}": str(day.year),
        "{Month}": day.strftime("%b"),
        "{MonthFull}": day.strftime("%B"),
        "{month}": day.strftime("%B").lower(),
        "{Month0D}": f"{day.month:02d}",
        "{MonthD}": str(day.month),
        "{Day0D}": f"{day.day:02d}",
        "{DayD}": str(day.day),
        "{DoW}": day.strftime("%a"),
    }
    for key, value in values.items():
        template = template.replace(key, value)
    return template


def get_rule_relativeTime(ctx: TaskContext, config: dict[str, Any]) -> dict[str, Any]:
    """The task's ``rules`` with date templates filled from the environment's clock."""
    rules = dict(config["rules"])
    relative = rules.get("relativeTime", {})
    today = environment_now(ctx, rules.get("timezone")).date()
    start = resolve_phrase(relative["from"], today)
    end = resolve_phrase(relative["to"], today) if "to" in relative else start
    expected = dict(rules.get("expected", {}))
    keys = list(expected)
    split = "split" in str(relative.get("from", ""))
    filled = {}
    for index, key in enumerate(keys):
        first_half = index < len(keys) / 2
        day = (start if first_half else end) if split else (end if key == "to" else start)
        filled[key] = fill(expected[key], day)
    rules["expected"] = filled
    return rules
