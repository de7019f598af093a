"""General metrics: strings, text files, JSON/YAML, CSV, SQLite and accessibility trees.

``result`` is usually a command output (str) or a local file path; ``expected`` is
usually the ``rules`` object of the task (a dict).
"""

from __future__ import annotations

import csv
import difflib
import io
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_osworld.evaluators.metrics._utils import (
    existing_file,
    failed,
    fuzz_ratio,
    load_module,
    match_record,
    match_rule,
    missing,
    passed,
    read_text,
    rules_of,
    short,
    verdict,
)
from pytest_osworld.evaluators.score import Score

#: The marker a getter leaves in a value it could not read; it always fails.
EVALUATION_FAILED = "__EVALUATION_FAILED__"

#: Namespaces of the accessibility-tree XML produced by the guest server.
A11Y_NAMESPACES = {
    "attr": "https://accessibility.ubuntu.example.org/ns/attributes",
    "st": "https://accessibility.ubuntu.example.org/ns/state",
    "cp": "https://accessibility.ubuntu.example.org/ns/component",
    "doc": "https://accessibility.ubuntu.example.org/ns/document",
    "docattr": "https://accessibility.ubuntu.example.org/ns/document/attributes",
    "txt": "https://accessibility.ubuntu.example.org/ns/text",
    "val": "https://accessibility.ubuntu.example.org/ns/value",
    "act": "https://accessibility.ubuntu.example.org/ns/action",
}


def check_include_exclude(result: Any, expected: Any = None, **options: Any) -> Score:
    """Every ``include`` string occurs in ``result`` and no ``exclude`` string does."""
    if result is None:
        return missing()
    text = str(result)
    rules = rules_of(expected)
    absent = [s for s in rules.get("include", []) if s not in text]
    if absent:
        return failed(f"output lacks {short(absent[0])}: {short(text)}")
    present = [s for s in rules.get("exclude", []) if s in text]
    if present:
        return failed(f"output contains excluded {short(present[0])}: {short(text)}")
    return passed(f"output has all {len(rules.get('include', []))} included strings, no excluded")


def exact_match(result: Any, expected: Any = None, **options: Any) -> Score:
    """``result`` equals ``rules["expected"]`` exactly (trailing newlines count)."""
    if result is None:
        return missing()
    want = rules_of(expected).get("expected")
    return verdict(
        result == want,
        f"got {short(result)} as expected",
        f"got {short(result)}, expected {short(want)}",
    )


def is_in_list(result: Any, expected: Any = None, **options: Any) -> Score:
    """``rules["expected"]`` is an element (or substring) of ``result``."""
    if result is None:
        return missing()
    want = rules_of(expected).get("expected")
    try:
        found = want in result
    except TypeError:
        found = False
    return verdict(found, f"{short(want)} is in the result", f"{short(want)} not in {short(result)}")


def match_in_list(result: Any, expected: Any = None, **options: Any) -> Score:
    """``result`` is one of ``rules["expected"]``."""
    if result is None:
        return missing()
    allowed = rules_of(expected).get("expected", [])
    return verdict(
        result in allowed, f"{short(result)} is allowed", f"{short(result)} not in {short(allowed)}"
    )


def literal_match(result: Any, expected: Any = None, **options: Any) -> Score:
    """``str(result) == str(expected)``, or element-wise for ``type="list"``; ``ignore_case``."""
    if result is None:
        return missing()
    if expected is None:
        return missing("expected value")
    ignore_case = bool(options.get("ignore_case", False))

    def norm(value: Any) -> str:
        text = str(value)
        return text.lower() if ignore_case else text

    if options.get("type", "str") == "list":
        if not isinstance(result, list | tuple) or not isinstance(expected, list | tuple):
            return failed(f"type 'list' needs two lists, got {short(result)} and {short(expected)}")
        if len(result) != len(expected):
            return failed(f"got {len(result)} items, expected {len(expected)}")
        for index, (got, want) in enumerate(zip(result, expected, strict=True)):
            if norm(got) != norm(want):
                return failed(f"item {index}: got {short(got)}, expected {short(want)}")
        return passed(f"all {len(result)} items match")
    return verdict(
        norm(result) == norm(expected),
        f"{short(result)} matches",
        f"got {short(result)}, expected {short(expected)}",
    )


def file_contains(result: Any, expected: Any = None, **options: Any) -> Score:
    """The text file ``result`` contains every string of ``rules["expected"]``."""
    path, problem = existing_file(result)
    if problem:
        return problem
    text = read_text(path or "")
    for item in rules_of(expected).get("expected", []):
        if item not in text:
            return failed(f"{path} lacks {short(item)}")
    return passed(f"{path} contains all expected strings")


def check_list(result: Any, expected: Any = None, **options: Any) -> Score:
    """Every ``expect`` regex matches some line of the file; no ``unexpect`` regex matches any."""
    path, problem = existing_file(result)
    if problem:
        return problem
    lines = read_text(path or "").splitlines()
    rules = rules_of(expected)
    for pattern in rules.get("expect", []):
        if not any(re.search(pattern, line) for line in lines):
            return failed(f"no line matches {pattern!r}")
    for pattern in rules.get("unexpect", []):
        hit = next((line for line in lines if re.search(pattern, line)), None)
        if hit is not None:
            return failed(f"line {short(hit)} matches unexpected {pattern!r}")
    return passed(f"{len(rules.get('expect', []))} expected patterns found, no unexpected one")


def check_line_number(result: Any, expected: Any = None, **options: Any) -> Score:
    """The number of lines containing an ``HH:MM:SS`` time equals ``rules["expected"]``."""
    path, problem = existing_file(result)
    if problem:
        return problem
    count = sum(1 for line in read_text(path or "").splitlines() if re.search(r"\d{2}:\d{2}:\d{2}", line))
    want = int(rules_of(expected).get("expected", -1))
    return verdict(count == want, f"{count} timed lines as expected", f"{count} timed lines, expected {want}")


def _dig(data: Any, keys: Sequence[Any]) -> tuple[bool, Any]:
    for key in keys:
        if (isinstance(data, Mapping) and key in data) or (
            isinstance(data, list) and isinstance(key, int) and -len(data) <= key < len(data)
        ):
            data = data[key]
        else:
            return False, None
    return True, data


def check_json(result: Any, expected: Any = None, **options: Any) -> Score:
    """A JSON (or, with ``is_yaml``, YAML) file satisfies ``expect`` and not ``unexpect`` rules.

    Each rule is ``{"key": [path...], "method": ..., "ref": ...}``.
    """
    path, problem = existing_file(result)
    if problem:
        return problem
    text = read_text(path or "")
    try:
        data = load_module("yaml").safe_load(text) if options.get("is_yaml", False) else json.loads(text)
    except ValueError as exc:  # yaml.YAMLError is not a ValueError; handled below
        return failed(f"{path} is not valid JSON: {exc}")
    except Exception as exc:
        return failed(f"{path} could not be parsed: {exc}")
    rules = rules_of(expected)
    for rule in rules.get("expect", []):
        found, value = _dig(data, rule["key"])
        if not found or not match_rule(value, rule):
            return failed(
                f"key {rule['key']}: got {short(value)}, expected {rule['method']} {short(rule.get('ref'))}"
            )
    for rule in rules.get("unexpect", []):
        found, value = _dig(data, rule["key"])
        if found and match_rule(value, rule):
            return failed(f"key {rule['key']}: {short(value)} matches the unexpected rule")
    return passed(f"{len(rules.get('expect', []))} key rules hold in {path}")


def _as_json_object(result: Any) -> Any:
    if isinstance(result, str):
        try:
            return json.loads(result)
        except ValueError:
            return json.loads(result.replace("'", '"'))
    return result


def _list_equal(got: Any, want: Any, ignore_order: bool) -> bool:
    if ignore_order and isinstance(got, list) and isinstance(want, list):
        return sorted(map(str, got)) == sorted(map(str, want))
    return bool(got == want)


def check_direct_json_object(result: Any, expected: Any = None, **options: Any) -> Score:
    """The result object (a dict, or a JSON string) matches ``rules["expected"]`` key by key.

    Default: each expected key's value is equal (lists order-free with
    ``ignore_list_order``, read from the rules). With ``expect_in_result``: a list value
    lists the accepted alternatives for a string result, or must share an item with a list
    result; a string value must be in the result (a substring, a list item or an object
    key); any other value must equal the result's. ``__EVALUATION_FAILED__`` fails. Missing
    rules, or rules without an ``expected`` object, score 0.
    """
    if result is None:
        return missing()
    try:
        obj = _as_json_object(result)
    except ValueError:
        return failed(f"result is not a JSON object: {short(result)}")
    if not isinstance(obj, Mapping):
        return failed(f"result is not a JSON object: {short(result)}")
    if not isinstance(expected, Mapping):
        return missing("expected rules")
    rules = expected
    if not isinstance(rules.get("expected"), Mapping):
        return failed(f"the rules have no 'expected' object: {short(rules)}")
    want: Mapping[str, Any] = rules["expected"]
    in_result = bool(rules.get("expect_in_result", False))
    ignore_order = bool(rules.get("ignore_list_order", False))
    for key, value in want.items():
        got = obj.get(key)
        if got == EVALUATION_FAILED or value == EVALUATION_FAILED:
            return failed(f"key {key!r}: the value could not be read")
        if in_result:
            if isinstance(value, list):
                ok = (isinstance(got, str) and got in value) or (
                    isinstance(got, list) and any(g in value for g in got)
                )
            elif isinstance(value, str):
                # A substring of a string, an item of a list, a key of an object.
                ok = isinstance(got, str | list | Mapping) and value in got
            else:
                ok = got == value
        else:
            ok = _list_equal(got, value, ignore_order)
        if not ok:
            return failed(f"key {key!r}: got {short(got)}, expected {short(value)}")
    return passed(f"all {len(want)} expected keys match")


def _json_file(value: Any, what: str) -> tuple[Any, Score | None]:
    """The JSON value in the file ``value`` names (strict UTF-8), or the zero score saying why not."""
    path, problem = existing_file(value, what)
    if problem:
        return None, problem
    try:
        with open(path or "", encoding="utf-8") as handle:
            return json.load(handle), None
    except (UnicodeDecodeError, ValueError) as exc:
        return None, failed(f"{what} file {path} is not JSON: {exc}")


def is_included_all_json_objects(result: Any, expected: Any = None, **options: Any) -> Score:
    """Every key of the JSON object in file ``result`` has the same value in file ``expected``.

    Both are paths to JSON files. The direction follows OSWorld's argument order, whose
    first argument (the task's ``result``) is the gold file: what the gold lists must all be
    in the second file, which may hold more keys.
    """
    small, problem = _json_file(result, "result")
    if problem:
        return problem
    big, problem = _json_file(expected, "expected")
    if problem:
        return problem
    if not isinstance(small, Mapping):
        return failed(f"the result file holds {type(small).__name__}, not a JSON object")
    for key, value in small.items():
        if not isinstance(big, Mapping) or key not in big or big[key] != value:
            got = big.get(key) if isinstance(big, Mapping) else big
            return failed(f"key {key!r}: got {short(got)}, expected {short(value)}")
    return passed(f"all {len(small)} keys included")


def diff_text_file(result: Any, expected: Any = None, **options: Any) -> Score:
    """Line-level similarity (``difflib`` ratio) of two text files. Fractional."""
    path, problem = existing_file(result)
    if problem:
        return problem
    gold, gold_problem = existing_file(expected, "expected")
    if gold_problem:
        return gold_problem
    ratio = difflib.SequenceMatcher(
        a=read_text(path or "").splitlines(), b=read_text(gold or "").splitlines()
    ).ratio()
    return Score(ratio, f"line similarity {ratio:.3f}")


def fuzzy_match(result: Any, expected: Any = None, **options: Any) -> Score:
    """rapidfuzz ratio between ``result`` and ``rules["expected"]``, in [0, 1]."""
    if result is None:
        return missing()
    want = str(rules_of(expected).get("expected", ""))
    ratio = fuzz_ratio(str(result), want) / 100
    return Score(ratio, f"fuzzy ratio {ratio:.3f} between {short(result)} and {short(want)}")


def _docx_words(path: str) -> list[str]:
    from docx import Document

    words: list[str] = []
    for paragraph in Document(path).paragraphs:
        words.extend(paragraph.text.split())
    return words


def fuzzy_place_math(result: Any, expected: Any = None, **options: Any) -> Score:
    """Each whitespace-separated entry of the docx fuzzily matches one accepted answer.

    The document must hold exactly ``rules["count"]`` entries (default 5, the number the
    task asks for; OSWorld hard-codes 3). The score is the mean of each entry's best
    rapidfuzz ratio over ``rules["expected"]``. Fractional.
    """
    path, problem = existing_file(result)
    if problem:
        return problem
    rules = rules_of(expected)
    answers = [str(a) for a in rules.get("expected", [])]
    count = int(rules.get("count", 5))
    words = _docx_words(path or "")
    if len(words) != count:
        return failed(f"document has {len(words)} entries, expected {count}")
    scores = [max((fuzz_ratio(w, a) / 100 for a in answers), default=0.0) for w in words]
    value = sum(scores) / count
    return Score(value, f"mean best fuzzy ratio {value:.3f} over {count} entries")


def _python_lines(text: str) -> list[str]:
    lines = []
    for index, line in enumerate(text.expandtabs(4).splitlines()):
        stripped = line.rstrip()
        if index < 2 and (stripped.startswith("#!") or re.match(r"#.*coding[:=]", stripped)):
            continue
        if stripped:
            lines.append(stripped)
    return lines


def compare_python_pure_text(result: Any, expected: Any = None, **options: Any) -> Score:
    """Two Python files are equal but for shebang/encoding lines, tabs and blank space."""
    path, problem = existing_file(result)
    if problem:
        return problem
    gold, gold_problem = existing_file(expected, "expected")
    if gold_problem:
        return gold_problem
    got, want = _python_lines(read_text(path or "")), _python_lines(read_text(gold or ""))
    for number, (a, b) in enumerate(zip(got, want, strict=False), start=1):
        if a != b:
            return failed(f"code line {number}: got {short(a)}, expected {short(b)}")
    return verdict(
        len(got) == len(want),
        "the code is the same",
        f"{len(got)} code lines, expected {len(want)}",
    )


def run_sqlite3(result: Any, expected: Any = None, **options: Any) -> Score:
    """Run ``rules["sql"]`` read-only on the SQLite file; the first cell returned is the score."""
    import sqlite3
    from pathlib import Path

    path, problem = existing_file(result)
    if problem:
        return problem
    sql = str(rules_of(expected).get("sql", ""))
    uri = Path(path or "").resolve().as_uri() + "?mode=ro"
    try:
        with sqlite3.connect(uri, uri=True) as connection:
            row = connection.execute(sql).fetchone()
    except sqlite3.Error as exc:
        return failed(f"query failed: {exc}")
    if not row or row[0] is None:
        return failed("query returned no value")
    try:
        value = float(row[0])
    except (TypeError, ValueError):
        return failed(f"query returned a non-number {short(row[0])}")
    return Score(value, f"query returned {value:g}")


def check_csv(result: Any, expected: Any = None, **options: Any) -> Score:
    """CSV rows (with a header): each ``expect`` record matches a row, no row an ``unexpect``."""
    path, problem = existing_file(result)
    if problem:
        return problem
    rows = list(csv.DictReader(io.StringIO(read_text(path or ""))))
    rules = rules_of(expected)
    for pattern in rules.get("expect", []):
        if not any(match_record(pattern, row) for row in rows):
            return failed(f"no row matches {short(pattern)}")
    for pattern in rules.get("unexpect", []):
        if any(match_record(pattern, row) for row in rows):
            return failed(f"a row matches unexpected {short(pattern)}")
    return passed(f"{len(rows)} rows checked against the record rules")


def _a11y_elements(tree: Any, rule: Mapping[str, Any]) -> list[Any]:
    selector_class = load_module("lxml.cssselect").CSSSelector
    if "selectors" in rule:
        found: list[Any] = []
        for selector in rule["selectors"]:
            found.extend(selector_class(selector, namespaces=A11Y_NAMESPACES)(tree))
        return found
    if "xpath" in rule:
        return list(tree.xpath(rule["xpath"], namespaces=A11Y_NAMESPACES))
    raise ValueError(f"accessibility rule needs 'selectors' or 'xpath': {rule!r}")


def check_accessibility_tree(result: Any, expected: Any = None, **options: Any) -> Score:
    """Each rule's CSS selectors or XPath find an element of the accessibility tree XML.

    A rule may also give ``text`` with ``exact`` (default true) to require an element
    whose text equals it, or a fuzzy ratio of at least 0.9 when not exact.
    """
    etree = load_module("lxml.etree")
    if result is None:
        return missing("accessibility tree")
    try:
        tree = etree.fromstring(str(result).encode("utf-8"))
    except etree.XMLSyntaxError as exc:
        return failed(f"accessibility tree is not XML: {exc}")
    rules = expected if isinstance(expected, list) else [expected]
    for index, rule in enumerate(rules):
        elements = _a11y_elements(tree, rule)
        if not elements:
            return failed(f"rule {index}: nothing matches {short(rule)}")
        if "text" in rule:
            texts = [(el.text or "") for el in elements]
            if rule.get("exact", True):
                ok = rule["text"] in texts
            else:
                ok = any(fuzz_ratio(t, rule["text"]) >= 90 for t in texts)
            if not ok:
                return failed(f"rule {index}: no element has text {short(rule['text'])}")
    return passed(f"all {len(rules)} accessibility rules found elements")


def compare_terminal_and_txt(result: Any, expected: Any = None, **options: Any) -> Score:
    """The terminal output contains the text of the file ``expected`` (stripped)."""
    if result is None:
        return missing("terminal output")
    gold, problem = existing_file(expected, "expected")
    if problem:
        return problem
    text = read_text(gold or "").strip()
    return verdict(text in str(result), "terminal shows the file's text", f"terminal lacks {short(text)}")
