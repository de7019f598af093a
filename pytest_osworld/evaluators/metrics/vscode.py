"""VS Code metrics: settings and keybindings JSON, text and result files, extensions, tests.

``check_python_file_by_test_suite`` never runs task or guest code on the host. OSWorld
imports the task's test file and calls its ``test()`` function in the evaluating
process. Here the suite has to run inside the environment, and the metric reads what
that run printed:

- ``result`` is a string: the output of a command that ran the suite in the guest and
  printed the value that ``test()`` returned as its last non-empty line. ``True`` or
  ``1`` scores 1, ``False`` or ``0`` scores 0, and any other number is clamped to
  [0, 1]. A mapping ``{"returncode": int, "output": str}`` is also accepted, and a
  non-zero return code scores 0.
- A file path or a list of file paths (what OSWorld's ``vm_file`` getter gives) scores 0.
  The reason explains that the suite must run in the environment.
"""

from __future__ import annotations

import json
import os
import re
import zipfile
from collections.abc import Mapping
from typing import Any

from pytest_osworld.evaluators.metrics._utils import (
    existing_file,
    failed,
    missing,
    passed,
    read_text,
    rules_of,
    short,
    verdict,
)
from pytest_osworld.evaluators.score import Score

#: Reason given when ``check_python_file_by_test_suite`` receives files instead of output.
TEST_SUITE_ON_HOST = (
    "refusing to import and run the task's test suite on the host; run it inside the "
    "environment and pass its output (last line: the value test() returned) as the result"
)

_JSONC_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/', re.S)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


def load_jsonc(text: str) -> Any:
    """Parse JSON with comments and trailing commas (VS Code's settings format)."""
    stripped = _JSONC_TOKEN.sub(lambda m: m.group(0) if m.group(0).startswith('"') else "", text)
    return json.loads(_TRAILING_COMMA.sub(r"\1", stripped))


def _load_json_file(value: Any) -> tuple[Any, Score | None]:
    path, problem = existing_file(value)
    if problem:
        return None, problem
    try:
        return load_jsonc(read_text(path or "")), None
    except ValueError as exc:
        return None, failed(f"{path} is not valid JSON: {exc}")


def check_json_settings(result: Any, expected: Any = None, **options: Any) -> Score:
    """Each key of ``rules["expected"]`` is in the settings JSON with an equal value."""
    data, problem = _load_json_file(result)
    if problem:
        return problem
    if not isinstance(data, Mapping):
        return failed("settings file is not a JSON object")
    want: Mapping[str, Any] = rules_of(expected).get("expected", {})
    for key, value in want.items():
        if key not in data:
            return failed(f"setting {key!r} is not set (expected {short(value)})")
        if data[key] != value:
            return failed(f"setting {key!r} is {short(data[key])}, expected {short(value)}")
    return passed(f"all {len(want)} settings as expected")


def check_json_keybindings(result: Any, expected: Any = None, **options: Any) -> Score:
    """The keybindings JSON list contains the object ``rules["expected"]``."""
    data, problem = _load_json_file(result)
    if problem:
        return problem
    want = rules_of(expected).get("expected")
    if not isinstance(data, list):
        return failed("keybindings file is not a JSON list")
    return verdict(
        want in data,
        f"keybinding {short(want)} present",
        f"keybinding {short(want)} absent among {len(data)}",
    )


def _normalise(text: str, ignore_blanks: bool, ignore_case: bool) -> str:
    if ignore_blanks:
        text = re.sub(r"\s+", " ", text).strip()
    return text.lower() if ignore_case else text


def compare_text_file(result: Any, expected: Any = None, **options: Any) -> Score:
    """Two text files are equal (``ignore_blanks`` collapses whitespace, ``ignore_case``)."""
    path, problem = existing_file(result)
    if problem:
        return problem
    gold, gold_problem = existing_file(expected, "expected")
    if gold_problem:
        return gold_problem
    flags = bool(options.get("ignore_blanks", False)), bool(options.get("ignore_case", False))
    got, want = _normalise(read_text(path or ""), *flags), _normalise(read_text(gold or ""), *flags)
    if got == want:
        return passed(f"{os.path.basename(path or '')} equals the expected text")
    index = next(
        (i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b),
        min(len(got), len(want)),
    )
    return failed(
        f"texts differ at character {index}: got {short(got[index : index + 30])}, "
        f"expected {short(want[index : index + 30])}"
    )


def compare_answer(result: Any, expected: Any = None, **options: Any) -> Score:
    """The answer string equals ``rules["expected"]`` exactly (no stripping).

    An empty or missing answer scores 0; so does an ``expected`` that is not a rules
    mapping with an ``expected`` key.
    """
    if result is None:
        return missing()
    if not result:
        return failed("the answer is empty")
    rules = rules_of(expected)
    if "expected" not in rules:
        return failed(f"the rules name no 'expected' answer: {short(expected)}")
    want = rules["expected"]
    return verdict(
        result == want, f"answer {short(result)}", f"answer {short(result)}, expected {short(want)}"
    )


def is_extension_installed(result: Any, expected: Any = None, **options: Any) -> Score:
    """``rules["expected"]`` occurs (``type="contain"``) or not (``not_contain``) in the output."""
    if result is None:
        return missing("command output")
    rules = rules_of(expected)
    want = str(rules.get("expected", ""))
    present = want in str(result)
    kind = rules.get("type", "contain")
    if kind == "contain":
        return verdict(present, f"{want!r} is installed", f"{want!r} not in {short(result)}")
    if kind == "not_contain":
        return verdict(not present, f"{want!r} is absent", f"{want!r} is still installed")
    return failed(f"unknown rule type {kind!r}")


def _json_subset(small: Any, big: Any) -> bool:
    if isinstance(small, Mapping) and isinstance(big, Mapping):
        return all(k in big and _json_subset(v, big[k]) for k, v in small.items())
    return bool(small == big)


def compare_config(result: Any, expected: Any = None, **options: Any) -> Score:
    """The file matches ``rules["expected"]``.

    When both parse as JSON, the expected object must be a recursive subset of the actual
    one (``containment_ok``, the default) or equal to it. Otherwise the expected text must
    be contained in (or, without ``containment_ok``, equal to) the stripped file text.
    """
    path, problem = existing_file(result)
    if problem:
        return problem
    text = read_text(path or "")
    want = str(rules_of(expected).get("expected", ""))
    containment = bool(options.get("containment_ok", True))
    try:
        got_json, want_json = load_jsonc(text), load_jsonc(want)
    except ValueError:
        got_json = want_json = None
    if isinstance(want_json, Mapping):
        ok = _json_subset(want_json, got_json) if containment else got_json == want_json
        return verdict(
            ok,
            f"config holds {short(want_json)}",
            f"config {short(got_json)} lacks {short(want_json)}",
        )
    ok = want.strip() in text if containment else text.strip() == want.strip()
    return verdict(ok, f"config holds {short(want)}", f"config {short(text)} does not hold {short(want)}")


def _as_number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def compare_result_files(result: Any, expected: Any = None, **options: Any) -> Score:
    """Two result files agree once stripped.

    When the expected text is a number, the result passes if it contains that text (an
    answer may add words around the number) or is a number within 1e-4 of it. Otherwise
    the two texts must be equal.
    """
    path, problem = existing_file(result)
    if problem:
        return problem
    gold, gold_problem = existing_file(expected, "expected")
    if gold_problem:
        return gold_problem
    got, want = read_text(path or "").strip(), read_text(gold or "").strip()
    want_number = _as_number(want)
    if want_number is None:
        ok = got == want
    else:
        got_number = _as_number(got)
        ok = want in got or (got_number is not None and abs(got_number - want_number) < 1e-4)
    return verdict(ok, f"result {short(got)} matches", f"result {short(got)}, expected {short(want)}")


def _pdf_similarity(a: bytes, b: bytes) -> float:
    import difflib
    import io

    from pypdf import PdfReader

    def text(data: bytes) -> str:
        return "".join(p.extract_text() or "" for p in PdfReader(io.BytesIO(data)).pages)

    return difflib.SequenceMatcher(a=text(a), b=text(b)).ratio()


def compare_zip_files(result: Any, expected: Any = None, **options: Any) -> Score:
    """Two zips have the same members with equal bytes; PDFs pass at text similarity >= 0.95."""
    path, problem = existing_file(result)
    if problem:
        return problem
    gold, gold_problem = existing_file(expected, "expected")
    if gold_problem:
        return gold_problem
    try:
        with zipfile.ZipFile(path or "") as za, zipfile.ZipFile(gold or "") as zb:
            names_a = sorted(n for n in za.namelist() if not n.endswith("/"))
            names_b = sorted(n for n in zb.namelist() if not n.endswith("/"))
            if names_a != names_b:
                return failed(f"members {short(names_a)}, expected {short(names_b)}")
            for name in names_b:
                a, b = za.read(name), zb.read(name)
                if a == b:
                    continue
                if name.lower().endswith(".pdf") and _pdf_similarity(a, b) >= 0.95:
                    continue
                return failed(f"member {name!r} differs")
    except zipfile.BadZipFile as exc:
        return failed(f"not a zip file: {exc}")
    return passed(f"all {len(names_b)} members equal")


def _suite_output_score(output: str) -> Score:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    if not lines:
        return failed("the test run printed nothing")
    last = lines[-1]
    if last in ("True", "true"):
        return passed("the test suite returned True")
    if last in ("False", "false"):
        return failed("the test suite returned False")
    try:
        value = float(last)
    except ValueError:
        return failed(f"the test run's last line is not a result: {short(last)}")
    return Score(min(1.0, max(0.0, value)), f"the test suite returned {value:g}")


def check_python_file_by_test_suite(result: Any, expected: Any = None, **options: Any) -> Score:
    """Score the output of the task's test suite run inside the environment (see module doc)."""
    if result is None:
        return missing("test output")
    if isinstance(result, Mapping):
        code = result.get("returncode", 0)
        if code != 0:
            return failed(f"the test run exited with {code}")
        return _suite_output_score(str(result.get("output", result.get("stdout", ""))))
    if isinstance(result, list | tuple) or (isinstance(result, str) and os.path.isfile(result)):
        return failed(TEST_SUITE_ON_HOST)
    return _suite_output_score(str(result))


def check_html_background_image(result: Any, expected: Any = None, **options: Any) -> Score:
    """The HTML file's CSS sets a ``background-image`` whose URL contains ``rules["value"]``."""
    path, problem = existing_file(result)
    if problem:
        return problem
    want = str(rules_of(expected).get("value", ""))
    urls = re.findall(r"background-image\s*:\s*url\(\s*['\"]?([^'\")]+)", read_text(path or ""))
    ok = any(want in url for url in urls)
    return verdict(ok, f"background image {want!r} set", f"background images {urls}, expected {want!r}")
