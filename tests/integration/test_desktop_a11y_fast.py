"""The pipelined D-Bus tree walk against the pyatspi walk it replaces, on real desktops.

Both walks run inside the desktop, one right after the other, on a still screen; the
XML must match: same elements in the same order with the same attributes (so the same
(tag, name) pairs and the same screen coordinates for visible nodes) and text. The
desktop can change between two walks (a caret blinks, a page finishes loading), so a
pair is retried a few times before the differences are reported.
"""

from __future__ import annotations

import io
import shutil
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from typing import TypeVar

import pytest

from pytest_osworld.guest_client.api import Guest
from pytest_osworld.providers.base import ProviderConfig
from pytest_osworld.providers.local import LocalProvider

pytestmark = pytest.mark.desktop

T = TypeVar("T")
CP = "{https://accessibility.ubuntu.example.org/ns/component}"

#: Run inside the desktop: both walks, back to back, written to files.
BOTH_WALKS = """
import sys, time
from pytest_osworld.guest.a11y import TreeBuilder
builder = TreeBuilder()
start = time.perf_counter(); fast = builder.build_dbus(); fast_s = time.perf_counter() - start
start = time.perf_counter(); slow = builder.build_pyatspi(); slow_s = time.perf_counter() - start
open("/tmp/fast.xml", "w").write(fast)
open("/tmp/slow.xml", "w").write(slow)
print(f"{fast_s:.3f} {slow_s:.3f}")
"""


def wait_for(probe: Callable[[], T | None], timeout: float, what: str) -> T:
    """Poll ``probe`` until it returns a truthy value (a readiness check, not a sleep)."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.25)


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProvider]:
    made = LocalProvider(ProviderConfig(worker_id="a11y-fast", work_dir=str(tmp_path_factory.mktemp("a11y"))))
    made.start()
    yield made
    made.stop()


def both_walks(guest: Guest) -> tuple[str, str, str]:
    guest.upload_file("/tmp/both_walks.py", BOTH_WALKS.encode())
    result = guest.execute(["python3", "/tmp/both_walks.py"], timeout=300)
    assert result.returncode == 0, result.error
    fast = guest.read_file("/tmp/fast.xml").decode()
    slow = guest.read_file("/tmp/slow.xml").decode()
    return fast, slow, result.output.strip()


def summary(xml: str) -> tuple[list[tuple[str, str]], list[tuple[str, str, str, str]]]:
    """(tag, name) of every element in document order; coordinates of visible ones."""
    root = ET.fromstring(xml)
    pairs = [(element.tag, element.get("name", "")) for element in root.iter()]
    placed = [
        (
            element.tag,
            element.get("name", ""),
            element.get(CP + "screencoord", ""),
            element.get(CP + "size", ""),
        )
        for element in root.iter()
        if element.get(CP + "screencoord") is not None
    ]
    return pairs, placed


def assert_same_tree(guest: Guest, attempts: int = 3) -> str:
    """Walk both ways until a pair matches exactly; otherwise report what differs."""
    for _ in range(attempts):
        fast, slow, timing = both_walks(guest)
        if fast == slow:
            return fast
    fast_pairs, fast_placed = summary(fast)
    slow_pairs, slow_placed = summary(slow)
    assert set(fast_pairs) == set(slow_pairs), "different (tag, name) pairs"
    assert fast_pairs == slow_pairs, "same elements in a different order"
    assert sorted(fast_placed) == sorted(slow_placed), "different coordinates for visible nodes"
    pytest.fail(f"attributes or text differ in {attempts} walk pairs (times fast/slow: {timing})")


def test_calc_tree_is_the_same_both_ways(provider: LocalProvider) -> None:
    openpyxl = pytest.importorskip("openpyxl")
    guest = provider.restore("calc").guest
    book = openpyxl.Workbook()
    for row in range(1, 21):
        book.active.cell(row, 1, f"row {row}")
        book.active.cell(row, 2, row)
    data = io.BytesIO()
    book.save(data)
    guest.upload_file("/home/user/Desktop/fast.xlsx", data.getvalue())
    guest.open_file("/home/user/Desktop/fast.xlsx", timeout=90)
    wait_for(lambda: "row 20" in guest.accessibility_tree(), 60, "Calc's cells in the tree")
    xml = assert_same_tree(guest)
    pairs, placed = summary(xml)
    assert ("table-cell", "A1") in pairs
    assert len(pairs) > 2000
    assert any(tag == "table-cell" for tag, *_ in placed)


def test_chromium_page_tree_is_the_same_both_ways(provider: LocalProvider) -> None:
    guest = provider.restore("chromium").guest
    page = (
        "<!doctype html><html><head><title>fastpage</title></head><body>"
        "<h1>Hello Accessibility</h1><p>Some text</p><button>Click me</button>"
        "<input value='typed'><a href='#x'>a link</a>"
        "<ul>" + "".join(f"<li>item {i}</li>" for i in range(30)) + "</ul></body></html>"
    )
    guest.upload_file("/home/user/Desktop/fastpage.html", page.encode())
    guest.launch(["google-chrome", "file:///home/user/Desktop/fastpage.html"])
    wait_for(lambda: "Hello Accessibility" in guest.accessibility_tree(), 90, "the page in the tree")
    xml = assert_same_tree(guest)
    pairs, _placed = summary(xml)
    assert ("push-button", "Click me") in pairs
    assert any(tag == "document-web" for tag, _ in pairs)


#: Run in the desktop's action worker, which lives as long as the desktop, as every walk
#: of a run does: 20 walks (each one asking every application for its peer-to-peer address
#: again, as a fresh process would) in one thread, key presses in another until they end.
#: Counted in walks, not seconds, so that a busy machine does not shorten the check.
WALKS_AND_KEYS = """
import threading, time
import pyautogui
from pytest_osworld.guest import a11y_dbus_node
from pytest_osworld.guest.waits import desktop_tree
pyautogui.PAUSE = 0.0
counts = {"walks": 0, "keys": 0}
deadline = time.monotonic() + 150
def walk():
    while counts["walks"] < 20 and time.monotonic() < deadline:
        a11y_dbus_node.ADDRESS_CACHE.clear()
        desktop_tree()
        counts["walks"] += 1
walker = threading.Thread(target=walk)
walker.start()
while walker.is_alive():
    pyautogui.press('shift')
    counts["keys"] += 1
print(counts["walks"], counts["keys"])
"""


def test_walks_during_key_presses_keep_chromium_alive(provider: LocalProvider) -> None:
    """The ATK bridge drops its key listener when the bus name that asked for its address
    goes away, and Chromium crashes if that happens while it hands out a key press. Walks
    ask over one connection that lives as long as the process, so walking while keys are
    pressed must not kill it.

    The walks run in the action worker, not in a process of their own: a process that
    ends is a client going away, and on a busy machine Chromium is still working through
    the queued key presses when it does (Chromium dead 2 of 3 times that way, alive when
    asked just before the process ended)."""
    guest = provider.restore("chromium").guest
    guest.upload_file("/home/user/Desktop/keys.html", b"<!doctype html><title>keys</title><input autofocus>")
    guest.launch(["google-chrome", "file:///home/user/Desktop/keys.html"])
    wait_for(lambda: "keys" in guest.accessibility_tree(), 90, "the page in the tree")
    result = guest.run_python(WALKS_AND_KEYS, timeout=180)
    assert result.returncode == 0, result.error
    walks, keys = (int(n) for n in result.output.split()[-2:])  # after Xlib's warnings
    assert walks == 20 and keys >= 200, result.output
    alive = guest.execute(["pgrep", "-x", "chromium"])
    assert alive.returncode == 0, f"Chromium died during {walks} walks and {keys} key presses"


#: Run inside the desktop: start VLC and walk the tree over and over while its Qt bridge
#: comes up; print how many walks ran and whether VLC still runs after them.
WALKS_WHILE_VLC_STARTS = """
import subprocess, time
import xml.etree.ElementTree as ET
from pytest_osworld.guest.a11y import DBusWalk, Limits
vlc = subprocess.Popen(["vlc", "--no-audio"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
walks, seen = 0, False
deadline = time.monotonic() + 15
while time.monotonic() < deadline and vlc.poll() is None:
    # VLC walked in full as soon as it joins; the others (GNOME Shell's ~1,400 objects
    # among them) are asked their name only, so the walks come as often as on openbox
    tree = ET.tostring(DBusWalk(Limits(), app="vlc").run(), encoding="unicode")
    if 'name="VLC media player"' in tree and not seen:
        seen, deadline = True, time.monotonic() + 2  # and a little after it shows
    walks += 1
    time.sleep(0.02)
alive = vlc.poll() is None
vlc.kill()
print(walks, seen, alive, vlc.wait())
"""


def test_walks_while_vlc_starts_keep_it_alive(provider: LocalProvider) -> None:
    """Qt 5.15's bridge reads a second argument of ``Properties.GetAll`` that the call does
    not have, and VLC crashed now and then when a walk reached it while it started (5 of
    8 OSWorld VLC task starts, whose first observation comes right after the launch). The
    walk asks Qt for each property instead; three starts, each walked throughout. The crash
    came within the first walks, while VLC joined the accessibility bus; whether VLC then
    shows in the tree is not asserted (at times it never joins: docs/desktop.md). The walks
    read VLC in full and the other applications' names only: on the gnome session a
    whole-desktop walk also reads GNOME Shell's tree, and so few of them fit in VLC's start."""
    if not shutil.which("vlc"):
        pytest.skip("vlc is not installed")
    guest = provider.restore("vlc").guest
    guest.upload_file("/tmp/walks_while_vlc_starts.py", WALKS_WHILE_VLC_STARTS.encode())
    for _ in range(3):
        result = guest.execute(["python3", "/tmp/walks_while_vlc_starts.py"], timeout=120)
        assert result.returncode == 0, result.error
        walks, _seen, alive, code = result.output.split()[-4:]  # after Xlib's warnings
        assert alive == "True", f"VLC ended with status {code} during {walks} walks"
        assert int(walks) >= 10, f"only {walks} walks while VLC started"
