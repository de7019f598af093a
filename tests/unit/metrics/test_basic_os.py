"""Desktop metrics over command output."""

from __future__ import annotations

from typing import Any

import pytest
from metric_files import check

from pytest_osworld.evaluators.metrics import basic_os as b

TIMEDATECTL = """               Local time: Mon 2024-01-01 10:00:00 UTC
           Universal time: Mon 2024-01-01 10:00:00 UTC
                 RTC time: Mon 2024-01-01 10:00:00
                Time zone: Etc/UTC (UTC, {offset}
"""


@pytest.mark.parametrize(
    ("metric", "result", "expected", "value", "reason"),
    [
        (
            b.is_in_vm_clickboard,
            {"expected": "/home/user/secret.docx"},
            "/home/user/secret.docx",
            1,
            "clipboard holds",
        ),
        (b.is_in_vm_clickboard, {"expected": "/home/user/secret.docx"}, "/tmp/other", 0, "lacks"),
        (b.is_in_vm_clickboard, "/a /b", {"expected": ["/a", "/b"]}, 1, "clipboard holds"),
        (b.is_in_vm_clickboard, {"expected": "x"}, None, 0, "no clipboard output"),
        (b.is_utc_0, TIMEDATECTL.format(offset="+0000)"), None, 1, "UTC+0"),
        (b.is_utc_0, TIMEDATECTL.format(offset="+0800)"), None, 0, "not UTC+0"),
        (b.is_utc_0, "garbage", None, 0, "no 'Time zone:' line"),
        (
            b.check_gnome_favorite_apps,
            "['thunderbird.desktop', 'google-chrome.desktop']\n",
            {"expected": ["google-chrome.desktop", "thunderbird.desktop"]},
            1,
            "favourites are",
        ),
        (
            b.check_gnome_favorite_apps,
            "['thunderbird.desktop']\n",
            {"expected": ["google-chrome.desktop", "thunderbird.desktop"]},
            0,
            "expected",
        ),
        (b.check_gnome_favorite_apps, "@as []\n", {"expected": []}, 1, "favourites are []"),
        (
            b.check_gnome_favorite_apps,
            "__import__('os').system('true')",
            {"expected": []},
            0,
            "not a gsettings string list",
        ),
        (
            b.check_moved_jpgs,
            {"name": "cpjpg", "children": [{"name": "a.jpg"}, {"name": "b.jpg"}]},
            {"expected": ["b.jpg", "a.jpg"]},
            1,
            "directory holds",
        ),
        (
            b.check_moved_jpgs,
            {"name": "cpjpg", "children": [{"name": "a.jpg"}]},
            {"expected": ["b.jpg", "a.jpg"]},
            0,
            "expected ['a.jpg', 'b.jpg']",
        ),
        (b.check_moved_jpgs, None, {"expected": []}, 0, "no directory listing"),
        (b.check_text_enlarged, "1.25\n", None, 1, "text scaling 1.25"),
        (b.check_text_enlarged, "1.0\n", None, 0, "not above 1.0"),
    ],
)
def test_basic_os(metric: Any, result: Any, expected: Any, value: float, reason: str) -> None:
    check(metric(result, expected), value, reason)
