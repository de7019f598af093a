"""The VLC, GIMP and VLC+GIMP tasks of the offline suite: their evaluators can fail.

For every task, a deliberately wrong end state (a one-line change of the solution, listed
in ``WRONG`` with the reason) must score less than 1.0 on a real desktop.
The other way, the reference solution scoring 1.0 through the plugin, is checked for
every task by ``scripts/selfcheck.py`` (CI runs it after the tests).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from task_harness import run_task, with_solution_line

from pytest_osworld.providers.local import LocalProvider
from pytest_osworld.task.model import load_task

pytestmark = pytest.mark.desktop

TASKS = Path(__file__).resolve().parents[2] / "tasks"

#: Every media task file (relative to ``tasks/``).
MEDIA_TASKS = [
    "vlc/f2d5b4cc-afda-4d80-a568-aae6e92c80fc.json",
    "vlc/b0706da9-75b5-49c3-829f-0f7a1aa006b3.json",
    "vlc/d2f6e852-5d95-4782-a8e5-d4d66c1dc33b.json",
    "vlc/6ca3494f-ee65-41da-ae20-fd6c88add951.json",
    "gimp/77cfcc62-16bc-47b9-948d-9e2964edd0fd.json",
    "gimp/839bc95a-495f-442b-a9a7-b5cccae934bd.json",
    "gimp/3ce88c18-1255-4480-a08e-057f2c7619e1.json",
    "gimp/e76d929d-ee44-49f8-a16f-e37e315c713b.json",
    "multi_apps/d8caecf0-fdd8-4c93-b258-63916c69da52.json",
    "multi_apps/c40da4b4-d43a-4b1e-9c81-f458dc3f7696.json",
]

#: (task file, solution line, replacement, why the end state is wrong).
WRONG = [
    (
        "vlc/f2d5b4cc-afda-4d80-a568-aae6e92c80fc.json",
        1,
        "import subprocess\n"
        "from pytest_osworld.guest.waits import wait_until, wait_window,"
        " wait_window_gone\n"
        "dialog = wait_window(title='Select one or more files to open', activate=True)\n"
        "def active():\n"
        "    out = subprocess.run(['xdotool', 'getactivewindow'], capture_output=True,"
        " text=True).stdout.strip()\n"
        "    return out.isdigit() and int(out) == dialog.window_id\n"
        "wait_until(active, 10, what='the Open File dialog focused')  # its File name"
        " field has the focus\n"
        "pyautogui.write('/home/user/Videos/morning_walk.mp4', interval=0.02)\n"
        "pyautogui.press('enter')\n"
        "wait_window_gone(title='Select one or more files to open')\n"
        "wait_window(title='morning_walk.mp4 - VLC media player')  # VLC plays it",
        "reopens the clip that was already playing",
    ),
    (
        "vlc/b0706da9-75b5-49c3-829f-0f7a1aa006b3.json",
        1,
        "import time\npyautogui.press('escape')\ntime.sleep(2)",
        "presses Escape instead of VLC's fullscreen key",
    ),
    (
        "vlc/d2f6e852-5d95-4782-a8e5-d4d66c1dc33b.json",
        2,
        "from pytest_osworld.guest.waits import wait_window, window_geometry\n"
        "from pytest_osworld.guest.waits_pixels import check_boxes\n"
        "x, y, width, height = window_geometry(wait_window(title='Simple Preferences').window_id)\n"
        "preload_mkv_y = check_boxes(x, y, x + width, y + height)[1][1]\n"
        "pyautogui.click(x + 476, preload_mkv_y - 39)\npyautogui.hotkey('ctrl', 'a')\n"
        "pyautogui.write('/home/user/Videos', interval=0.02)\npyautogui.press('tab')",
        "saves the parent folder instead of Videos/Recordings",
    ),
    (
        "vlc/6ca3494f-ee65-41da-ae20-fd6c88add951.json",
        0,
        "DONE",
        "claims success on an impossible request",
    ),
    (
        "gimp/77cfcc62-16bc-47b9-948d-9e2964edd0fd.json",
        1,
        "from pytest_osworld.guest.waits import find_elements, wait_element, wait_until,"
        " wait_window\n"
        "wait_window(title='Scale Image')\n"
        "width = wait_element('spin-button', state='focused', app='gimp')  # Width, its"
        " text selected\n"
        "pyautogui.write('500', interval=0.02)\n"
        "pyautogui.press('tab')  # the chain keeps the proportions: Height follows\n"
        "wait_until(lambda: [e for e in find_elements('spin-button', app='gimp',"
        " text='375') if e.x == width.x and width.y < e.y < width.y + 2 * width.height],"
        " 10, what='Height 375 under Width 500')",
        "scales to 500 pixels wide",
    ),
    (
        "gimp/839bc95a-495f-442b-a9a7-b5cccae934bd.json",
        1,
        "from pytest_osworld.guest.waits import click_element, wait_element, wait_window\n"
        "pyautogui.write('Flip Vertically', interval=0.02)\n"
        "cell = 'Flip Vertically\\nFlip image vertically'  # Image > Transform (not the"
        " view's or the layer's flip)\n"
        "click_element('table-cell', cell, app='gimp')\n"
        "wait_element('table-cell', cell, state='selected', app='gimp')\n"
        "pyautogui.press('enter')\n"
        "wait_window(title='*[farm_noon]')  # the flip marked the image changed",
        "flips top to bottom instead of left to right",
    ),
    (
        "gimp/3ce88c18-1255-4480-a08e-057f2c7619e1.json",
        1,
        "from pytest_osworld.guest.waits import find_elements, wait_element, wait_until,"
        " wait_window\n"
        "wait_window(title='Brightness-Contrast')\n"
        "wait_element('combo-box', state='focused', app='gimp')  # Presets, focused when"
        " the dialog opens\n"
        "pyautogui.press('tab')\n"
        "field = wait_element('spin-button', state='focused', app='gimp')  # Brightness\n"
        "pyautogui.hotkey('ctrl', 'a')\n"
        "pyautogui.write('50', interval=0.02)\n"
        "pyautogui.press('tab')\n"
        "wait_until(lambda: [e for e in find_elements('spin-button', app='gimp',"
        " text='50') if (e.x, e.y) == (field.x, field.y)], 10, what='Brightness 50')",
        "brightens the picture instead of darkening it",
    ),
    (
        "gimp/e76d929d-ee44-49f8-a16f-e37e315c713b.json",
        1,
        "from pytest_osworld.guest.waits import wait_element, wait_window_gone\n"
        "pyautogui.write('Single-Window Mode', interval=0.02)\n"
        "wait_element('table-cell', 'Single-Window Mode\\n', partial=True,"
        " state='selected', app='gimp')\n"
        "pyautogui.press('escape')\n"
        "wait_window_gone(title='Search Actions')",
        "closes the Windows menu without leaving single-window mode",
    ),
    (
        "multi_apps/d8caecf0-fdd8-4c93-b258-63916c69da52.json",
        4,
        "from pytest_osworld.guest.waits import wait_window\n"
        "wait_window(title='[frame-00001]', activate=True)",
        "exports the snapshot with its black bars",
    ),
    (
        "multi_apps/c40da4b4-d43a-4b1e-9c81-f458dc3f7696.json",
        5,
        "from pytest_osworld.guest.waits import click_element, find_elements,"
        " wait_element, wait_until, wait_window, wait_window_gone\n"
        "wait_window(title='Scale Image')\n"
        "width = wait_element('spin-button', state='focused', app='gimp')  # Width, its"
        " text selected\n"
        "pyautogui.write('400', interval=0.02)\n"
        "pyautogui.press('tab')  # the chain keeps the proportions: Height follows\n"
        "wait_until(lambda: [e for e in find_elements('spin-button', app='gimp',"
        " text='225') if e.x == width.x and width.y < e.y < width.y + 2 * width.height],"
        " 10, what='Height 225 under Width 400')\n"
        "click_element('push-button', 'Scale', app='gimp')\n"
        "wait_window_gone(title='Scale Image')\n"
        "wait_window(title=' 400x225 ')  # the title bar shows the new size",
        "scales the thumbnail to 400x225",
    ),
]


@pytest.mark.parametrize(("name", "index", "replacement", "why"), WRONG, ids=[w[0] for w in WRONG])
def test_wrong_end_state_scores_below_one(
    desktop: LocalProvider, tmp_path: Path, name: str, index: int, replacement: str, why: str
) -> None:
    """A one-line change of the solution leaves a wrong end state, which scores below 1.0."""
    task = with_solution_line(load_task(TASKS / name), index, replacement)
    _, evaluation = run_task(desktop, task, tmp_path)
    assert evaluation.score < 1.0, f"{why}: {evaluation}"


def test_every_media_task_has_a_wrong_variant() -> None:
    """The table covers each task once, and each replacement really changes the solution."""
    assert sorted(w[0] for w in WRONG) == sorted(MEDIA_TASKS)
    for name, index, replacement, _ in WRONG:
        solution = load_task(TASKS / name).solution
        assert solution is not None and solution[index] != replacement
