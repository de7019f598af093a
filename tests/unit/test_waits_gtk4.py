"""GTK 4 elements are placed on screen by their window's shadow-less origin; a walk of
their tree survives an application that stops answering."""

from __future__ import annotations

import pytest

from pytest_osworld.guest.waits_gtk4 import _descendants, shadow_of


@pytest.mark.parametrize(
    ("listing", "expected"),
    [
        # xprop's line ends in a newline: the last value must still count
        ("_GTK_FRAME_EXTENTS(CARDINAL) = 61, 61, 55, 67\n", (61, 55)),
        ("_GTK_FRAME_EXTENTS(CARDINAL) = 0, 0, 0, 0\n", (0, 0)),
        ("_GTK_FRAME_EXTENTS:  not found.\n", (0, 0)),
        ("", (0, 0)),
    ],
)
def test_shadow_of_reads_left_and_top(listing: str, expected: tuple[int, int]) -> None:
    assert shadow_of(listing) == expected


class _Node:
    """An AT-SPI node as the walk reads it; ``busy`` makes it fail as a hung app's do."""

    def __init__(self, name: str, children: list[_Node] | None = None, busy: bool = False) -> None:
        self.name = name
        self.children = children or []
        self.busy = busy

    @property
    def childCount(self) -> int:
        if self.busy:
            raise RuntimeError("atspi_error: The application no longer exists (0)")
        return len(self.children)

    def getChildAtIndex(self, index: int) -> _Node:
        return self.children[index]


def test_a_node_that_does_not_answer_counts_as_childless() -> None:
    """GNOME Settings hung while switching panels under load: the walk raised out of the
    wait instead of letting it look again (OSWorld os/3ce045a0, once in a full replay)."""
    tree = _Node("frame", [_Node("page", [_Node("hidden")], busy=True), _Node("row", [_Node("label")])])
    assert [node.name for node in _descendants(tree)] == ["page", "row", "label"]
    assert list(_descendants(_Node("frame", busy=True))) == []
