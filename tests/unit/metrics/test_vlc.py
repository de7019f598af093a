"""VLC metrics: vlcrc settings, status, window size, images, audio and video."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from metric_files import check, gradient, tone_wav

from pytest_osworld.evaluators.metrics import vlc as v

Writer = Callable[[str, str | bytes], str]

VLCRC = """[qt] # Qt interface
#qt-bgcone=1
qt-bgcone=0
#qt-max-volume=125
qt-minimal-view=1
#play-and-exit=0
#one-instance-when-started-from-file=1
one-instance-when-started-from-file=0
global-key-play-pause=Ctrl+Space
qt-slider-colours=10;20;30;0;0;0;99;99;99;1;2;3
input-record-path=/home/user/Desktop/
"""
COMMENTED = """#qt-bgcone=0
#qt-max-volume=200
#play-and-exit=1
#global-key-play-pause=Ctrl+Space
"""


@pytest.mark.parametrize(
    ("metric", "text", "rules", "value", "reason"),
    [
        (v.check_qt_bgcone, VLCRC, {"expected_qt_bgcone": 0}, 1, "qt-bgcone=0"),
        (v.check_qt_bgcone, COMMENTED, {"expected_qt_bgcone": 0}, 0, "qt-bgcone=1, expected 0"),
        (
            v.check_qt_max_volume,
            VLCRC,
            {"expected_qt_max_volume": 200},
            0,
            "qt-max-volume=125, expected 200",
        ),
        (
            v.check_qt_max_volume,
            "qt-max-volume=200\n",
            {"expected_qt_max_volume": 200},
            1,
            "qt-max-volume=200",
        ),
        (v.check_qt_minimal_view, VLCRC, {"expected_qt_minimal_view": 1}, 1, "qt-minimal-view=1"),
        (v.check_qt_minimal_view, COMMENTED, {"expected_qt_minimal_view": 1}, 0, "expected 1"),
        (
            v.check_one_instance_when_started_from_file,
            VLCRC,
            {"expected_one_instance_when_started_from_file": 0},
            1,
            "=0",
        ),
        (
            v.check_one_instance_when_started_from_file,
            COMMENTED,
            {"expected_one_instance_when_started_from_file": 0},
            0,
            "=1, expected 0",
        ),
        (v.check_play_and_exit, VLCRC, {"expected_play_and_exit": 0}, 1, "play-and-exit=0"),
        (
            v.check_play_and_exit,
            "play-and-exit=1\n",
            {"expected_play_and_exit": 0},
            0,
            "play-and-exit=1, expected 0",
        ),
        (
            v.check_global_key_play_pause,
            VLCRC,
            {"expected_global_key_play_pause": 1},
            1,
            "'Ctrl+Space'",
        ),
        (
            v.check_global_key_play_pause,
            COMMENTED,
            {"expected_global_key_play_pause": 1},
            0,
            "expected set",
        ),
        (v.check_qt_slider_colours, VLCRC, {"type": "blackish"}, 1, "are blackish"),
        (v.check_qt_slider_colours, COMMENTED, {"type": "blackish"}, 0, "not all blackish"),
        (
            v.check_qt_slider_colours,
            VLCRC,
            {"expected": "10;20;30;0;0;0;99;99;99;1;2;3"},
            1,
            "slider colours",
        ),
        (
            v.is_vlc_recordings_folder,
            VLCRC,
            {"recording_file_path": "/home/user/Desktop"},
            1,
            "recordings go to",
        ),
        (
            v.is_vlc_recordings_folder,
            COMMENTED,
            {"recording_file_path": "/home/user/Desktop"},
            0,
            "input-record-path=''",
        ),
    ],
)
def test_vlcrc_settings(
    write: Writer, metric: Any, text: str, rules: dict[str, Any], value: float, reason: str
) -> None:
    check(metric(write("vlcrc", text), rules), value, reason)


def test_vlcrc_missing() -> None:
    check(v.check_qt_bgcone(None, {"expected_qt_bgcone": 0}), 0, "no vlcrc")


STATUS = """<?xml version="1.0" encoding="utf-8" standalone="yes" ?>
<root><state>{state}</state><information><category name="meta">
<info name="filename">{name}</info></category></information></root>"""


@pytest.mark.parametrize(
    ("state", "name", "rules", "value", "reason"),
    [
        (
            "playing",
            "Rick.mp4",
            {"type": "file_name", "file_name": "Rick.mp4"},
            1,
            "playing 'Rick.mp4'",
        ),
        (
            "paused",
            "Rick.mp4",
            {"type": "file_name", "file_name": "Rick.mp4"},
            0,
            "state is 'paused'",
        ),
        (
            "playing",
            "Other.mp4",
            {"type": "file_name", "file_name": "Rick.mp4"},
            0,
            "expected 'Rick.mp4'",
        ),
        (
            "playing",
            "master.m3u8",
            {"type": "url", "url": "https://x.com/v/master.m3u8"},
            1,
            "playing",
        ),
        ("playing", "a.m3u8", {"type": "url", "url": "https://x.com/v/master.m3u8"}, 0, "expected"),
    ],
)
def test_is_vlc_playing(
    write: Writer, state: str, name: str, rules: dict[str, Any], value: float, reason: str
) -> None:
    xml = STATUS.format(state=state, name=name)
    check(v.is_vlc_playing(xml, rules), value, reason)
    check(v.is_vlc_playing(write("status.xml", xml), rules), value, reason)


def test_is_vlc_fullscreen() -> None:
    check(
        v.is_vlc_fullscreen({"width": 1920, "height": 1080}, {"width": 1920, "height": 1080}),
        1,
        "fills the screen",
    )
    check(
        v.is_vlc_fullscreen({"width": 1920, "height": 1080}, {"width": 800, "height": 600}),
        0,
        "window (800, 600)",
    )
    check(v.is_vlc_fullscreen({"width": 1920, "height": 1080}, None), 0, "no window size")


def test_compare_images(save_image: Callable[..., str]) -> None:
    base = gradient((64, 64))
    a = save_image(base, "a.png")
    big = save_image(base.resize((128, 128)), "big.png")
    flipped = save_image(base.rotate(180), "flipped.png")
    check(v.compare_images(a, a), 1, "SSIM 1.000")
    assert 0.8 < v.compare_images(big, a).value <= 1.0
    low = v.compare_images(flipped, a)
    assert low.value < 0.6, low
    # rescaled above the base: (1 - 0.5) / (1 - 0.5)
    check(v.compare_images(a, a, reference_base_result=0.5), 1, "above the base 0.500")
    check(v.compare_images(flipped, a, reference_base_result=0.99), 0, "not above")


# Two uniform grey images p and q have no variance, so SSIM reduces to its luminance term
# (2pq + C1) / (p^2 + q^2 + C1) with C1 = (0.01 * 255)^2 = 6.5025, in every window.
# p = 100, q = 120: (24000 + 6.5025) / (10000 + 14400 + 6.5025) = 24006.5025 / 24406.5025.
UNIFORM_SSIM = 24006.5025 / 24406.5025  # 0.983611


@pytest.mark.parametrize(
    ("grey", "options", "value", "reason"),
    [
        (100, {}, 1, "SSIM 1.000"),
        (120, {}, UNIFORM_SSIM, "SSIM 0.984"),
        # rescaled above the base: (0.983611 - 0.9) / (1 - 0.9) = 0.83611
        (120, {"reference_base_result": 0.9}, (UNIFORM_SSIM - 0.9) / 0.1, "0.836 above the base 0.900"),
        (120, {"reference_base_result": 0.98}, 0, "SSIM 0.984 is not above the untouched image's 0.980"),
    ],
)
def test_compare_images_by_hand(
    save_image: Callable[..., str], grey: int, options: dict[str, Any], value: float, reason: str
) -> None:
    from PIL import Image

    gold = save_image(Image.new("L", (16, 16), 100), "gold.png")
    result = save_image(Image.new("RGB", (16, 16), (grey, grey, grey)), "result.png")
    check(v.compare_images(result, gold, **options), value, reason)


def test_compare_audios(tmp_path: Path) -> None:
    a = str(tone_wav(tmp_path / "a.wav", [440, 880, 660]))
    same = str(tone_wav(tmp_path / "same.wav", [440, 880, 660]))
    other = str(tone_wav(tmp_path / "other.wav", [3000, 200, 1500]))
    identical = v.compare_audios(a, same)
    # exactly 1: the pass threshold is 1.0 by default, and rounding noise must not fail it
    assert identical.value == 1.0, identical
    check(identical, 1, "audio similarity 1.000 (DTW cost 0.00")
    different = v.compare_audios(a, other)
    assert different.value < identical.value - 0.1, different
    check(v.compare_audios(a, str(tmp_path / "missing.wav")), 0, "does not exist")
    bad = tmp_path / "bad.wav"
    bad.write_bytes(b"nope")
    check(v.compare_audios(str(bad), a), 0, "cannot decode audio")


@pytest.mark.parametrize(
    ("result", "expected", "value", "reason"),
    [
        ([0, 0, 0], [0, 0, 0], 1, "audio similarity 1.000 (DTW cost 0.00"),
        # Silence standardises to zero vectors, at cosine distance 1 from every frame of the
        # tones: each step of the warping path costs 1, so cost / length = 1 and the score
        # is exp(-1) = 0.367879.
        ([0, 0, 0], [440, 880, 660], math.exp(-1), "audio similarity 0.368"),
        ([440, 880, 660], [0, 0, 0], math.exp(-1), "audio similarity 0.368"),
    ],
)
def test_compare_audios_by_hand(
    tmp_path: Path, result: list[float], expected: list[float], value: float, reason: str
) -> None:
    got = str(tone_wav(tmp_path / "got.wav", result))
    want = str(tone_wav(tmp_path / "want.wav", expected))
    check(v.compare_audios(got, want), value, reason)


def test_dtw_by_hand() -> None:
    import numpy as np

    # a = (1,0), (0,1); b = (1,0), (1,1). Cosine distances: d(a1,b1) = 0,
    # d(a1,b2) = d(a2,b2) = 1 - 1/sqrt(2), d(a2,b1) = 1. Cheapest path: (1,1) then (2,2),
    # cost 0 + (1 - 1/sqrt(2)) = 0.292893 over 2 steps.
    cost, length = v.dtw_cosine(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[1.0, 0.0], [1.0, 1.0]]))
    assert cost == pytest.approx(1 - 1 / math.sqrt(2))
    assert length == 2
    # two zero vectors are equal (distance 0), a zero vector and another at distance 1
    cost, length = v.dtw_cosine(np.zeros((2, 2)), np.array([[0.0, 0.0], [3.0, 4.0]]))
    assert (cost, length) == (1.0, 2)


def test_dtw_of_identical_sequences_costs_nothing() -> None:
    import numpy as np

    seq = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    cost, length = v.dtw_cosine(seq, seq)
    assert cost == pytest.approx(0.0, abs=1e-9)
    assert length == 3


def _video(path: Path, frames: list[Any]) -> str:
    import av
    import numpy as np

    with av.open(str(path), "w") as container:
        stream = container.add_stream("mpeg4", rate=10)
        stream.width, stream.height, stream.pix_fmt = 64, 64, "yuv420p"
        for image in frames:
            frame = av.VideoFrame.from_ndarray(np.asarray(image.convert("RGB")), format="rgb24")
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return str(path)


def test_compare_videos(tmp_path: Path) -> None:
    base = gradient((64, 64))
    frames = [base.rotate(i * 5) for i in range(12)]
    a = _video(tmp_path / "a.mp4", frames)
    b = _video(tmp_path / "b.mp4", frames)
    different = _video(tmp_path / "c.mp4", [base.rotate(180 + i * 7).transpose(0) for i in range(12)])
    short = _video(tmp_path / "d.mp4", frames[:6])
    check(v.compare_videos(a, b), 1, "12 frames")
    check(v.compare_videos(a, different), 0, "frames differ")
    check(v.compare_videos(a, short), 0, "12 frames, expected 6")
