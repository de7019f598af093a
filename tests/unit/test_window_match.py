"""Matching ``wmctrl -l`` listings the way ``wmctrl -a`` does, for the activate_window wait."""

from __future__ import annotations

import pytest

from pytest_osworld.setup_steps.basic import window_listed

TITLES = (
    "0x01a00003  0 vm Keyboard Shortcuts - Visual Studio Code\n"
    "0x02200004 -1 vm report.xlsx - LibreOffice Calc\n"
    "0x02400001  0 vm \n"
)
CLASSES = (
    "0x01a00003  0 Code.Code  vm Keyboard Shortcuts - Visual Studio Code\n"
    "0x02200004 -1 libreoffice.libreoffice-calc  vm report.xlsx - LibreOffice Calc\n"
)


@pytest.mark.parametrize(
    ("name", "strict", "expected"),
    [
        ("Visual Studio Code", False, True),
        ("visual studio code", False, True),
        ("report.xlsx - LibreOffice Calc", True, True),
        ("LibreOffice Calc", True, False),
        ("Thunderbird", False, False),
        ("vm", False, False),  # the host column is not the title
    ],
)
def test_titles(name: str, strict: bool, expected: bool) -> None:
    assert window_listed(TITLES, name, strict, by_class=False) is expected


@pytest.mark.parametrize(
    ("name", "strict", "expected"),
    [
        ("libreoffice-calc", False, True),
        ("Code.Code", True, True),
        ("Code", True, False),
        ("gimp", False, False),
    ],
)
def test_classes(name: str, strict: bool, expected: bool) -> None:
    assert window_listed(CLASSES, name, strict, by_class=True) is expected
