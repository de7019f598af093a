from __future__ import annotations

import pytest

from pytest_osworld.errors import UnknownNameError
from pytest_osworld.registry import Registry, load_entry_point


def test_lazy_entry_is_imported_on_first_use() -> None:
    registry: Registry[object] = Registry("thing")
    registry.register("dumps", "json:dumps")
    import json

    assert registry.get("dumps") is json.dumps
    assert "dumps" in registry and registry.names() == ["dumps"]


def test_decorator_registration() -> None:
    registry: Registry[object] = Registry("thing")

    @registry.register("f")
    def f() -> int:
        return 1

    assert registry.get("f") is f


def test_unknown_name_suggests_the_closest() -> None:
    registry: Registry[object] = Registry("metric")
    registry.register("compare_table", "json:dumps")
    registry.register("compare_csv", "json:loads")
    with pytest.raises(
        UnknownNameError, match=r"unknown metric 'compare_tabel'; did you mean 'compare_table'\?"
    ):
        registry.get("compare_tabel")


def test_unknown_name_without_close_match_lists_known() -> None:
    registry: Registry[object] = Registry("agent")
    registry.register("noop", "json:dumps")
    with pytest.raises(UnknownNameError, match="known: noop"):
        registry.check("zzzzzz")


@pytest.mark.parametrize("spec", ["json", "json:", ":dumps"])
def test_bad_entry_point_spec(spec: str) -> None:
    with pytest.raises(ValueError, match="is not of the form"):
        load_entry_point(spec)


def test_entry_point_missing_attribute_names_the_spec() -> None:
    with pytest.raises(AttributeError, match="entry point 'json:nope'"):
        load_entry_point("json:nope")
