"""Generate the media files of the VLC, GIMP and VLC+GIMP tasks of the offline suite.

Everything is synthetic and deterministic: still images are drawn with Pillow (flat
shapes and DejaVu text, no noise), videos are made from those stills or from ffmpeg's
``testsrc2``/``color`` sources with ``libx264`` in a single thread. Run it from anywhere;
it rewrites ``tasks/<domain>/assets/<task id>/`` beside this script::

    .venv/bin/python tasks/tools/make_media_assets.py

Files stay small (tens of KB): short, low-frame-rate clips of flat pictures.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

TASKS = Path(__file__).resolve().parent.parent
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"

VLC_SWITCH = "f2d5b4cc-afda-4d80-a568-aae6e92c80fc"
VLC_FULLSCREEN = "b0706da9-75b5-49c3-829f-0f7a1aa006b3"
VLC_RECORDINGS = "d2f6e852-5d95-4782-a8e5-d4d66c1dc33b"
VLC_SUBTITLES = "6ca3494f-ee65-41da-ae20-fd6c88add951"
GIMP_SCALE = "77cfcc62-16bc-47b9-948d-9e2964edd0fd"
GIMP_MIRROR = "839bc95a-495f-442b-a9a7-b5cccae934bd"
GIMP_DARKER = "3ce88c18-1255-4480-a08e-057f2c7619e1"
GIMP_WINDOWS = "e76d929d-ee44-49f8-a16f-e37e315c713b"
MULTI_CROP = "d8caecf0-fdd8-4c93-b258-63916c69da52"
MULTI_THUMB = "c40da4b4-d43a-4b1e-9c81-f458dc3f7696"

#: ffmpeg sources of the VLC clips (low frame rates keep them small).
SOFT = "testsrc2=size=320x180:rate=5"
BARS = "testsrc=size=320x180:rate=5"

#: The letterboxed frame of MULTI_CROP: where the picture sits inside the 640x360 video.
CROP_BOX = (80, 48, 560, 312)


def asset_dir(domain: str, task_id: str) -> Path:
    """The (created) asset folder of one task."""
    folder = TASKS / domain / "assets" / task_id
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def font(size: int) -> ImageFont.FreeTypeFont:
    """DejaVu Sans Bold at ``size`` pixels."""
    return ImageFont.truetype(FONT, size)


def ffmpeg(*args: str) -> None:
    """Run ffmpeg quietly and deterministically (one thread, no metadata)."""
    subprocess.run(
        ["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", *args],
        check=True,
    )


def clip_from_source(target: Path, source: str, seconds: int, text: str) -> None:
    """A short H.264 clip of an ffmpeg source with a caption drawn on it."""
    caption = (
        f"drawtext=fontfile={FONT}:text='{text}':fontsize=28:fontcolor=white"
        ":box=1:boxcolor=black@0.6:x=20:y=20"
    )
    ffmpeg(
        "-f", "lavfi", "-i", f"{source}:duration={seconds}",
        "-vf", caption,
        "-c:v", "libx264", "-threads", "1", "-preset", "veryslow", "-crf", "32", "-pix_fmt", "yuv420p",
        "-map_metadata", "-1", "-fflags", "+bitexact", "-flags:v", "+bitexact",
        str(target),
    )  # fmt: skip


def clip_from_still(target: Path, still: Path, seconds: int, lossless: bool = False) -> None:
    """A clip showing one still picture for ``seconds`` (lossless keeps flat colours exact)."""
    # Lossless clips also keep full-resolution chroma, so no colour bleeds into black bars.
    quality = ["-qp", "0", "-pix_fmt", "yuv444p"] if lossless else ["-crf", "20", "-pix_fmt", "yuv420p"]
    ffmpeg(
        "-loop", "1", "-framerate", "5", "-i", str(still), "-t", str(seconds),
        "-c:v", "libx264", "-threads", "1", "-preset", "veryslow", *quality,
        "-map_metadata", "-1", "-fflags", "+bitexact", "-flags:v", "+bitexact",
        str(target),
    )  # fmt: skip


def poster(size: tuple[int, int], title: str, palette: tuple[tuple[int, int, int], ...]) -> Image.Image:
    """A flat, asymmetric picture: sky, hills, a sun, a house and a title."""
    w, h = size
    sky, hill, far_hill, sun, wall, roof = palette
    image = Image.new("RGB", size, sky)
    draw = ImageDraw.Draw(image)
    draw.ellipse((int(w * 0.70), int(h * 0.08), int(w * 0.88), int(h * 0.40)), fill=sun)
    far = [(0, h * 0.62), (w * 0.45, h * 0.40), (w, h * 0.70), (w, h), (0, h)]
    near = [(0, h * 0.80), (w * 0.30, h * 0.60), (w * 0.75, h * 0.85), (w, h * 0.78), (w, h), (0, h)]
    draw.polygon(far, fill=far_hill)
    draw.polygon(near, fill=hill)
    x, y = int(w * 0.16), int(h * 0.52)
    draw.rectangle((x, y, x + int(w * 0.14), y + int(h * 0.16)), fill=wall)
    draw.polygon([(x - w * 0.02, y), (x + w * 0.07, y - h * 0.12), (x + w * 0.16, y)], fill=roof)
    draw.rectangle((x + int(w * 0.05), y + int(h * 0.07), x + int(w * 0.09), y + int(h * 0.16)), fill=roof)
    draw.text((int(w * 0.05), int(h * 0.06)), title, font=font(max(14, h // 12)), fill=(255, 255, 255))
    return image


def make_vlc() -> None:
    """Clips for the four VLC tasks."""
    folder = asset_dir("vlc", VLC_SWITCH)
    clip_from_source(folder / "morning_walk.mp4", SOFT, 20, "Morning walk")
    clip_from_source(folder / "harbour_timelapse.mp4", BARS, 20, "Harbour timelapse")
    folder = asset_dir("vlc", VLC_FULLSCREEN)
    clip_from_source(folder / "birthday_slideshow.mp4", SOFT, 20, "Birthday slideshow")
    folder = asset_dir("vlc", VLC_RECORDINGS)
    clip_from_source(folder / "city_lights.mp4", BARS, 20, "City lights")
    folder = asset_dir("vlc", VLC_SUBTITLES)
    clip_from_source(
        folder / "team_interview.mp4", "color=c=0x335577:size=320x180:rate=10", 20, "Team interview"
    )


def make_gimp() -> None:
    """Pictures for the four GIMP tasks (their originals double as the gold inputs)."""
    warm = ((250, 190, 120), (90, 140, 60), (150, 170, 90), (255, 230, 90), (230, 220, 200), (160, 50, 40))
    cool = ((120, 170, 230), (40, 110, 80), (90, 150, 120), (250, 250, 210), (210, 200, 190), (70, 60, 120))
    dusk = ((200, 150, 200), (70, 90, 60), (120, 120, 110), (250, 200, 120), (240, 230, 220), (120, 40, 60))
    pictures = [
        (GIMP_SCALE, "lakeside_cabin.png", (800, 600), "Lakeside cabin", cool),
        (GIMP_MIRROR, "farm_noon.png", (640, 480), "Farm at noon", warm),
        (GIMP_DARKER, "hill_house.png", (640, 480), "Hill house", dusk),
        (GIMP_WINDOWS, "sketch.png", (480, 360), "Sketch", warm),
    ]
    for task_id, name, size, title, palette in pictures:
        poster(size, title, palette).save(asset_dir("gimp", task_id) / name, optimize=True)


def make_multi() -> None:
    """Letterboxed and full-frame videos for the VLC snapshot + GIMP tasks, with their gold images."""
    warm = ((250, 190, 120), (90, 140, 60), (150, 170, 90), (255, 230, 90), (230, 220, 200), (160, 50, 40))
    cool = ((120, 170, 230), (40, 110, 80), (90, 150, 120), (250, 250, 210), (210, 200, 190), (70, 60, 120))
    with tempfile.TemporaryDirectory() as tmp:
        left, top, right, bottom = CROP_BOX
        picture = poster((right - left, bottom - top), "Chapter 3", warm)
        frame = Image.new("RGB", (640, 360), (0, 0, 0))
        frame.paste(picture, (left, top))
        still = Path(tmp) / "frame.png"
        frame.save(still)
        folder = asset_dir("multi_apps", MULTI_CROP)
        clip_from_still(folder / "documentary_letterboxed.mp4", still, 120, lossless=True)
        picture.save(folder / "gold_cropped.png", optimize=True)

        full = poster((640, 360), "Episode 7", cool)
        still = Path(tmp) / "episode.png"
        full.save(still)
        folder = asset_dir("multi_apps", MULTI_THUMB)
        clip_from_still(folder / "episode_07.mp4", still, 120)
        full.resize((320, 180), Image.Resampling.LANCZOS).save(folder / "gold_thumbnail.png", optimize=True)


def main() -> None:
    """Regenerate every asset."""
    makers: list[Callable[[], None]] = [make_vlc, make_gimp, make_multi]
    for make in makers:
        make()
    for path in sorted(TASKS.glob("*/assets/*/*")):
        print(f"{path.relative_to(TASKS)}  {path.stat().st_size // 1024} KiB")


if __name__ == "__main__":
    main()
