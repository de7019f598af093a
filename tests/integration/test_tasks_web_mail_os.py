"""The OS, Chrome, Thunderbird and cross-app tasks of the offline suite: their evaluators can fail.

For every task, a deliberately wrong end state (a one-line change of the solution, listed
in ``WRONG`` with the reason) must score less than 1.0 on a real desktop. Infeasible tasks
are "wrong" when the agent says DONE.
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

#: Every task of this part of the suite (relative to ``tasks/``).
WEB_MAIL_OS_TASKS = [
    "os/4ae797ce-bf73-4720-ad06-176ca7483fb7.json",
    "os/ef9ea0c2-4f77-4017-9a2c-592f165ae51f.json",
    "os/9cf34795-a8b8-4693-a578-31eb2c71aef1.json",
    "os/afb36d85-e792-476e-85a5-e1c14c3cfe7d.json",
    "chrome/a3ea2911-9c6c-43c7-be16-1ee22511ab33.json",
    "chrome/888f3b08-74bc-40a8-a2f8-af355a9240c6.json",
    "chrome/15414e7f-4379-4ac7-8192-62f8e8e4f9ec.json",
    "chrome/95416f4b-cf71-4565-a7c4-51b8e4426eb8.json",
    "thunderbird/c3735e5e-52ef-42ba-b424-c1cb400b81d2.json",
    "thunderbird/4b46630c-12ae-47c1-9803-effaa7699866.json",
    "thunderbird/9f15591a-7b85-41be-8fef-dcf269db7364.json",
    "thunderbird/3d99365a-9b1b-42e8-8dac-2de079377501.json",
    "multi_apps/f79fbe9c-fe60-4ec3-8144-268bf0c2f3b7.json",
    "multi_apps/69266ed9-aeaf-4672-a02f-9ad950eb6eac.json",
]


def _terminal(command: str) -> str:
    """A solution line typing ``command`` into the terminal (as the solutions do)."""
    return (
        f"import time\npyautogui.write({command!r}, interval=0.02)\npyautogui.press('enter')\ntime.sleep(1.5)"
    )


def _follow(text: str, after: float = 2.5) -> str:
    """A solution line following the link whose text is ``text`` (Ctrl+F, Escape, Enter)."""
    return (
        "import time\npyautogui.hotkey('ctrl', 'f')\ntime.sleep(0.8)\n"
        f"pyautogui.write({text!r}, interval=0.03)\ntime.sleep(0.8)\n"
        f"pyautogui.press('esc')\ntime.sleep(0.5)\npyautogui.press('enter')\ntime.sleep({after})"
    )


#: (task file, solution line, replacement, why the end state is wrong).
WRONG = [
    (
        "os/4ae797ce-bf73-4720-ad06-176ca7483fb7.json",
        1,
        _terminal("cd ~/Pictures/holiday && mv IMG_2041.JPG IMG_2041.jpg"),
        "renames only one of the five photos",
    ),
    (
        "os/ef9ea0c2-4f77-4017-9a2c-592f165ae51f.json",
        2,
        _terminal("chmod 755 build.sh deploy.sh rollback.sh"),
        "lets everyone read and run the scripts",
    ),
    (
        "os/9cf34795-a8b8-4693-a578-31eb2c71aef1.json",
        2,
        _terminal("tar -czf 2023.tar.gz /home/user/reports/2023"),
        "stores home/user/reports/2023/... paths in the archive",
    ),
    (
        "os/afb36d85-e792-476e-85a5-e1c14c3cfe7d.json",
        2,
        _terminal(
            "find ~/Downloads -maxdepth 1 -type f -name 'invoice_*.pdf' -exec mv -t ~/Documents/invoices/ {} +"
        ),
        "moves only the invoice at the top of Downloads",
    ),
    (
        "chrome/a3ea2911-9c6c-43c7-be16-1ee22511ab33.json",
        2,
        _follow("Annual leave"),
        "opens the leave policy instead of the expense policy",
    ),
    (
        "chrome/888f3b08-74bc-40a8-a2f8-af355a9240c6.json",
        2,
        "import time\npyautogui.press('tab')\ntime.sleep(1)",
        "keeps Chrome's default folder, Other bookmarks",
    ),
    (
        "chrome/15414e7f-4379-4ac7-8192-62f8e8e4f9ec.json",
        3,
        "import time\npyautogui.press('up')\ntime.sleep(0.5)\npyautogui.press('enter')\ntime.sleep(2)",
        "sets the font size to Small",
    ),
    (
        "chrome/95416f4b-cf71-4565-a7c4-51b8e4426eb8.json",
        0,
        "DONE",
        "claims success on an impossible request",
    ),
    (
        "thunderbird/c3735e5e-52ef-42ba-b424-c1cb400b81d2.json",
        7,
        "from pytest_osworld.guest.waits import find_elements, wait_element\n"
        "row = wait_element('list-item', 'From contains', partial=True, app='Thunderbird', stable=True)\n"
        "value = [e for e in find_elements('entry', app='Thunderbird') if row.y <= e.y < row.y + row.height][0]\n"
        "pyautogui.click(*value.center)\n"
        "wait_element('entry', value.name, state='focused', app='Thunderbird')\n"
        "pyautogui.write('billing@cloudhost.com', interval=0.03)",
        "filters on the wrong sender address",
    ),
    (
        "thunderbird/4b46630c-12ae-47c1-9803-effaa7699866.json",
        1,
        "from pytest_osworld.guest.waits import wait_element_gone\n"
        "pyautogui.write('Dev Weekly #213', interval=0.03)\n"
        "wait_element_gone('list-item', 'Dev Weekly #212', partial=True, app='Thunderbird')",
        "deletes only one of the two newsletters",
    ),
    (
        "thunderbird/9f15591a-7b85-41be-8fef-dcf269db7364.json",
        3,
        "from pytest_osworld.guest.waits import click_element, wait_element, wait_until\n"
        "click_element('spin-button', 'After displaying for seconds', state='enabled', app='Thunderbird')\n"
        "wait_element('spin-button', 'After displaying for seconds', state='focused', app='Thunderbird')\n"
        "pyautogui.hotkey('ctrl', 'a')\npyautogui.write('5')\npyautogui.press('tab')\n"
        "prefs = os.path.expanduser('~/.thunderbird/q7m3xk2p.default-release/prefs.js')\n"
        "wait_until(lambda: 'mark_message_read.delay\", true' in open(prefs).read(), 15, what='the delay saved')",
        "waits 5 seconds instead of 3",
    ),
    (
        "thunderbird/3d99365a-9b1b-42e8-8dac-2de079377501.json",
        0,
        "DONE",
        "claims success on an impossible request",
    ),
    (
        "multi_apps/f79fbe9c-fe60-4ec3-8144-268bf0c2f3b7.json",
        2,
        "from pytest_osworld.guest.waits import wait_file, wait_window, wait_window_gone\n"
        "wait_window(title='Save Attachment', activate=True)\npyautogui.hotkey('ctrl', 'a')\n"
        "pyautogui.write('/home/user/Documents/finance/budget_q3.csv', interval=0.02)\n"
        "pyautogui.press('enter')\nwait_file('/home/user/Documents/finance/budget_q3.csv')\n"
        "wait_window_gone(title='Save Attachment')",
        "keeps the attachment's own name instead of budget_2024_q3.csv",
    ),
    (
        "multi_apps/69266ed9-aeaf-4672-a02f-9ad950eb6eac.json",
        1,
        _follow("q2_sales.csv", after=4.0),
        "downloads the Q2 export instead of Q3",
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


def test_every_task_has_a_wrong_variant() -> None:
    """The table covers each task once, and each replacement really changes the solution."""
    assert sorted(w[0] for w in WRONG) == sorted(WEB_MAIL_OS_TASKS)
    for name, index, replacement, _ in WRONG:
        solution = load_task(TASKS / name).solution
        assert solution is not None and solution[index] != replacement


def test_two_tasks_are_infeasible() -> None:
    """Two of the requests are impossible in their apps; their solutions answer FAIL."""
    infeasible = [name for name in WEB_MAIL_OS_TASKS if load_task(TASKS / name).infeasible]
    assert len(infeasible) == 2
    for name in infeasible:
        assert load_task(TASKS / name).solution == ("FAIL",)
