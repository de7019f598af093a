"""The solution wait helpers inside a real local desktop, through the action worker.

Each check runs solution-style code in the guest's pyautogui worker (as the replay agent
does) and reads back what it printed: a terminal window and its focused widget, a file
a typed command writes, a web button clicked by role and name, and the timeout message
a missing window gives.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pytest_osworld.providers.base import Environment, ProviderConfig
from pytest_osworld.providers.local import LocalProvider

pytestmark = pytest.mark.desktop

PAGE = """<!doctype html><html><head><title>Waiting room</title></head><body>
<button onclick="document.title = 'Clicked ' + (++window.n || (window.n = 1))">Press me</button>
</body></html>"""


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProvider]:
    made = LocalProvider(
        ProviderConfig(worker_id="itest-waits", work_dir=str(tmp_path_factory.mktemp("waits")))
    )
    made.start()
    yield made
    made.stop()


@pytest.fixture
def env(provider: LocalProvider) -> Environment:
    return provider.restore("init_state")


def run(env: Environment, code: str, timeout: float = 60.0) -> tuple[int, list[str], str]:
    """Run ``code`` in the action worker: return code, the lines it printed, stderr.

    Library warnings printed on stdout (python-xlib's about xauth) are left out.
    """
    result = env.guest.run_python(code, timeout=timeout)
    lines = [line for line in result.output.splitlines() if not line.startswith("Xlib.")]
    return result.returncode, lines, result.error


def test_terminal_window_focus_and_file(env: Environment) -> None:
    env.guest.launch(["gnome-terminal", "--maximize"])
    code, out, err = run(
        env,
        "from pytest_osworld.guest.waits import wait_element, wait_file, wait_window\n"
        "window = wait_window(wm_class='terminal', timeout=40)\n"
        "print('window', window.title)\n"
        "element = wait_element('terminal', state='focused', timeout=40)\n"
        "print('terminal', element.width > 100, element.height > 100)\n"
        "pyautogui.write('echo waited > /tmp/waits_probe.txt', interval=0.01)\n"
        "pyautogui.press('enter')\n"
        "print('file', open(wait_file('/tmp/waits_probe.txt', timeout=20)).read().strip())\n",
    )
    assert code == 0, err
    assert out[0].startswith("window ")
    assert out[1:] == ["terminal True True", "file waited"]


def test_click_element_presses_a_web_button(env: Environment) -> None:
    env.guest.upload_file("/tmp/waiting_room.html", PAGE.encode())
    env.guest.launch(["google-chrome", "file:///tmp/waiting_room.html"])
    code, out, err = run(
        env,
        "from pytest_osworld.guest.waits import click_element, wait_window\n"
        "wait_window('Waiting room', timeout=40)\n"
        "element = click_element('push-button', 'Press me', app='Chromium', timeout=40)\n"
        "print(element.role, element.name)\n"
        "print(wait_window('Clicked 1', timeout=20).title)\n",
    )
    assert code == 0, err
    assert out[0] == "push-button Press me"
    assert out[1].startswith("Clicked 1")


def test_a_missing_window_times_out_saying_what_and_how_long(env: Environment) -> None:
    code, _out, err = run(
        env,
        "from pytest_osworld.guest.waits import wait_window\nwait_window('No such window anywhere', timeout=0.5)\n",
    )
    assert code != 0
    assert (
        "WaitTimeout: timed out after 0.5 s waiting for a window with title containing 'No such window anywhere'"
        in err
    )
