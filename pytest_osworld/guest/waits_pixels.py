"""Widgets found by their pixels, for reference solutions in windows whose accessibility
tree does not show them (VLC's Qt 5 dialogs: docs/desktop.md).

A check box is a 14x14 grey frame (grey: 100-199 of 255) with a dark tick inside when
ticked, in both sessions. Where a dialog's rows are depends on the font its toolkit is
given, so a solution that looks for its check box down a column, and tells it from the
others by their order, still works when the font changes (GNOME's XSETTINGS daemon would
give VLC the Ubuntu font: docs/fidelity.md, "theme, fonts, wallpaper").
"""

from __future__ import annotations

from PIL import Image

__all__ = ["CheckBox", "check_boxes", "check_boxes_in"]

#: Offsets from a check box's centre of four points of its frame: left, right, top, bottom.
_FRAME = ((-6, 0), (7, 0), (0, -7), (0, 6))

#: A check box: the y of its centre (in the coordinates asked for) and whether it is ticked.
CheckBox = tuple[int, bool]


def check_boxes_in(image: Image.Image, cx: int) -> list[CheckBox]:
    """The check boxes centred in column ``cx`` of ``image``, top to bottom, with the y of
    each centre in the image and whether it is ticked (more than 5 dark pixels inside)."""
    gray = image.convert("L")
    width, height = gray.size
    if not 6 <= cx < width - 7:
        return []
    pixels = gray.tobytes()  # a byte per pixel, row by row

    def grey(x: int, y: int) -> bool:
        return 100 <= pixels[y * width + x] < 200

    found: list[CheckBox] = []
    for cy in range(7, height - 6):
        if all(grey(cx + dx, cy + dy) for dx, dy in _FRAME):
            dark = sum(
                1 for y in range(cy - 4, cy + 5) for x in range(cx - 4, cx + 5) if pixels[y * width + x] < 100
            )
            found.append((cy, dark > 5))
    return found


def check_boxes(x: int, top: int, bottom: int) -> list[CheckBox]:
    """The check boxes centred in screen column ``x`` between screen rows ``top`` and
    ``bottom``, top to bottom: each one's screen y and whether it is ticked."""
    import pyautogui

    grab = pyautogui.screenshot(region=(x - 7, top - 7, 15, bottom - top + 14))
    return [(top - 7 + cy, ticked) for cy, ticked in check_boxes_in(grab, 7)]
