"""Reading OmniACT's release layout: samples, the web path rewrite, one error per bad sample."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from release_cases import Case, Screen, file_paths, paths, write_release

from pytest_osworld.errors import TaskFileError
from pytest_osworld.omniact.predictions import PredictionsError, read_predictions
from pytest_osworld.omniact.release import (
    ReleaseBox,
    ReleaseSample,
    ReleaseSampleError,
    ReleaseSplitError,
    read_split,
    web_boxes_path,
    web_image_path,
)

CALC = Screen("desktop", "calculator", 1, {"seven": ((100, 50), (120, 80)), "plus": ((10, 10), (30, 30))})
BOOKING = Screen("web", "booking", 2, {"search": ((40, 20), (60, 40))})


def cases() -> list[Case]:
    return [
        Case("0", CALC, 1, "Press seven", ["pyautogui.click(110.0,65.0)"], ""),
        Case("1", BOOKING, 1, "Search Dune", ["pyautogui.click(50.0,30.0)", 'pyautogui.write("Dune")'], ""),
        Case("2", CALC, 2, "Add", ["pyautogui.click(20.0,20.0)", 'pyautogui.press("enter")'], ""),
    ]


@pytest.fixture
def release(tmp_path: Path) -> Path:
    """A three-sample split in the release layout; returns the split file."""
    return write_release(tmp_path, cases())


def test_the_split_is_read_in_its_order(release: Path) -> None:
    split = read_split(release)
    assert split.name == "test"
    assert split.keys == ("0", "1", "2")
    assert split.errors == ()
    first, web, _ = split.samples
    assert isinstance(first, ReleaseSample)
    assert (first.domain, first.app, first.instruction) == ("desktop", "calculator", "Press seven")
    assert first.nodename == "omniact/test/0"
    assert first.gold_script == "pyautogui.click(110.0,65.0)"
    assert first.task_path == release.parent / "data/tasks/desktop/calculator/task_1.1.txt"
    assert first.boxes["seven"] == ReleaseBox("seven", (100.0, 50.0), (120.0, 80.0), "seven")
    assert first.boxes["seven"].to_box().to_json() == [100, 50, 20, 30]
    assert first.image_size == (320, 200)  # from the PNG header
    assert first.official.lines == ("pyautogui.click(110.0,65.0)",)
    assert (web.domain, web.app) == ("web", "booking")
    assert web.gold_script == 'pyautogui.click(50.0,30.0)\npyautogui.write("Dune")'  # case kept


def test_web_paths_are_rewritten(release: Path) -> None:
    web = read_split(release).samples[1]
    root = release.parent
    assert web.image == root / "data/data/web/booking/screen2.png"
    assert web.box_path == root / "data/metadata/web/boxes/booking/screen2_boxes.json"
    assert json.loads(release.read_text())["1"]["image"] == "data/data/web/booking/screen_2.png"


def test_a_web_path_that_exists_as_written_is_used_as_written(release: Path) -> None:
    root = release.parent
    (root / "data/data/web/booking/screen2.png").rename(root / "data/data/web/booking/screen_2.png")
    assert read_split(release).samples[1].image == root / "data/data/web/booking/screen_2.png"


def test_the_rewrite_rules() -> None:
    assert web_image_path("data/data/web/espn/screen_12.png") == "data/data/web/espn/screen12.png"
    assert (
        web_boxes_path("data/metadata/web/boxes/espn/screen_12.json")
        == "data/metadata/web/boxes/espn/screen12_boxes.json"
    )
    assert web_image_path("data/data/desktop/gimp/screen_1.png") is None
    assert web_boxes_path("data/metadata/desktop/boxes/gimp/screen_1.json") is None


def test_the_root_may_be_given(tmp_path: Path) -> None:
    split_path = write_release(tmp_path / "release", cases())
    moved = tmp_path / "splits" / "test.json"
    moved.parent.mkdir()
    split_path.rename(moved)
    assert len(read_split(moved).errors) == 3  # the paths are relative to the root, not found
    assert read_split(moved, root=tmp_path / "release").errors == ()


# -- bad samples: one error each, the rest read ------------------------------------------------------


def break_release(release: Path) -> dict[str, str]:
    """Add bad samples to the split; returns key -> a part of its expected message."""
    root = release.parent
    split = json.loads(release.read_text())
    good = cases()[0]
    entry = paths(good)

    def add(key: str, **changes: str) -> dict[str, str]:
        split[key] = {**entry, **changes}
        return split[key]

    add("missing_task", task="data/tasks/desktop/calculator/task_9.9.txt")
    no_script = add("no_script", task="data/tasks/desktop/calculator/task_1.8.txt")
    (root / no_script["task"]).write_text("Task: nothing\nOutput Script:\n\n")
    not_json = add("boxes_not_json", box="data/metadata/desktop/boxes/calculator/screen_7.json")
    (root / not_json["box"]).write_text("{not json")
    off = add("off_centre", task="data/tasks/desktop/calculator/task_1.7.txt")
    (root / off["task"]).write_text("Task: miss\nOutput Script:\npyautogui.click(111.0,65.0)\n")
    add("missing_image", image="data/data/desktop/calculator/screen_404.png")
    add("missing_web_image", image="data/data/web/booking/screen_404.png")
    split["not_an_object"] = 5
    split["no_box"] = {"task": entry["task"], "image": entry["image"]}
    release.write_text(json.dumps(split))
    return {
        "missing_task": "the task file "
        + str(root / "data/tasks/desktop/calculator/task_9.9.txt")
        + " does not exist",
        "no_script": "has no gold script",
        "boxes_not_json": "is not JSON",
        "off_centre": "gold line 1 (click) at (111, 65) is at no box's centre",
        "missing_image": "the screenshot",
        "missing_web_image": "(nor " + str(root / "data/data/web/booking/screen404.png") + ")",
        "not_an_object": 'expected {"task": ..., "image": ..., "box": ...}, got int',
        "no_box": "missing 'box'",
    }


def test_one_error_per_bad_sample_and_the_rest_read(release: Path) -> None:
    expected = break_release(release)
    split = read_split(release)
    assert [s.key for s in split.samples] == ["0", "1", "2"]
    assert [e.key for e in split.errors] == list(expected)
    assert split.keys == ("0", "1", "2", *expected)  # the split's order, bad samples included
    for error in split.errors:
        assert isinstance(error, TaskFileError)
        message = str(error)
        assert message.startswith(f"{release}: at $[{json.dumps(error.key)}]"), message
        assert expected[error.key] in message, message


def test_errors_say_what_to_do(release: Path) -> None:
    break_release(release)
    errors = {e.key: str(e) for e in read_split(release).errors}
    assert "download the release again or fix the path" in errors["missing_task"]
    assert "download it again" in errors["boxes_not_json"]
    assert "fix the box file or the task file" in errors["off_centre"]
    assert errors["off_centre"].startswith(f'{release}: at $["off_centre"].task: the task file ')


def test_a_bad_box_entry(release: Path) -> None:
    box_file = release.parent / file_paths(cases()[0])["box"]
    box_file.write_text(json.dumps({"seven": {"top_left": [1, 2]}}))
    errors = read_split(release).errors
    assert [e.key for e in errors] == ["0", "2"]  # both samples of that screen
    assert "entry 'seven' is not" in str(errors[0])


@pytest.mark.parametrize(
    ("content", "problem"),
    [(None, "cannot read the split file"), ("{", "is not JSON"), ("[]", "got list")],
)
def test_a_split_that_cannot_be_read_raises(tmp_path: Path, content: str | None, problem: str) -> None:
    path = tmp_path / "test.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ReleaseSplitError, match=problem):
        read_split(path)


def test_a_sample_error_is_a_task_file_error() -> None:
    error = ReleaseSampleError("test.json", "12", "box", "the box file x is not JSON")
    assert isinstance(error, TaskFileError)
    assert str(error) == 'test.json: at $["12"].box: the box file x is not JSON'


# -- predictions ----------------------------------------------------------------------------------------

KEYS = ("0", "1", "2")


def write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "predictions.json"
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def test_predictions_as_an_object_of_some_keys(tmp_path: Path) -> None:
    found = read_predictions(write(tmp_path, {"2": "b", "0": "a"}), KEYS)
    assert list(found.items()) == [("0", "a"), ("2", "b")]  # the split's order


def test_predictions_as_a_list_in_the_splits_order(tmp_path: Path) -> None:
    assert read_predictions(write(tmp_path, ["a", "b", "c"]), KEYS) == {"0": "a", "1": "b", "2": "c"}


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ("{nope", "the predictions are not JSON"),
        ('"text"', "expected an object from sample key to script text, or a list"),
        ({"0": 5}, "the prediction for key '0' is a number, not a script text"),
        (["a", None, "c"], "the prediction for item 1 is null"),
        ({"0": "a", "7": "b", "x": "c"}, "2 key(s) are not samples of test.json: '7', 'x'"),
        (["a", "b"], "a list of 2 predictions for the 3 samples of test.json"),
    ],
)
def test_bad_predictions(tmp_path: Path, data: object, problem: str) -> None:
    path = write(tmp_path, data)
    with pytest.raises(PredictionsError) as caught:
        read_predictions(path, KEYS, "test.json")
    assert str(caught.value).startswith(f"{path}: ")
    assert problem in str(caught.value)


def test_missing_predictions_file(tmp_path: Path) -> None:
    with pytest.raises(PredictionsError, match="cannot read the predictions"):
        read_predictions(tmp_path / "none.json", KEYS)


def test_reading_a_split_imports_neither_nltk_nor_the_scorers(release: Path) -> None:
    code = (
        "import sys; from pytest_osworld.omniact.release import read_split; "
        f"assert not read_split(__import__('pathlib').Path({str(release)!r})).errors; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('nltk', 'scipy', 'pytest')))"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "[]"
