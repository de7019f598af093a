"""Small real files of each kind the metrics read, in variants for the parity cases.

For every kind (extension) a *family* of files is written: ``base``, ``same`` (a byte copy
of base), ``near`` (one cell / run / shape property / pixel region / character changed),
``other`` (a different file of the same kind), ``empty`` (0 bytes) and ``malformed``
(bytes that are not a valid file of the kind). Several seeds give several families.
"""

from __future__ import annotations

import random
import shutil
from collections.abc import Callable
from pathlib import Path

VARIANTS: tuple[str, ...] = ("base", "same", "near", "other", "empty", "malformed")

Writer = Callable[[Path, int, str], None]


def _words(rng: random.Random, count: int) -> list[str]:
    vocab = ["alpha", "beta", "gamma", "delta", "Sales", "Total", "north", "south", "42", "3.5"]
    return [rng.choice(vocab) for _ in range(count)]


def write_xlsx(path: Path, seed: int, variant: str) -> None:
    """A two-sheet workbook; ``near`` changes one cell, ``other`` uses another seed."""
    import openpyxl

    rng = random.Random(seed if variant != "other" else seed + 1000)
    book = openpyxl.Workbook()
    sheet = book.active
    if sheet is None:
        raise RuntimeError("openpyxl made a workbook without an active sheet")
    sheet.title = "Sheet1"
    sheet.append(["Name", "Qty", "Price", "Total"])
    for row in range(2, 8):
        qty, price = rng.randint(1, 9), round(rng.uniform(1, 20), 2)
        sheet.append([rng.choice(["pen", "ink", "pad", "cup"]), qty, price, f"=B{row}*C{row}"])
    if variant == "near":
        sheet["B3"] = (sheet["B3"].value or 0) + 1
    second = book.create_sheet("Sheet2")
    for row in range(1, 5):
        second.append([row, row * 2, f"r{row}"])
    book.save(path)


def write_docx(path: Path, seed: int, variant: str) -> None:
    """A document with headings, runs and a table; ``near`` changes one run's text."""
    import docx

    rng = random.Random(seed if variant != "other" else seed + 1000)
    document = docx.Document()
    document.add_heading("Report " + rng.choice(["A", "B", "C"]), level=1)
    for index in range(4):
        paragraph = document.add_paragraph()
        words = _words(rng, 6)
        run = paragraph.add_run(" ".join(words))
        run.bold = index == 1
        tail = paragraph.add_run(" end.")
        if variant == "near" and index == 2:
            tail.text = " end!"
    table = document.add_table(rows=2, cols=2)
    for r in range(2):
        for c in range(2):
            table.cell(r, c).text = f"{r}{c}{rng.randint(0, 9)}"
    document.save(str(path))


def write_pptx(path: Path, seed: int, variant: str) -> None:
    """A two-slide deck with a title and a text box; ``near`` moves one shape."""
    from pptx import Presentation
    from pptx.util import Emu, Pt

    rng = random.Random(seed if variant != "other" else seed + 1000)
    deck = Presentation()
    for index in range(2):
        slide = deck.slides.add_slide(deck.slide_layouts[5])
        if slide.shapes.title is not None:
            slide.shapes.title.text = "Title " + " ".join(_words(rng, 2))
        box = slide.shapes.add_textbox(Emu(914400), Emu(2743200), Emu(4572000), Emu(914400))
        box.text_frame.text = " ".join(_words(rng, 5))
        box.text_frame.paragraphs[0].runs[0].font.size = Pt(18)
        if variant == "near" and index == 1:
            box.left = Emu(914400 + 457200)
    deck.save(str(path))


def write_image(path: Path, seed: int, variant: str) -> None:
    """A 96x72 photograph-like picture (a smooth colour field with noise).

    ``near`` repaints one region; ``other`` is another photograph.
    """
    from PIL import Image, ImageDraw

    rng = random.Random(seed if variant != "other" else seed + 1000)
    small = Image.new("RGB", (8, 6))
    small.putdata([(rng.randint(0, 255), rng.randint(0, 255), rng.randint(0, 255)) for _ in range(48)])
    image = small.resize((96, 72), Image.Resampling.BICUBIC)
    noise = Image.new("L", (96, 72))
    noise.putdata([min(255, max(0, int(rng.gauss(128, 20)))) for _ in range(96 * 72)])
    image = Image.blend(image, noise.convert("RGB"), 0.15)
    draw = ImageDraw.Draw(image)
    if variant == "near":
        draw.rectangle([0, 0, 8, 8], fill=(255, 255, 255))
    image.convert("RGB").save(path)


def write_text(path: Path, seed: int, variant: str) -> None:
    """Text lines (JSON or CSV when the extension asks); ``near`` changes one character."""
    rng = random.Random(seed if variant != "other" else seed + 1000)
    suffix = path.suffix
    if suffix == ".json":
        size, name = rng.randint(10, 20), rng.choice("abc")
        text = f'{{"editor.fontSize": {size}, "name": "{name}"}}\n'
    elif suffix == ".csv":
        text = "a,b,c\n" + "".join(f"{rng.randint(0, 9)},{rng.randint(0, 9)},x\n" for _ in range(4))
    else:
        text = "".join(" ".join(_words(rng, 5)) + "\n" for _ in range(5))
    if variant == "near":
        text = text[:3] + ("Z" if text[3] != "Z" else "Y") + text[4:]
    path.write_text(text)


def write_vlcrc(path: Path, seed: int, variant: str) -> None:
    """A vlcrc with set, commented and absent keys; ``near`` flips one value."""
    rng = random.Random(seed if variant != "other" else seed + 1000)
    keys = ["qt-bgcone", "qt-minimal-view", "play-and-exit", "one-instance-when-started-from-file"]
    lines = ["[qt] # Qt interface", f"qt-max-volume={rng.choice([125, 200])}"]
    for key in keys:
        value = rng.randint(0, 1)
        if variant == "near" and key == "play-and-exit":
            value = 1 - value
        prefix = "#" if rng.random() < 0.4 else ""
        lines.append(f"{prefix}{key}={value}")
    lines.append("#global-key-play-pause=" if rng.random() < 0.5 else "global-key-play-pause=Space")
    lines.append("qt-slider-colours=153;210;153;20;210;20;255;199;15;245;39;29")
    path.write_text("\n".join(lines) + "\n")


def write_pdf(path: Path, seed: int, variant: str) -> None:
    """A one-page PDF written by hand (text object); ``near`` changes one character."""
    rng = random.Random(seed if variant != "other" else seed + 1000)
    words = " ".join(_words(rng, 4))
    if variant == "near":
        words = "X" + words[1:]
    stream = f"BT /F1 12 Tf 72 720 Td ({words}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path.write_bytes(bytes(out))


#: Extension -> writer. Extensions not listed get only empty and malformed files.
WRITERS: dict[str, Writer] = {
    ".xlsx": write_xlsx,
    ".docx": write_docx,
    ".pptx": write_pptx,
    ".png": write_image,
    ".jpg": write_image,
    ".jpeg": write_image,
    ".gif": write_image,
    ".pdf": write_pdf,
    ".txt": write_text,
    ".json": write_text,
    ".csv": write_text,
    ".py": write_text,
    ".js": write_text,
    ".html": write_text,
    ".md": write_text,
    ".out": write_text,
    ".ls": write_text,
    ".bib": write_text,
    ".xcu": write_text,
    ".xml": write_text,
    ".vlcrc": write_vlcrc,
    "": write_text,
}


def family(folder: Path, ext: str, seed: int) -> dict[str, Path]:
    """Write one family of files of kind ``ext`` into ``folder``; variant -> path."""
    folder.mkdir(parents=True, exist_ok=True)
    writer = WRITERS.get(ext)
    paths: dict[str, Path] = {}
    for variant in VARIANTS:
        path = folder / f"s{seed}-{variant}{ext}"
        if variant == "empty":
            path.write_bytes(b"")
        elif variant == "malformed":
            path.write_bytes(b"\x00\x01not a real file\xff" * 4)
        elif variant == "same":
            if writer is None:
                continue
            shutil.copyfile(paths["base"], path)
        elif writer is not None:
            writer(path, seed, variant)
        else:
            continue
        paths[variant] = path
    return paths
