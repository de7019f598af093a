"""PNG encoding of screenshots: fpng when it is installed, Pillow otherwise.

Owns the conversion of the X server's 32-bit BGRX pixels into packed RGB and the two
lossless encoders, in :data:`ENCODERS`. The encoder dominates a screenshot's time: on a
1920x1080 desktop ``fpng`` (PyPI ``fpng``, a wrapper of Rich Geldreich's fpng) takes a
few milliseconds where Pillow at zlib level 1 takes 15-25 ms; its files are larger
(roughly 40 KB instead of 28 KB for an empty desktop), its pixels the same. fpng is an
optional dependency (the ``desktop`` extra); without it, or when it fails on an image,
Pillow encodes. ``OSWORLD_PNG_ENCODER=pillow|fpng`` forces one (default ``auto``).
"""

from __future__ import annotations

import io
import logging
import os
from collections.abc import Callable
from functools import lru_cache
from typing import Any

_log = logging.getLogger(__name__)

#: Environment variable naming the encoder: ``auto`` (fpng if importable), ``fpng``, ``pillow``.
ENCODER_ENV = "OSWORLD_PNG_ENCODER"
#: zlib level of Pillow's PNGs: 1 is about 40% faster than Pillow's default 6.
PNG_COMPRESS_LEVEL = 1

#: An encoder: packed 8-bit RGB rows (``width * height * 3`` bytes), width, height -> PNG bytes.
Encoder = Callable[[bytes, int, int], bytes]


class PngEncoderError(ValueError):
    """An unknown or unavailable encoder was asked for (the message names the choices)."""


def bgrx_to_rgb(raw: bytes | bytearray, width: int, height: int) -> bytes:
    """Packed RGB from 32-bit pixels stored B, G, R, X (what X11 and mss give).

    One pass, no intermediate copy: Pillow maps the buffer as an ``RGBX`` image (so its
    "R" is really blue) and packs it as ``BGR``, which puts red first. The packing is
    done in one block (``Image.tobytes`` packs 64 KB blocks and joins them, a third
    slower); should Pillow's encoder interface ever answer otherwise, ``tobytes`` does it,
    and a Pillow without that packer gets the two-pass conversion.
    """
    from PIL import Image

    if len(raw) != width * height * 4:
        raise ValueError(f"{len(raw)} bytes cannot be a {width}x{height} BGRX image")
    size = width * height * 3
    if size == 0:
        return b""
    image = Image.frombuffer("RGBX", (width, height), raw, "raw", "RGBX", 0, 1)
    try:
        encoder = Image._getencoder("RGBX", "raw", "BGR")
        try:
            encoder.setimage(image.im, (0, 0, width, height))
            _, status, data = encoder.encode(size)
        finally:
            encoder.cleanup()
        if status == 1 and isinstance(data, bytes) and len(data) == size:
            return data
    except Exception as exc:  # a Pillow whose internals differ: the public ways below
        _log.debug("one-block RGB packing unavailable (%s); using Image.tobytes", exc)
    try:
        return image.tobytes("raw", "BGR")
    except ValueError:  # a Pillow without the RGBX->BGR packer: unpack to RGB, then pack
        return Image.frombytes("RGB", (width, height), bytes(raw), "raw", "BGRX").tobytes()


def encode_pillow(rgb: bytes, width: int, height: int) -> bytes:
    """PNG by Pillow at :data:`PNG_COMPRESS_LEVEL` (always available where the guest runs)."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.frombytes("RGB", (width, height), rgb).save(buffer, format="PNG", compress_level=PNG_COMPRESS_LEVEL)
    return buffer.getvalue()


def encode_fpng(rgb: bytes, width: int, height: int) -> bytes:
    """PNG by fpng (raises :class:`ImportError` when the package is not installed)."""
    encoder = _fpng_module()
    if encoder is None:
        raise ImportError("the fpng package is not installed (pip install fpng)")
    png: bytes = encoder.encode_image_to_memory(rgb, width, height, 3)
    return png


#: The encoders by name, in order of preference.
ENCODERS: dict[str, Encoder] = {"fpng": encode_fpng, "pillow": encode_pillow}


@lru_cache(maxsize=1)
def _fpng_module() -> Any:
    """fpng's extension module, or None when it cannot be imported here."""
    try:
        from fpng import fpng_ext  # type: ignore[import-untyped]
    except Exception as exc:  # not installed, or a wheel this CPU or libc cannot load
        _log.info("fpng unavailable (%s); screenshots are encoded by Pillow", exc)
        return None
    return fpng_ext


def fpng_available() -> bool:
    """Whether fpng can be imported in this interpreter."""
    return _fpng_module() is not None


def choose_encoder(requested: str | None = None) -> str:
    """The encoder to use: ``requested``, else ``$OSWORLD_PNG_ENCODER``, else ``auto``.

    ``auto`` is fpng when it is importable, else Pillow. Naming fpng where it is not
    installed, or an unknown name, raises :class:`PngEncoderError`.
    """
    where = "the caller" if requested else ENCODER_ENV
    name = (requested or os.environ.get(ENCODER_ENV, "") or "auto").strip().lower()
    if name == "auto":
        return "fpng" if fpng_available() else "pillow"
    if name not in ENCODERS:
        choices = ", ".join(["auto", *ENCODERS])
        raise PngEncoderError(f"unknown PNG encoder {name!r} (from {where}); use one of {choices}")
    if name == "fpng" and not fpng_available():
        raise PngEncoderError(
            f"PNG encoder 'fpng' (from {where}) is not installed here: pip install fpng, or use auto"
        )
    return name


def encode_png(rgb: bytes, width: int, height: int, encoder: str = "pillow") -> bytes:
    """PNG bytes of packed RGB pixels by ``encoder``; Pillow when fpng fails on this image."""
    func = ENCODERS.get(encoder)
    if func is None:
        raise PngEncoderError(f"unknown PNG encoder {encoder!r}; use one of {', '.join(ENCODERS)}")
    if func is encode_pillow:
        return encode_pillow(rgb, width, height)
    try:
        return func(rgb, width, height)
    except (RuntimeError, ValueError, ImportError) as exc:
        _log.warning("%s could not encode a %dx%d image (%s); using Pillow", encoder, width, height, exc)
        return encode_pillow(rgb, width, height)
