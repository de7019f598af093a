"""Metrics fixed to score as OSWorld's own code does on the same inputs (issue #17).

Each test holds a small hand-made input on which the metric used to disagree with
``desktop-env`` 1.0.2, found by ``scripts/parity --level metrics``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from metric_files import check, gradient
from PIL import Image, ImageEnhance

from pytest_osworld.evaluators.metrics import chrome as c
from pytest_osworld.evaluators.metrics import general as g
from pytest_osworld.evaluators.metrics import gimp as gi
from pytest_osworld.evaluators.metrics import vscode as v

Saver = Callable[..., str]
Writer = Callable[[str, str | bytes], str]


def test_brightness_structure_is_compared_in_colour(save_image: Saver) -> None:
    # Same greyscale value (about 130), very different colours: the greyscale images
    # agree, the RGB ones do not, so the structure check must fail.
    reddish = save_image(Image.new("RGB", (16, 16), (200, 100, 100)), "red.png")
    greenish = save_image(Image.new("RGB", (16, 16), (95, 143, 95)), "green.png")
    check(gi.check_brightness_decrease_and_structure_sim(greenish, reddish), 0, "structure MSE 0.06")


def test_brightness_scales_each_channel_and_truncates(save_image: Saver) -> None:
    base = Image.new("RGB", (16, 16), (120, 130, 140))
    darker = save_image(ImageEnhance.Brightness(base).enhance(0.8), "dark.png")
    check(gi.check_brightness_decrease_and_structure_sim(darker, save_image(base, "b.png")), 1, "darker")
    black = save_image(Image.new("RGB", (16, 16)), "black.png")
    check(gi.check_brightness_decrease_and_structure_sim(black, save_image(base, "c.png")), 0, "black")


def test_contrast_and_saturation_need_equal_sizes(save_image: Saver) -> None:
    small = save_image(gradient((32, 32)), "small.png")
    more_contrast = save_image(ImageEnhance.Contrast(gradient((64, 64))).enhance(1.5), "c.png")
    more_colour = save_image(ImageEnhance.Color(gradient((64, 64))).enhance(1.5), "s.png")
    check(gi.check_contrast_increase_and_structure_sim(more_contrast, small), 0, "size (64, 64)")
    check(gi.check_saturation_increase_and_structure_sim(more_colour, small), 0, "size (64, 64)")


def test_contrast_needs_the_ssim_window(save_image: Saver) -> None:
    tiny = gradient((5, 5))
    more = save_image(ImageEnhance.Contrast(tiny).enhance(1.5), "more.png")
    check(gi.check_contrast_increase_and_structure_sim(more, save_image(tiny, "t.png")), 0, "7-pixel")


def test_compare_result_files_contains_only_a_numeric_gold(write: Writer) -> None:
    answer = write("answer.txt", "the total is 3.5 units\n")
    check(v.compare_result_files(answer, write("empty.txt", "")), 0, "expected ''")
    check(v.compare_result_files(answer, write("word.txt", "total")), 0, "expected 'total'")
    check(v.compare_result_files(answer, write("num.txt", "3.5\n")), 1, "matches")
    check(v.compare_result_files(write("exp.txt", "1e-5"), write("n.txt", "0.00001")), 1, "matches")
    check(v.compare_result_files(write("same.txt", "total"), write("w2.txt", "total")), 1, "matches")


def test_check_direct_json_object_needs_expected_rules() -> None:
    check(g.check_direct_json_object({}, None), 0, "no expected rules")
    check(g.check_direct_json_object({"a": 1}, {"expect_in_result": False}), 0, "no 'expected'")
    check(g.check_direct_json_object({}, {"expected": {}}), 1, "all 0")


def test_check_enabled_experiments_drops_the_choice_and_keeps_the_order() -> None:
    rules = {"type": "names", "names": ["a", "b"]}
    check(c.check_enabled_experiments(["a@1", "b"], rules), 1, "experiments ['a', 'b']")
    check(c.check_enabled_experiments(["b", "a@2"], rules), 0, "expected ['a', 'b']")
    check(c.check_enabled_experiments(["a", "b"], {"type": "set", "names": ["a", "b"]}), 0, "type 'names'")


def test_compare_answer_reads_the_expected_rule() -> None:
    check(v.compare_answer("42", {"expected": "42"}), 1, "answer '42'")
    check(v.compare_answer(" 42\n", {"expected": "42"}), 0, "expected '42'")
    check(v.compare_answer("", {"expected": ""}), 0, "empty")
    check(v.compare_answer("42", "42"), 0, "no 'expected'")


def test_is_included_all_json_objects_takes_two_files(write: Writer) -> None:
    gold = write("gold.json", '{"name": "x", "size": 2}')
    check(
        g.is_included_all_json_objects(gold, write("more.json", '{"name": "x", "size": 2, "z": 0}')),
        1,
        "all 2",
    )
    check(g.is_included_all_json_objects(gold, write("diff.json", '{"name": "x", "size": 3}')), 0, "'size'")
    check(g.is_included_all_json_objects(gold, write("bad.json", "not json")), 0, "not JSON")
    check(g.is_included_all_json_objects('{"name": "x"}', gold), 0, "does not exist")
    text: Any = None
    check(g.is_included_all_json_objects(text, gold), 0, "no result")


def test_check_direct_json_object_in_result_follows_python_membership() -> None:
    rules: dict[str, Any] = {"expect_in_result": True}
    check(g.check_direct_json_object({"k": ["a", "b"]}, {**rules, "expected": {"k": "a"}}), 1, "all 1")
    check(g.check_direct_json_object({"k": 5}, {**rules, "expected": {"k": [5]}}), 0, "key 'k'")
    check(g.check_direct_json_object({"k": "xyz"}, {**rules, "expected": {"k": ["y"]}}), 0, "key 'k'")


def test_check_direct_json_object_keeps_scoring_other_in_result_values() -> None:
    # Deliberate (docs/parity.md): OSWorld scores any non-list, non-string value 0.
    rules = {"expect_in_result": True, "expected": {"n": 3}}
    check(g.check_direct_json_object({"n": 3}, rules), 1, "all 1")
    check(g.check_direct_json_object({"n": 4}, rules), 0, "key 'n'")


def test_check_direct_json_object_reads_ignore_list_order_from_the_rules() -> None:
    # Deliberate (docs/parity.md): OSWorld looks for the flag inside rules["expected"].
    rules = {"expected": {"m": ["a", "b"]}, "ignore_list_order": True}
    check(g.check_direct_json_object({"m": ["b", "a"]}, rules), 1, "all 1")


def _highlighted_docx(path: Path, runs: list[tuple[str, bool]]) -> str:
    from docx import Document
    from docx.enum.text import WD_COLOR_INDEX

    document = Document()
    paragraph = document.add_paragraph()
    for text, marked in runs:
        run = paragraph.add_run(text)
        if marked:
            run.font.highlight_color = WD_COLOR_INDEX.YELLOW
    document.save(str(path))
    return str(path)


def test_compare_highlighted_text_reads_docx_runs_as_osworld(tmp_path: Path) -> None:
    """OSWorld compares the sets of highlighted runs' texts of two .docx files (we read only
    .odt before, and scored every .docx pair 0)."""
    from pytest_osworld.evaluators.metrics import docs

    a = _highlighted_docx(tmp_path / "a.docx", [("Hello ", False), ("world", True)])
    b = _highlighted_docx(tmp_path / "b.docx", [("world", True), ("world", True), ("!", False)])
    c = _highlighted_docx(tmp_path / "c.docx", [("Hello ", True), ("world", True)])
    plain = _highlighted_docx(tmp_path / "p.docx", [("Hello world", False)])
    assert docs.compare_highlighted_text(a, b).value == 1.0
    assert docs.compare_highlighted_text(plain, plain).value == 1.0
    score = docs.compare_highlighted_text(a, c)
    assert score.value == 0.0
    assert "expected" in score.reason and "Hello" in score.reason
    (tmp_path / "bad.docx").write_text("not a zip")
    assert docs.compare_highlighted_text(str(tmp_path / "bad.docx"), a).value == 0.0


def test_check_file_exists_joins_folder_and_name_as_osworld(tmp_path: Path) -> None:
    """OSWorld's check_file_exists(directory, filename); a lone path still works."""
    from pytest_osworld.evaluators.metrics import gimp

    (tmp_path / "out.png").write_bytes(b"x")
    assert gimp.check_file_exists(str(tmp_path), "out.png").value == 1.0
    assert gimp.check_file_exists(str(tmp_path), "missing.png").value == 0.0
    assert gimp.check_file_exists("", "out.png").value == 0.0
    assert gimp.check_file_exists(str(tmp_path), "").value == 0.0
    assert gimp.check_file_exists(str(tmp_path / "out.png")).value == 1.0
