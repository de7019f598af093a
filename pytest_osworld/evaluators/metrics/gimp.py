"""GIMP metrics: image similarity (SSIM), colour, geometry and GIMP's config files.

Image metrics take two paths, ``result`` (the file the agent produced) and ``expected``
(the reference or the original, as the task says), in OSWorld's order.
"""

from __future__ import annotations

import os
import shlex
from typing import Any

from pytest_osworld.evaluators.metrics._utils import (
    existing_file,
    failed,
    missing,
    open_image,
    passed,
    path_list,
    read_text,
    rules_of,
    ssim,
    verdict,
)
from pytest_osworld.evaluators.score import Score

#: SSIM a structure-preserving edit must reach.
STRUCTURE_THRESHOLD = 0.9


def _pair(result: Any, expected: Any) -> tuple[str, str, Score | None]:
    path, problem = existing_file(result)
    if problem:
        return "", "", problem
    gold, gold_problem = existing_file(expected, "expected")
    if gold_problem:
        return "", "", gold_problem
    return path or "", gold or "", None


def _array(image: Any) -> Any:
    import numpy as np

    return np.asarray(image)


def _rgb_ssim(a: Any, b: Any) -> float:
    return ssim(_array(a.convert("RGB")), _array(b.convert("RGB")), channel_axis=2, win_size=7)


def _structure(result: Any, expected: Any, threshold: float = STRUCTURE_THRESHOLD) -> Score:
    path, gold, problem = _pair(result, expected)
    if problem:
        return problem
    a, b = open_image(path), open_image(gold)
    if a.size != b.size:
        return failed(f"size {a.size}, expected {b.size}")
    value = _rgb_ssim(a, b)
    return verdict(value >= threshold, f"SSIM {value:.3f} >= {threshold}", f"SSIM {value:.3f} < {threshold}")


def check_structure_sim(result: Any, expected: Any = None, **options: Any) -> Score:
    """Same size and RGB SSIM of at least 0.9."""
    return _structure(result, expected)


def check_file_exists(result: Any, expected: Any = None, **options: Any) -> Score:
    """A file exists: ``expected`` (a file name) inside the folder ``result``, as OSWorld
    calls it; with no ``expected``, the file ``result`` itself."""
    if isinstance(expected, str):
        if not result or not expected:
            return failed("no folder or no file name to look for")
        joined = os.path.join(str(result), expected)
        return verdict(os.path.isfile(joined), f"{joined} exists", f"{joined} is not a file")
    path, problem = existing_file(result)
    return problem or passed(f"{path} exists")


def check_file_exists_and_structure_sim(result: Any, expected: Any = None, **options: Any) -> Score:
    """The exported file exists, has the reference's size and RGB SSIM of at least 0.9."""
    return _structure(result, expected)


def check_structure_sim_resized(result: Any, expected: Any = None, **options: Any) -> Score:
    """The result cropped to its opaque area and resized to the reference has SSIM >= 0.9."""
    from PIL import Image

    path, gold, problem = _pair(result, expected)
    if problem:
        return problem
    a, b = open_image(path, "RGBA"), open_image(gold, "RGB")
    box = a.getchannel("A").getbbox()
    if box:
        a = a.crop(box)
    a = a.convert("RGB").resize(b.size, Image.Resampling.LANCZOS)
    value = _rgb_ssim(a, b)
    return verdict(
        value >= STRUCTURE_THRESHOLD,
        f"SSIM {value:.3f} after resizing",
        f"SSIM {value:.3f} < {STRUCTURE_THRESHOLD} after resizing",
    )


def check_structure_sim_with_threshold(result: Any, expected: Any = None, **options: Any) -> Score:
    """The result resized to the reference's size has RGB SSIM >= ``ssim_threshold`` (0.85)."""
    from PIL import Image

    path, gold, problem = _pair(result, expected)
    if problem:
        return problem
    threshold = float(options.get("ssim_threshold", 0.85))
    b = open_image(gold, "RGB")
    a = open_image(path, "RGB").resize(b.size, Image.Resampling.LANCZOS)
    value = _rgb_ssim(a, b)
    return verdict(value >= threshold, f"SSIM {value:.3f} >= {threshold}", f"SSIM {value:.3f} < {threshold}")


def _grey(image: Any) -> Any:
    return _array(image.convert("L")).astype(float)


#: Mean brightness both images are scaled to before their structures are compared.
TARGET_BRIGHTNESS = 128


def _brightness(image: Any) -> float:
    """Mean of the image's greyscale (``L``) pixels, 0..255, from Pillow's histogram."""
    from PIL import ImageStat

    return float(ImageStat.Stat(image.convert("L")).mean[0])


def _scaled_to_brightness(image: Any, mean: float) -> Any:
    """``image`` (any 8-bit mode) with every band multiplied by ``TARGET_BRIGHTNESS / mean``.

    Values are truncated to integers and clipped to 0..255, band by band, so an RGB image
    keeps its colours. Raises ``TypeError`` for modes Pillow cannot map through a table
    (32-bit and 16-bit integer images).
    """
    factor = TARGET_BRIGHTNESS / mean

    def scale(value: int) -> int:
        return min(255, max(0, int(value * factor)))

    return image.point(scale)


def _rgb_mse(a: Any, b: Any) -> float:
    """Mean squared difference of two images' RGB values on a 0..1 scale.

    ``a`` is first resized (Lanczos) to ``b``'s size when the sizes differ.
    """
    import numpy as np
    from PIL import Image

    if a.size != b.size:
        a = a.resize(b.size, Image.Resampling.LANCZOS)
    x = np.asarray(a.convert("RGB"), dtype=np.float32) / 255
    y = np.asarray(b.convert("RGB"), dtype=np.float32) / 255
    return float(np.mean((x - y) ** 2))


def check_brightness_decrease_and_structure_sim(result: Any, expected: Any = None, **options: Any) -> Score:
    """``result`` is darker than ``expected`` yet has the same structure.

    Darker: a lower mean greyscale value. Structure: both images are scaled, channel by
    channel, to a mean brightness of 128; the mean squared difference of their RGB values
    (0..1 scale, the result resized to the reference when the sizes differ) must be below
    ``threshold`` (0.03). A black image cannot be scaled and scores 0.
    """
    path, gold, problem = _pair(result, expected)
    if problem:
        return problem
    a, b = open_image(path), open_image(gold)
    mean_a, mean_b = _brightness(a), _brightness(b)
    if not mean_a < mean_b:
        return failed(f"brightness {mean_a:.1f} is not below {mean_b:.1f}")
    if mean_a == 0:
        return failed("the result is black: its brightness cannot be normalised")
    try:
        na, nb = _scaled_to_brightness(a, mean_a), _scaled_to_brightness(b, mean_b)
    except (TypeError, ValueError) as exc:
        return failed(f"cannot normalise the brightness of a {a.mode}/{b.mode} image: {exc}")
    mse = _rgb_mse(na, nb)
    threshold = float(options.get("threshold", 0.03))
    return verdict(
        mse < threshold,
        f"darker ({mean_a:.1f} < {mean_b:.1f}), structure MSE {mse:.4f}",
        f"structure MSE {mse:.4f} >= {threshold}",
    )


#: Smallest width and height the SSIM structure checks accept (the SSIM window).
MIN_SSIM_SIDE = 7


def _same_structure(a: Any, b: Any, threshold: float) -> tuple[bool, str]:
    """RGB SSIM of two equally sized images, each at least 7 pixels wide and high."""
    small = [im.size for im in (a, b) if min(im.size) < MIN_SSIM_SIDE]
    if small:
        return False, f"image {small[0]} is smaller than the {MIN_SSIM_SIDE}-pixel SSIM window"
    if a.size != b.size:
        return False, f"size {a.size}, expected {b.size}"
    value = _rgb_ssim(a, b)
    if value >= threshold:
        return True, f"SSIM {value:.3f}"
    return False, f"SSIM {value:.3f} < {threshold}"


def check_contrast_increase_and_structure_sim(result: Any, expected: Any = None, **options: Any) -> Score:
    """``result`` has a higher contrast and keeps the structure (RGB SSIM >= 0.65).

    Contrast is the standard deviation of all pixel values of the image as stored (every
    band of its mode). The images must have the same size.
    """
    import numpy as np

    path, gold, problem = _pair(result, expected)
    if problem:
        return problem
    a, b = open_image(path), open_image(gold)
    sa = float(np.std(np.asarray(a, dtype=np.float32)))
    sb = float(np.std(np.asarray(b, dtype=np.float32)))
    if not sa > sb:
        return failed(f"contrast {sa:.1f} is not above {sb:.1f}")
    ok, why = _same_structure(a, b, 0.65)
    return verdict(ok, f"contrast {sa:.1f} > {sb:.1f}, {why}", why)


def check_saturation_increase_and_structure_sim(result: Any, expected: Any = None, **options: Any) -> Score:
    """``result`` is more saturated (HSV) and its hue and value channels keep SSIM >= 0.9.

    The images must have the same size.
    """
    path, gold, problem = _pair(result, expected)
    if problem:
        return problem
    a, b = open_image(path).convert("HSV"), open_image(gold).convert("HSV")
    ha, hb = _array(a), _array(b)
    sat_a, sat_b = float(ha[..., 1].mean()), float(hb[..., 1].mean())
    if not sat_a > sat_b:
        return failed(f"saturation {sat_a:.1f} is not above {sat_b:.1f}")
    bands_a, bands_b = a.split(), b.split()
    hue_ok, hue_why = _same_structure(bands_a[0], bands_b[0], STRUCTURE_THRESHOLD)
    val_ok, val_why = _same_structure(bands_a[2], bands_b[2], STRUCTURE_THRESHOLD)
    return verdict(
        hue_ok and val_ok,
        f"saturation {sat_a:.1f} > {sat_b:.1f}",
        f"hue: {hue_why}; value: {val_why}",
    )


def check_palette_and_structure_sim(result: Any, expected: Any = None, **options: Any) -> Score:
    """``result`` is a palette (mode P) image with RGB SSIM >= 0.9 against the original."""
    from PIL import Image

    path, gold, problem = _pair(result, expected)
    if problem:
        return problem
    a = open_image(path)
    if a.mode != "P":
        return failed(f"image mode is {a.mode}, not a palette (P)")
    b = open_image(gold, "RGB")
    if a.size != b.size:
        b = b.resize(a.size, Image.Resampling.LANCZOS)
    value = _rgb_ssim(a, b)
    return verdict(
        value >= STRUCTURE_THRESHOLD,
        f"palette image, SSIM {value:.3f}",
        f"palette image but SSIM {value:.3f} < {STRUCTURE_THRESHOLD}",
    )


def check_image_mirror(result: Any, expected: Any = None, **options: Any) -> Score:
    """``result`` is the original flipped left to right (SSIM >= 0.99)."""
    from PIL import Image

    path, gold, problem = _pair(result, expected)
    if problem:
        return problem
    a = open_image(path, "RGB")
    b = open_image(gold, "RGB").transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    if a.size != b.size:
        return failed(f"size {a.size}, expected {b.size}")
    value = _rgb_ssim(a, b)
    return verdict(value >= 0.99, f"mirrored (SSIM {value:.3f})", f"not the mirror image (SSIM {value:.3f})")


def check_green_background(result: Any, expected: Any = None, **options: Any) -> Score:
    """Wherever the mask (``expected``) is not black, the result's pixel is green-dominant."""
    path, gold, problem = _pair(result, expected)
    if problem:
        return problem
    a = _array(open_image(path, "RGB")).astype(int)
    mask = _array(open_image(gold, "RGB"))
    if a.shape != mask.shape:
        return failed(f"size {a.shape[1::-1]}, mask {mask.shape[1::-1]}")
    region = mask.sum(axis=2) > 0
    r, g, b = a[..., 0][region], a[..., 1][region], a[..., 2][region]
    bad = int(((g <= r) | (g <= b)).sum())
    return verdict(
        bad == 0,
        f"all {int(region.sum())} background pixels are green",
        f"{bad} background pixels are not green",
    )


def check_textbox_on_leftside(result: Any, expected: Any = None, **options: Any) -> Score:
    """The leftmost dark pixel (grey < 128) lies within the left 5% of the image."""
    import numpy as np

    path, problem = existing_file(result)
    if problem:
        return problem
    grey = _grey(open_image(path or ""))
    columns = np.nonzero((grey < 128).any(axis=0))[0]
    if len(columns) == 0:
        return failed("no dark pixel (no text) in the image")
    limit = grey.shape[1] * 0.05
    return verdict(
        columns[0] <= limit,
        f"text starts at x={columns[0]}",
        f"text starts at x={columns[0]}, beyond {limit:.0f}",
    )


def check_triangle_position(result: Any, expected: Any = None, **options: Any) -> Score:
    """The second most common colour (the triangle) is centred within 5% of the image size."""
    import numpy as np

    path, problem = existing_file(result)
    if problem:
        return problem
    pixels = _array(open_image(path or "", "RGB"))
    colours, counts = np.unique(pixels.reshape(-1, 3), axis=0, return_counts=True)
    if len(colours) < 2:
        return failed("the image has a single colour: no triangle")
    triangle = colours[np.argsort(counts)[-2]]
    ys, xs = np.nonzero((pixels == triangle).all(axis=2))
    height, width = pixels.shape[:2]
    cx, cy = xs.mean(), ys.mean()
    ok = abs(cx - width / 2) <= width * 0.05 and abs(cy - height / 2) <= height * 0.05
    return verdict(
        ok,
        f"triangle centred at ({cx:.0f}, {cy:.0f})",
        f"triangle at ({cx:.0f}, {cy:.0f}), centre ({width / 2:.0f}, {height / 2:.0f})",
    )


def check_image_size(result: Any, expected: Any = None, **options: Any) -> Score:
    """Width and/or height equal the rule (of the opaque area with ``ignore_transparent``)."""
    path, problem = existing_file(result)
    if problem:
        return problem
    rules = rules_of(expected)
    image = open_image(path or "")
    width, height = image.size
    if rules.get("ignore_transparent", False):
        box = image.convert("RGBA").getchannel("A").getbbox()
        if box:
            width, height = box[2] - box[0], box[3] - box[1]
    for name, value in (("width", width), ("height", height)):
        if name in rules and value != int(rules[name]):
            return failed(f"{name} {value}, expected {rules[name]}")
    return passed(f"size {width}x{height}")


def check_image_file_size(result: Any, expected: Any = None, **options: Any) -> Score:
    """The file is smaller than ``rules["max_size"]`` bytes."""
    path, problem = existing_file(result)
    if problem:
        return problem
    size, limit = os.path.getsize(path or ""), int(rules_of(expected).get("max_size", 0))
    return verdict(size < limit, f"{size} bytes < {limit}", f"{size} bytes, limit {limit}")


def compare_image_list(result: Any, expected: Any = None, **options: Any) -> Score:
    """Each result image equals its expected image pixel for pixel (after mode/size alignment)."""
    from PIL import Image, ImageChops

    results, golds = path_list(result), path_list(expected)
    if not results:
        return missing()
    if len(results) != len(golds):
        return failed(f"{len(results)} images, expected {len(golds)}")
    for got, want in zip(results, golds, strict=True):
        for file in (got, want):
            if not os.path.isfile(file):
                return failed(f"image {file!r} does not exist")
        a, b = open_image(got, "RGB"), open_image(want, "RGB")
        if a.size != b.size:
            a = a.resize(b.size, Image.Resampling.LANCZOS)
        if ImageChops.difference(a, b).getbbox() is not None:
            return failed(f"{os.path.basename(got)} differs from {os.path.basename(want)}")
    return passed(f"{len(golds)} images identical")


def parse_gimp_config(text: str) -> list[list[str]]:
    """The top-level ``(key value...)`` lines of a GIMP config file, as token lists."""
    entries = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("(") and line.endswith(")"):
            try:
                entries.append(shlex.split(line[1:-1], posix=False))
            except ValueError:
                continue
    return entries


def check_config_status(result: Any, expected: Any = None, **options: Any) -> Score:
    """A GIMP config line ``(key ... value)`` has the rule's ``key`` and last token ``value``."""
    path, problem = existing_file(result)
    if problem:
        return problem
    rules = rules_of(expected)
    key, value = str(rules.get("key", "")).split(), str(rules.get("value", ""))
    entries = parse_gimp_config(read_text(path or ""))
    for tokens in entries:
        if tokens[: len(key)] == key and tokens[-1] == value:
            return passed(f"({' '.join(tokens)})")
    current = next((" ".join(t) for t in entries if t[: len(key)] == key), None)
    return failed(f"{' '.join(key)} is {current!r}, expected value {value}")
