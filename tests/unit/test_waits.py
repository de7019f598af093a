"""The solution wait helpers, without a desktop: conditions, files, windows and elements.

Windows come from a patched client list; elements from small accessibility trees
written in the observation's XML vocabulary.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import types
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pytest_osworld.guest import waits
from pytest_osworld.guest.waits import (
    TIMEOUT_MESSAGE,
    Element,
    WaitTimeout,
    WindowInfo,
    click_element,
    find_elements,
    find_windows,
    wait_element,
    wait_element_gone,
    wait_file,
    wait_laid_out,
    wait_until,
    wait_window,
    wait_window_gone,
    window_geometry,
)

NS = (
    'xmlns:st="https://accessibility.ubuntu.example.org/ns/state" '
    'xmlns:cp="https://accessibility.ubuntu.example.org/ns/component"'
)

TREE = f"""<desktop-frame {NS} name="main">
  <application name="soffice">
    <frame name="roster.xlsx - LibreOffice Calc" cp:screencoord="(0, 0)" cp:size="(1920, 1080)">
      <menu-item name="Rename Sheet..." st:showing="true" cp:screencoord="(300, 500)" cp:size="(200, 24)"/>
      <menu-item name="Delete Sheet..." st:showing="true"/>
      <push-button name="OK" cp:screencoord="(1000, 800)" cp:size="(80, 30)"/>
      <push-button name="Zero" cp:screencoord="(10, 10)" cp:size="(0, 30)"/>
    </frame>
  </application>
  <application name="Chromium">
    <push-button name="OK" cp:screencoord="(50, 60)" cp:size="(20, 10)"/>
    <link name="Staff handbook (PDF)" cp:screencoord="(400, 300)" cp:size="(120, 18)"/>
  </application>
</desktop-frame>"""


@pytest.fixture
def tree() -> ET.Element:
    return ET.fromstring(TREE)


def test_wait_until_returns_the_first_truthy_value() -> None:
    calls = iter([None, 0, "", "ready"])
    assert wait_until(lambda: next(calls), timeout=2, poll=0.001) == "ready"


def test_wait_until_times_out_naming_what_and_how_long() -> None:
    start = time.monotonic()
    with pytest.raises(WaitTimeout) as caught:
        wait_until(lambda: False, timeout=0.2, what="the moon", seen=lambda: "only clouds")
    elapsed = time.monotonic() - start
    assert 0.2 <= elapsed < 1.5
    assert str(caught.value) == TIMEOUT_MESSAGE.format(timeout=0.2, what="the moon") + "; only clouds"
    assert isinstance(caught.value, TimeoutError)
    assert caught.value.what == "the moon" and caught.value.timeout == 0.2


def test_wait_until_checks_once_more_at_the_deadline() -> None:
    seen: list[float] = []

    def slow() -> bool:
        seen.append(time.monotonic())
        time.sleep(0.15)
        return len(seen) >= 2

    assert wait_until(slow, timeout=0.1, poll=0.01)


def test_wait_file_waits_for_a_non_empty_stable_file(tmp_path: Path) -> None:
    target = tmp_path / "out.csv"

    def writer() -> None:
        time.sleep(0.1)
        target.write_bytes(b"")
        time.sleep(0.1)
        target.write_bytes(b"a,b\n")

    thread = threading.Thread(target=writer)
    thread.start()
    start = time.monotonic()
    assert wait_file(str(target), timeout=5, stable_for=0.1) == str(target)
    thread.join()
    assert time.monotonic() - start >= 0.3
    assert target.read_bytes() == b"a,b\n"


def test_wait_file_times_out_naming_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "never.txt"
    with pytest.raises(
        WaitTimeout, match=r"timed out after 0\.1 s waiting for file .*never\.txt.*no such file"
    ):
        wait_file(str(missing), timeout=0.1)


def test_wait_file_empty_is_not_ready_unless_allowed(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    with pytest.raises(WaitTimeout, match="size 0 bytes"):
        wait_file(str(empty), timeout=0.1, stable_for=0)
    assert wait_file(str(empty), timeout=1, non_empty=False, stable_for=0) == str(empty)


WINDOWS = [
    WindowInfo(1, "roster.xlsx - LibreOffice Calc", "libreoffice.libreoffice-calc"),
    WindowInfo(2, "Inbox - Mozilla Thunderbird", "Mail.thunderbird"),
]


def test_find_windows_by_title_and_class() -> None:
    assert find_windows("Thunderbird", windows=WINDOWS) == [WINDOWS[1]]
    assert find_windows(wm_class="CALC", windows=WINDOWS) == [WINDOWS[0]]
    assert find_windows("Calc", wm_class="thunderbird", windows=WINDOWS) == []
    assert find_windows("thunderbird", windows=WINDOWS) == []  # titles are case-sensitive
    with pytest.raises(ValueError, match="title substring"):
        find_windows(windows=WINDOWS)


def test_wait_window_sees_a_window_that_appears(monkeypatch: pytest.MonkeyPatch) -> None:
    shown: list[WindowInfo] = []
    monkeypatch.setattr(waits, "_client_list", lambda: list(shown))
    threading.Timer(0.1, lambda: shown.extend(WINDOWS)).start()
    assert wait_window("Mozilla Thunderbird", timeout=5) == WINDOWS[1]


def test_wait_window_timeout_lists_the_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(waits, "_client_list", lambda: list(WINDOWS))
    with pytest.raises(WaitTimeout) as caught:
        wait_window("Save Attachment", wm_class="thunderbird", timeout=0.1)
    message = str(caught.value)
    assert "a window with title containing 'Save Attachment' and class containing 'thunderbird'" in message
    assert "'Inbox - Mozilla Thunderbird'" in message


def test_wait_window_gone(monkeypatch: pytest.MonkeyPatch) -> None:
    shown = list(WINDOWS)
    monkeypatch.setattr(waits, "_client_list", lambda: list(shown))
    threading.Timer(0.1, shown.pop).start()
    wait_window_gone("Thunderbird", timeout=5)
    monkeypatch.setattr(waits, "_client_list", lambda: list(WINDOWS))
    with pytest.raises(WaitTimeout, match="waiting for no window with title containing 'Calc'"):
        wait_window_gone("Calc", timeout=0.1)


def test_find_elements_by_role_name_and_app(tree: ET.Element) -> None:
    found = find_elements("menu item", "Rename Sheet...", tree=tree)
    assert found == [
        Element("menu-item", "Rename Sheet...", 300, 500, 200, 24, "soffice", frozenset({"showing"}))
    ]
    assert found[0].center == (400, 512)
    assert [e.app for e in find_elements("push-button", "OK", tree=tree)] == ["soffice", "Chromium"]
    assert [e.app for e in find_elements("push button", "OK", app="chrom", tree=tree)] == ["Chromium"]


def test_find_elements_only_on_screen_and_exact_unless_partial(tree: ET.Element) -> None:
    assert find_elements("menu-item", "Delete Sheet...", tree=tree) == []  # no extents
    assert find_elements("push-button", "Zero", tree=tree) == []  # zero width
    assert find_elements("link", "Staff handbook", tree=tree) == []
    assert [e.name for e in find_elements("link", "Staff handbook", partial=True, tree=tree)] == [
        "Staff handbook (PDF)"
    ]
    assert [e.name for e in find_elements("push-button", tree=tree)] == ["OK", "OK"]


def test_wait_element_polls_the_tree_until_the_element_shows(tree: ET.Element) -> None:
    empty = ET.fromstring(f"<desktop-frame {NS}/>")
    trees = iter([empty, empty, tree])
    element = wait_element("link", "Staff handbook (PDF)", timeout=5, source=lambda: next(trees))
    assert (element.x, element.y, element.app) == (400, 300, "Chromium")


def test_wait_element_timeout_names_the_element_and_what_was_seen(tree: ET.Element) -> None:
    with pytest.raises(WaitTimeout) as caught:
        wait_element("push-button", "Cancel", app="soffice", timeout=0.1, source=lambda: tree)
    message = str(caught.value)
    assert "waiting for an on-screen push-button with name 'Cancel' in 'soffice'" in message
    assert "on-screen push-button elements: 'OK'" in message


def test_wait_element_gone(tree: ET.Element) -> None:
    empty = ET.fromstring(f"<desktop-frame {NS}/>")
    trees = iter([tree, tree, empty])
    wait_element_gone("menu-item", "Rename Sheet...", timeout=5, source=lambda: next(trees))
    with pytest.raises(WaitTimeout, match="waiting for no on-screen menu-item"):
        wait_element_gone("menu-item", "Rename Sheet...", timeout=0.1, source=lambda: tree)


def _moved(tree: ET.Element, dx: int) -> ET.Element:
    text = TREE.replace('cp:screencoord="(300, 500)"', f'cp:screencoord="({300 + dx}, 500)"')
    return ET.fromstring(text)


def test_wait_element_stable_waits_for_the_element_to_stand_still(tree: ET.Element) -> None:
    walks = iter([_moved(tree, 25), tree, tree, _moved(tree, 99)])
    element = wait_element("menu-item", "Rename Sheet...", stable=True, timeout=5, source=lambda: next(walks))
    assert element.x == 300
    assert next(walks) is not tree  # exactly three walks: moved, here, here again


def test_wait_element_by_state(tree: ET.Element) -> None:
    assert (
        wait_element("menu-item", state="showing", timeout=1, source=lambda: tree).name == "Rename Sheet..."
    )
    with pytest.raises(WaitTimeout, match="with name 'OK' and state 'focused'"):
        wait_element("push-button", "OK", state="focused", timeout=0.1, source=lambda: tree)


def test_click_element_clicks_the_centre(tree: ET.Element, monkeypatch: pytest.MonkeyPatch) -> None:
    clicks: list[tuple[int, int, int, str]] = []
    fake = types.ModuleType("pyautogui")
    fake.click = lambda x, y, clicks=1, button="left": clicks_log(x, y, clicks, button)  # type: ignore[attr-defined]

    def clicks_log(x: int, y: int, count: int, button: str) -> None:
        clicks.append((x, y, count, button))

    monkeypatch.setitem(sys.modules, "pyautogui", fake)
    element = click_element("push-button", "OK", app="soffice", clicks=2, timeout=1, source=lambda: tree)
    assert element.app == "soffice"
    assert clicks == [(1040, 815, 2, "left")]


def test_find_elements_by_text() -> None:
    tree = ET.fromstring(
        f"<desktop-frame {NS}><application name='soffice'>"
        "<paragraph name='' cp:screencoord='(330, 412)' cp:size='(524, 75)'>Harbour boat tour</paragraph>"
        "<paragraph name='' cp:screencoord='(330, 486)' cp:size='(585, 76)'>Museum visit</paragraph>"
        "</application></desktop-frame>"
    )
    assert [e.y for e in find_elements("paragraph", text="boat", tree=tree)] == [412]
    with pytest.raises(WaitTimeout, match="any name and text containing 'Zoo'"):
        wait_element("paragraph", text="Zoo", timeout=0.1, source=lambda: tree)


def test_find_elements_of_any_role(tree: ET.Element) -> None:
    assert [(e.role, e.app) for e in find_elements(None, "OK", tree=tree)] == [
        ("push-button", "soffice"),
        ("push-button", "Chromium"),
    ]
    with pytest.raises(WaitTimeout, match="waiting for an on-screen element with name 'Nope'"):
        wait_element(None, "Nope", timeout=0.1, source=lambda: tree)


def test_wait_element_gone_by_state() -> None:
    focused = ET.fromstring(
        f"<desktop-frame {NS}><application name='soffice'>"
        "<text name='' st:focused='true' cp:screencoord='(4, 124)' cp:size='(126, 34)'>A8</text>"
        "</application></desktop-frame>"
    )
    idle = ET.fromstring(TREE)
    walks = iter([focused, focused, idle])
    wait_element_gone("text", state="focused", app="soffice", timeout=5, source=lambda: next(walks))
    with pytest.raises(WaitTimeout, match="waiting for no on-screen text with any name and state 'focused'"):
        wait_element_gone("text", state="focused", timeout=0.1, source=lambda: focused)


XWININFO = """
xwininfo: Window id: 0x1200003 "q3_sales.xlsx - LibreOffice Calc"

  Absolute upper-left X:  9
  Absolute upper-left Y:  26
  Relative upper-left X:  0
  Relative upper-left Y:  0
  Width: 1911
  Height: 1054
"""


def test_window_geometry_reads_xwininfo(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []

    def fake_run(argv: list[str], **_: object) -> subprocess.CompletedProcess[str]:
        seen.append(argv)
        return subprocess.CompletedProcess(argv, 0, XWININFO if argv[2] == "0x1200003" else "X error", "")

    monkeypatch.setattr(subprocess, "run", fake_run)
    assert window_geometry(0x1200003) == (9, 26, 1911, 1054)
    assert seen == [["xwininfo", "-id", "0x1200003"]]
    with pytest.raises(OSError, match="could not describe window 0x5"):
        window_geometry(5)


def _pane_tree(y: int) -> ET.Element:
    return ET.fromstring(
        f"<desktop-frame {NS}><application name='soffice'>"
        f"<root-pane name='q3_sales.xlsx - LibreOffice Calc' cp:screencoord='(0, {y})' cp:size='(1920, 1036)'/>"
        "</application></desktop-frame>"
    )


def test_wait_laid_out_waits_for_the_accessibility_coordinates(monkeypatch: pytest.MonkeyPatch) -> None:
    window = WindowInfo(7, "q3_sales.xlsx - LibreOffice Calc", "libreoffice.libreoffice-calc")
    monkeypatch.setattr(waits, "_client_list", lambda: [window])
    tops = iter([0, 26, 26, 26])
    panes = iter([_pane_tree(19), _pane_tree(19), _pane_tree(45)])
    monkeypatch.setattr(waits, "window_geometry", lambda wid: (9, next(tops), 1911, 1054))
    monkeypatch.setattr(waits, "desktop_tree", lambda app=None: next(panes))
    assert wait_laid_out("q3_sales.xlsx - LibreOffice Calc", app="soffice", timeout=5) == window
    monkeypatch.setattr(waits, "window_geometry", lambda wid: (9, 26, 1911, 1054))
    monkeypatch.setattr(waits, "desktop_tree", lambda app=None: _pane_tree(19))
    with pytest.raises(WaitTimeout, match=r"the window 'q3_sales\.xlsx - LibreOffice Calc' laid out"):
        wait_laid_out("q3_sales.xlsx - LibreOffice Calc", timeout=0.2)
