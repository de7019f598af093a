"""Two screenshots compared as the budget replays compare them: faint changes are the same screen."""

from __future__ import annotations

import io

from PIL import Image, ImageDraw

from pytest_osworld.episode.screen_match import CLOCK_ROWS, FAINT, changed_tiles, screen_of

WIDTH, HEIGHT = 1024, 512


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def _window(text: str, scrollbar: int = 0x88, hover: int | None = None) -> Image.Image:
    """A white window with a line of text, an overlay scrollbar of grey ``scrollbar`` at the
    right edge and, when ``hover`` is given, a button's hover frame of that grey."""
    image = Image.new("RGB", (WIDTH, HEIGHT), "white")
    draw = ImageDraw.Draw(image)
    draw.text((40, 40), text, fill="black")
    draw.rectangle((WIDTH - 4, 10, WIDTH - 1, 120), fill=(scrollbar,) * 3)
    if hover is not None:
        draw.rectangle((280, 300, 370, 330), outline=(hover,) * 3, width=1)
    return image


def test_the_same_screen_has_no_changed_tile() -> None:
    screen = screen_of(_png(_window("settings")))
    assert changed_tiles(screen, screen) == 0


def test_a_fading_scrollbar_and_a_hover_frame_are_faint() -> None:
    run = screen_of(_png(_window("settings", scrollbar=0x88)))
    replay = screen_of(_png(_window("settings", scrollbar=0x77, hover=0xE0)))
    assert run.signature != replay.signature  # the coarse tiles do differ
    assert changed_tiles(run, replay) == 0
    assert changed_tiles(run, replay, faint=0) == 2  # counted when nothing is faint


def test_a_letter_short_is_a_changed_tile() -> None:
    run = screen_of(_png(_window("settings")))
    replay = screen_of(_png(_window("setting")))
    assert changed_tiles(run, replay) == 1
    # and so is a hover frame drawn in full contrast
    assert changed_tiles(run, screen_of(_png(_window("settings", hover=0x40)))) == 1
    assert 0xFF - 0xE0 <= FAINT < 0xFF - 0x40


def test_a_screen_of_another_size_differs_everywhere() -> None:
    one = screen_of(_png(_window("settings")))
    small = screen_of(_png(Image.new("RGB", (512, 512), "white")))
    assert changed_tiles(one, small) == len(one.signature.tiles)


def _top_bar(clock: str, left: str = "Activities") -> Image.Image:
    """A window under a dark top bar with ``left`` at its left end and ``clock`` in its middle."""
    image = _window("settings")
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, WIDTH - 1, CLOCK_ROWS - 1), fill=(19, 19, 19))
    draw.text((8, 8), left, fill="white")
    draw.text((WIDTH // 2 - 20, 8), clock, fill="white")
    return image


def test_the_top_bar_clock_is_left_out_only_when_asked_and_only_the_clock() -> None:
    run = screen_of(_png(_top_bar("00:41")))
    replay = screen_of(_png(_top_bar("00:42")))
    assert changed_tiles(run, replay) == 1
    assert changed_tiles(run, replay, clock=True) == 0
    # the rest of the top bar still counts
    elsewhere = screen_of(_png(_top_bar("00:42", left="Files")))
    assert changed_tiles(run, elsewhere, clock=True) == 1
