"""Where a protocol's coordinates land on the screen, and the screenshot its model sees.

Each protocol has one convention (docs/agents.md):

- **declared display** (Claude, OpenAI): the screenshot is resized to a size declared in
  the tool, and the model answers in that image's pixels;
- **smart_resize** (UI-TARS-1.5, Qwen2.5-VL, OpenCUA on Qwen2.5): the image is resized so
  that each side is a multiple of a patch size and the pixel count lies within bounds,
  and the model answers in that image's pixels;
- **grid** (Gemini, Qwen3-VL, UI-TARS 1.0): the model answers on a 0..N grid over the whole
  screen, whatever the image size.

A :class:`Frame` holds one convention for one screen size and maps points both ways. A
point outside the model's space is :class:`OffScreen`: a step error told to the model.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass

from pytest_osworld.agent.actions import ActionParseError


class OffScreen(ActionParseError):
    """A coordinate outside the screenshot (or grid) the model was shown."""


@dataclass(frozen=True)
class Frame:
    """The screen, the image the model sees, and the space its coordinates live in.

    ``space`` is the size of the coordinate space: the image's size, or ``(N, N)`` for a
    0..N grid.
    """

    screen: tuple[int, int]
    image: tuple[int, int]
    space: tuple[int, int]

    def to_screen(self, x: float, y: float) -> tuple[int, int]:
        """The screen pixel of the model's point ``(x, y)``; :class:`OffScreen` outside its space."""
        if not (0 <= x <= self.space[0] and 0 <= y <= self.space[1]):
            raise OffScreen(
                f"coordinate ({x:g}, {y:g}) is outside the {self.space[0]}x{self.space[1]} "
                "space of the screenshot"
            )
        sx = min(self.screen[0] - 1, int(x * self.screen[0] / self.space[0]))
        sy = min(self.screen[1] - 1, int(y * self.screen[1] / self.space[1]))
        return sx, sy

    def to_model(self, x: int, y: int) -> tuple[int, int]:
        """The model's coordinates of the screen pixel ``(x, y)``."""
        return round(x * self.space[0] / self.screen[0]), round(y * self.space[1] / self.screen[1])

    def length_to_screen(self, length: float, axis: int) -> float:
        """A distance along ``axis`` (0 for x, 1 for y) in screen pixels."""
        return length * self.screen[axis] / self.space[axis]


def declared(screen: tuple[int, int], display: tuple[int, int]) -> Frame:
    """The image resized to the declared ``display``; coordinates in its pixels."""
    return Frame(screen, display, display)


def grid(screen: tuple[int, int], image: tuple[int, int], size: int) -> Frame:
    """Coordinates on a 0..``size`` grid over the screen; the image is ``image``."""
    return Frame(screen, image, (size, size))


def smart_resize(width: int, height: int, factor: int, min_pixels: int, max_pixels: int) -> tuple[int, int]:
    """The (width, height) Qwen-VL models see: each side a multiple of ``factor``, the area
    within ``[min_pixels, max_pixels]``, the aspect ratio kept as near as those allow."""
    if width <= 0 or height <= 0:
        raise ValueError(f"cannot resize a {width}x{height} image")
    w = max(factor, round(width / factor) * factor)
    h = max(factor, round(height / factor) * factor)
    if w * h > max_pixels:
        shrink = math.sqrt(width * height / max_pixels)
        w = max(factor, math.floor(width / shrink / factor) * factor)
        h = max(factor, math.floor(height / shrink / factor) * factor)
    elif w * h < min_pixels:
        grow = math.sqrt(min_pixels / (width * height))
        w = math.ceil(width * grow / factor) * factor
        h = math.ceil(height * grow / factor) * factor
    return w, h


def smart(screen: tuple[int, int], factor: int, min_pixels: int, max_pixels: int) -> Frame:
    """The image :func:`smart_resize`\\ d; coordinates in its pixels."""
    size = smart_resize(screen[0], screen[1], factor, min_pixels, max_pixels)
    return Frame(screen, size, size)


def parse_size(text: str) -> tuple[int, int]:
    """``"1366x768"`` as ``(1366, 768)``; :class:`ValueError` for anything else."""
    width, sep, height = text.strip().lower().partition("x")
    if not sep or not width.isdigit() or not height.isdigit() or int(width) < 1 or int(height) < 1:
        raise ValueError(f"{text!r} is not a size such as 1366x768")
    return int(width), int(height)


def resized_png(png: bytes, size: tuple[int, int]) -> bytes:
    """``png`` resized to ``size`` (Lanczos), as PNG; unchanged when it already has that size."""
    from PIL import Image  # lazy: the agents extra

    with Image.open(io.BytesIO(png)) as image:
        if image.size == size:
            return png
        out = io.BytesIO()
        image.convert("RGB").resize(size, Image.Resampling.LANCZOS).save(out, format="PNG")
    return out.getvalue()


def cropped_png(png: bytes, box: tuple[int, int, int, int]) -> bytes:
    """The screen region ``box`` (left, top, right, bottom) of ``png``, at full resolution."""
    from PIL import Image

    with Image.open(io.BytesIO(png)) as image:
        out = io.BytesIO()
        image.crop(box).save(out, format="PNG")
    return out.getvalue()
