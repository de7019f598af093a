"""Two screenshots of a desktop compared tile by tile, as a budget replay compares its screen
with the run's (:mod:`pytest_osworld.episode.budgets`).

A tile has changed when its coarse signature differs
(:func:`~pytest_osworld.episode.screen_tiles.image_signature`) and, looked at more finely
(blocks of :data:`FINE_REDUCE` x :data:`FINE_REDUCE` screen pixels), some block differs by
more than :data:`FAINT` in a colour channel. What a desktop draws by itself between two
looks at the same state is faint: an overlay scrollbar fading out, a menu title's hover
highlight going, a dock or sidebar icon a shade lighter. What an action changes is drawn in
full contrast: a letter typed or missing, a dialog, a check mark, a row selected, an icon
enabled, the text of the top bar's clock. On the replays that parted in the runs measured
in docs/report.md ("Scores at several step budgets"), a button's hover frame, a fading
scrollbar and a row's tint differed by at most 41; the least a tile showing other content (a
search text, a suggestion list) differed by was 60.

The top bar's clock changes by itself, whatever the desktop's state: its minute differs
between a run and a replay made minutes later. With ``clock=True`` (a GNOME screen) it is
left out: the middle third of the top :data:`CLOCK_ROWS` pixel rows, where the date and
time are drawn.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

from PIL import Image, ImageChops

from pytest_osworld.episode.screen_tiles import REDUCE, TILE, Signature, image_signature

#: The finer look's reduction: each value the average of a block of this many pixels a side.
FINE_REDUCE = 2
#: The most a fine block may differ, in every colour channel (0-255), for its tile to count
#: as faintly changed, not changed.
FAINT = 48
#: The top bar's height in screen pixels (GNOME's, as our session and Ubuntu's draw it).
CLOCK_ROWS = 27
#: A tile's side in fine pixels.
FINE_TILE = TILE * REDUCE // FINE_REDUCE


@dataclass(frozen=True)
class Screen:
    """A screenshot's coarse tile signature and, decoded once, its finer look."""

    signature: Signature
    fine: Image.Image = field(repr=False, compare=False)


def screen_of(png: bytes) -> Screen:
    """A screenshot (PNG) ready to compare."""
    with Image.open(io.BytesIO(png)) as image:
        decoded = image.convert("RGB")
    return Screen(image_signature(decoded), decoded.reduce(FINE_REDUCE))


def changed_tiles(original: Screen, replay: Screen, faint: int = FAINT, clock: bool = False) -> int:
    """How many tiles differ between two screens by more than ``faint`` (every tile when the
    screens' sizes differ), with ``clock`` the top bar's clock not looked at."""
    a, b = original.signature, replay.signature
    if len(a.tiles) != len(b.tiles) or a.columns != b.columns or original.fine.size != replay.fine.size:
        return max(len(a.tiles), len(b.tiles))
    differing = [index for index, (x, y) in enumerate(zip(a.tiles, b.tiles, strict=True)) if x != y]
    if not differing:
        return 0
    # Each channel of each fine block: 255 where it differs by more than ``faint``, else 0.
    strong = ImageChops.difference(original.fine, replay.fine).point(lambda v: 255 if v > faint else 0)
    if clock:
        width = strong.size[0]
        strong.paste((0, 0, 0), (width // 3, 0, 2 * width // 3, -(-CLOCK_ROWS // FINE_REDUCE)))
    changed = 0
    for index in differing:
        row, column = divmod(index, a.columns)
        left, top = column * FINE_TILE, row * FINE_TILE
        if strong.crop((left, top, left + FINE_TILE, top + FINE_TILE)).getbbox() is not None:
            changed += 1
    return changed
