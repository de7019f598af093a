"""Thunderbird metrics: ``prefs.js``, message filters and mbox folders."""

from __future__ import annotations

import json
import re
from typing import Any

from pytest_osworld.evaluators.metrics._utils import (
    existing_file,
    failed,
    match_record,
    match_rule,
    missing,
    passed,
    path_list,
    read_text,
    rules_of,
    short,
)
from pytest_osworld.evaluators.score import Score

_PREF_LINE = re.compile(r'^\s*user_pref\(\s*("(?:\\.|[^"\\])*")\s*,\s*(.*)\)\s*;\s*$')
_CONDITION = re.compile(r'(?:AND|OR) \((?:"(?:\\.|[^"\\])*"|[^)])*\)|ALL')
#: Bit of ``X-Mozilla-Status`` that marks a message as deleted.
MOZILLA_DELETED = 0x0008


def parse_prefs(text: str) -> dict[str, Any]:
    """The ``user_pref("key", value);`` entries of a ``prefs.js`` text, values JSON-decoded."""
    prefs: dict[str, Any] = {}
    for line in text.splitlines():
        match = _PREF_LINE.match(line)
        if match is None:
            continue
        try:
            key = json.loads(match.group(1))
            prefs[key] = json.loads(match.group(2))
        except ValueError:
            prefs[json.loads(match.group(1))] = match.group(2).strip()
    return prefs


def check_thunderbird_prefs(result: Any, expected: Any = None, **options: Any) -> Score:
    """Each ``expect`` pref exists and matches its rule; no ``unexpect`` pref matches its rule."""
    path, problem = existing_file(result)
    if problem:
        return problem
    prefs = parse_prefs(read_text(path or ""))
    rules = rules_of(expected)
    for key, rule in rules.get("expect", {}).items():
        if key not in prefs:
            return failed(f"pref {key!r} is not set")
        if not match_rule(prefs[key], rule):
            return failed(
                f"pref {key!r} is {short(prefs[key])}, expected {rule['method']} {short(rule['ref'])}"
            )
    for key, rule in rules.get("unexpect", {}).items():
        if key in prefs and match_rule(prefs[key], rule):
            return failed(f"pref {key!r} is {short(prefs[key])}, which is not allowed")
    return passed(f"{len(rules.get('expect', {}))} prefs as expected")


def parse_filters(text: str) -> list[dict[str, Any]]:
    """The filters of a ``msgFilterRules.dat`` text, one record per ``name=`` line.

    ``condition`` becomes a list of its terms (``["AND (subject,contains,x)"]``).
    """
    records: list[dict[str, Any]] = []
    for line in text.splitlines():
        key, sep, raw = line.partition("=")
        if not sep:
            continue
        value = raw.strip()
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1].replace('\\"', '"')
        if key == "name":
            records.append({"name": value})
        elif records:
            if key == "condition":
                records[-1][key] = _CONDITION.findall(value)
            else:
                records[-1].setdefault(key, value)
    return records


def check_thunderbird_filter(result: Any, expected: Any = None, **options: Any) -> Score:
    """Every ``expect`` record matches some filter and no ``unexpect`` record matches any."""
    path, problem = existing_file(result)
    if problem:
        return problem
    filters = parse_filters(read_text(path or ""))
    rules = rules_of(expected)
    for pattern in rules.get("expect", []):
        if not any(match_record(pattern, f) for f in filters):
            return failed(f"no filter matches {short(pattern, 160)} among {len(filters)} filters")
    for pattern in rules.get("unexpect", []):
        if any(match_record(pattern, f) for f in filters):
            return failed(f"a filter matches unexpected {short(pattern)}")
    return passed(f"{len(filters)} filters satisfy the rules")


def _message_key(message: Any) -> tuple[str, ...]:
    body = message.get_payload(decode=False)
    text = body if isinstance(body, str) else "".join(str(part) for part in body)
    return (
        str(message.get("Message-ID", "")).strip(),
        str(message.get("Subject", "")).strip(),
        str(message.get("From", "")).strip(),
        " ".join(text.split()),
    )


def _mbox_messages(path: str, remove_deleted: bool, remove_duplicate: bool) -> list[tuple[str, ...]]:
    import mailbox

    keys: list[tuple[str, ...]] = []
    for message in mailbox.mbox(path, create=False):
        status = str(message.get("X-Mozilla-Status", "0")).strip() or "0"
        try:
            deleted = bool(int(status, 16) & MOZILLA_DELETED)
        except ValueError:
            deleted = False
        if remove_deleted and deleted:
            continue
        key = _message_key(message)
        if remove_duplicate and key in keys:
            continue
        keys.append(key)
    return sorted(keys)


def check_thunderbird_folder(result: Any, expected: Any = None, **options: Any) -> Score:
    """Each result mbox folder holds the same messages as its expected folder.

    ``remove_deleted`` drops messages flagged deleted, ``remove_duplicate`` drops repeats.
    OSWorld's version skipped every non-empty message, so it passed on any two readable
    files; this one compares the messages.
    """
    results, golds = path_list(result), path_list(expected)
    if not results:
        return missing()
    if len(results) != len(golds):
        return failed(f"{len(results)} folders, expected {len(golds)}")
    flags = bool(options.get("remove_deleted", True)), bool(options.get("remove_duplicate", True))
    for got, want in zip(results, golds, strict=True):
        for file in (got, want):
            _, problem = existing_file(file, "folder")
            if problem:
                return problem
        mine, gold = _mbox_messages(got, *flags), _mbox_messages(want, *flags)
        if mine != gold:
            return failed(f"folder {got!r} has {len(mine)} messages, expected {len(gold)} matching ones")
    return passed(f"{len(golds)} folders hold the expected messages")
