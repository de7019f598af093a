"""Widgets found by their pixels, for reference solutions in windows whose accessibility
tree does not show them (VLC's Qt 5 dialogs: docs/desktop.md).

A check box is a 14x14 grey frame (grey: 100-199 of 255) with a dark tick inside when
ticked, in both sessions. Where a dialog's rows and columns are depends on the font its
toolkit is given (GNOME's XSETTINGS daemon gives VLC the Ubuntu font, openbox leaves it
DejaVu Sans: docs/fidelity.md, "theme, fonts, wallpaper"), so a solution finds every check
box of an area and tells the one it wants from the others by their order, which the font
does not change.
"""

from __future__ import annotations

import re

from PIL import Image

__all__ = ["PlacedCheckBox", "check_boxes", "check_boxes_in", "column"]

#: A check box: the x and y of its centre (in the coordinates asked for), and whether it is
#: ticked.
PlacedCheckBox = tuple[int, int, bool]

#: A frame's top edge in a row of grey levels: 12 grey pixels between its two lighter
#: corners, or 13-14 where a theme draws the corners grey too, and no grey on either side.
_TOP_EDGE = re.compile(rb"(?<![\x64-\xc7])[\x64-\xc7]{12,14}(?![\x64-\xc7])")


def check_boxes_in(image: Image.Image) -> list[PlacedCheckBox]:
    """Every check box wholly inside ``image``, top to bottom and left to right within a
    row: the x and y of each centre in the image and whether it is ticked (more than 5
    dark pixels inside)."""
    gray = image.convert("L")
    width, height = gray.size
    pixels = gray.tobytes()  # a byte per pixel, row by row

    def level(x: int, y: int) -> int:
        return pixels[y * width + x]

    def grey(x: int, y: int) -> bool:
        return 100 <= level(x, y) < 200

    def light(x: int, y: int) -> bool:
        return level(x, y) >= 200

    def framed(cx: int, cy: int) -> bool:
        """A whole 14x14 frame around (cx, cy): its four edges grey (corners aside), with
        a light line just inside them all round, which a tick does not reach."""
        if not (6 <= cx < width - 7 and 7 <= cy < height - 6):
            return False
        across = range(cx - 5, cx + 7)
        down = range(cy - 6, cy + 6)
        return (
            all(grey(x, cy - 7) and grey(x, cy + 6) for x in across)
            and all(grey(cx - 6, y) and grey(cx + 7, y) for y in down)
            and all(light(x, cy - 6) and light(x, cy + 5) for x in range(cx - 4, cx + 6))
            and all(light(cx - 5, y) and light(cx + 6, y) for y in range(cy - 5, cy + 5))
        )

    found: dict[tuple[int, int], bool] = {}
    for top in range(height - 13):
        for edge in _TOP_EDGE.finditer(pixels, top * width, (top + 1) * width):
            left = edge.start() - top * width
            for cx in (left + 5, left + 6):  # the edge starts after or at the corner
                cy = top + 7
                if (cx, cy) not in found and framed(cx, cy):
                    inside = (level(x, y) for y in range(cy - 4, cy + 5) for x in range(cx - 4, cx + 5))
                    found[(cx, cy)] = sum(1 for value in inside if value < 100) > 5
    return [(cx, cy, ticked) for (cx, cy), ticked in sorted(found.items(), key=lambda item: item[0][::-1])]


def check_boxes(left: int, top: int, right: int, bottom: int) -> list[PlacedCheckBox]:
    """The check boxes wholly inside the screen's area from (``left``, ``top``) to
    (``right``, ``bottom``), in reading order: each one's screen x and y and whether it is
    ticked."""
    import pyautogui

    grab = pyautogui.screenshot(region=(left, top, right - left, bottom - top))
    return [(left + cx, top + cy, ticked) for cx, cy, ticked in check_boxes_in(grab)]


def column(boxes: list[PlacedCheckBox], index: int) -> list[PlacedCheckBox]:
    """The check boxes of ``boxes`` in their ``index``-th column from the left (boxes share
    a column when their centres share an x), top to bottom; empty when there are fewer
    columns."""
    xs = sorted({x for x, _, _ in boxes})
    if not -len(xs) <= index < len(xs):
        return []
    return [box for box in boxes if box[0] == xs[index]]
