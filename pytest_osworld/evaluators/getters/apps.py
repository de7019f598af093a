"""Getters for VLC, GIMP, VS Code, Impress media, spreadsheets and desktop settings."""

from __future__ import annotations

import collections
import io
import posixpath
import zipfile
from pathlib import Path
from typing import Any

from pytest_osworld.errors import GetterError, NeedsCapability
from pytest_osworld.task.context import TaskContext
from pytest_osworld.task.paths import contained_path

VLC_STATUS_SCRIPT = """
import base64, sys, urllib.request
request = urllib.request.Request("http://127.0.0.1:8080/requests/status.xml")
request.add_header("Authorization", "Basic " + base64.b64encode(b":password").decode())
sys.stdout.write(urllib.request.urlopen(request, timeout=10).read().decode())
"""
#: The ``video/*`` subtypes OSWorld's getter asks ``xdg-mime`` about, in its order. Its
#: list names every subtype twice except ``x-ogm+ogg`` (once), so each answer counts twice
#: (once for that one): the weights keep its majority and its tie-break (first seen wins).
VIDEO_TYPES = (
    "3gp", "3gpp", "3gpp2", "avi", "divx", "dv", "fli", "flv", "mp2t", "mp4", "mp4v-es",
    "mpeg", "mpeg-system", "msvideo", "ogg", "quicktime", "vnd.divx", "vnd.mpegurl",
    "vnd.rn-realvideo", "webm", "x-anim", "x-avi", "x-flc", "x-fli", "x-flv", "x-m4v",
    "x-matroska", "x-mpeg", "x-mpeg-system", "x-mpeg2", "x-ms-asf", "x-ms-asf-plugin",
    "x-ms-asx", "x-ms-wm", "x-ms-wmv", "x-ms-wmx", "x-ms-wvx", "x-msvideo", "x-nsv", "x-ogm",
    "x-ogm+ogg", "x-theora", "x-theora+ogg",
)  # fmt: skip
VIDEO_TYPES_COUNTED_ONCE = frozenset({"x-ogm+ogg"})


def _write(ctx: TaskContext, dest: str, data: bytes) -> Path:
    target = contained_path(ctx.work_dir, dest, what="dest", error=GetterError)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return target


def _read(ctx: TaskContext, path: str, what: str) -> bytes:
    try:
        return ctx.guest.read_file(path)
    except FileNotFoundError:
        raise GetterError(f"{what}: {path} not found in the environment") from None


def get_vlc_config(ctx: TaskContext, config: dict[str, Any]) -> Path:
    """VLC's ``vlcrc``."""
    data = _read(ctx, "/home/user/.config/vlc/vlcrc", "vlc_config")
    return _write(ctx, config.get("dest", "vlcrc"), data)


def get_vlc_playing_info(ctx: TaskContext, config: dict[str, Any]) -> Path:
    """VLC's ``status.xml`` from its HTTP interface, fetched inside the environment."""
    result = ctx.guest.execute(["python3", "-c", VLC_STATUS_SCRIPT])
    if result.returncode != 0:
        raise GetterError(
            f"vlc_playing_info: VLC's HTTP interface did not answer: {result.error.strip()[-300:]}"
        )
    return _write(ctx, config.get("dest", "status.xml"), result.output.encode())


def get_gimp_config_file(ctx: TaskContext, config: dict[str, Any]) -> Path:
    """A file of GIMP 2.10's configuration folder."""
    name = str(config["file_name"])
    if "/" in name or name.startswith("."):
        raise GetterError(f"gimp_config_file: {name!r} is not a plain file name")
    data = _read(ctx, f"/home/user/.config/GIMP/2.10/{name}", "gimp_config_file")
    return _write(ctx, config.get("dest", name), data)


#: Runs a VS Code command through the command palette and waits (up to ``wait`` seconds per
#: try, two tries) for the file it writes to change. A window that has just reloaded (a
#: folder opened) takes a few seconds under load before its palette runs commands; a fixed
#: one-second pause then read a file that was not yet written.
VSCODE_COMMAND_SCRIPT = """
import os, time
def stamp():
    try:
        return os.stat({path!r}).st_mtime_ns
    except OSError:
        return None
before = stamp()
for attempt in range(2):
    pyautogui.hotkey('ctrl', 'shift', 'p')
    time.sleep(0.5)
    pyautogui.typewrite({command!r})
    time.sleep(0.5)
    pyautogui.press('enter')
    deadline = time.monotonic() + {wait}
    while stamp() == before and time.monotonic() < deadline:
        time.sleep(0.1)
    if stamp() != before:
        break
    pyautogui.press('escape')
"""


def get_vscode_config(ctx: TaskContext, config: dict[str, Any]) -> Path:
    """Run a VS Code command through the command palette, then fetch the file it writes."""
    command = str(config["vscode_extension_command"])
    path = str(config["path"])
    ctx.guest.activate_window("Visual Studio Code")
    ctx.guest.run_python(VSCODE_COMMAND_SCRIPT.format(path=path, command=command, wait=10))
    data = _read(ctx, path, "vscode_config")
    return _write(ctx, config.get("dest", posixpath.basename(path)), data)


def get_default_video_player(ctx: TaskContext, config: dict[str, Any]) -> str:
    """The desktop file most video MIME types open with (``xdg-mime query default``).

    The same subtypes, weights and tie-break as OSWorld's getter (see ``VIDEO_TYPES``): a
    shorter list once picked ``chromium.desktop`` where OSWorld's picks ``vlc.desktop``.
    """
    answers: collections.Counter[str] = collections.Counter()
    for video in VIDEO_TYPES:
        result = ctx.guest.execute(["xdg-mime", "query", "default", f"video/{video}"])
        if result.returncode == 0 and result.output.strip():
            answers[result.output.strip()] += 1 if video in VIDEO_TYPES_COUNTED_ONCE else 2
    if not answers:
        raise GetterError("default_video_player: xdg-mime knows no default video player")
    return answers.most_common(1)[0][0]


def _slide_rels(pptx: bytes, slide_index: int) -> tuple[zipfile.ZipFile, str, bytes]:
    archive = zipfile.ZipFile(io.BytesIO(pptx))
    name = f"ppt/slides/_rels/slide{slide_index + 1}.xml.rels"
    try:
        return archive, name, archive.read(name)
    except KeyError:
        raise GetterError(f"the presentation has no slide {slide_index + 1}") from None


def _media_from_slide(ctx: TaskContext, config: dict[str, Any], kinds: tuple[str, ...]) -> Path:
    from lxml import etree

    pptx = _read(ctx, str(config["ppt_file_path"]), "slide media")
    archive, _, rels = _slide_rels(pptx, int(config.get("slide_index", 0)))
    for rel in etree.fromstring(rels):
        rel_type = rel.get("Type", "").rsplit("/", 1)[-1]
        if rel_type not in kinds:
            continue
        target = rel.get("Target", "")
        if rel.get("TargetMode") == "External":
            path = target.removeprefix("file://")
            return _write(ctx, config["dest"], _read(ctx, path, "linked media"))
        member = posixpath.normpath(posixpath.join("ppt/slides", target))
        return _write(ctx, config["dest"], archive.read(member))
    raise GetterError(f"slide {int(config.get('slide_index', 0)) + 1} has no {' or '.join(kinds)}")


def get_audio_in_slide(ctx: TaskContext, config: dict[str, Any]) -> Path:
    """The audio embedded in (or linked from) a slide."""
    return _media_from_slide(ctx, config, ("audio", "media"))


def get_background_image_in_slide(ctx: TaskContext, config: dict[str, Any]) -> Path:
    """The image a slide uses (its background picture)."""
    return _media_from_slide(ctx, config, ("image",))


def get_content_from_vm_file(ctx: TaskContext, config: dict[str, Any]) -> list[str]:
    """The last row of a spreadsheet in the environment, as strings."""
    from openpyxl import load_workbook

    if config.get("file_type") != "xlsx" or config.get("file_content") != "last_row":
        raise GetterError("content_from_vm_file supports file_type 'xlsx' with file_content 'last_row'")
    data = _read(ctx, str(config["path"]), "content_from_vm_file")
    sheet = load_workbook(io.BytesIO(data), read_only=True, data_only=True).active
    rows = [row for row in sheet.iter_rows(values_only=True) if any(v is not None for v in row)]
    if not rows:
        raise GetterError(f"content_from_vm_file: {config['path']} has no rows")
    return ["" if v is None else str(v) for v in rows[-1]]


def get_googledrive_file(ctx: TaskContext, config: dict[str, Any]) -> Any:
    """Files in a Google Drive account: not available without one."""
    raise NeedsCapability(
        "the evaluator reads a Google Drive account (googledrive_file); this run has no "
        "Google account configured (OSWorld's Google Drive tasks need one with OAuth settings)"
    )
