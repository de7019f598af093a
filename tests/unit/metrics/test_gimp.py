"""GIMP metrics over real images made with Pillow."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from metric_files import check, gradient
from PIL import Image, ImageDraw, ImageEnhance, ImageOps

from pytest_osworld.evaluators.metrics import gimp as g

Saver = Callable[..., str]
Writer = Callable[[str, str | bytes], str]


@pytest.fixture
def original(save_image: Saver) -> str:
    return save_image(gradient((64, 64)), "original.png")


def test_structure_sim(save_image: Saver, original: str) -> None:
    check(g.check_structure_sim(save_image(gradient((64, 64)), "same.png"), original), 1, "SSIM 1.000")
    check(
        g.check_structure_sim(save_image(gradient((64, 64)).rotate(90), "rot.png"), original),
        0,
        "< 0.9",
    )
    check(
        g.check_structure_sim(save_image(gradient((32, 32)), "small.png"), original),
        0,
        "size (32, 32)",
    )
    check(g.check_file_exists_and_structure_sim(original, original), 1, "SSIM")
    check(g.check_file_exists_and_structure_sim(original + ".jpg", original), 0, "does not exist")


@pytest.mark.parametrize(
    ("name", "value", "reason"),
    [
        ("original.png", 1, "original.png exists"),
        ("exported.jpg", 0, "exported.jpg' does not exist"),
        (None, 0, "no result: the getter produced nothing"),
    ],
)
def test_check_file_exists(original: str, name: str | None, value: float, reason: str) -> None:
    result = None if name is None else original.replace("original.png", name)
    check(g.check_file_exists(result), value, reason)


def test_structure_sim_resized(save_image: Saver, original: str) -> None:
    canvas = Image.new("RGBA", (100, 100), (0, 0, 0, 0))
    canvas.paste(gradient((128, 128), "RGBA").resize((50, 50)), (10, 20))
    check(
        g.check_structure_sim_resized(save_image(canvas, "padded.png"), original),
        1,
        "after resizing",
    )
    check(
        g.check_structure_sim_resized(save_image(gradient((80, 80)).rotate(90), "r.png"), original),
        0,
        "< 0.9",
    )


def test_structure_sim_with_threshold(save_image: Saver, original: str) -> None:
    check(
        g.check_structure_sim_with_threshold(save_image(gradient((128, 128)), "big.png"), original),
        1,
        ">= 0.85",
    )
    check(
        g.check_structure_sim_with_threshold(
            save_image(gradient((64, 64)).rotate(90), "r.png"), original, ssim_threshold=0.85
        ),
        0,
        "< 0.85",
    )


def test_brightness_decrease(save_image: Saver, original: str) -> None:
    darker = save_image(ImageEnhance.Brightness(gradient((64, 64))).enhance(0.7), "dark.png")
    brighter = save_image(ImageEnhance.Brightness(gradient((64, 64))).enhance(1.2), "bright.png")
    check(g.check_brightness_decrease_and_structure_sim(darker, original), 1, "darker")
    check(g.check_brightness_decrease_and_structure_sim(brighter, original), 0, "is not below")
    noise = save_image(gradient((64, 64)).rotate(90).point(lambda p: p // 2), "other.png")
    check(
        g.check_brightness_decrease_and_structure_sim(noise, original, threshold=0.001),
        0,
        "structure MSE",
    )


def test_contrast_increase(save_image: Saver, original: str) -> None:
    more = save_image(ImageEnhance.Contrast(gradient((64, 64))).enhance(1.5), "more.png")
    less = save_image(ImageEnhance.Contrast(gradient((64, 64))).enhance(0.5), "less.png")
    check(g.check_contrast_increase_and_structure_sim(more, original), 1, "SSIM")
    check(g.check_contrast_increase_and_structure_sim(less, original), 0, "is not above")


def test_saturation_increase(save_image: Saver, original: str) -> None:
    more = save_image(ImageEnhance.Color(gradient((64, 64))).enhance(1.5), "more.png")
    less = save_image(ImageEnhance.Color(gradient((64, 64))).enhance(0.3), "less.png")
    check(g.check_saturation_increase_and_structure_sim(more, original), 1, "saturation")
    check(g.check_saturation_increase_and_structure_sim(less, original), 0, "is not above")


def test_palette(save_image: Saver, original: str) -> None:
    palette = save_image(gradient((64, 64)).convert("P", palette=Image.Palette.ADAPTIVE, colors=256), "p.png")
    check(g.check_palette_and_structure_sim(palette, original), 1, "palette image")
    check(g.check_palette_and_structure_sim(original, original), 0, "not a palette")


def test_mirror(save_image: Saver, original: str) -> None:
    mirrored = save_image(ImageOps.mirror(gradient((64, 64))), "m.png")
    check(g.check_image_mirror(mirrored, original), 1, "mirrored")
    check(g.check_image_mirror(original, original), 0, "not the mirror")


def test_green_background(save_image: Saver) -> None:
    mask = Image.new("RGB", (20, 20), (0, 0, 0))
    ImageDraw.Draw(mask).rectangle((0, 0, 9, 19), fill=(255, 255, 255))
    image = Image.new("RGB", (20, 20), (200, 30, 30))
    ImageDraw.Draw(image).rectangle((0, 0, 9, 19), fill=(10, 200, 10))
    mask_path = save_image(mask, "mask.png")
    check(
        g.check_green_background(save_image(image, "green.png"), mask_path),
        1,
        "all 200 background pixels",
    )
    check(
        g.check_green_background(save_image(Image.new("RGB", (20, 20), "red"), "red.png"), mask_path),
        0,
        "200 background pixels are not green",
    )


def test_textbox_on_leftside(save_image: Saver) -> None:
    left = Image.new("RGB", (200, 50), "white")
    ImageDraw.Draw(left).rectangle((3, 10, 60, 20), fill="black")
    right = Image.new("RGB", (200, 50), "white")
    ImageDraw.Draw(right).rectangle((100, 10, 160, 20), fill="black")
    check(g.check_textbox_on_leftside(save_image(left, "l.png")), 1, "x=3")
    check(g.check_textbox_on_leftside(save_image(right, "r.png")), 0, "x=100")
    check(
        g.check_textbox_on_leftside(save_image(Image.new("RGB", (9, 9), "white"), "w.png")),
        0,
        "no dark pixel",
    )


def _triangle(centre: tuple[int, int]) -> Any:
    image = Image.new("RGB", (100, 100), "white")
    x, y = centre
    ImageDraw.Draw(image).polygon([(x - 10, y + 8), (x + 10, y + 8), (x, y - 12)], fill="yellow")
    return image


def test_triangle_position(save_image: Saver) -> None:
    check(g.check_triangle_position(save_image(_triangle((50, 52)), "c.png")), 1, "centred")
    check(g.check_triangle_position(save_image(_triangle((20, 20)), "off.png")), 0, "centre (50, 50)")


def test_image_size(save_image: Saver) -> None:
    image = Image.new("RGBA", (300, 600), (0, 0, 0, 0))
    image.paste(Image.new("RGBA", (256, 512), (9, 9, 9, 255)), (10, 40))
    path = save_image(image, "s.png")
    check(g.check_image_size(path, {"height": 512, "ignore_transparent": True}), 1, "256x512")
    check(g.check_image_size(path, {"height": 512}), 0, "height 600, expected 512")
    check(
        g.check_image_size(save_image(Image.new("RGB", (128, 128)), "q.png"), {"height": 128, "width": 128}),
        1,
        "128x128",
    )


def test_image_file_size(write: Writer) -> None:
    path = write("x.png", b"x" * 1000)
    check(g.check_image_file_size(path, {"max_size": 600000}), 1, "1000 bytes")
    check(g.check_image_file_size(path, {"max_size": 500}), 0, "limit 500")


def test_compare_image_list(save_image: Saver) -> None:
    a = save_image(gradient((32, 32)), "a.png")
    b = save_image(gradient((32, 32)), "b.png")
    c = save_image(gradient((32, 32)).rotate(90), "c.png")
    check(g.compare_image_list([a, b], [b, a]), 1, "2 images identical")
    check(g.compare_image_list([a, c], [a, b]), 0, "c.png differs")
    check(g.compare_image_list([a], [a, b]), 0, "1 images, expected 2")


@pytest.mark.parametrize(
    ("rules", "value", "reason"),
    [
        ({"type:": "key-value", "key": "theme", "value": '"Light"'}, 1, '(theme "Light")'),
        ({"key": "undo-levels", "value": "100"}, 1, "(undo-levels 100)"),
        (
            {"key": "undo-levels", "value": "5"},
            0,
            "undo-levels is 'undo-levels 100', expected value 5",
        ),
        ({"key": "hide-docks", "value": "yes"}, 0, "is None"),
    ],
)
def test_check_config_status(write: Writer, rules: dict[str, Any], value: float, reason: str) -> None:
    path = write("gimprc", '# GIMP gimprc\n(theme "Light")\n(undo-levels 100)\n(layer-new-name "Square")\n')
    check(g.check_config_status(path, rules), value, reason)
