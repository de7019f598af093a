"""Accessibility-tree filtering and linearisation, Set-of-Marks, tag resolution, scaling."""

from __future__ import annotations

import io

import pytest
from PIL import Image, ImageDraw

from pytest_osworld.agent.actions import ActionParseError
from pytest_osworld.agent.observe import (
    MARKS_HEADER,
    TREE_HEADER,
    TRUNCATED,
    downscale,
    estimate_tokens,
    filter_nodes,
    keeps_tag,
    linearize,
    png_size,
    resolve_tags,
    scale_code,
    scale_params,
    set_of_marks,
)

NS = (
    'xmlns:st="https://accessibility.ubuntu.example.org/ns/state" '
    'xmlns:cp="https://accessibility.ubuntu.example.org/ns/component" '
    'xmlns:attr="https://accessibility.ubuntu.example.org/ns/attributes" '
    'xmlns:val="https://accessibility.ubuntu.example.org/ns/value"'
)
ON = 'st:showing="true" st:visible="true" st:enabled="true"'


def node(
    tag: str,
    name: str = "",
    at: str = "(10, 10)",
    size: str = "(50, 20)",
    states: str = ON,
    text: str = "",
    extra: str = "",
) -> str:
    return f'<{tag} name="{name}" {states} cp:screencoord="{at}" cp:size="{size}" {extra}>{text}</{tag}>'


def tree(*nodes: str) -> str:
    return f'<desktop-frame {NS} name="main"><application name="app">{"".join(nodes)}</application></desktop-frame>'


SAMPLE = tree(
    node("push-button", "OK", "(100, 200)", "(80, 30)"),
    node("menu-item", "File", "(0, 0)", "(40, 20)"),
    node("document-text", "", "(0, 40)", "(800, 500)", text="Dear Bob,\n\tthanks"),
    node("panel", "Sidebar"),  # not a kept tag
    node("push-button", "Hidden", states='st:visible="true" st:enabled="true"'),  # not showing
    node("push-button", "Grey", states='st:showing="true" st:visible="true"'),  # not actionable
    node("push-button", ""),  # no name nor text
    node("push-button", "Offscreen", "(-5, 10)"),
    node("push-button", "Flat", size="(0, 20)"),
    node(
        "entry", "", states='st:showing="true" st:visible="true" st:editable="true"', extra='val:value="42"'
    ),
    node("check-box", "Bold", states='st:showing="true" st:visible="true" st:checkable="true"'),
    node("image", "", extra='image="true"'),  # kept for SoM only
)


def test_filter_keeps_by_the_paper_rules() -> None:
    names = [(n.tag, n.name, n.text) for n in filter_nodes(SAMPLE)]
    assert names == [
        ("push-button", "OK", ""),
        ("menu-item", "File", ""),
        ("document-text", "", "Dear Bob,\n\tthanks"),
        ("entry", "", "42"),
        ("check-box", "Bold", ""),
    ]


def test_images_count_for_set_of_marks() -> None:
    tags = [n.tag for n in filter_nodes(SAMPLE, images_count=True)]
    assert tags[-1] == "image"
    assert "image" not in [n.tag for n in filter_nodes(SAMPLE)]


@pytest.mark.parametrize(
    ("tag", "kept"),
    [
        ("document-web", True),
        ("list-item", True),
        ("toggle-button", True),
        ("page-tab-list", False),
        ("tabelement", True),
        ("combo-box", True),
        ("table-cell", True),
        ("static", True),
        ("frame", False),
        ("filler", False),
        ("menu", True),
        ("menu-bar", False),
    ],
)
def test_kept_tags(tag: str, kept: bool) -> None:
    assert keeps_tag(tag) is kept


def test_linearize_one_node_per_line() -> None:
    lines = linearize(SAMPLE).splitlines()
    assert lines[0] == TREE_HEADER
    assert lines[1] == "push-button\tOK\t\t(100, 200)\t(80, 30)"
    assert lines[3] == "document-text\t\tDear Bob,\\n\\tthanks\t(0, 40)\t(800, 500)"
    assert len(lines) == 6
    assert all(line.count("\t") == 4 for line in lines)


def test_linearize_scales_pixels() -> None:
    lines = linearize(SAMPLE, scale=2.0).splitlines()
    assert lines[1] == "push-button\tOK\t\t(50, 100)\t(40, 15)"


def test_linearize_truncates_to_the_budget() -> None:
    many = tree(*(node("push-button", f"Button number {i}", f"({i}, 5)") for i in range(500)))
    full = linearize(many, max_tokens=10**9)
    cut = linearize(many, max_tokens=300)
    assert TRUNCATED not in full and len(full.splitlines()) == 501
    assert cut.endswith("\n" + TRUNCATED)
    assert estimate_tokens(cut) <= 300 + estimate_tokens(TRUNCATED) + len(cut.splitlines())
    assert 10 < len(cut.splitlines()) < 100


def test_estimate_tokens_is_generous() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("push-button OK") >= 4
    assert estimate_tokens("a" * 400) == 100


def test_bad_xml_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="not valid XML"):
        filter_nodes("<desktop-frame>")


# -- Set-of-Marks --------------------------------------------------------------------------


def screen_png(width: int = 200, height: int = 120) -> bytes:
    """A white screen with two 'widgets' drawn on it and a flat grey band."""
    image = Image.new("RGB", (width, height), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    draw.rectangle((20, 20, 60, 40), fill=(30, 120, 200))
    draw.text((25, 25), "OK", fill=(255, 255, 255))
    draw.rectangle((100, 60, 160, 90), fill=(40, 160, 40))
    draw.line((100, 75, 160, 75), fill=(0, 0, 0))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


SOM_TREE = tree(
    node("push-button", "OK", "(15, 15)", "(50, 30)"),
    node("push-button", "Blank", "(170, 5)", "(20, 10)"),  # over plain white: skipped
    node("toggle-button", "Go", "(95, 55)", "(70, 40)"),
    node("push-button", "Far", "(500, 500)", "(20, 20)"),  # off the image: skipped
)


def test_set_of_marks_draws_boxes() -> None:
    shot = screen_png()
    marks = set_of_marks(shot, SOM_TREE)
    assert marks.boxes == [[15, 15, 50, 30], [95, 55, 70, 40]]
    assert marks.table.splitlines() == [MARKS_HEADER, "1\tpush-button\tOK\t", "2\ttoggle-button\tGo\t"]
    before = Image.open(io.BytesIO(shot)).convert("RGB")
    after = Image.open(io.BytesIO(marks.image)).convert("RGB")
    assert after.size == before.size
    red = (255, 0, 0)
    # The outline of box 1: its right and bottom edges are red, the inside is not.
    assert after.getpixel((64, 30)) == red
    assert after.getpixel((40, 44)) == red
    assert before.getpixel((64, 30)) != red
    # Box 2's top-left carries the label on black.
    assert after.getpixel((95, 55)) in (red, (0, 0, 0))
    assert (0, 0, 0) in {after.getpixel((96 + dx, 56 + dy)) for dx in range(6) for dy in range(6)}
    # The skipped box over flat white is left alone.
    assert all(after.getpixel((x, 5)) == (255, 255, 255) for x in range(170, 190))


def test_tag_resolution_prepends_centres() -> None:
    marks = set_of_marks(screen_png(), SOM_TREE)
    code = "pyautogui.click(tag_2)\npyautogui.moveTo(*tag_1)"
    resolved = resolve_tags(code, marks)
    assert resolved.splitlines()[:2] == ["tag_1 = (40, 30)", "tag_2 = (130, 75)"]
    assert resolved.endswith(code)
    namespace: dict[str, object] = {}
    exec(resolved.splitlines()[0] + "\n" + resolved.splitlines()[1], namespace)
    assert namespace["tag_2"] == (130, 75)


def test_code_without_tags_is_unchanged() -> None:
    marks = set_of_marks(screen_png(), SOM_TREE)
    assert resolve_tags("pyautogui.click(1, 2)", marks) == "pyautogui.click(1, 2)"


def test_unknown_tag_is_a_parse_error() -> None:
    marks = set_of_marks(screen_png(), SOM_TREE)
    with pytest.raises(ActionParseError, match=r"tag_7 is not a mark on this screen \(marks: 1..2\)"):
        resolve_tags("pyautogui.click(tag_7)", marks)


# -- scaling ----------------------------------------------------------------------------------


def test_downscale_fits_max_side() -> None:
    shot = screen_png(400, 300)
    small, factor = downscale(shot, 200)
    assert png_size(small) == (200, 150)
    assert factor == 2.0
    same, one = downscale(shot, 1000)
    assert same is shot and one == 1.0
    assert downscale(shot, None) == (shot, 1.0)


def test_png_size_refuses_other_bytes() -> None:
    with pytest.raises(ValueError, match="not a PNG"):
        png_size(b"GIF89a....")


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("pyautogui.click(100, 50)", "pyautogui.click(200, 100)"),
        ("pyautogui.click(x=10, y=20, clicks=2)", "pyautogui.click(x=20, y=40, clicks=2)"),
        ("pyautogui.moveTo((10, 20), duration=0.5)", "pyautogui.moveTo((20, 40), duration=0.5)"),
        ("pyautogui.scroll(-5, 10, 20)", "pyautogui.scroll(-5, 20, 40)"),
        ("pyautogui.scroll(3)", "pyautogui.scroll(3)"),
        ("pyautogui.moveRel(-7, 0)", "pyautogui.moveRel(-14, 0)"),
        ("pyautogui.dragTo(1.5, 2.5, button='left')", "pyautogui.dragTo(3, 5, button='left')"),
        ("pyautogui.typewrite('click(1, 2)')", "pyautogui.typewrite('click(1, 2)')"),
        ("pyautogui.press('f5')", "pyautogui.press('f5')"),
        ("pyautogui.click(tag_3)", "pyautogui.click(tag_3)"),
        (
            "# fake: keep 1, 2\npyautogui.click(10,  20)  # the OK button\ntime.sleep(0.5)",
            "# fake: keep 1, 2\npyautogui.click(20,  40)  # the OK button\ntime.sleep(0.5)",
        ),
        ("pyautogui.click(1, 2", "pyautogui.click(1, 2"),
        ("s = 'é'; pyautogui.click(5, 5)", "s = 'é'; pyautogui.click(10, 10)"),
    ],
)
def test_scale_code(code: str, expected: str) -> None:
    assert scale_code(code, 2.0) == expected


def test_scale_code_identity() -> None:
    assert scale_code("pyautogui.click(1, 2)", 1.0) == "pyautogui.click(1, 2)"


def test_scale_params() -> None:
    params = {"action_type": "CLICK", "parameters": {"x": 10, "y": 15, "button": "left"}}
    assert scale_params(params, 1.5) == {
        "action_type": "CLICK",
        "parameters": {"x": 15, "y": 22, "button": "left"},
    }
    assert scale_params({"action_type": "TYPING", "parameters": {"text": "x"}}, 2.0)["parameters"] == {
        "text": "x"
    }
