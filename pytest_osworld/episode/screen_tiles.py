"""The screen in tiles, for the settle wait: which parts of it changed between two looks.

A screenshot is decoded, reduced by :data:`REDUCE` (each reduced pixel the average of a
block, so a change of a single pixel still changes it) and cut into tiles of :data:`TILE`
reduced pixels; each tile's bytes are its signature. :class:`TileHistory` keeps the looks
of the last few seconds and tells a tile that is still, one that blinks (a caret: two
images, back and forth), one that keeps changing by itself (a playing video, a spinner that
never stops) and one that is still being drawn. A change of the top row of tiles at a look
just after a minute began is the top bar's clock, and does not count.
"""

from __future__ import annotations

import io
import itertools
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from PIL import Image

#: The screen is reduced by this factor in each direction before it is cut into tiles.
REDUCE = 8
#: A tile's side, in reduced pixels (128 screen pixels: a 1920x1080 screen is 15x9 tiles).
TILE = 16
#: A clock showing minutes redraws within this many seconds after a minute begins.
CLOCK_SECONDS = 1.5


@dataclass(frozen=True)
class Signature:
    """A screenshot's tiles: each tile's reduced pixels, row by row, ``columns`` a row."""

    tiles: tuple[bytes, ...]
    columns: int


def tile_signature(png: bytes) -> Signature:
    """The signature of each tile of a screenshot (PNG), row by row."""
    with Image.open(io.BytesIO(png)) as image:
        return image_signature(image.convert("RGB"))


def image_signature(image: Image.Image) -> Signature:
    """The signature of each tile of a decoded RGB screenshot, row by row."""
    small = image.reduce(REDUCE)
    width, height = small.size
    data = small.tobytes()
    row_bytes = width * 3
    tiles: list[bytes] = []
    for top in range(0, height, TILE):
        rows = [data[y * row_bytes : (y + 1) * row_bytes] for y in range(top, min(top + TILE, height))]
        for left in range(0, row_bytes, TILE * 3):
            tiles.append(b"".join(row[left : left + TILE * 3] for row in rows))
    return Signature(tuple(tiles), -(-width // TILE))


def clock_tick(previous_wall: float | None, wall: float) -> bool:
    """Whether a look at ``wall`` (seconds since the epoch) may show a minute clock's redraw:
    a minute began since the previous look, or less than :data:`CLOCK_SECONDS` ago."""
    if previous_wall is not None and int(previous_wall // 60) != int(wall // 60):
        return True
    return wall % 60 < CLOCK_SECONDS


@dataclass
class TileHistory:
    """The looks at the screen of the last ``keep`` seconds, and what each tile did in them."""

    keep: float
    #: The time of each look, oldest first.
    times: deque[float] = field(default_factory=deque)
    #: Each look's tile signatures (same order as :attr:`times`).
    looks: deque[tuple[bytes, ...]] = field(default_factory=deque)
    #: Whether each look may show the top bar's clock redrawn (:func:`clock_tick`).
    ticks: deque[bool] = field(default_factory=deque)
    #: Tiles a row.
    columns: int = 0

    def add(self, at: float, signature: Signature, tick: bool = False) -> None:
        """Remember a look; forget those older than ``keep`` seconds before it (but one)."""
        if self.looks and (len(self.looks[-1]) != len(signature.tiles) or self.columns != signature.columns):
            self.times.clear()  # the screen changed size: start over
            self.looks.clear()
            self.ticks.clear()
        self.columns = signature.columns
        self.times.append(at)
        self.looks.append(signature.tiles)
        self.ticks.append(tick)
        while len(self.times) > 2 and self.times[1] < at - self.keep:
            self.times.popleft()
            self.looks.popleft()
            self.ticks.popleft()

    @property
    def span(self) -> float:
        """Seconds between the oldest and the newest look kept."""
        return self.times[-1] - self.times[0] if self.times else 0.0

    def changed_since(self, since: float) -> set[int]:
        """The tiles that changed between a look at or before ``since`` and the newest one (a
        change of the top row at a clock tick left out)."""
        changed: set[int] = set()
        for index in range(1, len(self.looks)):
            if self.times[index] > since:
                before, after = self.looks[index - 1], self.looks[index]
                first = self.columns if self.ticks[index] else 0
                changed.update(
                    i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b and i >= first
                )
        return changed

    def blinking(self, tiles: Sequence[int]) -> set[int]:
        """Of ``tiles``, those that since they were last drawn have gone back and forth
        between two images (a caret): the latest looks show at most two images of the tile,
        and it changed at least twice among them."""
        found = set()
        for tile in tiles:
            run = self._since_two_images(tile)
            changes = sum(1 for a, b in itertools.pairwise(run) if a != b)
            if changes >= 2:
                found.add(tile)
        return found

    def _since_two_images(self, tile: int) -> list[bytes]:
        """The tile's images over the longest run of latest looks that shows at most two."""
        seen: set[bytes] = set()
        run: list[bytes] = []
        for look in reversed(self.looks):
            image = look[tile]
            if image not in seen and len(seen) == 2:
                break
            seen.add(image)
            run.append(image)
        return run[::-1]

    def restless(self, tiles: Sequence[int], since: float, slice_seconds: float) -> set[int]:
        """Of ``tiles``, those that changed in every ``slice_seconds`` since ``since`` (a video,
        an endless animation: change that goes on, where drawing comes in bursts); none before
        the history reaches back that far."""
        if not self.times or self.times[0] > since:
            return set()
        slices = max(int((self.times[-1] - since) / slice_seconds), 1)
        seen: dict[int, set[int]] = {tile: set() for tile in tiles}
        for index in range(1, len(self.looks)):
            at = self.times[index]
            if at <= since:
                continue
            part = min(int((at - since) / slice_seconds), slices - 1)
            before, after = self.looks[index - 1], self.looks[index]
            for tile in tiles:
                if before[tile] != after[tile]:
                    seen[tile].add(part)
        return {tile for tile, parts in seen.items() if len(parts) == slices}

    def has_square(self, tiles: set[int]) -> bool:
        """Whether a 2x2 square of neighbouring tiles lies wholly within ``tiles``. A picture
        more than one tile (128 screen pixels) wide and high touches such a square wherever
        it sits; a line of text or a thin progress bar touches none."""
        columns = self.columns
        return any(
            (tile + 1) % columns != 0 and {tile + 1, tile + columns, tile + columns + 1} <= tiles
            for tile in tiles
        )

    def video_area(self, moving: set[int]) -> set[int]:
        """The tiles within the bounding rectangle of each group of neighbouring ``moving``
        tiles (touching at a side or a corner) that holds a 2x2 square (:meth:`has_square`).
        A video is a rectangle; where its picture stays put for a while (a still background,
        colour bars a shape moves over) its tiles change only now and then and never count
        as moving by themselves, yet they are the video's, not a program still drawing."""
        columns = self.columns
        area: set[int] = set()
        left = set(moving)
        while left:
            group = {left.pop()}
            edge = list(group)
            while edge:
                tile = edge.pop()
                row, column = divmod(tile, columns)
                for other in left.copy():
                    other_row, other_column = divmod(other, columns)
                    if abs(other_row - row) <= 1 and abs(other_column - column) <= 1:
                        left.discard(other)
                        group.add(other)
                        edge.append(other)
            if self.has_square(group):
                rows = [tile // columns for tile in group]
                cols = [tile % columns for tile in group]
                area.update(
                    row * columns + column
                    for row in range(min(rows), max(rows) + 1)
                    for column in range(min(cols), max(cols) + 1)
                )
        return area
