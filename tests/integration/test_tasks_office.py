"""The LibreOffice tasks of the offline suite: their evaluators can fail.

For every task, a deliberately wrong end state (a one-line change of the solution, kept
below with the reason) scores below 1.0 on the real local desktop. For the infeasible
task, the wrong variant answers DONE instead of FAIL.
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

#: (task file, solution index, replacement line, why the replacement is wrong)
WRONG_VARIANTS: list[tuple[str, int, str, str]] = [
    (
        "libreoffice_calc/066bcec1-91d2-4373-ab4b-bf1e0022879f.json",
        3,
        "import time\npyautogui.write('=SUM(C2:C6)\\t', interval=0.03)",
        "February's total leaves out the last category",
    ),
    (
        "libreoffice_calc/76548e3e-a108-4096-811c-ebac7d278297.json",
        2,
        "import time\npyautogui.hotkey('ctrl', 'a')\npyautogui.write('Roster 2023', interval=0.03)",
        "the sheet gets the wrong year",
    ),
    (
        "libreoffice_calc/928fa83a-7e1e-4329-b1b7-7ec1348584eb.json",
        0,
        "import time\ntime.sleep(2)\npyautogui.click(79, 191)\ntime.sleep(0.5)\n"
        "pyautogui.tripleClick(60, 140)\ntime.sleep(0.7)\n"
        "pyautogui.write('A1:D1\\n', interval=0.03)\ntime.sleep(0.5)",
        "the Quarter header stays plain",
    ),
    (
        "libreoffice_calc/47f5342c-b448-48be-8dbd-90ad5c998844.json",
        1,
        "import time\npyautogui.write('=MAX(B2:C2)', interval=0.03)",
        "the best mark instead of the average",
    ),
    (
        "libreoffice_writer/17704f4f-bb28-441e-a3bb-b6e012a5b22c.json",
        1,
        "import time\npyautogui.hotkey('ctrl', 'r')\ntime.sleep(0.5)",
        "the title is right-aligned, not centred",
    ),
    (
        "libreoffice_writer/32dec839-cc3e-4559-b209-563dba2dd297.json",
        2,
        "import time\npyautogui.write('Liberation Sans', interval=0.03)",
        "the sans-serif font instead of the serif one",
    ),
    (
        "libreoffice_writer/17da7c22-28e2-4b88-9d62-fdba6fd901a0.json",
        2,
        "import time\npyautogui.click(520, 663)\ntime.sleep(1)\npyautogui.click(773, 663)\ntime.sleep(1.5)",
        "a header instead of a footer: the number lands at the top of the page",
    ),
    (
        "libreoffice_writer/c022aad4-b421-46ae-850f-50c48be0dfac.json",
        3,
        "import time\npyautogui.write('Clearpth', interval=0.03)",
        "the new name is misspelt",
    ),
    (
        "libreoffice_impress/5d4cb12b-100b-4b93-9a33-459478720bc6.json",
        2,
        "import time\npyautogui.click(669, 487)\ntime.sleep(1)",
        "Landscape is clicked instead of Portrait",
    ),
    (
        "libreoffice_impress/33e8e193-e8a5-4a3e-8369-078e1dcbc0f2.json",
        2,
        "import time\ntime.sleep(0.7)",
        "one slide too early: slide 3 is deleted instead of the copy",
    ),
    (
        "libreoffice_impress/172dbc81-7b07-4e2c-95d8-e21edeebb0bf.json",
        1,
        "import time\npyautogui.click(550, 382)\ntime.sleep(1)",
        "the museum visit is struck through instead of the boat tour",
    ),
    (
        "libreoffice_impress/d4cabf3b-e8f6-4eb2-9b35-35dd737e22f4.json",
        0,
        "DONE",
        "claims success on an infeasible request",
    ),
    (
        "multi_apps/1484eb32-dc4c-4719-9942-f2316490c297.json",
        3,
        "import time\npyautogui.write('6194', interval=0.03)",
        "digits swapped when copying the total",
    ),
    (
        "multi_apps/7a95a30d-4cc1-4768-be43-85a395fe17a6.json",
        3,
        "import time\npyautogui.write('6194', interval=0.03)",
        "digits swapped when copying the total",
    ),
]


#: Test ids: domain/short task id.
IDS = [f"{row[0].split('/')[0]}/{Path(row[0]).stem[:8]}" for row in WRONG_VARIANTS]


@pytest.mark.parametrize(("task_file", "index", "replacement", "why"), WRONG_VARIANTS, ids=IDS)
def test_wrong_variant_scores_below_one(
    desktop: LocalProvider, tmp_path: Path, task_file: str, index: int, replacement: str, why: str
) -> None:
    """A one-line change of the solution leaves a wrong end state, which the evaluator catches."""
    task = load_task(TASKS / task_file)
    assert task.solution is not None and 0 <= index < len(task.solution) - (0 if task.infeasible else 1)
    wrong = with_solution_line(task, index, replacement)
    _episode, evaluation = run_task(desktop, wrong, tmp_path)
    assert evaluation.score < 1.0, f"{task_file}: wrong variant ({why}) still scored {evaluation.score}"
