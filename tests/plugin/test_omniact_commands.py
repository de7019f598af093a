"""OmniACT's splits in the commands: ``prove`` proves each sample, ``omniact-score`` is registered."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_osworld.commands.cli import COMMANDS, main, parser
from pytest_osworld.commands.prove import COUNT, REPLAY_LOW
from pytest_osworld.omniact.rescore import HELP
from pytest_osworld.providers.fake import tiny_png

pytestmark = pytest.mark.usefixtures("fake_ini")


def write_split(root: Path) -> Path:
    """Three samples: one sound, one whose gold the official scoring cannot score 1 (an
    apostrophe ends a typed text), one whose task file is missing."""
    tasks = root / "data" / "tasks" / "desktop" / "notes"
    tasks.mkdir(parents=True)
    (tasks / "task_1.1.txt").write_text(
        'Task: Type Dune\nOutput Script:\npyautogui.click(20.0,15.0)\npyautogui.write("Dune")\n'
    )
    (tasks / "task_1.2.txt").write_text('Task: Say it\nOutput Script:\npyautogui.write("it\'s done")\n')
    image = root / "data" / "data" / "desktop" / "notes" / "screen_1.png"
    image.parent.mkdir(parents=True)
    image.write_bytes(tiny_png(64, 40, gray=0x80))
    boxes = root / "data" / "metadata" / "desktop" / "boxes" / "notes" / "screen_1.json"
    boxes.parent.mkdir(parents=True)
    boxes.write_text(
        json.dumps({"field": {"top_left": [10, 10], "bottom_right": [30, 20], "label": "field"}})
    )

    def entry(task: str) -> dict[str, str]:
        return {
            "task": f"data/tasks/desktop/notes/{task}",
            "image": "data/data/desktop/notes/screen_1.png",
            "box": "data/metadata/desktop/boxes/notes/screen_1.json",
        }

    split = root / "test.json"
    split.write_text(
        json.dumps({"0": entry("task_1.1.txt"), "1": entry("task_1.2.txt"), "2": entry("task_9.9.txt")})
    )
    return split


def test_prove_proves_each_sample_of_a_split(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    split = write_split(pytester.path / "omniact")
    code = main(["prove", "omniact"])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1
    assert lines[0] == "PROVEN omniact/test/0"
    # "it" against "it's done": brevity exp(1 - 9/2), the candidate's two characters both match
    low = REPLAY_LOW.format(score=2.718281828 ** (1 - 9 / 2), message="")
    assert lines[1].startswith(f"FAILED omniact/test/1: replay {low}"), lines[1]
    assert lines[2].startswith('FAILED omniact/test/2: lint $["2"].task: the task file '), lines[2]
    assert "does not exist; download the release again or fix the path" in lines[2]
    assert lines[3] == COUNT.format(proven=1, total=3, failed=2)
    assert split.is_file()


def test_omniact_score_is_a_subcommand(pytester: pytest.Pytester) -> None:
    assert "omniact-score" in COMMANDS.names()
    assert COMMANDS.get("omniact-score").help == HELP
    assert "omniact-score" in parser().format_help()
    split = write_split(pytester.path / "omniact")
    predictions = pytester.path / "predictions.json"
    predictions.write_text(json.dumps({"0": 'pyautogui.click(21, 14)\npyautogui.write("dune")', "1": ""}))
    script = Path(sys.executable).parent / "pytest-osworld"
    done = subprocess.run(
        [str(script), "omniact-score", str(split), str(predictions), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, done.stderr  # sample 2 cannot be read: said, and left out
    assert "task_9.9.txt does not exist" in done.stderr
    output = json.loads(done.stdout)
    assert output["samples"] == {
        "0": {"sequence_score": 1.0, "action_score": 1.0},
        "1": {"sequence_score": 0.0, "action_score": 0.0},
    }
    assert output["dataset"]["action_score"] == pytest.approx(1.1 / 1.2)
