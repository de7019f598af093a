"""Record accessibility trees and screenshots of our local desktop, one per app.

    .venv/bin/python -m parity.agent_record_trees [--apps calc,writer,...] [--out DIR]

Starts the local desktop provider (as tests/integration does), opens each app on a fresh
home directory, waits until the app is in the accessibility tree and the tree stops
changing, then writes ``DIR/<app>.xml.gz`` and ``DIR/<app>.png``. The screenshot is
reduced to a 256-colour palette so that the recorded set stays a few MB; both parity
sides read the same reduced image, so Set-of-Marks parity is unaffected.
These files feed the agent-facing parity level (parity/agent_facing.py) and the golden
test tests/unit/test_observe_parity.py.
"""

from __future__ import annotations

import argparse
import gzip
import io
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "a11y_trees"

_PAGE = (
    "<!doctype html><html><head><title>Parity page</title></head><body>"
    '<h1>Accessibility parity</h1><p>Some "quoted" text, a tab\tand more.</p>'
    "<button>Click me</button><input value='typed'><a href='#x'>a link</a>"
    "<ul>" + "".join(f"<li>item {i}</li>" for i in range(12)) + "</ul></body></html>"
)


def _calc_file() -> bytes:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    for row in range(1, 16):
        sheet.cell(row, 1, f"row {row}")
        sheet.cell(row, 2, row * 1.5)
    sheet.cell(2, 3, 'say "hi"')
    data = io.BytesIO()
    book.save(data)
    return data.getvalue()


def _writer_file() -> bytes:
    import docx

    document = docx.Document()
    document.add_heading("Parity heading", 1)
    document.add_paragraph('A paragraph with "quotes" and a second sentence.')
    document.add_paragraph("Another paragraph.")
    data = io.BytesIO()
    document.save(data)
    return data.getvalue()


def _impress_file() -> bytes:
    import pptx

    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Parity slide"
    slide.placeholders[1].text = "First point\nSecond point"
    data = io.BytesIO()
    deck.save(data)
    return data.getvalue()


#: app -> (file to upload or None, its path, command, fragment the tree must contain)
APPS: dict[str, tuple[Callable[[], bytes] | None, str, list[str], str]] = {
    "calc": (_calc_file, "/home/user/Desktop/parity.xlsx", [], "row 15"),
    "writer": (_writer_file, "/home/user/Desktop/parity.docx", [], "Parity heading"),
    "impress": (_impress_file, "/home/user/Desktop/parity.pptx", [], "Parity slide"),
    "chromium": (
        lambda: _PAGE.encode(),
        "/home/user/Desktop/parity.html",
        ["google-chrome", "file:///home/user/Desktop/parity.html"],
        "Accessibility parity",
    ),
    "thunderbird": (None, "", ["thunderbird"], "Thunderbird"),
    "vlc": (None, "", ["vlc", "--no-audio", "--no-video-title-show"], "VLC"),
    "gimp": (None, "", ["gimp"], "GNU Image Manipulation Program"),
    "vscode": (None, "", ["code"], "Visual Studio Code"),
    "terminal": (None, "", ["gnome-terminal"], "Terminal"),
}


def _settled(read: Callable[[], str], needle: str, timeout: float) -> str:
    """The tree once it holds ``needle`` and two reads a second apart are equal."""
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        tree = read()
        if needle.lower() in tree.lower() and tree == last:
            return tree
        last = tree
        time.sleep(1.5)
    return last


def _small_png(png: bytes) -> bytes:
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB").quantize(colors=256)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()


def record(apps: list[str], out: Path, timeout: float = 120.0) -> list[str]:
    """Record each app's tree and screenshot into ``out``; return what was written."""
    from pytest_osworld.providers.base import ProviderConfig
    from pytest_osworld.providers.local import LocalProvider

    out.mkdir(parents=True, exist_ok=True)
    written: list[str] = []
    with tempfile.TemporaryDirectory() as work:
        provider = LocalProvider(ProviderConfig(worker_id="a11y-record", work_dir=work))
        provider.start()
        try:
            for app in apps:
                make, path, command, needle = APPS[app]
                print(f"record: {app}", flush=True)
                guest = provider.restore(f"record-{app}").guest
                if make is not None:
                    guest.upload_file(path, make())
                if command:
                    guest.launch(command)
                else:
                    guest.open_file(path, timeout=90)
                tree = _settled(guest.accessibility_tree, needle, timeout)
                if needle.lower() not in tree.lower():
                    print(f"record: {app}: {needle!r} never appeared in the tree; recorded anyway")
                (out / f"{app}.xml.gz").write_bytes(gzip.compress(tree.encode(), mtime=0))
                (out / f"{app}.png").write_bytes(_small_png(guest.screenshot()))
                written.append(app)
        finally:
            provider.stop()
    return written


def main(argv: list[str] | None = None) -> int:
    """CLI: record the trees (all apps by default)."""
    parser = argparse.ArgumentParser(description="record accessibility trees for parity")
    parser.add_argument("--apps", default=",".join(APPS))
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    apps = [a for a in args.apps.split(",") if a]
    unknown = sorted(set(apps) - set(APPS))
    if unknown:
        parser.error(f"unknown apps: {', '.join(unknown)}; known: {', '.join(APPS)}")
    print("recorded: " + ", ".join(record(apps, args.out)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
