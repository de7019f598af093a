"""Reference scorers for the two metrics OSWorld's tasks use that desktop-env 1.0.2 lacks.

Written here from the behaviour of OSWorld's current source (xlang-ai/OSWorld, commit
87df18ff, ``desktop_env/evaluators/metrics/gimp.py`` and ``vlc.py``), read, not copied:

- ``check_play_and_exit(config_path, rules)``: the vlcrc is read as UTF-8; the value is
  the text after the last ``=`` of the last line that contains ``play-and-exit=`` (a
  commented ``#play-and-exit=0`` line counts too), ``"0"`` when no line does; it scores 1
  iff it equals ``str(rules["expected_play_and_exit"])``. A missing file raises.
- ``check_structure_sim_with_threshold(src, tgt, ssim_threshold=0.85)``: 0 when a path is
  None or an image cannot be read; otherwise the source is resized (Lanczos) to the
  target's size when they differ, both are converted to RGB, and it scores 1 iff
  scikit-image's SSIM (window 7, or the largest odd size <= the smaller side for images
  under 7 pixels, channel axis 2) is >= the threshold.

Runs inside .parity-venv (needs Pillow, numpy, scikit-image).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def play_and_exit(config_path: Any, rules: Any) -> float:
    """Upstream ``check_play_and_exit`` behaviour (see the module docstring)."""
    with open(config_path, "rb") as handle:
        text = handle.read().decode("utf-8")
    wanted = rules["expected_play_and_exit"]
    wanted = str(wanted) if isinstance(wanted, int) else wanted
    value = "0"
    for line in text.split("\n"):
        if "play-and-exit=" in line:
            value = line.rsplit("=", 1)[-1].strip()
    return 1.0 if value == wanted else 0.0


def structure_sim_with_threshold(src: Any, tgt: Any, **options: Any) -> float:
    """Upstream ``check_structure_sim_with_threshold`` behaviour (module docstring)."""
    import numpy as np
    from PIL import Image
    from skimage.metrics import structural_similarity

    if src is None or tgt is None:
        return 0.0
    threshold = options.get("ssim_threshold", 0.85)
    try:
        first: Image.Image = Image.open(src)
        second: Image.Image = Image.open(tgt)
        if first.size != second.size:
            first = first.resize(second.size, Image.Resampling.LANCZOS)
        a, b = np.array(first.convert("RGB")), np.array(second.convert("RGB"))
        side = min(a.shape[0], a.shape[1])
        window = 7 if side >= 7 else (side if side % 2 else side - 1)
        if window < 1:
            return 0.0
        similarity = structural_similarity(a, b, win_size=window, channel_axis=2)  # type: ignore[no-untyped-call]
        return 1.0 if similarity >= threshold else 0.0
    except Exception:
        return 0.0


#: Metric name -> reference scorer, used when desktop-env 1.0.2 has no such function.
UPSTREAM: dict[str, Callable[..., float]] = {
    "check_play_and_exit": play_and_exit,
    "check_structure_sim_with_threshold": structure_sim_with_threshold,
}
