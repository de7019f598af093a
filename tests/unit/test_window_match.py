"""Finding the window a task names, as ``wmctrl -a``/``-c`` would, plus OSWorld's aliases."""

from __future__ import annotations

import pytest

from pytest_osworld.guest.x_windows import find_window, parse_wmctrl_lx

LISTING = (
    "0x01a00003  0 Code.Code  myhost Keyboard Shortcuts - Visual Studio Code\n"
    "0x02200004 -1 libreoffice.libreoffice-calc  myhost report.xlsx - LibreOffice Calc\n"
    "0x02400001  0 gnome-terminal-server.Gnome-terminal  myhost user@vm: ~\n"
    "0x02600001  0 chromium.Chromium  myhost New Tab - Chromium\n"
    "0x02800001  0 Mail.thunderbird  myhost \n"
    "garbage line\n"
)
WINDOWS = parse_wmctrl_lx(LISTING)


def test_listing_is_parsed() -> None:
    assert [w.window_id for w in WINDOWS] == [0x01A00003, 0x02200004, 0x02400001, 0x02600001, 0x02800001]
    assert WINDOWS[1].wm_class == "libreoffice.libreoffice-calc"
    assert WINDOWS[1].title == "report.xlsx - LibreOffice Calc"
    assert WINDOWS[4].title == ""


@pytest.mark.parametrize(
    ("name", "strict", "by_class", "expected"),
    [
        ("Visual Studio Code", False, False, 0x01A00003),
        ("visual studio code", False, False, 0x01A00003),
        ("report.xlsx - LibreOffice Calc", True, False, 0x02200004),
        ("LibreOffice Calc", True, False, None),
        ("Thunderbird", False, False, None),
        ("myhost", False, False, None),  # the host column is not the title
        ("libreoffice-calc", False, True, 0x02200004),
        ("Mail.thunderbird", True, True, 0x02800001),
        ("Mail", True, True, None),
        # OSWorld's Ubuntu names for our apps:
        ("Google Chrome", False, False, 0x02600001),
        ("Terminal", False, False, 0x02400001),
        ("Google Chrome", False, True, None),  # aliases are for titles only
    ],
)
def test_find_window(name: str, strict: bool, by_class: bool, expected: int | None) -> None:
    found = find_window(WINDOWS, name, strict, by_class)
    assert (found.window_id if found else None) == expected


def test_a_real_match_wins_over_the_alias() -> None:
    windows = parse_wmctrl_lx("0x1 0 a.A vm Google Chrome\n0x2 0 chromium.Chromium vm x - Chromium\n")
    found = find_window(windows, "Google Chrome")
    assert found is not None and found.window_id == 1
