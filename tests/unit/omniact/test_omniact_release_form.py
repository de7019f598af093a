"""Our JSON samples in the release's form: their gold lines, their official scoring, the release
layout the samples generator writes from them, and the suite kept in both layouts."""

from __future__ import annotations

import filecmp
import importlib.util
import json
import math
import sys
from pathlib import Path

import pytest

from pytest_osworld.omniact.penalties import Box
from pytest_osworld.omniact.release import read_split
from pytest_osworld.omniact.release_form import (
    KEYS_UNFIT,
    NO_POINT,
    TEXT_UNFIT,
    ReleaseFormError,
    release_lines,
    task_text,
)
from pytest_osworld.omniact.release_write import (
    GOLD_NOT_ONE,
    ReleaseEntry,
    ReleaseWriteError,
    write_release_layout,
)
from pytest_osworld.omniact.sample import NO_OFFICIAL, sample_of_task, score_both
from pytest_osworld.omniact.score import parse_script
from pytest_osworld.omniact.task import load_omniact_task

ROOT = Path(__file__).resolve().parents[3]
SUITE = ROOT / "tasks" / "omniact"
RELEASE_SUITE = ROOT / "tasks" / "omniact_release"


@pytest.mark.parametrize(
    ("script", "lines"),
    [
        ("pyautogui.click(30, 20)", ["pyautogui.click(30.0,20.0)"]),
        ("pyautogui.click(x=30, y=20.5, button='right')", ["pyautogui.rightClick(30.0,20.5)"]),
        ("pyautogui.click((3, 4), clicks=2)", ["pyautogui.doubleClick(3.0,4.0)"]),
        (
            "pyautogui.moveTo(5, 6)\npyautogui.click()",
            ["pyautogui.moveTo(5.0,6.0)", "pyautogui.click(5.0,6.0)"],
        ),
        ("pyautogui.typewrite('Quarterly report')", ['pyautogui.write("Quarterly report")']),
        ('pyautogui.write("it\'s")', ['pyautogui.write("it\'s")']),
        ("pyautogui.press('enter', presses=2)", ['pyautogui.press("enter")']),
        ("pyautogui.hotkey('ctrl', 'shift', 't')", ['pyautogui.hotkey("ctrl","shift","t")']),
        ("pyautogui.keyDown('shift')", ['pyautogui.keyDown("shift")']),
        ("pyautogui.scroll(-3, x=5, y=6)", ["pyautogui.scroll(-3, x=5, y=6)"]),
        ("pyautogui.vscroll(2)", ["pyautogui.scroll(2)"]),
        ("import pyautogui\nfor _ in range(2):\n    pyautogui.press('tab')", ['pyautogui.press("tab")']),
    ],
)
def test_release_lines(script: str, lines: list[str]) -> None:
    assert [line.text for line in release_lines(parse_script(script), {})] == lines


def test_pointer_actions_move_to_their_box_centre_when_asked() -> None:
    actions = parse_script("pyautogui.click(30, 20)  # box: name\npyautogui.rightClick(1, 1)")
    boxes = {"name": Box(20, 10, 21, 20)}
    centred = release_lines(actions, boxes, centre=True)
    assert [line.text for line in centred] == ["pyautogui.click(30.5,20.0)", "pyautogui.rightClick(1.0,1.0)"]
    assert [line.box for line in centred] == ["name", None]
    assert release_lines(actions, boxes)[0].text == "pyautogui.click(30.0,20.0)"


@pytest.mark.parametrize(
    ("script", "problem"),
    [
        ("pyautogui.write('say \"hi\"')", TEXT_UNFIT.format(index=1, text='say "hi"')),
        ("pyautogui.write('a\\nb')", TEXT_UNFIT.format(index=1, text="a\nb")),
        (
            "pyautogui.press(['a', 'b'])",
            KEYS_UNFIT.format(index=1, kind="press", source="pyautogui.press(['a', 'b'])"),
        ),
        (
            "pyautogui.hotkey('ctrl', key)",
            KEYS_UNFIT.format(index=1, kind="hotkey", source="pyautogui.hotkey('ctrl', key)"),
        ),
        (
            "pyautogui.hotkey('ctrl', ',')",
            KEYS_UNFIT.format(index=1, kind="hotkey", source="pyautogui.hotkey('ctrl', ',')"),
        ),
        ("pyautogui.click()", NO_POINT.format(index=1, kind="click")),
    ],
)
def test_what_the_release_form_cannot_hold(script: str, problem: str) -> None:
    with pytest.raises(ReleaseFormError) as caught:
        release_lines(parse_script(script), {})
    assert str(caught.value) == problem


def test_task_text() -> None:
    lines = release_lines(parse_script("pyautogui.press('f5')"), {})
    assert (
        task_text("Start the\nshow", lines) == 'Task: Start the show\nOutput Script:\npyautogui.press("f5")\n'
    )


def write_sample(folder: Path, script: str, boxes: dict[str, list[float]], png: bytes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "shot.png").write_bytes(png)
    path = folder / "s.json"
    path.write_text(
        json.dumps(
            {"id": "s", "instruction": "Name it", "image": "shot.png", "script": script, "boxes": boxes}
        )
    )
    return path


def test_a_json_sample_is_scored_by_the_official_rules_with_its_own_boxes(
    tmp_path: Path, make_png: object
) -> None:
    # the gold click (30, 20) is not the box's centre (30.5, 20): the label gives the box
    script = "pyautogui.click(30, 20)  # box: name\npyautogui.write('Quarterly report')\npyautogui.hotkey('ctrl', 's')"
    sample = sample_of_task(
        load_omniact_task(write_sample(tmp_path, script, {"name": [20, 10, 21, 20]}, make_png()))
    )  # type: ignore[operator]
    assert sample.official is not None and sample.official_problem is None
    assert sample.gold_script == (
        'pyautogui.click(30.0,20.0)\npyautogui.write("Quarterly report")\npyautogui.hotkey("ctrl","s")'
    )
    assert score_both(sample, sample.gold_script).action_score("official") == 1.0
    # its own script as written: the space after the comma makes the second key 's (a third lost)
    assert score_both(sample, script).action_score("official") == pytest.approx(2 / 3)
    assert score_both(sample, script).action_score("paper") == 1.0
    # 35 px right of the box: (1 - diag / (diag + 35)) / 3 with diag = sqrt(21^2 + 20^2)
    miss = score_both(
        sample, 'pyautogui.click(76, 20)\npyautogui.write("quarterly report")\npyautogui.hotkey("ctrl","s")'
    )
    diagonal = math.hypot(21, 20)
    assert miss.action_score("official") == pytest.approx(1 - (1 - diagonal / (diagonal + 35)) / 3)


def test_a_json_sample_the_official_scoring_cannot_read_is_decided_by_the_paper_scoring(
    tmp_path: Path, make_png: object
) -> None:
    script = "pyautogui.write('say \"hi\"')"
    sample = sample_of_task(load_omniact_task(write_sample(tmp_path, script, {}, make_png())))  # type: ignore[operator]
    assert sample.official is None
    assert sample.official_problem == NO_OFFICIAL.format(problem=TEXT_UNFIT.format(index=1, text='say "hi"'))
    assert sample.gold_script == script
    scores = score_both(sample, script)
    assert scores.official is None
    assert scores.deciding("official") == "paper"
    assert scores.action_score("official") == scores.paper.action_score == 1.0


def test_the_writer_refuses_a_sample_that_its_own_gold_cannot_pass(tmp_path: Path, make_png: object) -> None:
    # the official scoring reads a typed text up to its first apostrophe: "it" against "it's on"
    path = write_sample(tmp_path / "in", 'pyautogui.write("it\'s on")', {}, make_png())  # type: ignore[operator]
    with pytest.raises(ReleaseWriteError) as caught:
        write_release_layout([ReleaseEntry(load_omniact_task(path), "notes")], tmp_path / "out")
    assert "under the official scoring" in str(caught.value)
    assert GOLD_NOT_ONE.split("{")[0] in str(caught.value)


def load_generator(monkeypatch: pytest.MonkeyPatch) -> object:
    """The samples generator script, imported as a module."""
    spec = importlib.util.spec_from_file_location(
        "make_omniact_samples", ROOT / "tasks/tools/make_omniact_samples.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "make_omniact_samples", module)
    spec.loader.exec_module(module)
    return module


def test_the_release_suite_is_what_the_generator_writes_from_the_json_samples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    generator = load_generator(monkeypatch)
    assert generator.main(["--release", str(tmp_path)]) == 0  # type: ignore[attr-defined]
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    kept = sorted(str(p.relative_to(RELEASE_SUITE)) for p in RELEASE_SUITE.rglob("*") if p.is_file())
    assert written == kept
    for name in written:
        assert filecmp.cmp(tmp_path / name, RELEASE_SUITE / name, shallow=False), name


def test_the_release_suite_has_desktop_and_web_samples_with_the_web_path_quirk() -> None:
    split = read_split(RELEASE_SUITE / "test.json")
    assert not split.errors
    assert len(split.samples) == len(list(SUITE.glob("*.json")))
    domains = {s.domain for s in split.samples}
    assert domains == {"desktop", "web"}
    entries = json.loads((RELEASE_SUITE / "test.json").read_text())
    for sample in split.samples:
        if sample.domain == "web":
            named = entries[sample.key]["image"]
            assert "/screen_" in named and not (RELEASE_SUITE / named).exists()
            assert sample.image.name.startswith("screen") and "_" not in sample.image.name
            assert sample.box_path.name.endswith("_boxes.json")
