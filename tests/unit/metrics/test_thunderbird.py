"""Thunderbird metrics."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from metric_files import check

from pytest_osworld.evaluators.metrics import thunderbird as t

Writer = Callable[[str, str | bytes], str]

PREFS = """// Mozilla User Preferences
user_pref("mail.server.default.applyIncomingFilters", true);
user_pref("mail.imap.use_status_for_biff", false);
user_pref("extensions.activeThemeID", "thunderbird-compact-dark@mozilla.org");
user_pref("mail.identity.id1.htmlSigText", "Anonym\\nXYZ Lab");
"""


@pytest.mark.parametrize(
    ("rules", "value", "reason"),
    [
        (
            {
                "expect": {
                    "mail.server.default.applyIncomingFilters": {"method": "eq", "ref": True},
                    "mail.imap.use_status_for_biff": {"method": "eq", "ref": False},
                }
            },
            1,
            "2 prefs",
        ),
        ({"expect": {"extensions.activeThemeID": {"method": "re", "ref": "dark"}}}, 1, "1 prefs"),
        (
            {"expect": {"mail.identity.id1.htmlSigText": {"method": "re.S", "ref": "Anonym\\nXYZ Lab"}}},
            1,
            "1 prefs",
        ),
        (
            {"expect": {"mail.identity.id1.auto_quote": {"method": "eq", "ref": False}}},
            0,
            "is not set",
        ),
        (
            {"expect": {"mail.imap.use_status_for_biff": {"method": "eq", "ref": True}}},
            0,
            "is False, expected eq True",
        ),
        (
            {"unexpect": {"mail.imap.use_status_for_biff": {"method": "eq", "ref": False}}},
            0,
            "not allowed",
        ),
        (
            {"unexpect": {"mail.server.default.autosync_offline_stores": {"method": "eq", "ref": False}}},
            1,
            "0 prefs",
        ),
    ],
)
def test_check_thunderbird_prefs(write: Writer, rules: dict[str, Any], value: float, reason: str) -> None:
    check(t.check_thunderbird_prefs(write("prefs.js", PREFS), rules), value, reason)


FILTERS = """version="9"
logging="no"
name="Promotions"
enabled="yes"
type="17"
action="Move to folder"
actionValue="mailbox://nobody@Local%20Folders/Promotions"
condition="AND (subject,contains,discount) AND (from,contains,\\"shop\\")"
name="Forward all"
enabled="no"
type="17"
action="Forward"
actionValue="anonym-x2024@gmail.com"
condition="ALL"
"""


@pytest.mark.parametrize(
    ("rules", "value", "reason"),
    [
        (
            {
                "expect": [
                    {
                        "enabled": "yes",
                        "action": "Move to folder",
                        "actionValue": "mailbox://nobody@Local%20Folders/Promotions",
                    }
                ]
            },
            1,
            "2 filters",
        ),
        (
            {"expect": [{"condition": ["AND (subject,contains,discount)", 'AND (from,contains,"shop")']}]},
            1,
            "2 filters",
        ),
        (
            {"expect": [{"enabled": "yes", "action": "Forward", "condition": ["ALL"]}]},
            0,
            "no filter matches",
        ),
        ({"unexpect": [{"action": "Forward"}]}, 0, "matches unexpected"),
    ],
)
def test_check_thunderbird_filter(write: Writer, rules: dict[str, Any], value: float, reason: str) -> None:
    check(t.check_thunderbird_filter(write("msgFilterRules.dat", FILTERS), rules), value, reason)


def _mbox(messages: list[tuple[str, str, str]]) -> str:
    parts = []
    for subject, status, body in messages:
        parts.append(
            f"From - Mon Jan  1 00:00:00 2024\nX-Mozilla-Status: {status}\nFrom: a@b.c\n"
            f"Subject: {subject}\nMessage-ID: <{subject}@x>\n\n{body}\n\n"
        )
    return "".join(parts)


def test_check_thunderbird_folder(write: Writer) -> None:
    gold = write("gold", _mbox([("Invoice", "0001", "Total 10"), ("Receipt", "0001", "Paid")]))
    same = write(
        "same",
        _mbox(
            [
                ("Receipt", "0001", "Paid"),
                ("Invoice", "0001", "Total 10"),
                ("Invoice", "0001", "Total 10"),
            ]
        ),
    )
    deleted = write(
        "deleted",
        _mbox([("Invoice", "0001", "Total 10"), ("Receipt", "0001", "Paid"), ("Spam", "0009", "x")]),
    )
    other = write("other", _mbox([("Invoice", "0001", "Total 99"), ("Receipt", "0001", "Paid")]))
    check(
        t.check_thunderbird_folder([same], [gold], remove_deleted=True, remove_duplicate=True),
        1,
        "1 folders",
    )
    check(
        t.check_thunderbird_folder([deleted], [gold], remove_deleted=True, remove_duplicate=True),
        1,
        "1 folders",
    )
    check(t.check_thunderbird_folder([deleted], [gold], remove_deleted=False), 0, "has 3 messages")
    check(t.check_thunderbird_folder([other], [gold]), 0, "expected 2 matching")
    check(t.check_thunderbird_folder([other, gold], [gold]), 0, "2 folders, expected 1")
    check(t.check_thunderbird_folder(None, [gold]), 0, "no result")


def test_parse_prefs_reads_only_user_pref_lines() -> None:
    assert t.parse_prefs('// user_pref("a", 1);\nuser_pref("b", "x");\n') == {"b": "x"}
