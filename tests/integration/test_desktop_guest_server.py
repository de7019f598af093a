"""The guest server inside a real local desktop: every observation and action path.

One sandboxed desktop serves the whole module (restoring costs about 0.6 s, but Calc is
opened once). Needs the apt packages of scripts/install.sh.
"""

from __future__ import annotations

import io
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

import pytest

from pytest_osworld.errors import GuestError
from pytest_osworld.guest_client.client import GuestClient
from pytest_osworld.providers.base import Environment, ProviderConfig
from pytest_osworld.providers.local import LocalProvider

pytestmark = pytest.mark.desktop

T = TypeVar("T")


def wait_for(probe: Callable[[], T | None], timeout: float, what: str) -> T:
    """Poll ``probe`` until it returns a truthy value (a readiness check, not a sleep)."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.2)


@pytest.fixture(scope="module")
def provider(tmp_path_factory) -> Iterator[LocalProvider]:
    made = LocalProvider(
        ProviderConfig(
            worker_id="itest-guest",
            work_dir=str(tmp_path_factory.mktemp("local")),
        )
    )
    made.start()
    yield made
    made.stop()


@pytest.fixture(scope="module")
def env(provider: LocalProvider) -> Environment:
    return provider.restore("init_state")


@pytest.fixture(scope="module")
def calc(env: Environment) -> Environment:
    """Calc open on a small workbook, with text typed into cell D2."""
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    sheet = book.active
    for row in range(1, 11):
        sheet.cell(row, 1, f"item{row}")
        sheet.cell(row, 2, row * 10)
    buffer = io.BytesIO()
    book.save(buffer)
    env.guest.upload_file("/home/user/Desktop/numbers.xlsx", buffer.getvalue())
    env.guest.open_file("/home/user/Desktop/numbers.xlsx", timeout=60)
    # Go to D2 through the Name Box (Ctrl+Shift+T focuses it), then type.
    wait_for(lambda: "table-cell" in env.guest.accessibility_tree(), 30, "Calc's sheet in AT-SPI")
    result = env.guest.run_python(
        "pyautogui.hotkey('ctrl', 'shift', 't'); pyautogui.typewrite('D2\\n');"
        "pyautogui.typewrite('zz_typed_123\\n')"
    )
    assert result.returncode == 0, result.error
    return env


def test_health_reports_every_component_ready(env):
    state = env.guest.health()
    assert state["ready"] is True
    assert (state["x"], state["atspi"], state["worker"], state["shell"]) == (True, True, True, True)
    assert state["wm"] == "GNOME Shell"  # the default session's window manager


def test_execute_returns_stdout_and_exit_code(env):
    result = env.guest.execute(["bash", "-c", "echo hello; echo oops >&2; exit 7"])
    assert (result.returncode, result.output, result.error) == (7, "hello\n", "oops\n")
    assert env.guest.execute("whoami").output == "user\n"
    assert env.guest.execute("echo ~", shell=True).output == "/home/user\n"


def test_uploaded_file_reads_back(env):
    payload = bytes(range(256)) * 1000
    env.guest.upload_file("/home/user/Documents/deep/er/blob.bin", payload)
    assert env.guest.read_file("/home/user/Documents/deep/er/blob.bin") == payload
    assert env.guest.read_file("~/Documents/deep/er/blob.bin") == payload
    tree = env.guest.list_directory("/home/user/Documents/deep")
    assert tree["children"][0]["name"] == "er"


def test_missing_file_is_file_not_found(env):
    with pytest.raises(FileNotFoundError):
        env.guest.read_file("/home/user/no/such/file.txt")


def test_request_without_the_token_gets_401(env):
    socket_path = env.extra["control_dir"] + "/guest.sock"
    for token in (None, "wrong-token"):
        stranger = GuestClient(unix_socket=socket_path, token=token)
        with pytest.raises(GuestError, match="401 unauthorized"):
            stranger.health()


def test_screen_queries(env):
    assert env.guest.screen_size() == (1920, 1080)
    assert env.guest.desktop_path() == "/home/user/Desktop"
    assert isinstance(env.guest, GuestClient)
    assert env.guest.platform() == "Linux"


def test_pyautogui_action_runs_in_the_worker(env):
    result = env.guest.run_python("pyautogui.moveTo(321, 234); print(pyautogui.position())")
    assert result.returncode == 0, result.error
    assert "321" in result.output
    assert env.guest.cursor_position() == (321, 234)
    # OSWorld's own way (python -c through /execute) takes the same in-process path.
    env.guest.execute(["python", "-c", "import pyautogui; pyautogui.moveTo(11, 12)"])
    assert env.guest.cursor_position() == (11, 12)


def test_pyperclip_finds_the_desktops_clipboard(env):
    """Real agents type through pyperclip.copy and ctrl+v (OSWorld's image has a clipboard
    pyperclip finds); a copy in one action is pasted by another, here by another process."""
    copied = env.guest.run_python("import pyperclip; pyperclip.copy('Etsy 42')")
    assert copied.returncode == 0, copied.error
    # The desktop's xclip returns once the clipboard serves the copy (test_desktop_clipboard.py).
    assert env.guest.execute(["xclip", "-selection", "clipboard", "-o"]).output == "Etsy 42"
    assert "Etsy 42" in env.guest.run_python("import pyperclip; print(pyperclip.paste())").output


def test_screenshot_is_a_full_hd_png_showing_calc(calc):
    from PIL import Image, ImageStat

    png = calc.guest.screenshot()
    image = Image.open(io.BytesIO(png))
    assert (image.format, image.size) == ("PNG", (1920, 1080))
    # An empty Xvfb screen is one colour; Calc's grid, toolbars and text are many, and
    # its white sheet makes the screen bright.
    colours = image.convert("RGB").getcolors(maxcolors=1 << 16)
    assert colours is None or len(colours) > 50
    mean = ImageStat.Stat(image.convert("L")).mean[0]
    assert mean > 150
    windows = calc.guest.execute(["wmctrl", "-l"]).output
    assert "numbers.xlsx - LibreOffice Calc" in windows


def test_accessibility_tree_of_calc_contains_the_typed_cell(calc):
    def typed() -> str | None:
        xml = calc.guest.accessibility_tree()
        return xml if "typed_123" in xml else None

    xml = wait_for(typed, 20, "the typed text in the a11y tree")
    assert xml.startswith("<desktop-frame ")
    assert 'xmlns:st="https://accessibility.ubuntu.example.org/ns/state"' in xml
    assert '<frame name="numbers.xlsx - LibreOffice Calc"' in xml
    assert 'name="D2"' in xml
    assert "item1" in xml  # a cell loaded from the file
    assert 'cp:screencoord="(' in xml


def test_open_file_of_a_missing_path_is_an_error(env):
    with pytest.raises(GuestError, match="404"):
        env.guest.open_file("/home/user/nope.xlsx", timeout=5)


def test_window_operations(calc):
    calc.guest.activate_window("numbers.xlsx", strict=False)
    calc.guest.activate_window("no such window at all")  # no error, as in OSWorld
    assert calc.guest.window_size("libreoffice") is not None
    assert calc.guest.window_size("no-such-class") is None


def test_recording_returns_an_mp4(env):
    env.guest.start_recording()
    env.guest.run_python("pyautogui.moveTo(500, 500, duration=0.3)")
    video = env.guest.end_recording()
    assert video[4:8] == b"ftyp"
