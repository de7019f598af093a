"""Builders of small real files, and a score checker, for the metric tests."""

from __future__ import annotations

import io
import math
import struct
import wave
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_osworld.evaluators.score import Score


def check(score: Score, value: float, *fragments: str, approx: float = 1e-6) -> None:
    """The score has ``value`` and its reason contains every fragment."""
    assert isinstance(score, Score), score
    assert score.value == pytest.approx(value, abs=approx), score.reason
    for fragment in fragments:
        assert fragment in score.reason, (fragment, score.reason)


def text_pdf(path: Path, lines: Sequence[str]) -> Path:
    """Write a one-page PDF showing ``lines`` in Helvetica (ASCII text only)."""
    ops = ["BT", "/F1 12 Tf", "72 720 Td", "14 TL"]
    for line in lines:
        escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        ops.append(f"({escaped}) Tj T*")
    ops.append("ET")
    stream = "\n".join(ops).encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(f"{number} 0 obj\n".encode() + body + b"\nendobj\n")
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for offset in offsets:
        out.write(f"{offset:010d} 00000 n \n".encode())
    out.write(f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode())
    path.write_bytes(out.getvalue())
    return path


def tone_wav(path: Path, freqs: Sequence[float], seconds: float = 0.6, rate: int = 16000) -> Path:
    """Write a mono 16-bit WAV playing each frequency in turn."""
    frames = bytearray()
    for freq in freqs:
        for i in range(int(seconds * rate)):
            frames += struct.pack("<h", int(12000 * math.sin(2 * math.pi * freq * i / rate)))
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(bytes(frames))
    return path


def gradient(size: tuple[int, int] = (64, 48), mode: str = "RGB") -> Any:
    """A deterministic image with structure (a gradient with a square)."""
    from PIL import Image, ImageDraw

    width, height = size
    image = Image.new("RGB", size)
    pixels = image.load()
    for x in range(width):
        for y in range(height):
            pixels[x, y] = (
                (x * 255) // width,
                (y * 255) // height,
                ((x + y) * 127) // (width + height),
            )
    ImageDraw.Draw(image).rectangle((width // 4, height // 4, width // 2, height // 2), fill=(250, 250, 250))
    return image.convert(mode)


def libreoffice_convert(sources: Sequence[Path], fmt: str, outdir: Path) -> list[Path]:
    """Convert files with LibreOffice headless (private profile); skip the test without soffice."""
    import shutil
    import subprocess

    soffice = shutil.which("soffice")
    if soffice is None:
        pytest.skip("LibreOffice (soffice) is not installed")
    profile = (outdir / "lo-profile").as_uri()
    subprocess.run(
        [
            soffice,
            f"-env:UserInstallation={profile}",
            "--headless",
            "--convert-to",
            fmt,
            "--outdir",
            str(outdir),
            *map(str, sources),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    converted = [outdir / (source.stem + "." + fmt.split(":")[0]) for source in sources]
    missing = [str(p) for p in converted if not p.is_file()]
    assert not missing, f"LibreOffice did not write {missing}"
    return converted
