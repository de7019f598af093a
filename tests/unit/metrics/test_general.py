"""General metrics over strings, text files, JSON, CSV, SQLite and accessibility trees."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from metric_files import check

from pytest_osworld.evaluators.metrics import general as g

Writer = Callable[[str, str | bytes], str]


@pytest.mark.parametrize(
    ("result", "rules", "value", "reason"),
    [
        (
            "Evaluation successful.\n",
            {"include": ["Evaluation successful."], "exclude": []},
            1,
            "all 1 included",
        ),
        ("use no terminal\n", {"include": ["use terminal"]}, 0, "lacks 'use terminal'"),
        ("ok error\n", {"include": ["ok"], "exclude": ["error"]}, 0, "excluded 'error'"),
        (None, {"include": []}, 0, "no result"),
    ],
)
def test_check_include_exclude(result: Any, rules: dict[str, Any], value: float, reason: str) -> None:
    check(g.check_include_exclude(result, rules), value, reason)


@pytest.mark.parametrize(
    ("metric", "result", "rules", "value", "reason"),
    [
        (g.exact_match, "true\n", {"expected": "true\n"}, 1, "as expected"),
        (g.exact_match, "true", {"expected": "true\n"}, 0, "expected 'true\\n'"),
        (g.exact_match, None, {"expected": "x"}, 0, "no result"),
        (
            g.is_in_list,
            ["/a", "/home/user/Desktop/helloExtension"],
            {"expected": "/home/user/Desktop/helloExtension"},
            1,
            "is in",
        ),
        (g.is_in_list, ["/a"], {"expected": "/b"}, 0, "not in"),
        (g.match_in_list, "Bing", {"expected": ["Microsoft Bing", "Bing"]}, 1, "allowed"),
        (g.match_in_list, "Google", {"expected": ["Microsoft Bing", "Bing"]}, 0, "'Google' not in"),
    ],
)
def test_string_rules(
    metric: Callable[..., Any], result: Any, rules: dict[str, Any], value: float, reason: str
) -> None:
    check(metric(result, rules), value, reason)


@pytest.mark.parametrize(
    ("result", "expected", "options", "value", "reason"),
    [
        (["Ann", "12"], ["ann", "12"], {"type": "list", "ignore_case": True}, 1, "all 2 items"),
        (["Ann", "12"], ["Ann", "13"], {"type": "list"}, 0, "item 1: got '12'"),
        (["Ann"], ["Ann", "13"], {"type": "list"}, 0, "got 1 items, expected 2"),
        ("abc", "ABC", {}, 0, "expected 'ABC'"),
        ("abc", "ABC", {"ignore_case": True}, 1, "matches"),
    ],
)
def test_literal_match(
    result: Any, expected: Any, options: dict[str, Any], value: float, reason: str
) -> None:
    check(g.literal_match(result, expected, **options), value, reason)


def test_file_contains(write: Writer) -> None:
    path = write("speed.txt", "Ping: 3 ms\nDownload: 10\nUpload: 5\n")
    check(g.file_contains(path, {"expected": ["Ping", "Download", "Upload"]}), 1, "contains all")
    check(g.file_contains(path, {"expected": ["Ping", "Jitter"]}), 0, "lacks 'Jitter'")
    check(g.file_contains(None, {"expected": []}), 0, "no result")
    check(g.file_contains(path + ".missing", {"expected": []}), 0, "does not exist")


def test_check_list(write: Writer) -> None:
    path = write("ls.out", "COMPANY.msf\nCOMPANY\nUNIVERSITY.msf\n")
    check(
        g.check_list(path, {"expect": [r"\bCOMPANY\.msf\b", r"UNIVERSITY"]}),
        1,
        "2 expected patterns",
    )
    check(g.check_list(path, {"expect": [r"\bSCHOOL\b"]}), 0, "no line matches")
    check(g.check_list(path, {"unexpect": [".+"]}), 0, "matches unexpected")
    check(g.check_list(write("empty.out", ""), {"unexpect": [".+"]}), 1, "no unexpected")


def test_check_line_number(write: Writer) -> None:
    path = write("sar.txt", "Linux\n10:00:01 CPU 1\n10:00:02 CPU 2\n\nAverage: 3\n")
    check(g.check_line_number(path, {"expected": "2"}), 1, "2 timed lines")
    check(g.check_line_number(path, {"expected": "31"}), 0, "2 timed lines, expected 31")


def test_check_json(write: Writer) -> None:
    path = write("manifest.json", '{"name": "happy", "background": {"scripts": ["bg.js"]}}')
    rules = {
        "expect": [
            {"key": ["name"], "method": "eq", "ref": "happy"},
            {"key": ["background", "scripts"], "method": "eq", "ref": ["bg.js"]},
        ]
    }
    check(g.check_json(path, rules), 1, "2 key rules hold")
    check(
        g.check_json(path, {"expect": [{"key": ["version"], "method": "eq", "ref": "1"}]}),
        0,
        "key ['version']: got None",
    )
    check(
        g.check_json(path, {"unexpect": [{"key": ["name"], "method": "re", "ref": "hap"}]}),
        0,
        "matches the unexpected",
    )
    yaml_path = write("_config.yml", "name: Test Account\nauthor:\n  email: Test@gmail.com\n")
    check(
        g.check_json(
            yaml_path,
            {"expect": [{"key": ["author", "email"], "method": "eq", "ref": "Test@gmail.com"}]},
            is_yaml=True,
        ),
        1,
        "1 key rules",
    )
    check(g.check_json(write("bad.json", "{oops"), {"expect": []}), 0, "not valid JSON")


@pytest.mark.parametrize(
    ("result", "rules", "value", "reason"),
    [
        (
            {"q": "drip coffee maker"},
            {"expected": {"q": "drip coffee maker"}},
            1,
            "all 1 expected keys",
        ),
        ("{'q': 'x'}", {"expected": {"q": "x"}}, 1, "all 1"),
        (
            {"q": "drip coffee"},
            {"expected": {"q": "drip coffee maker"}},
            0,
            "key 'q': got 'drip coffee'",
        ),
        (
            {"q": "best drip coffee maker"},
            {"expected": {"q": "drip coffee maker"}, "expect_in_result": True},
            1,
            "all 1",
        ),
        ({"to": "ARN"}, {"expected": {"to": ["STO", "ARN"]}, "expect_in_result": True}, 1, "all 1"),
        (
            {"to": "OSL"},
            {"expected": {"to": ["STO", "ARN"]}, "expect_in_result": True},
            0,
            "key 'to'",
        ),
        ({"m": ["b", "a"]}, {"expected": {"m": ["a", "b"]}, "ignore_list_order": True}, 1, "all 1"),
        ({"m": ["b", "a"]}, {"expected": {"m": ["a", "b"]}}, 0, "key 'm'"),
        (
            {"q": "__EVALUATION_FAILED__"},
            {"expected": {"q": "__EVALUATION_FAILED__"}},
            0,
            "could not be read",
        ),
        ("not json", {"expected": {}}, 0, "not a JSON object"),
    ],
)
def test_check_direct_json_object(result: Any, rules: dict[str, Any], value: float, reason: str) -> None:
    check(g.check_direct_json_object(result, rules), value, reason)


def test_is_included_all_json_objects(write: Any) -> None:
    gold = write("gold.json", '{"a": 1}')
    check(g.is_included_all_json_objects(gold, write("r.json", '{"a": 1, "b": 2}')), 1, "all 1 keys")
    check(g.is_included_all_json_objects(gold, write("s.json", '{"a": 2}')), 0, "key 'a': got 2")


def test_diff_text_file_is_the_line_ratio(write: Writer) -> None:
    a = write("a.txt", "one\ntwo\nthree\nfour\n")
    b = write("b.txt", "one\ntwo\nTHREE\nfour\n")
    check(g.diff_text_file(a, a), 1, "1.000")
    # 3 of 4 lines match in each file: 2 * 3 / 8
    check(g.diff_text_file(a, b), 0.75, "0.750")
    check(g.diff_text_file(a, None), 0, "no expected")


def test_fuzzy_match() -> None:
    check(g.fuzzy_match("abcd", {"expected": "abcd"}), 1, "1.000")
    # rapidfuzz ratio: 2 * 3 matching / (4 + 4) characters
    check(g.fuzzy_match("abcd", {"expected": "abce"}), 0.75, "0.750")


def _docx(path: Path, paragraphs: list[str]) -> str:
    from docx import Document

    document = Document()
    for text in paragraphs:
        document.add_paragraph(text)
    document.save(str(path))
    return str(path)


def test_fuzzy_place_math(tmp_path: Path) -> None:
    answers = {"expected": ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"], "count": 3}
    exact = _docx(tmp_path / "a.docx", ["alpha", "bravo charlie"])
    check(g.fuzzy_place_math(exact, answers), 1, "over 3 entries")
    # "alphx" vs "alpha": ratio 0.8; mean of (0.8, 1, 1)
    near = _docx(tmp_path / "b.docx", ["alphx", "bravo", "charlie"])
    check(g.fuzzy_place_math(near, answers), (0.8 + 2) / 3, "mean best fuzzy ratio")
    check(g.fuzzy_place_math(exact, {"expected": ["alpha"]}), 0, "3 entries, expected 5")


def test_compare_python_pure_text(write: Writer) -> None:
    a = write("a.py", "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\ndef f():\n\treturn 1   \n\n")
    b = write("b.py", "def f():\n    return 1\n")
    c = write("c.py", "def f():\n    return 2\n")
    check(g.compare_python_pure_text(a, b), 1, "the same")
    check(g.compare_python_pure_text(a, c), 0, "code line 2")


def test_run_sqlite3(tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite"
    with sqlite3.connect(db) as connection:
        connection.execute("CREATE TABLE t (x INTEGER)")
        connection.executemany("INSERT INTO t VALUES (?)", [(1,), (1,), (0,)])
    check(g.run_sqlite3(str(db), {"sql": "SELECT COUNT(*) = 3 FROM t"}), 1, "returned 1")
    check(g.run_sqlite3(str(db), {"sql": "SELECT AVG(x) FROM t"}), 2 / 3, "returned 0.666667")
    check(g.run_sqlite3(str(db), {"sql": "SELECT nope FROM t"}), 0, "query failed")
    check(g.run_sqlite3(str(db), {"sql": "DELETE FROM t"}), 0, "readonly")


def test_check_csv(write: Writer) -> None:
    path = write("accounts.csv", "url,user\nimap://a,bob\nimap://b,amy\n")
    check(g.check_csv(path, {"expect": [{"url": "imap://a", "user": "bob"}]}), 1, "2 rows")
    check(g.check_csv(path, {"expect": [{"user": "zed"}]}), 0, "no row matches")
    check(
        g.check_csv(path, {"unexpect": [{"url": "imap://b", "user": "amy"}]}),
        0,
        "matches unexpected",
    )


A11Y = """<desktop-frame xmlns:attr="https://accessibility.ubuntu.example.org/ns/attributes">
<application name="Thunderbird">
<page-tab-list attr:id="tabmail-tabs"><page-tab name="About Profiles">About Profiles</page-tab></page-tab-list>
</application></desktop-frame>"""


@pytest.mark.parametrize(
    ("rules", "value", "reason"),
    [
        (
            [
                {
                    "selectors": [
                        'application[name=Thunderbird] page-tab-list[attr|id="tabmail-tabs"]>page-tab[name="About Profiles"]'
                    ]
                }
            ],
            1,
            "all 1",
        ),
        (
            [{"xpath": "//application[@name='Thunderbird']//*[contains(@name, 'Profiles')]"}],
            1,
            "all 1",
        ),
        ([{"selectors": ['page-tab[name="Settings"]']}], 0, "rule 0: nothing matches"),
        ([{"xpath": "//page-tab", "text": "About Profiles"}], 1, "all 1"),
        ([{"xpath": "//page-tab", "text": "About Config"}], 0, "no element has text"),
        ([{"xpath": "//page-tab", "text": "About Profile", "exact": False}], 1, "all 1"),
    ],
)
def test_check_accessibility_tree(rules: list[dict[str, Any]], value: float, reason: str) -> None:
    check(g.check_accessibility_tree(A11Y, rules), value, reason)


def test_check_accessibility_tree_rejects_bad_xml() -> None:
    check(g.check_accessibility_tree("<not xml", [{"xpath": "//a"}]), 0, "not XML")


def test_compare_terminal_and_txt(write: Writer) -> None:
    gold = write("gold.txt", "hello world\n")
    check(g.compare_terminal_and_txt("$ echo\nhello world\n$", gold), 1, "shows")
    check(g.compare_terminal_and_txt("$ nothing", gold), 0, "lacks")
