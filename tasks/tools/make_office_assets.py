"""Generate the documents of the LibreOffice and office multi_apps tasks (deterministic).

Run from the repository root: ``.venv/bin/python tasks/tools/make_office_assets.py``.
Every file is written under ``tasks/<domain>/assets/<task id>/``; the task JSON files name
them with relative URLs. Zip entries get a fixed timestamp and document properties a fixed
date, so two runs produce byte-identical files.
"""

from __future__ import annotations

import datetime
import re
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

TASKS = Path(__file__).resolve().parent.parent
FIXED_DATE = datetime.datetime(2024, 3, 1, 9, 0, 0)

# task ids
CALC_TOTAL = "066bcec1-91d2-4373-ab4b-bf1e0022879f"
CALC_RENAME = "76548e3e-a108-4096-811c-ebac7d278297"
CALC_BOLD = "928fa83a-7e1e-4329-b1b7-7ec1348584eb"
CALC_AVERAGE = "47f5342c-b448-48be-8dbd-90ad5c998844"
WRITER_CENTER = "17704f4f-bb28-441e-a3bb-b6e012a5b22c"
WRITER_FONT = "32dec839-cc3e-4559-b209-563dba2dd297"
WRITER_PAGENUM = "17da7c22-28e2-4b88-9d62-fdba6fd901a0"
WRITER_REPLACE = "c022aad4-b421-46ae-850f-50c48be0dfac"
IMPRESS_PORTRAIT = "5d4cb12b-100b-4b93-9a33-459478720bc6"
IMPRESS_DELETE = "33e8e193-e8a5-4a3e-8369-078e1dcbc0f2"
IMPRESS_STRIKE = "172dbc81-7b07-4e2c-95d8-e21edeebb0bf"
IMPRESS_NARRATION = "d4cabf3b-e8f6-4eb2-9b35-35dd737e22f4"
MULTI_CALC_WRITER = "1484eb32-dc4c-4719-9942-f2316490c297"
MULTI_CALC_IMPRESS = "7a95a30d-4cc1-4768-be43-85a395fe17a6"

BUDGET_ROWS = [
    ("Rent", 1200, 1200, 1200),
    ("Groceries", 415, 388, 452),
    ("Utilities", 162, 171, 139),
    ("Insurance", 96, 96, 96),
    ("Fuel", 130, 118, 144),
    ("Phone", 45, 45, 52),
]

ROSTER_ROWS = [
    ("Name", "Role", "Extension"),
    ("Alice Moreau", "Team lead", 2101),
    ("Bram de Vries", "Backend", 2102),
    ("Chen Wei", "Frontend", 2103),
    ("Dana Okafor", "QA", 2104),
    ("Emil Novak", "Designer", 2105),
]

SALES_ROWS = [
    ("Region", "July", "August", "September", "Quarter"),
    ("North", 18250, 17600, 19420, 55270),
    ("South", 12900, 13350, 12100, 38350),
    ("East", 15400, 16020, 16875, 48295),
    ("West", 21030, 20480, 22310, 63820),
]

GRADE_ROWS = [
    ("Student", "Midterm", "Final", "Average"),
    ("Ines", 72, 85, None),
    ("Jonas", 91, 88, None),
    ("Kaori", 64, 70, None),
    ("Luca", 80, 93, None),
    ("Maya", 58, 77, None),
    ("Noor", 95, 97, None),
]

PICNIC_PARAGRAPHS = [
    "Annual Team Picnic",
    "Date: Saturday, 15 June, from noon until 5 pm.",
    "Place: Riverside Park, next to the boat house.",
    "Bring something to share; drinks and grills are provided.",
]

ESSAY_PARAGRAPHS = [
    "Why Cities Need Trees",
    "Street trees lower summer temperatures by shading asphalt and cooling the air through evaporation.",
    "They also slow storm water, giving drains time to cope with heavy rain.",
    "Finally, people simply walk more on leafy streets, which is good for local shops.",
]

REPORT_PARAGRAPHS = [
    "Quarterly Operations Report",
    "Summary",
    "Deliveries grew steadily over the quarter while returns stayed flat.",
    "Warehouse",
    "The new shelving in hall B added roughly a fifth more pallet space.",
    "Staffing",
    "Two drivers joined in August; one vacancy remains open.",
]

OLD_NAME, NEW_NAME = "Brightline", "Clearpath"
NEWSLETTER_PARAGRAPHS = [
    "{name} Monthly Newsletter",
    "Welcome to the spring edition of the {name} newsletter.",
    "This month {name} opened its second office in Lyon.",
    "Questions? Write to the {name} team at any time.",
]

MEMO_PARAGRAPHS = [
    "Memo: First quarter household spending",
    "To: Sam",
    "Our spending for January to March came to {amount} in total.",
    "Let us review the grocery budget before the summer.",
]


def _normalise_zip(path: Path) -> None:
    """Rewrite an OOXML zip with fixed entry timestamps, so the bytes are reproducible."""
    with zipfile.ZipFile(path) as source:
        entries = [(info.filename, source.read(info)) for info in source.infolist()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as target:
        for name, data in entries:
            if name == "docProps/core.xml":  # openpyxl stamps "modified" with the time of saving
                data = re.sub(rb"(<dcterms:modified[^>]*>)[^<]*", rb"\g<1>2024-03-01T09:00:00Z", data)
            info = zipfile.ZipInfo(name, date_time=(2024, 3, 1, 9, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            target.writestr(info, data)


def _save(saver: Callable[[str], None], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    saver(str(path))
    _normalise_zip(path)
    print(f"wrote {path.relative_to(TASKS)}")


def _fix_props(props: Any) -> None:
    props.creator = "pytest-osworld"
    props.created = FIXED_DATE
    props.modified = FIXED_DATE
    if hasattr(props, "last_modified_by"):
        props.last_modified_by = "pytest-osworld"


# --- spreadsheets -------------------------------------------------------------------------


def _workbook(rows: list[tuple[Any, ...]], title: str = "Sheet1") -> Any:
    from openpyxl import Workbook

    book = Workbook()
    _fix_props(book.properties)
    sheet = book.active
    sheet.title = title
    for row in rows:
        sheet.append(list(row))
    return book


def make_calc_total() -> None:
    """Quarterly household budget without its total row; the gold has the totals."""
    folder = TASKS / "libreoffice_calc" / "assets" / CALC_TOTAL
    rows: list[tuple[Any, ...]] = [("Category", "January", "February", "March"), *BUDGET_ROWS]
    _save(_workbook(rows, "Budget").save, folder / "household_budget.xlsx")
    totals = tuple(sum(r[i] for r in BUDGET_ROWS) for i in (1, 2, 3))
    _save(_workbook([*rows, ("Total", *totals)], "Budget").save, folder / "gold.xlsx")


def make_calc_rename() -> None:
    """A team roster on a sheet still called Sheet1; the gold's sheet is "Roster 2024"."""
    folder = TASKS / "libreoffice_calc" / "assets" / CALC_RENAME
    _save(_workbook(ROSTER_ROWS).save, folder / "team_roster.xlsx")
    _save(_workbook(ROSTER_ROWS, "Roster 2024").save, folder / "gold.xlsx")


def make_calc_bold() -> None:
    """Regional sales with a plain header row; the gold's header cells are bold."""
    from openpyxl.styles import Font

    folder = TASKS / "libreoffice_calc" / "assets" / CALC_BOLD
    _save(_workbook(SALES_ROWS).save, folder / "q3_sales.xlsx")
    gold = _workbook(SALES_ROWS)
    for cell in gold.active[1]:
        cell.font = Font(bold=True)
    _save(gold.save, folder / "gold.xlsx")


def make_calc_average() -> None:
    """Exam marks with an empty Average column; the gold only has the frozen header row."""
    folder = TASKS / "libreoffice_calc" / "assets" / CALC_AVERAGE
    _save(_workbook(GRADE_ROWS, "Marks").save, folder / "exam_marks.xlsx")
    gold = _workbook(GRADE_ROWS, "Marks")
    gold.active.freeze_panes = "A2"
    _save(gold.save, folder / "gold_panes.xlsx")


# --- text documents -----------------------------------------------------------------------


def _document(paragraphs: list[str], headings: tuple[int, ...] = ()) -> Any:
    from docx import Document

    document = Document()
    _fix_props(document.core_properties)
    for number, text in enumerate(paragraphs):
        style = "Heading 1" if number in headings else None
        document.add_paragraph(text, style=style)
    return document


def make_writer_center() -> None:
    """A picnic invitation whose title is left-aligned."""
    folder = TASKS / "libreoffice_writer" / "assets" / WRITER_CENTER
    _save(_document(PICNIC_PARAGRAPHS).save, folder / "picnic_invitation.docx")


def make_writer_font() -> None:
    """A short essay in the template's default font (Calibri)."""
    folder = TASKS / "libreoffice_writer" / "assets" / WRITER_FONT
    _save(_document(ESSAY_PARAGRAPHS).save, folder / "trees_essay.docx")


def make_writer_pagenum() -> None:
    """A report long enough for two pages, with no footer."""
    folder = TASKS / "libreoffice_writer" / "assets" / WRITER_PAGENUM
    from docx.enum.text import WD_BREAK

    document = _document(REPORT_PARAGRAPHS, headings=(1, 3, 5))
    document.paragraphs[4].runs[0].add_break(WD_BREAK.PAGE)
    _save(document.save, folder / "operations_report.docx")


def make_writer_replace() -> None:
    """A newsletter naming the company's old name; the gold uses the new one."""
    folder = TASKS / "libreoffice_writer" / "assets" / WRITER_REPLACE
    old = [p.format(name=OLD_NAME) for p in NEWSLETTER_PARAGRAPHS]
    new = [p.format(name=NEW_NAME) for p in NEWSLETTER_PARAGRAPHS]
    _save(_document(old).save, folder / "newsletter.docx")
    _save(_document(new).save, folder / "gold.docx")


# --- presentations ------------------------------------------------------------------------


def _deck(slides: list[tuple[str, list[str]]]) -> Any:
    from pptx import Presentation

    deck = Presentation()
    _fix_props(deck.core_properties)
    for title, bullets in slides:
        if bullets:
            slide = deck.slides.add_slide(deck.slide_layouts[1])
            slide.shapes.title.text = title
            body = slide.placeholders[1].text_frame
            body.text = bullets[0]
            for bullet in bullets[1:]:
                body.add_paragraph().text = bullet
        else:
            slide = deck.slides.add_slide(deck.slide_layouts[0])
            slide.shapes.title.text = title
            slide.placeholders[1].text = "Spring 2024"
    return deck


PITCH_SLIDES = [
    ("Community Garden Project", []),
    ("What we need", ["Six raised beds", "A water butt", "Volunteers on Saturdays"]),
]

LECTURE_SLIDES = [
    ("Introduction to Tides", []),
    ("What causes tides", ["The Moon's gravity", "The Sun's gravity, about half as strong"]),
    ("Spring and neap tides", ["Spring: Sun and Moon aligned", "Neap: at right angles"]),
    ("What causes tides", ["The Moon's gravity", "The Sun's gravity, about half as strong"]),
    ("Questions", ["Thank you"]),
]

TRIP_SLIDES = [
    ("Study Trip Planning", []),
    ("Itinerary", ["Museum visit", "Harbour boat tour", "Lunch at the market"]),
]

QUARTER_SLIDES = [
    ("Household Review", []),
    ("Spending", ["First quarter total: {amount}", "Largest item: rent"]),
]


def make_impress_portrait() -> None:
    """A landscape pitch deck (to be turned into portrait for a poster)."""
    folder = TASKS / "libreoffice_impress" / "assets" / IMPRESS_PORTRAIT
    _save(_deck(PITCH_SLIDES).save, folder / "garden_pitch.pptx")


def make_impress_narration() -> None:
    """The pitch deck again, for the (infeasible) narration-recording request."""
    folder = TASKS / "libreoffice_impress" / "assets" / IMPRESS_NARRATION
    _save(_deck(PITCH_SLIDES).save, folder / "garden_pitch.pptx")


def make_impress_delete() -> None:
    """A lecture deck with slide 4 an accidental copy of slide 2; the gold lacks it."""
    folder = TASKS / "libreoffice_impress" / "assets" / IMPRESS_DELETE
    _save(_deck(LECTURE_SLIDES).save, folder / "tides_lecture.pptx")
    _save(_deck(LECTURE_SLIDES[:3] + LECTURE_SLIDES[4:]).save, folder / "gold.pptx")


def make_impress_strike() -> None:
    """A trip deck where one itinerary item has been cancelled; the gold strikes it through."""
    folder = TASKS / "libreoffice_impress" / "assets" / IMPRESS_STRIKE
    _save(_deck(TRIP_SLIDES).save, folder / "study_trip.pptx")
    gold = _deck(TRIP_SLIDES)
    cancelled = gold.slides[1].placeholders[1].text_frame.paragraphs[1].runs[0]
    cancelled.font._element.set("strike", "sngStrike")
    _save(gold.save, folder / "gold.pptx")


# --- multi-app ----------------------------------------------------------------------------


def _budget_total() -> int:
    return sum(sum(r[1:]) for r in BUDGET_ROWS)


def make_multi_calc_writer() -> None:
    """A budget with a grand total cell, and a memo whose amount is still a placeholder."""
    folder = TASKS / "multi_apps" / "assets" / MULTI_CALC_WRITER
    rows: list[tuple[Any, ...]] = [("Category", "January", "February", "March", "Quarter")]
    rows += [(*r, sum(r[1:])) for r in BUDGET_ROWS]
    book = _workbook(rows, "Q1")
    sheet = book.active
    sheet.append(["Grand total", None, None, None, f"=SUM(E2:E{len(rows)})"])
    for row in range(2, len(rows) + 1):
        sheet[f"E{row}"] = f"=SUM(B{row}:D{row})"
    _save(book.save, folder / "q1_spending.xlsx")
    memo = [p.format(amount="XXXX") for p in MEMO_PARAGRAPHS]
    gold = [p.format(amount=str(_budget_total())) for p in MEMO_PARAGRAPHS]
    _save(_document(memo).save, folder / "spending_memo.docx")
    _save(_document(gold).save, folder / "gold.docx")


def make_multi_calc_impress() -> None:
    """The same budget, and a review deck whose slide 2 still says XXXX for the total."""
    folder = TASKS / "multi_apps" / "assets" / MULTI_CALC_IMPRESS
    rows: list[tuple[Any, ...]] = [("Category", "January", "February", "March")]
    book = _workbook([*rows, *BUDGET_ROWS], "Q1")
    sheet = book.active
    sheet.append(["Total", "=SUM(B2:B7)", "=SUM(C2:C7)", "=SUM(D2:D7)"])
    sheet.append(["Quarter total", "=SUM(B8:D8)"])
    _save(book.save, folder / "q1_budget.xlsx")

    def slides(amount: str) -> list[tuple[str, list[str]]]:
        return [(t, [b.format(amount=amount) for b in bs]) for t, bs in QUARTER_SLIDES]

    _save(_deck(slides("XXXX")).save, folder / "household_review.pptx")
    _save(_deck(slides(str(_budget_total()))).save, folder / "gold.pptx")


def main() -> None:
    """Write every asset."""
    make_calc_total()
    make_calc_rename()
    make_calc_bold()
    make_calc_average()
    make_writer_center()
    make_writer_font()
    make_writer_pagenum()
    make_writer_replace()
    make_impress_portrait()
    make_impress_delete()
    make_impress_strike()
    make_impress_narration()
    make_multi_calc_writer()
    make_multi_calc_impress()


if __name__ == "__main__":
    main()
