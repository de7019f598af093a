"""VLC metrics: ``vlcrc`` settings, playback status, window size, and media comparisons.

``vlcrc`` is read with commented lines (``#key=default``) skipped. OSWorld's parsers
for the ``qt-*`` and play settings also read the commented default lines, so an untouched
default could count as the user's setting. Here only a real ``key=value`` line counts, and
VLC's built-in default applies when there is none.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import Any

from pytest_osworld.evaluators.metrics._utils import (
    existing_file,
    failed,
    load_module,
    missing,
    open_image,
    read_text,
    rules_of,
    ssim,
    verdict,
)
from pytest_osworld.evaluators.score import Score

#: VLC's defaults for the settings the tasks check, used when vlcrc does not set them.
VLC_DEFAULTS = {
    "qt-bgcone": "1",
    "qt-max-volume": "125",
    "qt-minimal-view": "0",
    "one-instance-when-started-from-file": "1",
    "play-and-exit": "0",
    "global-key-play-pause": "",
    "qt-slider-colours": "153;210;153;20;210;20;255;199;15;245;39;29",
    "input-record-path": "",
}


def parse_vlcrc(text: str) -> dict[str, str]:
    """The uncommented ``key=value`` settings of a ``vlcrc`` text (the last one wins)."""
    settings: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";", "[")):
            continue
        key, sep, value = line.partition("=")
        if sep:
            settings[key.strip()] = value.strip()
    return settings


def _vlc_setting(result: Any, key: str) -> tuple[str | None, Score | None]:
    path, problem = existing_file(result, "vlcrc")
    if problem:
        return None, problem
    return parse_vlcrc(read_text(path or "")).get(key, VLC_DEFAULTS.get(key, "")), None


def _check_int_setting(result: Any, expected: Any, key: str, rule_key: str) -> Score:
    value, problem = _vlc_setting(result, key)
    if problem:
        return problem
    want = rules_of(expected).get(rule_key)
    try:
        ok = int(value or "0") == int(want)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return failed(f"{key}={value!r} is not comparable to {want!r}")
    return verdict(ok, f"{key}={value}", f"{key}={value}, expected {want}")


def check_qt_bgcone(result: Any, expected: Any = None, **options: Any) -> Score:
    """``qt-bgcone`` (the cone shown when idle) equals ``rules["expected_qt_bgcone"]``."""
    return _check_int_setting(result, expected, "qt-bgcone", "expected_qt_bgcone")


def check_qt_max_volume(result: Any, expected: Any = None, **options: Any) -> Score:
    """``qt-max-volume`` equals ``rules["expected_qt_max_volume"]``."""
    return _check_int_setting(result, expected, "qt-max-volume", "expected_qt_max_volume")


def check_qt_minimal_view(result: Any, expected: Any = None, **options: Any) -> Score:
    """``qt-minimal-view`` equals ``rules["expected_qt_minimal_view"]``."""
    return _check_int_setting(result, expected, "qt-minimal-view", "expected_qt_minimal_view")


def check_one_instance_when_started_from_file(result: Any, expected: Any = None, **options: Any) -> Score:
    """``one-instance-when-started-from-file`` equals the expected 0/1."""
    return _check_int_setting(
        result,
        expected,
        "one-instance-when-started-from-file",
        "expected_one_instance_when_started_from_file",
    )


def check_play_and_exit(result: Any, expected: Any = None, **options: Any) -> Score:
    """``play-and-exit`` equals ``rules["expected_play_and_exit"]``."""
    return _check_int_setting(result, expected, "play-and-exit", "expected_play_and_exit")


def check_global_key_play_pause(result: Any, expected: Any = None, **options: Any) -> Score:
    """A global play/pause hotkey is set (1) or not (0), as ``rules`` expects."""
    value, problem = _vlc_setting(result, "global-key-play-pause")
    if problem:
        return problem
    is_set = 1 if value not in ("", "0") else 0
    want = int(rules_of(expected).get("expected_global_key_play_pause", 1))
    return verdict(
        is_set == want,
        f"global-key-play-pause={value!r}",
        f"global-key-play-pause={value!r}, expected {'set' if want else 'unset'}",
    )


def check_qt_slider_colours(result: Any, expected: Any = None, **options: Any) -> Score:
    """``qt-slider-colours`` equals ``rules["expected"]``, or (``type="blackish"``) is dark.

    Dark means all three channels are below 100.
    """
    value, problem = _vlc_setting(result, "qt-slider-colours")
    if problem:
        return problem
    rules = rules_of(expected)
    if rules.get("type") == "blackish":
        try:
            numbers = [int(n) for n in (value or "").split(";")]
        except ValueError:
            return failed(f"qt-slider-colours={value!r} is not a colour list")
        triples = [numbers[i : i + 3] for i in range(0, len(numbers) - 2, 3)]
        ok = bool(triples) and all(max(t) < 100 for t in triples)
        return verdict(
            ok,
            f"slider colours {value} are blackish",
            f"slider colours {value} are not all blackish",
        )
    want = str(rules.get("expected", ""))
    return verdict(value == want, f"slider colours {value}", f"slider colours {value}, expected {want}")


def is_vlc_recordings_folder(result: Any, expected: Any = None, **options: Any) -> Score:
    """``input-record-path`` names ``rules["recording_file_path"]``."""
    value, problem = _vlc_setting(result, "input-record-path")
    if problem:
        return problem
    want = str(rules_of(expected).get("recording_file_path", ""))
    ok = bool(value) and os.path.normpath(value or "") == os.path.normpath(want)
    return verdict(ok, f"recordings go to {value}", f"input-record-path={value!r}, expected {want!r}")


def _status_text(result: Any) -> str:
    if isinstance(result, str) and not result.lstrip().startswith("<") and os.path.isfile(result):
        return read_text(result)
    return str(result)


def is_vlc_playing(result: Any, expected: Any = None, **options: Any) -> Score:
    """VLC's ``status.xml`` says it is ``playing`` the expected file name or URL."""
    import xml.etree.ElementTree as ET

    if result is None:
        return missing("VLC status")
    try:
        root = ET.fromstring(_status_text(result))
    except ET.ParseError as exc:
        return failed(f"VLC status is not XML: {exc}")
    state = (root.findtext("state") or "").strip()
    if state != "playing":
        return failed(f"VLC state is {state!r}, not 'playing'")
    infos = {
        (info.get("name") or ""): (info.text or "").strip()
        for category in root.iter("category")
        if category.get("name") == "meta"
        for info in category.iter("info")
    }
    rules = rules_of(expected)
    kind = rules.get("type")
    if kind == "file_name":
        want = str(rules.get("file_name", ""))
        got = infos.get("filename", "")
        return verdict(
            got == want or got.endswith("/" + want),
            f"playing {got!r}",
            f"playing {got!r}, expected {want!r}",
        )
    if kind == "url":
        want = str(rules.get("url", ""))
        got = infos.get("url") or infos.get("filename", "")
        return verdict(
            got == want or (want.endswith(got) and bool(got)),
            f"playing {got!r}",
            f"playing {got!r}, expected {want!r}",
        )
    return failed(f"unknown rule type {kind!r}")


def is_vlc_fullscreen(result: Any, expected: Any = None, **options: Any) -> Score:
    """The VLC window (``expected``) has the screen's size (``result``)."""
    if not isinstance(result, Mapping):
        return missing("screen size")
    if not isinstance(expected, Mapping):
        return missing("window size")
    size = (expected.get("width"), expected.get("height"))
    screen = (result.get("width"), result.get("height"))
    return verdict(size == screen, f"window fills the screen {screen}", f"window {size}, screen {screen}")


def compare_images(result: Any, expected: Any = None, **options: Any) -> Score:
    """Grey-level SSIM of two images resized to the smaller size. Fractional.

    With ``reference_base_result`` (the score of the untouched input) the SSIM is
    rescaled to ``(ssim - base) / (1 - base)`` and is 0 below ``base + 0.01``.
    """
    path, problem = existing_file(result)
    if problem:
        return problem
    gold, gold_problem = existing_file(expected, "expected")
    if gold_problem:
        return gold_problem
    from PIL import Image

    a, b = open_image(path or "", "L"), open_image(gold or "", "L")
    size = min(a.size, b.size)
    a = a.resize(size, Image.Resampling.LANCZOS)
    b = b.resize(size, Image.Resampling.LANCZOS)
    value = ssim(a, b)
    base = options.get("reference_base_result")
    if base is None:
        return Score(value, f"SSIM {value:.3f}")
    base = float(base)
    if value < base + 0.01:
        return failed(f"SSIM {value:.3f} is not above the untouched image's {base:.3f}")
    scaled = (value - base) / (1 - base)
    return Score(scaled, f"SSIM {value:.3f}, {scaled:.3f} above the base {base:.3f}")


def decode_audio(path: str, rate: int = 16000) -> Any:
    """Decode an audio file to mono float32 samples at ``rate`` Hz (PyAV)."""
    import av
    import numpy as np

    chunks = []
    with av.open(path) as container:
        resampler = av.AudioResampler(format="flt", layout="mono", rate=rate)
        for frame in container.decode(audio=0):
            for out in resampler.resample(frame):
                chunks.append(out.to_ndarray().reshape(-1))
        for out in resampler.resample(None):
            chunks.append(out.to_ndarray().reshape(-1))
    return np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.float32)


def _mel_filters(n_mels: int, n_fft: int, rate: int) -> Any:
    import numpy as np

    def to_mel(hz: Any) -> Any:
        return 2595.0 * np.log10(1.0 + hz / 700.0)

    def to_hz(mel: Any) -> Any:
        return 700.0 * (10 ** (mel / 2595.0) - 1.0)

    points = to_hz(np.linspace(to_mel(0.0), to_mel(rate / 2), n_mels + 2))
    bins = np.floor((n_fft + 1) * points / rate).astype(int)
    filters = np.zeros((n_mels, n_fft // 2 + 1))
    for m in range(1, n_mels + 1):
        left, centre, right = bins[m - 1], bins[m], bins[m + 1]
        for k in range(left, centre):
            filters[m - 1, k] = (k - left) / max(centre - left, 1)
        for k in range(centre, right):
            filters[m - 1, k] = (right - k) / max(right - centre, 1)
    return filters


def mfcc(samples: Any, rate: int = 16000, n_mfcc: int = 13, n_fft: int = 512, hop: int = 256) -> Any:
    """MFCC frames (frames x ``n_mfcc``) of mono samples: STFT, mel filters, log, DCT."""
    import numpy as np

    if len(samples) < n_fft:
        samples = np.pad(samples, (0, n_fft - len(samples)))
    count = 1 + (len(samples) - n_fft) // hop
    index = np.arange(n_fft)[None, :] + hop * np.arange(count)[:, None]
    frames = samples[index] * np.hanning(n_fft)
    power = np.abs(np.fft.rfft(frames, n=n_fft)) ** 2
    mel = np.log(power @ _mel_filters(40, n_fft, rate).T + 1e-10)
    return load_module("scipy.fft").dct(mel, type=2, axis=1, norm="ortho")[:, :n_mfcc]


def dtw_cosine(a: Any, b: Any) -> tuple[float, int]:
    """Dynamic time warping of two feature sequences with cosine distance: (cost, path length).

    Two zero vectors (a silent stretch after standardisation) are at distance 0, a zero
    vector and any other at distance 1, and distances below 1e-9 (the rounding error of
    the dot product of two equal unit vectors) count as 0, so that equal sequences cost
    exactly 0.
    """
    import numpy as np

    norm_a = np.linalg.norm(a, axis=1, keepdims=True)
    norm_b = np.linalg.norm(b, axis=1, keepdims=True)
    na = a / (norm_a + 1e-12)
    nb = b / (norm_b + 1e-12)
    dist = 1.0 - na @ nb.T
    dist[(norm_a == 0) & (norm_b.T == 0)] = 0.0
    dist[np.abs(dist) < 1e-9] = 0.0
    n, m = dist.shape
    cost = np.full((n + 1, m + 1), np.inf)
    steps = np.zeros((n + 1, m + 1), dtype=np.int64)
    cost[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            options = (cost[i - 1, j - 1], cost[i - 1, j], cost[i, j - 1])
            best = int(np.argmin(options))
            prev = ((i - 1, j - 1), (i - 1, j), (i, j - 1))[best]
            cost[i, j] = dist[i - 1, j - 1] + options[best]
            steps[i, j] = steps[prev] + 1
    return float(cost[n, m]), int(steps[n, m])


def compare_audios(result: Any, expected: Any = None, **options: Any) -> Score:
    """Similarity of two recordings: ``exp(-DTW cost / path length)`` over MFCCs. Fractional.

    Frames are pooled so that each sequence has at most 400 frames (the DTW is quadratic).
    Equal recordings score exactly 1; a silent one against a sound scores ``exp(-1)``.
    """
    import numpy as np

    path, problem = existing_file(result)
    if problem:
        return problem
    gold, gold_problem = existing_file(expected, "expected")
    if gold_problem:
        return gold_problem
    try:
        feats = [mfcc(decode_audio(p)) for p in (path or "", gold or "")]
    except Exception as exc:  # PyAV raises its own error family for undecodable files
        return failed(f"cannot decode audio: {exc}")
    pooled = []
    for f in feats:
        group = max(1, math.ceil(len(f) / 400))
        usable = len(f) // group * group or len(f)
        f = f[:usable].reshape(-1, group, f.shape[1]).mean(axis=1) if usable >= group else f
        # Standardise each coefficient; one that is constant (silence, or rounding noise
        # around a constant) carries nothing and becomes 0 instead of amplified noise.
        spread = f.std(axis=0)
        steady = spread < 1e-6
        pooled.append(np.where(steady, 0.0, (f - f.mean(axis=0)) / np.where(steady, 1.0, spread)))
    cost, length = dtw_cosine(pooled[0], pooled[1])
    value = float(np.exp(-cost / max(length, 1)))
    return Score(value, f"audio similarity {value:.3f} (DTW cost {cost:.2f} over {length} steps)")


def _video_hashes(path: str, limit: int = 100) -> list[Any]:
    import av
    import imagehash

    hashes = []
    with av.open(path) as container:
        for frame in container.decode(video=0):
            image: Any = frame.to_image()  # type: ignore[no-untyped-call]
            hashes.append(imagehash.phash(image))
            if len(hashes) >= limit:
                break
    return hashes


def compare_videos(result: Any, expected: Any = None, **options: Any) -> Score:
    """The first 100 frames match: same count, at most 5 frames with pHash distance above 5."""
    path, problem = existing_file(result)
    if problem:
        return problem
    gold, gold_problem = existing_file(expected, "expected")
    if gold_problem:
        return gold_problem
    try:
        got, want = _video_hashes(path or ""), _video_hashes(gold or "")
    except Exception as exc:  # PyAV raises its own error family for undecodable files
        return failed(f"cannot decode video: {exc}")
    if len(got) != len(want):
        return failed(f"{len(got)} frames, expected {len(want)} (first 100 compared)")
    differing = sum(1 for a, b in zip(got, want, strict=True) if a - b > 5)
    return verdict(
        differing <= 5,
        f"{len(want)} frames, {differing} differ",
        f"{differing} of {len(want)} frames differ (at most 5 allowed)",
    )
