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
from pytest_osworld.task import load_task

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
        "import time\npyautogui.write('/home/user/Videos/morning_walk.mp4', interval=0.04)\n"
        "time.sleep(1)\npyautogui.press('enter')\ntime.sleep(4)",
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
        "x, y, width, height = window_geometry(wait_window(title='Simple Preferences').window_id)\n"
        "pyautogui.click(x + 476, y + 502)\npyautogui.hotkey('ctrl', 'a')\n"
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
        "import time\npyautogui.write('500', interval=0.05)\npyautogui.press('tab')\ntime.sleep(1)",
        "scales to 500 pixels wide",
    ),
    (
        "gimp/839bc95a-495f-442b-a9a7-b5cccae934bd.json",
        2,
        "import time\npyautogui.press('v')\ntime.sleep(3)",
        "flips top to bottom instead of left to right",
    ),
    (
        "gimp/3ce88c18-1255-4480-a08e-057f2c7619e1.json",
        1,
        "import time\npyautogui.press('tab')\ntime.sleep(0.5)\npyautogui.hotkey('ctrl', 'a')\n"
        "pyautogui.write('50', interval=0.05)\npyautogui.press('tab')\ntime.sleep(1.5)",
        "brightens the picture instead of darkening it",
    ),
    (
        "gimp/e76d929d-ee44-49f8-a16f-e37e315c713b.json",
        1,
        "import time\npyautogui.press('escape')\ntime.sleep(2)",
        "closes the Windows menu without leaving single-window mode",
    ),
    (
        "multi_apps/d8caecf0-fdd8-4c93-b258-63916c69da52.json",
        4,
        "import time\ntime.sleep(1)",
        "exports the snapshot with its black bars",
    ),
    (
        "multi_apps/c40da4b4-d43a-4b1e-9c81-f458dc3f7696.json",
        5,
        "import time\npyautogui.write('400', interval=0.05)\npyautogui.press('tab')\ntime.sleep(1)\n"
        "pyautogui.hotkey('alt', 's')\ntime.sleep(4)",
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
