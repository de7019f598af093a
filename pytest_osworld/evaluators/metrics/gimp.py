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
    """The file exists."""
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


def check_brightness_decrease_and_structure_sim(result: Any, expected: Any = None, **options: Any) -> Score:
    """``result`` is darker than ``expected`` yet has the same structure.

    Both are brought to a mean brightness of 128; the mean squared difference (on a 0..1
    scale) must be below ``threshold`` (0.03).
    """
    import numpy as np
    from PIL import Image

    path, gold, problem = _pair(result, expected)
    if problem:
        return problem
    a, b = open_image(path), open_image(gold)
    if a.size != b.size:
        b = b.resize(a.size, Image.Resampling.LANCZOS)
    ga, gb = _grey(a), _grey(b)
    if not ga.mean() < gb.mean():
        return failed(f"brightness {ga.mean():.1f} is not below {gb.mean():.1f}")
    na = np.clip(ga * (128 / max(ga.mean(), 1e-6)), 0, 255) / 255
    nb = np.clip(gb * (128 / max(gb.mean(), 1e-6)), 0, 255) / 255
    mse = float(((na - nb) ** 2).mean())
    threshold = float(options.get("threshold", 0.03))
    return verdict(
        mse < threshold,
        f"darker ({ga.mean():.1f} < {gb.mean():.1f}), structure MSE {mse:.4f}",
        f"structure MSE {mse:.4f} >= {threshold}",
    )


def check_contrast_increase_and_structure_sim(result: Any, expected: Any = None, **options: Any) -> Score:
    """``result`` has a higher contrast (pixel standard deviation) and SSIM >= 0.65."""
    from PIL import Image

    path, gold, problem = _pair(result, expected)
    if problem:
        return problem
    a, b = open_image(path, "RGB"), open_image(gold, "RGB")
    if a.size != b.size:
        b = b.resize(a.size, Image.Resampling.LANCZOS)
    sa, sb = float(_array(a).std()), float(_array(b).std())
    if not sa > sb:
        return failed(f"contrast {sa:.1f} is not above {sb:.1f}")
    value = _rgb_ssim(a, b)
    return verdict(
        value >= 0.65, f"contrast {sa:.1f} > {sb:.1f}, SSIM {value:.3f}", f"SSIM {value:.3f} < 0.65"
    )


def check_saturation_increase_and_structure_sim(result: Any, expected: Any = None, **options: Any) -> Score:
    """``result`` is more saturated (HSV) and its hue and value channels keep SSIM >= 0.9."""
    from PIL import Image

    path, gold, problem = _pair(result, expected)
    if problem:
        return problem
    a, b = open_image(path, "RGB"), open_image(gold, "RGB")
    if a.size != b.size:
        b = b.resize(a.size, Image.Resampling.LANCZOS)
    ha, hb = _array(a.convert("HSV")), _array(b.convert("HSV"))
    sat_a, sat_b = float(ha[..., 1].mean()), float(hb[..., 1].mean())
    if not sat_a > sat_b:
        return failed(f"saturation {sat_a:.1f} is not above {sat_b:.1f}")
    hue, val = ssim(ha[..., 0], hb[..., 0]), ssim(ha[..., 2], hb[..., 2])
    ok = hue >= STRUCTURE_THRESHOLD and val >= STRUCTURE_THRESHOLD
    return verdict(
        ok,
        f"saturation {sat_a:.1f} > {sat_b:.1f}",
        f"hue/value SSIM {hue:.3f}/{val:.3f} below {STRUCTURE_THRESHOLD}",
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
