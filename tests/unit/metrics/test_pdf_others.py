"""PDF page counts, MP3 tags and EPUB comparison."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import pytest
from metric_files import check, text_pdf

from pytest_osworld.evaluators.metrics import others, pdf


@pytest.mark.parametrize(
    ("rules", "value", "reason"),
    [
        ({"relation": "eq", "ref_value": 1}, 1, "1 pages (eq 1)"),
        ({"relation": "gt", "ref_value": 1}, 0, "1 pages, not gt 1"),
        ({"relation": "like", "ref_value": 1}, 0, "unknown relation"),
    ],
)
def test_check_pdf_pages(tmp_path: Path, rules: dict[str, Any], value: float, reason: str) -> None:
    check(pdf.check_pdf_pages(str(text_pdf(tmp_path / "a.pdf", ["one page"])), rules), value, reason)


def test_check_pdf_pages_bad_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"garbage")
    check(pdf.check_pdf_pages(str(bad), {"relation": "eq", "ref_value": 1}), 0, "cannot read")


def test_check_mp3_meta(tmp_path: Path) -> None:
    from mutagen.easyid3 import EasyID3

    song = tmp_path / "song.mp3"
    song.write_bytes(b"\xff\xfb\x90\x00" + b"\x00" * 400)
    tags = EasyID3()
    tags["title"] = "Missing You"
    tags["artist"] = "Cheng Xiang"
    tags.save(str(song))
    rules = {
        "title": {"method": "eq", "ref": "Missing You"},
        "artist": {"method": "eq", "ref": "Cheng Xiang"},
    }
    check(others.check_mp3_meta(str(song), rules), 1, "['artist', 'title']")
    check(
        others.check_mp3_meta(str(song), {"title": {"method": "eq", "ref": "Red Daughter"}}),
        0,
        "tag 'title' is 'Missing You'",
    )
    bare = tmp_path / "bare.mp3"
    bare.write_bytes(b"\x00" * 100)
    check(others.check_mp3_meta(str(bare), rules), 0, "no ID3 tags")


def _epub(path: Path, chapters: dict[str, str]) -> str:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("mimetype", "application/epub+zip")
        archive.writestr(
            "toc.ncx",
            '<ncx><navMap><navPoint id="n1" playOrder="1"><text>C1</text></navPoint></navMap></ncx>',
        )
        for name, body in chapters.items():
            archive.writestr(
                name,
                f'<html><body><p id="x{len(body)}">' + body.replace("\n", "</p><p>") + "</p></body></html>",
            )
    return str(path)


def test_compare_epub(tmp_path: Path) -> None:
    gold = _epub(tmp_path / "gold.epub", {"c1.xhtml": "one\ntwo\nthree", "c2.xhtml": "four"})
    same = _epub(tmp_path / "same.epub", {"c1.xhtml": "one\ntwo\nthree", "c2.xhtml": "four"})
    half = _epub(tmp_path / "half.epub", {"c1.xhtml": "one\ntwo\nthree"})
    check(others.compare_epub(same, gold), 1, "over 3 documents")
    # c2 is missing (0) while c1 and the toc match (1 each): 2 / 3
    check(others.compare_epub(half, gold), 2 / 3, "0.667")
