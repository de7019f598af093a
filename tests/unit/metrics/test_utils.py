"""The shared rule matcher and URL comparison."""

from __future__ import annotations

import pytest

from pytest_osworld.evaluators.metrics._utils import match_record, match_rule
from pytest_osworld.task.urls import compare_urls


@pytest.mark.parametrize(
    ("value", "rule", "expected"),
    [
        ("abc", {"method": "re", "ref": "b"}, True),
        ("ABC", {"method": "re", "ref": "b"}, False),
        ("ABC", {"method": "re.I", "ref": "b"}, True),
        ("a\nXYZ", {"method": "re.S", "ref": "a.XYZ"}, True),
        (True, {"method": "eq", "ref": True}, True),
        (3, {"method": "ne", "ref": 3}, False),
        (200, {"method": "lt", "ref": 260}, True),
        (260, {"method": "le", "ref": 260}, True),
        (5, {"method": "gt", "ref": 5}, False),
        (5, {"method": "ge", "ref": 5}, True),
        ("x", {"method": "lt", "ref": 3}, False),
        (191.6668, {"method": "approx:0.001", "ref": 191.6667}, True),
        (191.7, {"method": "approx:0.001", "ref": 191.6667}, False),
        (None, {"method": "approx:0.1", "ref": 1}, False),
        (5, {"method": "range.ee", "ref": [5, 10]}, True),
        (5, {"method": "range.te", "ref": [5, 10]}, False),
        (10, {"method": "range.et", "ref": [5, 10]}, False),
        ("D2:D29", {"method": "spreadsheet_range", "ref": ["D2:D29", "D1:D1048576"]}, True),
        ("D2:D10", {"method": "spreadsheet_range", "ref": ["D2:D29", "D1:D1048576"]}, False),
        ('"Pass,Fail,Held"', {"method": "str_set_eq", "ref": ["Held", "Pass", "Fail"]}, True),
        ('"Pass,Fail"', {"method": "str_list_eq", "ref": ["Fail", "Pass"]}, False),
    ],
)
def test_match_rule(value: object, rule: dict[str, object], expected: bool) -> None:
    assert match_rule(value, rule) is expected


@pytest.mark.parametrize("method", ["like", "range.xx", "re.Q"])
def test_an_unknown_method_is_an_error(method: str) -> None:
    with pytest.raises(ValueError, match=method.split(".")[-1] if method != "like" else "like"):
        match_rule(1, {"method": method, "ref": [1, 2]})


def test_match_record() -> None:
    assert match_record({"a": 1}, {"a": 1, "b": 2})
    assert not match_record({"a": 1, "c": 3}, {"a": 1, "b": 2})


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        ("https://www.airbnb.com/", "https://airbnb.com.sg", True),
        ("HTTPS://WWW.Example.com/a", "https://example.com/a/", True),
        ("https://example.com/a?q=1", "https://example.com/a?q=2", False),
        ("https://docs.python.org/3/", "https://python.org/3/", False),
        ("https://example.com/a", "https://example.com/b", False),
    ],
)
def test_compare_urls(a: str, b: str, equal: bool) -> None:
    assert compare_urls(a, b) is equal


def test_compare_urls_without_query() -> None:
    assert compare_urls("https://example.com/a?q=1", "https://example.com/a?q=2", full=False)
