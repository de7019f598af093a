"""Check boxes found by their pixels (VLC's Qt dialogs, whose rows and columns move with the
font)."""

from __future__ import annotations

from PIL import Image, ImageDraw

from pytest_osworld.guest.waits_pixels import check_boxes_in, column


def dialog(boxes: list[tuple[int, int, bool]], size: tuple[int, int] = (300, 400)) -> Image.Image:
    """A white dialog with a grey 14x14 check box centred at (x, y) for each
    ``(x, y, ticked)``, a dark tick inside the ticked ones, a label after each, and a
    separator and a text field that are not boxes."""
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    for x, y, ticked in boxes:
        draw.rectangle((x - 6, y - 7, x + 7, y + 6), outline=(150, 150, 150))
        if ticked:
            draw.line((x - 3, y, x, y + 3, x + 4, y - 4), fill=(30, 30, 30), width=2)
        draw.text((x + 12, y - 6), "Fast seek", fill="black")
    draw.line((10, 380, 23, 380), fill=(150, 150, 150))  # a separator as wide as a box
    draw.rectangle((200, 350, 290, 372), outline=(150, 150, 150))  # a text field
    return image


def test_finds_each_box_in_reading_order_with_its_tick() -> None:
    boxes = [(20, 60, False), (160, 60, True), (20, 143, True), (20, 300, False)]
    assert check_boxes_in(dialog(boxes)) == boxes


def test_a_box_with_grey_corners_or_light_ones_is_found_once() -> None:
    image = dialog([])
    draw = ImageDraw.Draw(image)
    draw.rectangle((14, 53, 27, 66), outline=(188, 188, 188))
    for corner in ((14, 53), (27, 53), (14, 66), (27, 66)):
        image.putpixel(corner, (200, 200, 200))  # Qt's Fusion style: corners lighter than the edges
    assert check_boxes_in(image) == [(20, 60, False)]


def test_a_square_without_a_light_inside_is_not_a_box() -> None:
    image = dialog([])
    ImageDraw.Draw(image).rectangle((14, 53, 27, 66), fill=(150, 150, 150))  # a grey icon
    assert check_boxes_in(image) == []


def test_a_box_cut_by_the_edge_is_not_one() -> None:
    assert check_boxes_in(dialog([(20, 3, True), (20, 200, True)])) == [(20, 200, True)]


def test_columns_from_the_left() -> None:
    boxes = check_boxes_in(dialog([(160, 40, True), (20, 60, False), (20, 143, True), (160, 143, False)]))
    assert column(boxes, 0) == [(20, 60, False), (20, 143, True)]
    assert column(boxes, 1) == [(160, 40, True), (160, 143, False)]
    assert column(boxes, -1) == column(boxes, 1)
    assert column(boxes, 2) == []
