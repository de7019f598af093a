"""GTK 4 elements are placed on screen by their window's shadow-less origin."""

from __future__ import annotations

import pytest

from pytest_osworld.guest.waits_gtk4 import shadow_of


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
