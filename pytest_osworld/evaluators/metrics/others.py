"""Other metrics: MP3 tags (mutagen) and EPUB books."""

from __future__ import annotations

import difflib
import zipfile
from typing import Any

from pytest_osworld.evaluators.metrics._utils import (
    existing_file,
    failed,
    load_module,
    match_rule,
    passed,
    rules_of,
    short,
)
from pytest_osworld.evaluators.score import Score


def check_mp3_meta(result: Any, expected: Any = None, **options: Any) -> Score:
    """The MP3's ID3 tags satisfy the rules: ``{tag: {"method": ..., "ref": ...}}``."""
    easyid3, id3 = load_module("mutagen.easyid3"), load_module("mutagen.id3")
    path, problem = existing_file(result)
    if problem:
        return problem
    try:
        tags = easyid3.EasyID3(path)
    except id3.ID3NoHeaderError:
        return failed(f"{path} has no ID3 tags")
    for tag, rule in rules_of(expected).items():
        values = tags.get(tag, [])
        value = values[0] if values else ""
        if not match_rule(value, rule):
            return failed(
                f"tag {tag!r} is {short(value)}, expected {rule['method']} {short(rule.get('ref'))}"
            )
    return passed(f"tags {sorted(rules_of(expected))} as expected")


def _epub_texts(path: str) -> dict[str, list[str]]:
    etree, html = load_module("lxml.etree"), load_module("lxml.html")
    texts: dict[str, list[str]] = {}
    with zipfile.ZipFile(path) as archive:
        for name in sorted(archive.namelist()):
            if not name.lower().endswith((".html", ".xhtml", ".htm", ".ncx", ".opf")):
                continue
            data = archive.read(name)
            if name.lower().endswith((".ncx", ".opf")):
                root = etree.fromstring(data)
                for node in root.iter():
                    if isinstance(node.tag, str) and node.tag.endswith("navPoint"):
                        node.attrib.pop("id", None)
                        node.attrib.pop("playOrder", None)
                for node in root.iter():
                    if isinstance(node.tag, str):
                        node.attrib.pop("id", None)
                pretty = etree.tostring(root, pretty_print=True, encoding="unicode")
            else:
                root = html.fromstring(data)
                for node in root.iter():
                    if isinstance(node.tag, str):
                        node.attrib.pop("id", None)
                pretty = html.tostring(root, pretty_print=True, encoding="unicode")
            texts[name] = pretty.splitlines()
    return texts


def compare_epub(result: Any, expected: Any = None, **options: Any) -> Score:
    """Mean line similarity of the (id-stripped, pretty-printed) documents of two EPUBs. Fractional.

    A document missing from the result scores 0 for that document.
    """
    path, problem = existing_file(result)
    if problem:
        return problem
    gold, gold_problem = existing_file(expected, "expected")
    if gold_problem:
        return gold_problem
    try:
        got, want = _epub_texts(path or ""), _epub_texts(gold or "")
    except (zipfile.BadZipFile, ValueError) as exc:
        return failed(f"cannot read the EPUBs: {exc}")
    if not want:
        return failed("the expected EPUB has no documents")
    ratios = [difflib.SequenceMatcher(a=got.get(name, []), b=lines).ratio() for name, lines in want.items()]
    value = sum(ratios) / len(ratios)
    return Score(value, f"mean document similarity {value:.3f} over {len(ratios)} documents")
