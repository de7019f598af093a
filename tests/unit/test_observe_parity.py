"""Our default tree format against OSWorld's own results, recorded (no oracle needed).

tests/data/a11y_trees holds accessibility trees and screenshots recorded from our
desktop with each app open (parity/agent_record_trees.py) and osworld_results.json.gz,
what OSWorld's ``mm_agents`` returned on them (``python -m parity.agent_facing
--write-golden``). Our ``osworld`` format must give the same bytes; answers where our
parsers differ on purpose must differ for a documented cause.
"""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path
from typing import Any

import pytest

from parity import agent_ours
from parity.agent_compare import Tally, compare_outputs
from parity.agent_facing import FUZZED_APPS, QUICK_VARIANTS
from parity.agent_fuzz import handpicked
from parity.agent_tree_fuzz import variants
from parity.documented import documented_names
from pytest_osworld.agent.observe_osworld import (
    CUT_MARK,
    OSWORLD_HEADER,
    linearize_as,
    marks_as,
    table,
    token_counter,
    trim,
)

ROOT = Path(__file__).resolve().parents[2]
TREES = ROOT / "tests" / "data" / "a11y_trees"
APPS = ("calc", "chromium", "gimp", "impress", "terminal", "thunderbird", "vlc", "vscode", "writer")


def _golden() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(gzip.decompress((TREES / "osworld_results.json.gz").read_bytes()))
    return data


GOLDEN = _golden()
BY_APP = {tree["name"]: tree for tree in GOLDEN["trees"]}
VARIANTS = sorted(name for name in BY_APP if "~" in name)


def _recorded(app: str) -> tuple[str, bytes]:
    from PIL import Image

    xml = gzip.decompress((TREES / f"{app}.xml.gz").read_bytes()).decode()
    png = io.BytesIO()
    Image.open(TREES / f"{app}.png").convert("RGB").save(png, format="PNG")
    return xml, png.getvalue()


def _tree(name: str) -> tuple[str, bytes]:
    """A recorded tree, or one of its mutated variants (``<app>~<i>``), and its screenshot."""
    app, _, index = name.partition("~")
    xml, png = _recorded(app)
    if index:
        xml = dict(variants(app, xml, QUICK_VARIANTS))[name]
    return xml, png


def test_every_app_is_recorded() -> None:
    assert sorted(n for n in BY_APP if "~" not in n) == sorted(APPS)
    assert len(BY_APP["calc"]["filter"]) > 500  # a real Calc window, not an empty desktop
    assert len(VARIANTS) == QUICK_VARIANTS * len(FUZZED_APPS)


@pytest.mark.parametrize("name", [*APPS, *VARIANTS])
def test_tree_rows_equal_osworlds(name: str) -> None:
    xml, png = _tree(name)
    theirs = BY_APP[name]
    ours = agent_ours.tree_results(name, xml, png, GOLDEN["max_tokens"])
    for row in ("filter", "linearize", "som_boxes", "som_tags"):
        assert ours[row] == theirs[row], row
    import PIL

    if PIL.__version__ == GOLDEN["pillow"]:  # the numbers are drawn with Pillow's own font
        assert ours["som_image"] == theirs["som_image"]
    if token_counter() is not None:
        assert ours["trim"] == theirs["trim"]
        assert ours["trim_small"] == theirs["trim_small"]


def test_the_default_format_through_the_registry() -> None:
    xml, png = _recorded("writer")
    assert linearize_as("osworld", xml, 10**6) == BY_APP["writer"]["linearize"]
    assert linearize_as("osworld", xml, 10**6).splitlines()[0] == OSWORLD_HEADER
    marks = marks_as("osworld", png, xml, 10**6)
    assert marks.boxes == BY_APP["writer"]["som_boxes"]
    assert marks.centre(1) == (
        marks.boxes[0][0] + marks.boxes[0][2] // 2,
        marks.boxes[0][1] + marks.boxes[0][3] // 2,
    )
    assert linearize_as("paper", xml, 10**6).splitlines()[0].count("\t") == 4


def test_a_box_counts_the_marks_drawn_before_it() -> None:
    """A flat area that an earlier box's outline crosses is no longer flat (OSWorld's order)."""
    from PIL import Image, ImageDraw

    from pytest_osworld.agent.observe_osworld import set_of_marks_osworld

    image = Image.new("RGB", (120, 80), "white")
    ImageDraw.Draw(image).rectangle((14, 14, 20, 20), fill="black")
    png = io.BytesIO()
    image.save(png, format="PNG")
    on = 'st:showing="true" st:visible="true" st:enabled="true"'
    ns = (
        'xmlns:st="https://accessibility.ubuntu.example.org/ns/state" '
        'xmlns:cp="https://accessibility.ubuntu.example.org/ns/component"'
    )
    xml = (
        f'<desktop-frame {ns}><push-button name="A" {on} cp:screencoord="(10, 10)" cp:size="(20, 20)"/>'
        f'<push-button name="B" {on} cp:screencoord="(30, 10)" cp:size="(20, 20)"/>'
        f'<push-button name="C" {on} cp:screencoord="(80, 10)" cp:size="(20, 20)"/></desktop-frame>'
    )
    _image, nodes, marks_table = set_of_marks_osworld(png.getvalue(), xml, 1000)
    assert [n.name for n in nodes] == ["A", "B"]  # B's left edge is A's red right edge; C is blank
    assert marks_table.splitlines()[2] == '2\tpush-button\tB\t""'


def test_unknown_format_is_refused() -> None:
    from pytest_osworld.errors import UnknownNameError

    with pytest.raises(UnknownNameError, match="accessibility tree format"):
        linearize_as("html", "<a/>", 10)


def test_scaled_positions_are_divided() -> None:
    xml, _ = _recorded("terminal")
    line = table(xml).splitlines()[1].split("\t")
    scaled = table(xml, scale=2.0).splitlines()[1].split("\t")
    x, y = (int(v) for v in line[5].strip("()").split(", "))
    assert scaled[5] == f"({round(x / 2)}, {round(y / 2)})"


def test_estimate_trim_cuts_at_a_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("pytest_osworld.agent.observe_osworld.token_counter", lambda: None)
    full = BY_APP["calc"]["linearize"]
    cut = trim(full, 300)
    assert cut.endswith(CUT_MARK) and full.startswith(cut.removesuffix(CUT_MARK))
    assert cut.removesuffix(CUT_MARK) + "\n" in full + "\n"  # whole lines only
    assert trim("short", 300) == "short"


def test_handpicked_answers_agree_or_differ_for_a_documented_cause() -> None:
    documented = documented_names(ROOT)
    masks = [[10 * i, 20 * i + 3, 31 + i, 17 + 2 * i] for i in range(15)]
    answers = handpicked()
    assert len(answers) == len(GOLDEN["outputs"])
    tally = Tally()
    compare_outputs(tally, answers, GOLDEN["outputs"], masks)
    assert sum(tally.agree.values()) > len(answers)  # most answers read alike
    assert tally.disagreements  # the OSWorld bugs we fix show up among the hand-picked answers
    for found in tally.disagreements:
        assert "/" in found["name"], found  # a recognised cause
        assert found["name"] in documented, found["name"]
