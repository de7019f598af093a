"""Writer metrics over .docx files made with python-docx and small .odt files."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from docx import Document
from docx.enum.text import WD_ALIGN_PARAGRAPH, WD_BREAK, WD_TAB_ALIGNMENT
from docx.shared import Pt, RGBColor
from metric_files import check, gradient, libreoffice_convert

from pytest_osworld.evaluators.metrics import docs as d

Edit = Callable[[Any], None]


def docx(path: Path, paragraphs: list[str], edit: Edit | None = None) -> str:
    document = Document()
    for text in paragraphs:
        document.add_paragraph(text)
    if edit is not None:
        edit(document)
    document.save(str(path))
    return str(path)


@pytest.fixture
def make(tmp_path: Path) -> Callable[..., str]:
    counter = iter(range(1000))

    def build(paragraphs: list[str], edit: Edit | None = None) -> str:
        return docx(tmp_path / f"doc{next(counter)}.docx", paragraphs, edit)

    return build


@pytest.mark.parametrize(
    ("got", "want", "options", "value", "reason"),
    [
        (["Hello  world", "", "Bye"], ["Hello world", "Bye"], {}, 1, "the text is the same"),
        (["Hello world"], ["Hello there"], {}, 0, "text differs at character 6"),
        (
            ["Hello  world"],
            ["Hello world"],
            {"ignore_blanks": False},
            0,
            "paragraph 1: got 'Hello  world'",
        ),
        (["A", "B"], ["A", "B"], {"ignore_blanks": False}, 1, "all 2 paragraphs"),
        (["A", "B"], ["A"], {"ignore_blanks": False}, 0, "2 paragraphs, expected 1"),
        (["HELLO"], ["hello"], {"ignore_case": True}, 1, "the same"),
        (["b", "a"], ["a", "b"], {"ignore_order": True}, 1, "the same"),
        # rapidfuzz ratio: 2 * 3 matching / (4 + 4) characters
        (["abcd"], ["abce"], {"fuzzy_match": True}, 0.75, "text similarity 0.750"),
        # 'abcd x' vs 'abce x' once the empty line is dropped: 2 * 5 / (6 + 6)
        (
            ["abcd", "", "x"],
            ["abce", "x"],
            {"content_only": True, "delete_empty_lines": True},
            5 / 6,
            "content similarity 0.833",
        ),
    ],
)
def test_compare_docx_files(
    make: Callable[..., str],
    got: list[str],
    want: list[str],
    options: dict[str, Any],
    value: float,
    reason: str,
) -> None:
    check(d.compare_docx_files(make(got), make(want), **options), value, reason, approx=1e-4)


def test_compare_docx_files_inputs(make: Callable[..., str], tmp_path: Path) -> None:
    check(d.compare_docx_files(None, make(["a"])), 0, "no result")
    odt = _odt(tmp_path / "a.odt", ["a"])
    check(d.compare_docx_files(odt, make(["a"])), 0, "different document types")
    broken = tmp_path / "broken.docx"
    broken.write_text("nope")
    check(d.compare_docx_files(str(broken), str(broken)), 0, "cannot read")


def test_ignore_new_lines_and_lines(make: Callable[..., str]) -> None:
    check(
        d.compare_docx_files_and_ignore_new_lines(
            make(["a", "", "b"]), make(["a", "b"]), ignore_blanks=False
        ),
        1,
        "the same",
    )
    check(d.compare_docx_files_and_ignore_new_lines(make(["a", "c"]), make(["a", "b"])), 0, "differs")
    # with fuzzy_match: 'abcd x' vs 'abce x' (the empty line dropped), 2 * 5 / (6 + 6)
    check(
        d.compare_docx_files_and_ignore_new_lines(
            make(["abcd", "", "x"]), make(["abce", "x"]), fuzzy_match=True
        ),
        5 / 6,
        "text similarity 0.833",
    )
    check(d.compare_docx_lines(make(["b", "a", ""]), make(["a", "b"])), 1, "2 lines equal")
    check(d.compare_docx_lines(make(["a"]), make(["a", "b"])), 0, "missing ['b']")


def _table(cells: list[list[str]]) -> Edit:
    def edit(document: Any) -> None:
        table = document.add_table(rows=len(cells), cols=len(cells[0]))
        for r, row in enumerate(cells):
            for c, text in enumerate(row):
                table.cell(r, c).text = text

    return edit


def test_compare_docx_tables(make: Callable[..., str]) -> None:
    gold = make([], _table([["a", "b"], ["1", "2"]]))
    check(
        d.compare_docx_tables(make([], _table([["a ", "b"], ["1", "2"]])), gold),
        1,
        "1 tables equal",
    )
    check(
        d.compare_docx_tables(make([], _table([["a", "b"], ["1", "3"]])), gold),
        0,
        "cell (1,1): got '3'",
    )
    check(
        d.compare_docx_tables(make([], _table([["a", "b"]])), gold),
        0,
        "table 0 is 1x2, expected 2x2",
    )
    check(d.compare_docx_tables(make([]), gold), 0, "0 tables, expected 1")


def _spacing(value: float) -> Edit:
    def edit(document: Any) -> None:
        for paragraph in document.paragraphs:
            paragraph.paragraph_format.line_spacing = value

    return edit


def test_compare_line_spacing(make: Callable[..., str]) -> None:
    gold = make(["a", "b"], _spacing(2.0))
    check(
        d.compare_line_spacing(make(["a", "b"], _spacing(2.0)), gold),
        1,
        "line spacing of 2 paragraphs",
    )
    check(
        d.compare_line_spacing(make(["a", "b"], _spacing(1.5)), gold),
        0,
        "paragraph 1 line spacing 1.5, expected 2.0",
    )
    check(d.compare_line_spacing(make(["a", "c"], _spacing(2.0)), gold), 0, "text differs")


def _picture(angle: int) -> Edit:
    def edit(document: Any) -> None:
        stream = io.BytesIO()
        gradient((32, 32)).rotate(angle).save(stream, format="PNG")
        stream.seek(0)
        document.add_picture(stream)

    return edit


def test_compare_docx_images(make: Callable[..., str]) -> None:
    gold = make(["a"], _picture(0))
    check(d.compare_docx_images(make(["a"], _picture(0)), gold), 1, "1 images identical")
    check(d.compare_docx_images(make(["a"], _picture(90)), gold), 0, "pixels differ")
    check(d.compare_docx_images(make(["a"]), gold), 0, "0 images, expected 1")
    check(d.compare_contains_image(make(["a"], _picture(90)), gold), 1, "same paragraphs")
    check(d.compare_contains_image(make(["a", "b"]), gold), 0, "different paragraphs")


def _tabs(position: float, words: int = 3) -> Edit:
    def edit(document: Any) -> None:
        paragraph = document.add_paragraph(" ".join(["w"] * words) + "\trest of it")
        paragraph.paragraph_format.tab_stops.add_tab_stop(Pt(position), WD_TAB_ALIGNMENT.RIGHT)

    return edit


def test_check_tabstops(make: Callable[..., str]) -> None:
    gold = make([], _tabs(400))
    opts = {"word_number_split_by_tabstop": 3, "index": 0}
    check(d.check_tabstops(make([], _tabs(400)), gold, **opts), 1, "position score 1.000")
    # positions 300 vs 400 pt: 1 - 100 / 400
    check(d.check_tabstops(make([], _tabs(300)), gold, **opts), 0.75, "position score 0.750")
    check(
        d.check_tabstops(make([], _tabs(400, words=2)), make([], _tabs(400, words=2)), **opts),
        0,
        "is not 3 words",
    )
    check(d.check_tabstops(make(["other"]), gold), 0, "paragraph texts differ")


def _subscript(flag: bool) -> Edit:
    def edit(document: Any) -> None:
        paragraph = document.add_paragraph("H")
        paragraph.add_run("2").font.subscript = flag
        paragraph.add_run("O")

    return edit


def test_compare_subscript_contains(make: Callable[..., str]) -> None:
    gold = make([], _subscript(True))
    check(d.compare_subscript_contains(make([], _subscript(True)), gold), 1, "subscript run '2'")
    check(d.compare_subscript_contains(make([], _subscript(False)), gold), 0, "no run is subscript")


def _footer(text: str, field: bool = False) -> Edit:
    def edit(document: Any) -> None:
        paragraph = document.sections[0].footer.paragraphs[0]
        paragraph.text = text
        if field:
            from docx.oxml import parse_xml

            paragraph._p.append(
                parse_xml(
                    '<w:fldSimple xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" w:instr=" PAGE "/>'
                )
            )

    return edit


def test_has_page_numbers_in_footers(make: Callable[..., str]) -> None:
    check(d.has_page_numbers_in_footers(make(["a"], _footer("Page 1"))), 1, "all 1 footers")
    check(d.has_page_numbers_in_footers(make(["a"], _footer("Page ", field=True))), 1, "all 1 footers")
    check(
        d.has_page_numbers_in_footers(make(["a"], _footer("Confidential"))),
        0,
        "section 1's footer has no page number",
    )


def _fonts(names: list[str | None], normal: str = "Calibri") -> Edit:
    def edit(document: Any) -> None:
        document.styles["Normal"].font.name = normal
        paragraph = document.add_paragraph()
        for index, name in enumerate(names):
            paragraph.add_run(f"word{index} ").font.name = name

    return edit


def test_compare_font_names(make: Callable[..., str]) -> None:
    rule = {"font_name": "Times New Roman"}
    check(
        d.compare_font_names(make([], _fonts(["Times New Roman", None], normal="Times New Roman")), rule),
        1,
        "every run",
    )
    check(
        d.compare_font_names(make([], _fonts(["Times New Roman", "Arial"])), rule),
        0,
        "uses 'Arial'",
    )
    check(d.compare_font_names(make([], _fonts([None])), rule), 0, "uses 'Calibri'")


def test_is_first_line_centered(make: Callable[..., str]) -> None:
    def centre(document: Any) -> None:
        document.paragraphs[0].alignment = WD_ALIGN_PARAGRAPH.CENTER

    check(d.is_first_line_centered(make(["Title", "body"], centre)), 1, "centred")
    check(d.is_first_line_centered(make(["Title", "body"])), 0, "alignment is None")


def _odt(path: Path, paragraphs: list[str], highlighted: str | None = None) -> str:
    body = "".join(f"<text:p>{p}</text:p>" for p in paragraphs)
    if highlighted is not None:
        body += f'<text:p>x <text:span text:style-name="T1">{highlighted}</text:span></text:p>'
    content = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
        'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" '
        'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
        'xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0">'
        '<office:automatic-styles><style:style style:name="T1" style:family="text">'
        '<style:text-properties fo:background-color="#ffff00"/></style:style></office:automatic-styles>'
        f"<office:body><office:text>{body}</office:text></office:body></office:document-content>"
    )
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("mimetype", "application/vnd.oasis.opendocument.text")
        archive.writestr("content.xml", content)
    return str(path)


def test_check_highlighted_words(tmp_path: Path) -> None:
    gold = _odt(tmp_path / "gold.odt", ["Hello", "x fixed"])
    plain = _odt(tmp_path / "plain.odt", ["Hello", "x fixed"])
    marked = _odt(tmp_path / "marked.odt", ["Hello"], highlighted="fixed")
    check(d.check_highlighted_words(plain, gold), 1, "nothing highlighted")
    check(d.check_highlighted_words(marked, gold), 0, "still highlighted: ['fixed']")
    check(d.check_highlighted_words(_odt(tmp_path / "o.odt", ["Bye"]), gold), 0, "text differs")
    check(
        d.compare_highlighted_text(marked, _odt(tmp_path / "m2.odt", ["Hello"], highlighted="fixed")),
        1,
        "1 highlighted spans",
    )
    check(d.compare_highlighted_text(marked, gold), 0, "expected []")


@pytest.fixture(scope="module")
def libreoffice_odts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """.odt files written by LibreOffice from .docx files made with python-docx."""
    from docx.enum.text import WD_COLOR_INDEX

    folder = tmp_path_factory.mktemp("lo")

    def source(name: str, highlight: bool, last: str = "fixed") -> Path:
        document = Document()
        document.add_paragraph("Hello")
        paragraph = document.add_paragraph("x ")
        run = paragraph.add_run(last)
        if highlight:
            run.font.highlight_color = WD_COLOR_INDEX.YELLOW
        document.save(str(folder / f"{name}.docx"))
        return folder / f"{name}.docx"

    sources = [
        source("plain", False),
        source("marked", True),
        source("marked2", True),
        source("other", False, "broken"),
    ]
    return {p.stem: str(p) for p in libreoffice_convert(sources, "odt", folder)}


@pytest.mark.parametrize(
    ("metric", "result", "expected", "value", "reason"),
    [
        (d.check_highlighted_words, "plain", "plain", 1, "text equal and nothing highlighted"),
        (d.check_highlighted_words, "marked", "plain", 0, "still highlighted: ['fixed']"),
        (d.check_highlighted_words, "other", "plain", 0, "text differs at character 8"),
        (d.compare_highlighted_text, "marked", "marked2", 1, "1 highlighted spans as expected"),
        (d.compare_highlighted_text, "plain", "marked", 0, "highlighted [], expected ['fixed']"),
        (d.compare_docx_files, "marked", "plain", 1, "the text is the same (13 characters"),
        (d.compare_docx_files, "other", "plain", 0, "got 'broken', expected 'fixed'"),
    ],
)
def test_odt_metrics_on_libreoffice_files(
    libreoffice_odts: dict[str, str],
    metric: Callable[..., Any],
    result: str,
    expected: str,
    value: float,
    reason: str,
) -> None:
    check(metric(libreoffice_odts[result], libreoffice_odts[expected]), value, reason)


def test_compare_unique_train_records(make: Callable[..., str]) -> None:
    original = make(["06:00:01, T1, S1, 1", "06:00:05, T2, S2, 1", "06:10:00, T1, S3, 2"])
    gold = make(["06:00:01, T1, S1, 1", "06:00:05, T2, S2, 1"])
    check(
        d.compare_unique_train_records(
            make(["06:00:01, T1, S1, 1", "06:00:05, T2, S2, 1"]), [gold, original]
        ),
        1,
        "2 unique train records",
    )
    check(
        d.compare_unique_train_records(
            make(["06:00:01, T1, S1, 1", "06:10:00, T1, S3, 2"]), [gold, original]
        ),
        0,
        "not unique",
    )
    check(
        d.compare_unique_train_records(make(["06:00:01, T9, S1, 1"]), [gold, original]),
        0,
        "is not in the original",
    )
    check(
        d.compare_unique_train_records(make(["06:00:01, T1, S1, 1"]), [gold, original]),
        0,
        "sets differ",
    )
    check(d.compare_unique_train_records(make(["a"]), [gold]), 0, "no gold and original")


def _strike_last(flag: bool) -> Edit:
    def edit(document: Any) -> None:
        for run in document.paragraphs[-1].runs:
            run.font.strike = flag

    return edit


def test_evaluate_strike_through_last_paragraph(make: Callable[..., str]) -> None:
    gold = make(["Keep", "Redundant words"])
    check(
        d.evaluate_strike_through_last_paragraph(make(["Keep", "Redundant words"], _strike_last(True)), gold),
        1,
        "struck through",
    )
    check(
        d.evaluate_strike_through_last_paragraph(make(["Keep", "Redundant words"]), gold),
        0,
        "not struck through",
    )


def _coloured(colours: dict[str, tuple[int, int, int]]) -> Edit:
    def edit(document: Any) -> None:
        table = document.add_table(rows=1, cols=len(colours))
        for index, (word, rgb) in enumerate(colours.items()):
            table.cell(0, index).paragraphs[0].add_run(word).font.color.rgb = RGBColor(*rgb)

    return edit


def test_evaluate_colored_words_in_tables(make: Callable[..., str]) -> None:
    good = {"apple": (255, 0, 0), "big": (0, 0, 255), "under": (250, 2, 2)}
    gold = make([], _coloured(good))
    check(
        d.evaluate_colored_words_in_tables(make([], _coloured(good)), gold),
        1,
        "coloured by their first letter",
    )
    bad = {"apple": (255, 0, 0), "big": (255, 0, 0), "under": (250, 2, 2)}
    check(
        d.evaluate_colored_words_in_tables(make([], _coloured(bad)), gold),
        0,
        "word 'big' is #FF0000, expected blue",
    )


def _italic(size: int) -> Edit:
    def edit(document: Any) -> None:
        paragraph = document.add_paragraph("normal ")
        run = paragraph.add_run("slanted")
        run.font.italic = True
        run.font.size = Pt(size)

    return edit


def test_check_italic_font_size_14(make: Callable[..., str]) -> None:
    gold = make([], _italic(14))
    check(d.check_italic_font_size_14(make([], _italic(14)), gold), 1, "every italic run is 14 pt")
    check(d.check_italic_font_size_14(make([], _italic(12)), gold), 0, "is 12.0 pt, expected 14")


def _breaks(count: int) -> Edit:
    def edit(document: Any) -> None:
        for _ in range(count):
            document.add_paragraph().add_run().add_break(WD_BREAK.PAGE)

    return edit


def test_contains_page_break(make: Callable[..., str]) -> None:
    check(
        d.contains_page_break(make(["a"], _breaks(5)), {"page_break_count": 5}),
        1,
        "5 page break(s)",
    )
    check(
        d.contains_page_break(make(["a"], _breaks(4)), {"page_break_count": 5}),
        0,
        "4 page breaks, expected 5",
    )
    check(d.contains_page_break(make(["a"]), None), 0, "no page break")


REGISTRY = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry">
<item oor:path="/org.openoffice.Office.Writer/DefaultFont"><prop oor:name="Standard" oor:op="fuse"><value>{font}</value></prop></item>
</oor:items>"""


def test_find_default_font(tmp_path: Path) -> None:
    path = tmp_path / "registrymodifications.xcu"
    path.write_text(REGISTRY.format(font="Times New Roman"))
    check(
        d.find_default_font(str(path), {"font_name": "Times New Roman"}),
        1,
        "default font 'Times New Roman'",
    )
    path.write_text(REGISTRY.format(font="Liberation Serif"))
    check(d.find_default_font(str(path), {"font_name": "Times New Roman"}), 0, "['Liberation Serif']")


def test_compare_image_text(tmp_path: Path) -> None:
    import shutil

    from PIL import Image, ImageDraw, ImageFont

    if shutil.which("tesseract") is None:
        pytest.skip("tesseract is not installed")
    image = Image.new("RGB", (400, 100), "white")
    ImageDraw.Draw(image).text(
        (20, 20), "Desktop Documents", fill="black", font=ImageFont.load_default(size=36)
    )
    image.save(tmp_path / "ls.png")
    check(
        d.compare_image_text(str(tmp_path / "ls.png"), {"type": "text", "text": "Documents"}),
        1,
        "OCR found 'Documents'",
    )
    check(
        d.compare_image_text(str(tmp_path / "ls.png"), {"type": "text", "text": "Pictures"}),
        0,
        "lacks 'Pictures'",
    )


def test_compare_references(make: Callable[..., str]) -> None:
    gold = make(["Essay", "References", "Smith, J. (2020). Title.", "Doe, A. (2019). Other."])
    options = {"content_only": True, "reference_base_result": 0.5}
    check(
        d.compare_references(
            make(["Draft", "References", "Smith, J. (2020). Title.", "Doe, A. (2019). Other."]),
            gold,
            **options,
        ),
        1,
        "1.000 above the base",
    )
    check(
        d.compare_references(make(["References", "zzzz", "qqqq"]), gold, **options),
        0,
        "below the base",
    )
    check(
        d.compare_references(make(["References", "Smith"]), gold, **options),
        0,
        "1 references, expected 2",
    )


@pytest.mark.parametrize(
    ("got", "options", "value", "reason"),
    [
        # ratio('abcd', 'abce') = 2 * 3 / 8 = 0.75, ratio('wxyz', 'wxyz') = 1: mean 0.875,
        # rescaled above the default base 0.5: (0.875 - 0.5) / (1 - 0.5) = 0.75
        (["abce", "wxyz"], {}, 0.75, "reference similarity 0.875, 0.750 above the base 0.5"),
        # with base 0.75: (0.875 - 0.75) / 0.25 = 0.5
        (["abce", "wxyz"], {"reference_base_result": 0.75}, 0.5, "0.500 above the base 0.75"),
        # with base 0.9 the mean 0.875 is below it
        (["abce", "wxyz"], {"reference_base_result": 0.9}, 0, "0.875 is below the base 0.9"),
        (["abcd", "wxyz"], {}, 1, "reference similarity 1.000, 1.000 above the base 0.5"),
    ],
)
def test_compare_references_by_hand(
    make: Callable[..., str], got: list[str], options: dict[str, Any], value: float, reason: str
) -> None:
    gold = make(["Essay", "References", "abcd", "", "wxyz"])
    check(d.compare_references(make(["Essay", "References", *got]), gold, **options), value, reason)
