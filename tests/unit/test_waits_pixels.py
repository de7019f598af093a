"""Check boxes found down a column of pixels (VLC's Qt dialogs, whose rows move with the font)."""

from __future__ import annotations

from PIL import Image, ImageDraw

from pytest_osworld.guest.waits_pixels import check_boxes_in


def dialog(boxes: list[tuple[int, bool]], x: int = 20) -> Image.Image:
    """A white strip with a grey 14x14 check box centred at (x, y) for each ``(y, ticked)``,
    a dark tick inside the ticked ones, and some text-like dark strokes between them."""
    image = Image.new("RGB", (60, 400), "white")
    draw = ImageDraw.Draw(image)
    for y, ticked in boxes:
        draw.rectangle((x - 6, y - 7, x + 7, y + 6), outline=(150, 150, 150))
        if ticked:
            draw.line((x - 3, y, x, y + 3, x + 4, y - 4), fill=(30, 30, 30), width=2)
    draw.text((x + 12, 5), "Fast seek", fill="black")
    draw.line((x - 6, 380, x + 7, 380), fill=(150, 150, 150))  # a separator, not a box
    return image


def test_finds_each_box_in_order_with_its_tick() -> None:
    image = dialog([(60, False), (143, True), (300, False)])
    assert check_boxes_in(image, 20) == [(60, False), (143, True), (300, False)]


def test_a_column_beside_the_boxes_has_none() -> None:
    image = dialog([(60, False), (143, True)])
    assert check_boxes_in(image, 23) == []
    assert check_boxes_in(image, 2) == []  # too near the edge to hold a box


def test_a_box_cut_by_the_edge_is_not_one() -> None:
    assert check_boxes_in(dialog([(3, True), (200, True)]), 20) == [(200, True)]
