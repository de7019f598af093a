"""Pins for the deliberate differences from OSWorld that metric parity finds (docs/parity.md).

Each test fixes our side of one documented disagreement: where OSWorld's code scores a
case differently, these say what we score and why it is the intended behaviour.
"""

from __future__ import annotations

from pathlib import Path

from pytest_osworld.evaluators.metrics import METRICS


def score(name: str, *args: object, **options: object) -> float:
    """Our score of metric ``name`` on ``args``."""
    return float(METRICS.get(name)(*args, **options))


def _deck(path: Path, title_top: int) -> str:
    from pptx import Presentation
    from pptx.util import Emu

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    title = slide.shapes.title
    assert title is not None
    title.text = "Quarterly figures"
    title.top = Emu(title_top)
    deck.save(str(path))
    return str(path)


def test_compare_pptx_files_missing_result_scores_0(tmp_path: Path) -> None:
    # OSWorld opens python-pptx's default deck for None, so a missing result can pass.
    gold = _deck(tmp_path / "gold.pptx", 274638)
    assert score("compare_pptx_files", None, gold) == 0.0
    assert score("compare_pptx_files", gold, gold) == 1.0


def test_compare_pptx_files_title_position_checks_every_deck(tmp_path: Path) -> None:
    # OSWorld checks one hard-coded deck and passes any other; we check every title: the
    # result's title must sit lower than the original's and in the lower half.
    top = _deck(tmp_path / "top.pptx", 274638)
    bottom = _deck(tmp_path / "bottom.pptx", 5_000_000)
    options = {"examine_title_bottom_position": True, "examine_shape": False}
    assert score("compare_pptx_files", top, top, **options) == 0.0
    assert score("compare_pptx_files", bottom, top, **options) == 1.0


def test_compare_pdfs_and_compare_videos_missing_result_score_0(tmp_path: Path) -> None:
    gold = tmp_path / "gold.pdf"
    gold.write_bytes(b"%PDF-1.4\n%%EOF\n")
    assert score("compare_pdfs", None, str(gold)) == 0.0
    assert score("compare_videos", None, str(gold)) == 0.0


def test_compare_htmls_empty_document_does_not_match(tmp_path: Path) -> None:
    # OSWorld walks both trees with zip(), so an empty page matches any page.
    page, empty = tmp_path / "page.html", tmp_path / "empty.html"
    page.write_text("<html><body><p>Total 42</p></body></html>")
    empty.write_text("")
    assert score("compare_htmls", str(empty), str(page)) == 0.0
    assert score("compare_htmls", str(page), str(page)) == 1.0


def _docx(path: Path, lines: list[str]) -> str:
    import docx

    document = docx.Document()
    for line in lines:
        document.add_paragraph(line)
    document.save(str(path))
    return str(path)


def test_compare_references_needs_a_references_section_in_the_gold(tmp_path: Path) -> None:
    plain = _docx(tmp_path / "plain.docx", ["Intro", "Body text"])
    with_refs = _docx(tmp_path / "refs.docx", ["Intro", "References", "[1] A. Author, 2020."])
    options = {"content_only": True, "reference_base_result": 0.6}
    assert score("compare_references", plain, plain, **options) == 0.0
    assert score("compare_references", with_refs, with_refs, **options) == 1.0


def test_vlc_commented_setting_is_not_the_users_setting(tmp_path: Path) -> None:
    # OSWorld also reads '#key=value' lines (VLC writes defaults commented out).
    config = tmp_path / "vlcrc"
    config.write_text("[qt]\n#qt-bgcone=0\n#play-and-exit=1\n#one-instance-when-started-from-file=0\n")
    assert score("check_qt_bgcone", str(config), {"expected_qt_bgcone": 0}) == 0.0
    assert score("check_play_and_exit", str(config), {"expected_play_and_exit": 0}) == 1.0
    rules = {"expected_one_instance_when_started_from_file": 0}
    assert score("check_one_instance_when_started_from_file", str(config), rules) == 0.0


def test_undecodable_bytes_are_replaced_not_fatal(tmp_path: Path) -> None:
    # OSWorld raises UnicodeDecodeError (scored 0); we read with replacement characters.
    config = tmp_path / "vlcrc"
    config.write_bytes(b"\xff\xfe[qt]\nplay-and-exit=1\n")
    assert score("check_play_and_exit", str(config), {"expected_play_and_exit": 1}) == 1.0
    table = tmp_path / "accounts.csv"
    table.write_bytes(b"url,user\n\xffimap://mail.example,me@example.org\n")
    rules = {"unexpect": [{"url": "imap://outlook.office365.com", "user": "x@outlook.com"}]}
    assert score("check_csv", str(table), rules) == 1.0
    rules = {"unexpect": [{"user": "me@example.org"}]}
    assert score("check_csv", str(table), rules) == 0.0


def test_compare_table_sheet_fuzzy_identical_books_with_empty_cells_pass(tmp_path: Path) -> None:
    # OSWorld's 'includes' rule calls float() on an empty cell and raises.
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["Name", "Street", "Phone"])
    sheet.append(["Ann", "Main St", None])
    path = tmp_path / "book.xlsx"
    book.save(path)
    rule = {
        "type": "sheet_fuzzy",
        "sheet_idx0": "RNSheet",
        "sheet_idx1": "ENSheet",
        "rules": [{"range": ["C1:C3"], "type": "includes", "trim_leadings": "+ ", "ignore_chars": " ()-"}],
    }
    assert score("compare_table", str(path), str(path), rules=[rule]) == 1.0


def test_compare_table_rule_on_a_missing_sheet_scores_0(tmp_path: Path) -> None:
    # OSWorld's sheet_fuzzy compares no cell of a missing sheet and scores 1.
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["Name", 1])
    path = tmp_path / "book.xlsx"
    book.save(path)
    fuzzy = {"range": ["A1:A3"], "type": "exact_match"}
    missing = {"type": "sheet_fuzzy", "sheet_idx0": "RNNope", "sheet_idx1": "ENNope", "rules": [fuzzy]}
    present = {**missing, "sheet_idx0": "RNSheet", "sheet_idx1": "ENSheet"}
    assert score("compare_table", str(path), str(path), rules=[missing]) == 0.0
    assert score("compare_table", str(path), str(path), rules=[present]) == 1.0


def test_check_thunderbird_folder_two_empty_folders_are_equal(tmp_path: Path) -> None:
    empty, text = tmp_path / "a", tmp_path / "b"
    empty.write_text("")
    text.write_text("no messages here\n")
    assert score("check_thunderbird_folder", [str(empty)], [str(text)]) == 1.0
