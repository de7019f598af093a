"""The own tasks that need GNOME Shell (``tasks_gnome/``: the dock, Activities search,
favourites, switching windows): their evaluators can fail.

For every such task a one-line change of its solution (``WRONG``, with the reason) leaves a
wrong end state that must score below 1.0 on the gnome session. The other way, the
reference solution scoring 1.0 and noop 0 on that session, is checked by
``scripts/selfcheck.py``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from task_harness import run_task, with_solution_line

from pytest_osworld.providers.local import LocalProvider
from pytest_osworld.task.model import load_task

pytestmark = [
    pytest.mark.desktop,
    pytest.mark.skipif(shutil.which("gnome-shell") is None, reason="gnome-shell is not installed"),
]

TASKS = Path(__file__).resolve().parents[2] / "tasks_gnome"

#: The own tasks that use the shell itself (relative to ``tasks/``).
SHELL_TASKS = [
    "os/5f0c2a8e-3d1b-4c6e-9a47-2b8d7e1f0c31.json",
    "os/8a3e61d4-7c25-4f0b-b1d9-6e4a2c8f5b07.json",
    "os/c1d7f4b2-9e38-4a05-8f6c-3b2e1d0a9c84.json",
    "os/e6b93a1f-2d4c-4e87-a5f0-7c1b8d3e9f26.json",
]

#: (task file, solution line, replacement, why the end state is wrong).
WRONG = [
    (
        "os/5f0c2a8e-3d1b-4c6e-9a47-2b8d7e1f0c31.json",
        1,
        # quit by signal: Ctrl+Q was lost under CI's load while Thunderbird still started
        "import subprocess\n"
        "from pytest_osworld.guest.waits import wait_window, wait_window_gone\n"
        "wait_window(wm_class='Mail.thunderbird', timeout=90)\n"
        "subprocess.run(['pkill', '-f', '/usr/lib/thunderbird/'], check=False)\n"
        "wait_window_gone(wm_class='Mail.thunderbird', timeout=30)",
        "opens Thunderbird and quits it again",
    ),
    (
        "os/8a3e61d4-7c25-4f0b-b1d9-6e4a2c8f5b07.json",
        1,
        "pyautogui.write('files', interval=0.05)",
        "opens Files instead of a terminal",
    ),
    (
        "os/c1d7f4b2-9e38-4a05-8f6c-3b2e1d0a9c84.json",
        0,
        "from pytest_osworld.guest.waits import click_element\n"
        "click_element('push button', 'Thunderbird', app='gnome-shell', button='right', timeout=25)",
        "unpins Thunderbird instead of VLC",
    ),
    (
        "os/e6b93a1f-2d4c-4e87-a5f0-7c1b8d3e9f26.json",
        1,
        "from pytest_osworld.guest.waits import click_element\n"
        "click_element('push button', 'Files', app='gnome-shell', timeout=25)",
        "opens Files instead of switching back to VLC",
    ),
]


@pytest.mark.parametrize(("name", "index", "replacement", "why"), WRONG, ids=[w[0] for w in WRONG])
def test_wrong_end_state_scores_below_one(
    gnome: LocalProvider, tmp_path: Path, name: str, index: int, replacement: str, why: str
) -> None:
    """A one-line change of the solution leaves a wrong end state, which scores below 1.0."""
    task = with_solution_line(load_task(TASKS / name), index, replacement)
    _, evaluation = run_task(gnome, task, tmp_path)
    assert evaluation.score < 1.0, f"{why}: {evaluation}"


def test_every_shell_task_has_a_wrong_variant() -> None:
    """The table covers each shell task once, and each replacement really changes the solution."""
    assert sorted(w[0] for w in WRONG) == sorted(SHELL_TASKS)
    assert sorted(SHELL_TASKS) == sorted(str(path.relative_to(TASKS)) for path in TASKS.glob("*/*.json"))
    for name, index, replacement, _ in WRONG:
        solution = load_task(TASKS / name).solution
        assert solution is not None and solution[index] != replacement
