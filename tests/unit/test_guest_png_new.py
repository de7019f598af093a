"""Screenshot PNG encoding: both encoders give valid PNGs with exactly the grabbed pixels.

fpng is used when importable and Pillow otherwise; each path is tested here, along with
the BGRX conversion, the choice of encoder and the fallback when fpng is missing or fails.
"""

from __future__ import annotations

import io
import random
import time
from collections.abc import Callable
from typing import Any

import pytest
from PIL import Image, ImageDraw

from pytest_osworld.guest import desktop, png
from pytest_osworld.guest.png import PngEncoderError

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def desktop_like(width: int = 1920, height: int = 1080, seed: int = 7) -> Image.Image:
    """An RGB image with what screens have: flat panels, text, lines, and a noisy photo."""
    rng = random.Random(seed)
    image = Image.new("RGB", (width, height), (236, 236, 236))
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, width, 28), fill=(48, 84, 140))
    for row in range(40, height - 40, 22):
        draw.line((0, row, width, row), fill=(200, 200, 200))
        draw.text((10 + row % 50, row + 4), f"row {row} value {rng.randint(0, 10**6)}", fill=(0, 0, 0))
    photo = bytes(rng.getrandbits(8) for _ in range(200 * 120 * 3))
    image.paste(Image.frombytes("RGB", (200, 120), photo), (width // 2, height // 2))
    return image


def bgrx_of(image: Image.Image) -> bytearray:
    """The image as X11 gives it: B, G, R and a padding byte (any value) per pixel."""
    raw = bytearray(image.convert("RGBA").tobytes("raw", "BGRA"))
    raw[3::4] = bytes([0x5A]) * (len(raw) // 4)
    return raw


def decoded(data: bytes) -> Image.Image:
    """A PNG checked and decoded by Pillow."""
    assert data.startswith(PNG_SIGNATURE)
    Image.open(io.BytesIO(data)).verify()
    image = Image.open(io.BytesIO(data))
    image.load()
    assert image.format == "PNG"
    return image


needs_fpng = pytest.mark.skipif(not png.fpng_available(), reason="fpng is not installed (pip install fpng)")


def test_bgrx_to_rgb_matches_a_pixel_by_pixel_conversion() -> None:
    rng = random.Random(3)
    width, height = 37, 11
    raw = bytearray(rng.getrandbits(8) for _ in range(width * height * 4))
    expected = bytearray()
    for index in range(0, len(raw), 4):
        blue, green, red = raw[index], raw[index + 1], raw[index + 2]
        expected += bytes((red, green, blue))
    assert png.bgrx_to_rgb(raw, width, height) == bytes(expected)


def test_bgrx_to_rgb_packs_the_same_through_pillows_public_tobytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The one-block packing and its fallback (``Image.tobytes``) agree."""
    expected = desktop_like(300, 200).tobytes()
    raw = bgrx_of(desktop_like(300, 200))
    fast = png.bgrx_to_rgb(raw, 300, 200)

    real = Image._getencoder
    calls: list[tuple[Any, ...]] = []

    def first_call_fails(*args: Any) -> Any:
        calls.append(args)
        if len(calls) == 1:  # ours; the second is Image.tobytes's own
            raise AttributeError("an encoder interface unlike Pillow 13's")
        return real(*args)

    monkeypatch.setattr(Image, "_getencoder", first_call_fails)
    assert png.bgrx_to_rgb(raw, 300, 200) == fast == expected
    assert len(calls) == 2


def test_bgrx_to_rgb_works_on_a_pillow_without_the_rgbx_to_bgr_packer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    expected = desktop_like(120, 80).tobytes()
    raw = bgrx_of(desktop_like(120, 80))
    real = Image._getencoder
    refused: list[tuple[Any, ...]] = []

    def no_bgr_packer(mode: str, name: str, args: Any, *rest: Any) -> Any:
        if mode == "RGBX" and args in ("BGR", ("BGR",)):
            refused.append((mode, args))
            raise ValueError("No packer found from RGBX to BGR")
        return real(mode, name, args, *rest)

    monkeypatch.setattr(Image, "_getencoder", no_bgr_packer)
    assert png.bgrx_to_rgb(raw, 120, 80) == expected
    assert len(refused) == 2  # the one-block packing, then Image.tobytes


def test_bgrx_to_rgb_refuses_a_buffer_of_the_wrong_size() -> None:
    with pytest.raises(ValueError, match="cannot be a 4x4 BGRX image"):
        png.bgrx_to_rgb(bytearray(60), 4, 4)


@pytest.mark.parametrize(
    "encoder",
    [pytest.param("fpng", marks=needs_fpng), "pillow"],
)
@pytest.mark.parametrize("size", [(1920, 1080), (1, 1), (3, 5), (1366, 768)])
def test_each_encoder_gives_a_valid_png_with_the_same_pixels(encoder: str, size: tuple[int, int]) -> None:
    source = desktop_like(*size)
    rgb = png.bgrx_to_rgb(bgrx_of(source), *size)
    assert rgb == source.tobytes()
    image = decoded(png.encode_png(rgb, *size, encoder))
    assert image.mode == "RGB" and image.size == size
    assert image.tobytes() == rgb


@needs_fpng
def test_fpng_is_chosen_by_default_when_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(png.ENCODER_ENV, raising=False)
    assert png.choose_encoder() == "fpng"


def test_pillow_is_chosen_when_fpng_cannot_be_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(png.ENCODER_ENV, raising=False)
    monkeypatch.setattr(png, "_fpng_module", lambda: None)
    assert png.choose_encoder() == "pillow"
    with pytest.raises(PngEncoderError, match=r"'fpng' \(from the caller\) is not installed here"):
        png.choose_encoder("fpng")
    with pytest.raises(ImportError, match="pip install fpng"):
        png.encode_fpng(b"\0\0\0", 1, 1)


def test_the_environment_variable_forces_an_encoder_and_a_typo_is_explained(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(png.ENCODER_ENV, "Pillow")
    assert png.choose_encoder() == "pillow"
    monkeypatch.setenv(png.ENCODER_ENV, "fpgn")
    with pytest.raises(PngEncoderError) as caught:
        png.choose_encoder()
    assert (
        str(caught.value)
        == "unknown PNG encoder 'fpgn' (from OSWORLD_PNG_ENCODER); use one of auto, fpng, pillow"
    )


def test_an_encoder_failure_falls_back_to_pillow(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[int, int]] = []

    def broken(rgb: bytes, width: int, height: int) -> bytes:
        calls.append((width, height))
        raise RuntimeError("fpng_encode_image_to_memory() failed!")

    monkeypatch.setitem(png.ENCODERS, "fpng", broken)
    source = desktop_like(64, 48)
    image = decoded(png.encode_png(source.tobytes(), 64, 48, "fpng"))
    assert calls == [(64, 48)]
    assert image.tobytes() == source.tobytes()


def test_an_unknown_encoder_name_is_an_error_not_a_silent_choice() -> None:
    with pytest.raises(PngEncoderError, match="unknown PNG encoder 'gif'"):
        png.encode_png(b"\0\0\0", 1, 1, "gif")


class FakeShot:
    """What mss returns: a size and the BGRX bytes."""

    def __init__(self, image: Image.Image) -> None:
        self.size = image.size
        self.raw = bgrx_of(image)


class FakeGrabber:
    """mss's interface, serving a fixed image (no X server needed)."""

    def __init__(self, image: Image.Image) -> None:
        self.monitors = [{}, {"left": 0, "top": 0, "width": image.width, "height": image.height}]
        self.image = image
        self.grabs = 0

    def grab(self, monitor: dict[str, int]) -> FakeShot:
        self.grabs += 1
        return FakeShot(self.image)


@pytest.mark.parametrize("encoder", [pytest.param("fpng", marks=needs_fpng), "pillow"])
def test_the_screen_grab_is_encoded_end_to_end_with_the_same_pixels(encoder: str) -> None:
    source = desktop_like()
    screen = desktop.Screen(encoder=encoder)
    grabber = FakeGrabber(source)
    screen._grabber = grabber
    image = decoded(screen.grab_png())
    assert screen.encoder == encoder and grabber.grabs == 1
    assert image.size == (1920, 1080) and image.tobytes() == source.tobytes()


def best_of(func: Callable[[], Any], runs: int = 5) -> float:
    """The fastest of a few runs (robust against a busy machine)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


@needs_fpng
def test_fpng_encodes_a_screen_several_times_faster_than_pillow() -> None:
    """Relative, so a loaded machine cannot fail it; the absolute figure is bench_desktop's."""
    rgb = desktop_like().tobytes()
    fpng_s = best_of(lambda: png.encode_fpng(rgb, 1920, 1080))
    pillow_s = best_of(lambda: png.encode_pillow(rgb, 1920, 1080))
    assert fpng_s * 2 < pillow_s, (fpng_s, pillow_s)
