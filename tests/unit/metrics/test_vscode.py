"""VS Code metrics."""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from metric_files import check, text_pdf

from pytest_osworld.evaluators.metrics import vscode as v

Writer = Callable[[str, str | bytes], str]

SETTINGS = """{
    // user settings
    "editor.wordWrapColumn": 50,
    "files.exclude": {"**/__pycache__": true,},
    "url": "http://x//y",
}"""


@pytest.mark.parametrize(
    ("rules", "value", "reason"),
    [
        ({"expected": {"editor.wordWrapColumn": 50}}, 1, "all 1 settings"),
        (
            {"expected": {"files.exclude": {"**/__pycache__": True}, "url": "http://x//y"}},
            1,
            "all 2 settings",
        ),
        ({"expected": {"editor.wordWrapColumn": 80}}, 0, "is 50, expected 80"),
        ({"expected": {"debug.focusEditorOnBreak": False}}, 0, "is not set"),
    ],
)
def test_check_json_settings(write: Writer, rules: dict[str, Any], value: float, reason: str) -> None:
    check(v.check_json_settings(write("settings.json", SETTINGS), rules), value, reason)


def test_check_json_settings_bad_file(write: Writer) -> None:
    check(v.check_json_settings(write("s.json", "{nope"), {"expected": {}}), 0, "not valid JSON")
    check(v.check_json_settings(None, {"expected": {}}), 0, "no result")


def test_check_json_keybindings(write: Writer) -> None:
    path = write(
        "keybindings.json",
        '// Place your key bindings\n[{"key": "ctrl+j", "command": "x", "when": "terminalFocus"}]',
    )
    check(
        v.check_json_keybindings(
            path, {"expected": {"key": "ctrl+j", "command": "x", "when": "terminalFocus"}}
        ),
        1,
        "present",
    )
    check(
        v.check_json_keybindings(path, {"expected": {"key": "ctrl+f", "command": "x"}}),
        0,
        "absent among 1",
    )


def test_compare_text_file(write: Writer) -> None:
    a, b = write("a.txt", "Hello  World\n"), write("b.txt", "hello world")
    check(v.compare_text_file(a, a), 1, "equals")
    check(v.compare_text_file(a, b), 0, "differ at character 0")
    check(v.compare_text_file(a, b, ignore_blanks=True, ignore_case=True), 1, "equals")


@pytest.mark.parametrize(
    ("output", "rules", "value", "reason"),
    [
        (
            "ms-python.python\nmattn.lisp\n",
            {"type": "contain", "expected": "mattn.lisp"},
            1,
            "is installed",
        ),
        ("ms-python.python\n", {"type": "contain", "expected": "mattn.lisp"}, 0, "not in"),
        ("ms-python.python\n", {"type": "not_contain", "expected": "mattn.lisp"}, 1, "absent"),
        ("mattn.lisp\n", {"type": "not_contain", "expected": "mattn.lisp"}, 0, "still installed"),
        ("x", {"type": "maybe", "expected": "x"}, 0, "unknown rule type"),
    ],
)
def test_is_extension_installed(output: str, rules: dict[str, Any], value: float, reason: str) -> None:
    check(v.is_extension_installed(output, rules), value, reason)


def test_compare_config(write: Writer) -> None:
    text = write("OpenProject.txt", "/home/user/project\n")
    check(v.compare_config(text, {"expected": "project"}), 1, "config holds")
    check(v.compare_config(text, {"expected": "project"}, containment_ok=False), 0, "does not hold")
    settings = write("settings.json", '{"workbench.colorTheme": "Visual Studio Dark", "a": 1}')
    check(
        v.compare_config(settings, {"expected": '{"workbench.colorTheme": "Visual Studio Dark"}\n'}),
        1,
        "config holds",
    )
    check(v.compare_config(settings, {"expected": '{"workbench.colorTheme": "Light"}'}), 0, "lacks")


def test_compare_result_files(write: Writer) -> None:
    gold = write("gold.txt", "0.12345\n")
    check(v.compare_result_files(write("a.txt", "0.123449\n"), gold), 1, "matches")
    check(v.compare_result_files(write("b.txt", "0.2\n"), gold), 0, "expected '0.12345'")
    check(v.compare_result_files(write("c.txt", "answer: 0.12345"), gold), 1, "matches")


def test_compare_answer() -> None:
    check(v.compare_answer("42", {"expected": "42"}), 1, "answer '42'")
    check(v.compare_answer("41", {"expected": "42"}), 0, "expected '42'")


def _zip(path: Path, members: dict[str, bytes]) -> str:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return str(path)


def test_compare_zip_files(tmp_path: Path) -> None:
    pdf1 = text_pdf(tmp_path / "1.pdf", ["Lecture one: the same words"]).read_bytes()
    pdf2 = (
        text_pdf(tmp_path / "2.pdf", ["Lecture one: the same words"]).read_bytes() + b"\n% trailer comment\n"
    )
    a = _zip(tmp_path / "a.zip", {"notes.txt": b"x", "slides.pdf": pdf1})
    b = _zip(tmp_path / "b.zip", {"notes.txt": b"x", "slides.pdf": pdf2})
    c = _zip(tmp_path / "c.zip", {"notes.txt": b"y", "slides.pdf": pdf1})
    d = _zip(tmp_path / "d.zip", {"notes.txt": b"x"})
    check(v.compare_zip_files(a, b), 1, "all 2 members equal")
    check(v.compare_zip_files(a, c), 0, "member 'notes.txt' differs")
    check(v.compare_zip_files(a, d), 0, "members")


@pytest.mark.parametrize(
    ("result", "value", "reason"),
    [
        ("running tests\nTrue\n", 1, "returned True"),
        ("False\n", 0, "returned False"),
        ("0.5\n", 0.5, "returned 0.5"),
        ("Traceback ...\nNameError\n", 0, "not a result"),
        ({"returncode": 0, "output": "True"}, 1, "returned True"),
        ({"returncode": 1, "output": "True"}, 0, "exited with 1"),
        (["/cache/food.py", "/cache/main.py"], 0, "refusing to import"),
        (None, 0, "no test output"),
    ],
)
def test_check_python_file_by_test_suite(result: Any, value: float, reason: str) -> None:
    check(v.check_python_file_by_test_suite(result, "/cache/test_suite.py"), value, reason)


def test_check_python_file_by_test_suite_never_runs_a_file(write: Writer) -> None:
    path = write("main.py", "raise SystemExit('must not run')\n")
    check(
        v.check_python_file_by_test_suite(path, write("test.py", "def test(): return True\n")),
        0,
        v.TEST_SUITE_ON_HOST,
    )


def test_check_html_background_image(write: Writer) -> None:
    page = write("index.html", "<style>body { background-image: url('images/bg.png'); }</style>")
    check(v.check_html_background_image(page, {"type": "value", "value": "bg.png"}), 1, "set")
    check(v.check_html_background_image(page, {"value": "other.png"}), 0, "expected 'other.png'")
