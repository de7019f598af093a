"""Chrome metrics and the PDF/HTML/archive comparisons."""

from __future__ import annotations

import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from metric_files import check, gradient, text_pdf

from pytest_osworld.evaluators.metrics import chrome as c

Writer = Callable[[str, str | bytes], str]


@pytest.mark.parametrize(
    ("metric", "result", "rules", "value", "reason"),
    [
        (
            c.is_expected_url_pattern_match,
            "https://www.drugs.com/tamiflu.html#side-effects",
            {"expected": [r"^https://(www\.)?drugs\.com/tamiflu\.html#side-effects"]},
            1,
            "matches every pattern",
        ),
        (
            c.is_expected_url_pattern_match,
            {"url": "https://x.com/a"},
            {"expected": ["/b"]},
            0,
            "does not match '/b'",
        ),
        (c.is_expected_url_pattern_match, None, {"expected": []}, 0, "no URL"),
        (
            c.is_expected_active_tab,
            "https://www.drugs.com/npc/",
            {"type": "url", "url": "https://drugs.com/npc"},
            1,
            "active tab is",
        ),
        (
            c.is_expected_active_tab,
            {"url": "https://www.drugs.com/npp/"},
            {"type": "url", "url": "https://www.drugs.com/npc/"},
            0,
            "expected 'https://www.drugs.com/npc/'",
        ),
        (
            c.is_expected_active_tab_approximate,
            "chrome://password-manager/passwords?q=1",
            {"url": "chrome://password-manager/passwords"},
            1,
            "active tab",
        ),
        (
            c.is_expected_active_tab_approximate,
            "chrome://settings/",
            {"url": "chrome://password-manager/passwords"},
            0,
            "query ignored",
        ),
        (
            c.is_expected_search_query,
            {"url": "https://www.google.com/search?q=nereida&x=1"},
            {"expect": {"pattern": r"(?i)google\.com/search\?q=nereida(&|$)"}},
            1,
            "matches",
        ),
        (
            c.is_expected_search_query,
            {"url": "https://www.google.com/search?q=other"},
            {"expect": {"pattern": r"q=nereida"}},
            0,
            "does not match",
        ),
        (
            c.is_expected_tabs,
            [{"url": "https://www.lonelyplanet.com/"}, {"url": "https://airbnb.com"}],
            {"type": "url", "urls": ["https://www.lonelyplanet.com", "https://www.airbnb.com"]},
            1,
            "the 2 expected tabs",
        ),
        (
            c.is_expected_tabs,
            [{"url": "https://www.airbnb.com"}, {"url": "https://www.lonelyplanet.com"}],
            {"type": "url", "urls": ["https://www.lonelyplanet.com", "https://www.airbnb.com"]},
            0,
            "tab 0 is",
        ),
        (
            c.is_expected_tabs,
            [{"url": "https://a.com"}],
            {"urls": ["https://a.com", "https://b.com"]},
            0,
            "1 tabs open",
        ),
        (
            c.is_added_to_steam_cart,
            {"content": "Your cart: The Dota 2 Official Soundtrack"},
            {"items": ["The Dota 2 Official Soundtrack"]},
            1,
            "every item",
        ),
        (
            c.is_added_to_steam_cart,
            {"content": "empty"},
            {"items": ["Dota"]},
            0,
            "'Dota' is not in the cart",
        ),
        (
            c.is_shortcut_on_desktop,
            {"game.desktop": "[Desktop Entry]\nName=Play Puzzle Game 2048\nExec=x"},
            {"type": "name", "name": "Play Puzzle Game 2048"},
            1,
            "game.desktop has Name=",
        ),
        (
            c.is_shortcut_on_desktop,
            {"a.desktop": "Name=Other"},
            {"type": "name", "name": "Play Puzzle Game 2048"},
            0,
            "no desktop shortcut",
        ),
        (
            c.check_history_deleted,
            [("https://news.com", "News", 1)],
            {"type": "keywords", "keywords": ["youtube"]},
            1,
            "no history entry",
        ),
        (
            c.check_history_deleted,
            [("https://www.youtube.com/watch", "YT", 1)],
            {"keywords": ["youtube"]},
            0,
            "keyword 'youtube'",
        ),
        (
            c.is_cookie_deleted,
            [(1, ".google.com", "n")],
            {"type": "domains", "domains": [".amazon.com"]},
            1,
            "no cookie of",
        ),
        (
            c.is_cookie_deleted,
            [(1, "www.amazon.com", "n")],
            {"type": "domains", "domains": [".amazon.com"]},
            0,
            "'www.amazon.com' is still stored",
        ),
        (
            c.check_font_size,
            {"default_font_size": 20},
            {"type": "range", "min": 16, "max": 99999},
            1,
            "font size 20 in",
        ),
        (
            c.check_font_size,
            {"default_font_size": 16},
            {"type": "range", "min": 16, "max": 99999},
            0,
            "not in (16, 99999)",
        ),
        (c.check_font_size, 14, {"type": "value", "value": 14}, 1, "font size 14"),
        (
            c.is_expected_installed_extensions,
            ["Momentum", "Zoom Chrome Extension"],
            {"expected": ["Zoom for Google Chrome", "Momentum"]},
            1,
            "all 2 extensions",
        ),
        (
            c.is_expected_installed_extensions,
            ["Momentum"],
            {"expected": ["Google Translate", "Momentum"]},
            0,
            "not installed: ['Google Translate']",
        ),
        (
            c.check_enabled_experiments,
            ["a", "b"],
            {"type": "names", "names": ["a", "b"]},
            1,
            "experiments",
        ),
        (c.check_enabled_experiments, ["a"], {"type": "names", "names": ["b"]}, 0, "expected ['b']"),
    ],
)
def test_chrome_rules(metric: Any, result: Any, rules: dict[str, Any], value: float, reason: str) -> None:
    check(metric(result, rules), value, reason)


BOOKMARKS = {
    "roots": {
        "bookmark_bar": {
            "children": [
                {"type": "folder", "name": "Favorites", "children": []},
                {
                    "type": "url",
                    "name": "T",
                    "url": "https://jalammar.github.io/illustrated-transformer/",
                },
                {
                    "type": "folder",
                    "name": "Liked Authors",
                    "children": [
                        {"type": "url", "url": "https://jimfan.me/"},
                        {"type": "url", "url": "https://yukezhu.me/"},
                    ],
                },
            ]
        }
    }
}


@pytest.mark.parametrize(
    ("rules", "value", "reason"),
    [
        (
            {"type": "bookmark_bar_folders_names", "names": ["Favorites", "Liked Authors"]},
            1,
            "bar folders",
        ),
        (
            {"type": "bookmark_bar_folders_names", "names": ["Favorites"]},
            0,
            "expected ['Favorites']",
        ),
        (
            {
                "type": "bookmark_bar_websites_urls",
                "urls": ["https://jalammar.github.io/illustrated-transformer/"],
            },
            1,
            "bar URLs",
        ),
        (
            {"type": "bookmark_bar_websites_urls", "urls": ["https://x.org/"]},
            0,
            "expected ['https://x.org/']",
        ),
        (
            {
                "type": "liked_authors_websites_urls",
                "names": ["Liked Authors"],
                "urls": [["https://jimfan.me/", "https://x/"], ["https://yukezhu.me/"]],
            },
            1,
            "one URL per author",
        ),
        (
            {
                "type": "liked_authors_websites_urls",
                "names": ["Liked Authors"],
                "urls": [["https://jimfan.me/"], ["https://other/"]],
            },
            0,
            "needs exactly one of",
        ),
        (
            {
                "type": "liked_authors_websites_urls",
                "names": ["Liked Authors"],
                "urls": [["https://jimfan.me/"]],
            },
            0,
            "has 2 URLs, expected 1",
        ),
    ],
)
def test_is_expected_bookmarks(rules: dict[str, Any], value: float, reason: str) -> None:
    check(c.is_expected_bookmarks(BOOKMARKS, rules), value, reason)


def test_compare_pdfs(tmp_path: Path) -> None:
    a = str(text_pdf(tmp_path / "a.pdf", ["Meeting agenda", "1. Budget"]))
    b = str(text_pdf(tmp_path / "b.pdf", ["Meeting agenda", "1. Budget"]))
    d = str(text_pdf(tmp_path / "d.pdf", ["zzzzzzzzzzzzzzzzzzzzzz"]))
    check(c.compare_pdfs(a, b), 1, "over 1 PDF")
    # pair 1 is equal (1), pair 2 shares no character (0): (1 + 0) / 2
    check(c.compare_pdfs([a, a], [b, d]), 0.5, "mean text similarity 0.500 over 2 PDF(s)")
    # 'abcd' vs 'abce': rapidfuzz ratio 2 * 3 / (4 + 4)
    abcd, abce = (str(text_pdf(tmp_path / f"{t}.pdf", [t])) for t in ("abcd", "abce"))
    check(c.compare_pdfs(abcd, abce), 0.75, "mean text similarity 0.750 over 1 PDF(s)")
    # a missing result PDF counts 0 for its pair: (1 + 0) / 2
    check(c.compare_pdfs([a], [b, d]), 0.5, "0.500 over 2 PDF(s)")
    check(c.compare_pdfs(None, b), 0, "no result")
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"not a pdf")
    check(c.compare_pdfs(str(bad), b), 0, "unreadable")


def test_compare_pdf_images(tmp_path: Path) -> None:
    from PIL import ImageOps

    image = gradient((96, 96))
    one, same = tmp_path / "one.pdf", tmp_path / "same.pdf"
    image.save(one)
    image.save(same)
    other = tmp_path / "other.pdf"
    ImageOps.mirror(image.rotate(90)).save(other)
    check(c.compare_pdf_images(str(one), str(same)), 1, "1/1 images match")
    check(c.compare_pdf_images(str(one), str(other)), 0, "0/1 images match")
    two = tmp_path / "two.pdf"
    image.save(two, save_all=True, append_images=[image])
    check(c.compare_pdf_images(str(one), str(two)), 0, "1 images, expected 2")
    # two images, the first one equal and the second one mirrored: 1 / 2
    half = tmp_path / "half.pdf"
    image.save(half, save_all=True, append_images=[ImageOps.mirror(image.rotate(90))])
    check(c.compare_pdf_images(str(half), str(two)), 0.5, "1/2 images match by perceptual hash")
    text = str(text_pdf(tmp_path / "text.pdf", ["no images"]))
    check(c.compare_pdf_images(text, text), 1, "neither PDF has images")


def test_compare_htmls(write: Writer) -> None:
    a = write("a.html", '<html><body><table sdnum="1"><tr><td>1</td></tr></table></body></html>')
    b = write("b.html", '<html><body><table sdnum="2"><tr><td>1</td></tr></table></body></html>')
    d = write("d.html", "<html><body><table><tr><td>2</td></tr></table></body></html>")
    check(c.compare_htmls(a, b, ignore_sdnum=True), 1, "equal")
    check(c.compare_htmls(a, b), 0, "attributes")
    check(c.compare_htmls(a, d, ignore_sdnum=True), 0, "text")


def _zip(path: Path, members: dict[str, bytes]) -> str:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return str(path)


def test_compare_archive(tmp_path: Path) -> None:
    a = _zip(tmp_path / "a.zip", {"d/x.txt": b"1\n2\n3\n4\n", "d/y.txt": b"a\n"})
    b = _zip(tmp_path / "b.zip", {"d/x.txt": b"1\n2\n3\n4\n", "d/y.txt": b"a\n"})
    half = _zip(tmp_path / "h.zip", {"d/x.txt": b"1\n2\n5\n6\n", "d/y.txt": b"a\n"})
    other = _zip(tmp_path / "o.zip", {"d/z.txt": b"1\n"})
    check(c.compare_archive(a, b, file_type="text"), 1, "mean 1.000 over 2 files")
    # x.txt: 2 of 4 lines common -> 0.5; y.txt: 1 -> mean 0.75
    check(c.compare_archive(half, b, file_type="text", file_path="d"), 0.75, "lowest x.txt")
    check(c.compare_archive(a, other, file_type="text"), 0, "archive lists")
    evil = tmp_path / "evil.tar"
    with tarfile.open(evil, "w") as archive:
        source = tmp_path / "payload"
        source.write_text("x")
        archive.add(source, arcname="../../escape.txt")
    check(c.compare_archive(str(evil), b, file_type="text"), 0, "escapes the target")
    with pytest.raises(ValueError, match="unknown archive file_type"):
        c.compare_archive(a, b, file_type="hologram")
