"""The guest routes that move files and media: ``/file``, ``/setup/upload``,
``/list_directory``, ``/wallpaper``, ``/setup/change_wallpaper``, ``/start_recording``
and ``/end_recording``.

:class:`FileRoutes` is a mixin of :class:`pytest_osworld.guest.server.GuestApp`. An
upload's multipart body is split by :mod:`pytest_osworld.guest.server_multipart` (the
file part costs one copy) and written to its path.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any

from pytest_osworld.guest import desktop
from pytest_osworld.guest.server_protocol import HTTPError, Request, Response, expand_path, str_field

RECORDING_PATH = "/tmp/osworld_recording.mp4"


class FileRoutes:
    """Routes that read and write the guest's files, its wallpaper and its screen recording."""

    _recording: subprocess.Popen[bytes] | None
    _recording_lock: threading.Lock

    def read_file(self, request: Request) -> Response:
        """The bytes of ``file_path``; 404 when it does not exist."""
        path = expand_path(str_field(request.fields(), "file_path"))
        if not os.path.exists(path):
            raise HTTPError(404, f"{path} does not exist")
        if not os.path.isfile(path):
            raise HTTPError(400, f"{path} is not a regular file")
        try:
            data = Path(path).read_bytes()
        except PermissionError as exc:
            raise HTTPError(403, f"{path} is not readable") from exc
        name = urllib.parse.quote(os.path.basename(path))
        return Response(
            200,
            data,
            "application/octet-stream",
            {"Content-Disposition": f"attachment; filename*=UTF-8''{name}"},
        )

    def upload(self, request: Request) -> Response:
        """Write multipart ``file_data`` to ``file_path``, creating parent folders."""
        if request.content_type() != "multipart/form-data":
            raise HTTPError(400, "upload needs a multipart/form-data body")
        fields = request.fields()
        path = expand_path(str_field(fields, "file_path"))
        data = fields.get("file_data")
        if not isinstance(data, bytes):
            raise HTTPError(400, "missing file part 'file_data'")
        target = Path(path)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        except PermissionError as exc:
            raise HTTPError(403, f"{path} is not writable") from exc
        except IsADirectoryError as exc:
            raise HTTPError(400, f"{path} is a directory") from exc
        return Response.of_text(f"file uploaded to {path} ({len(data)} bytes)")

    def list_directory(self, request: Request) -> Response:
        """``{"directory_tree": {type, name, children}}`` of ``path``."""
        path = expand_path(str_field(request.json(), "path"))
        if not os.path.isdir(path):
            raise HTTPError(404, f"{path} is not a directory")
        return Response.of_json({"directory_tree": _tree(path, 0)})

    # -- wallpaper -----------------------------------------------------------------------------

    def wallpaper(self, request: Request) -> Response:
        """The wallpaper file named by gsettings ``picture-uri``; 404 when unset."""
        done = subprocess.run(
            ["gsettings", "get", "org.gnome.desktop.background", "picture-uri"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        uri = done.stdout.strip().strip("'\"")
        path = urllib.parse.unquote(urllib.parse.urlparse(uri).path) if uri else ""
        if not path or not os.path.isfile(path):
            raise HTTPError(404, "no wallpaper file is set")
        return Response(200, Path(path).read_bytes(), "application/octet-stream")

    def change_wallpaper(self, request: Request) -> Response:
        """Set gsettings ``picture-uri`` to ``path``."""
        path = expand_path(str_field(request.json(), "path"))
        if not os.path.isfile(path):
            raise HTTPError(404, f"{path} does not exist")
        uri = Path(path).absolute().as_uri()
        for key in ("picture-uri", "picture-uri-dark"):
            subprocess.run(
                ["gsettings", "set", "org.gnome.desktop.background", key, uri],
                capture_output=True,
                timeout=10,
                check=False,
            )
        return Response.of_text(f"wallpaper set to {path}")

    # -- recording -----------------------------------------------------------------------------

    def start_recording(self, request: Request) -> Response:
        """Start ffmpeg x11grab into ``/tmp/osworld_recording.mp4``."""
        with self._recording_lock:
            if self._recording is not None and self._recording.poll() is None:
                raise HTTPError(400, "a recording is already running")
            width, height = desktop.screen_size()
            if os.path.exists(RECORDING_PATH):
                os.unlink(RECORDING_PATH)
            proc = subprocess.Popen(
                [
                    "ffmpeg",
                    "-y",
                    "-loglevel",
                    "error",
                    "-f",
                    "x11grab",
                    "-draw_mouse",
                    "1",
                    "-video_size",
                    f"{width}x{height}",
                    "-framerate",
                    "30",
                    "-i",
                    os.environ.get("DISPLAY", ":0"),
                    "-c:v",
                    "libx264",
                    "-preset",
                    "ultrafast",
                    "-pix_fmt",
                    "yuv420p",
                    RECORDING_PATH,
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            # Started means: ffmpeg wrote the file header, or is still running after 2 s.
            deadline = time.monotonic() + 2.0
            while time.monotonic() < deadline and proc.poll() is None:
                if os.path.exists(RECORDING_PATH) and os.path.getsize(RECORDING_PATH) > 0:
                    break
                time.sleep(0.05)
            if proc.poll() is not None:
                message = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                raise HTTPError(500, f"ffmpeg exited at once: {message.strip()}")
            self._recording = proc
        return Response.of_json({"status": "success", "message": "recording started"})

    def end_recording(self, request: Request) -> Response:
        """Stop ffmpeg and return the MP4."""
        with self._recording_lock:
            proc, self._recording = self._recording, None
            if proc is None:
                raise HTTPError(400, "no recording is running")
            if proc.stdin is not None:
                try:
                    proc.stdin.write(b"q")
                    proc.stdin.close()
                except BrokenPipeError:
                    pass
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if not os.path.exists(RECORDING_PATH) or os.path.getsize(RECORDING_PATH) == 0:
            raise HTTPError(500, "the recording file is empty")
        return Response(200, Path(RECORDING_PATH).read_bytes(), "video/mp4")


def _tree(path: str, depth: int) -> dict[str, Any]:
    name = os.path.basename(path.rstrip("/")) or path
    if not os.path.isdir(path) or os.path.islink(path):
        return {"type": "file", "name": name}
    children: list[dict[str, Any]] = []
    if depth < 32:
        try:
            entries = sorted(os.listdir(path))
        except OSError:
            entries = []
        children = [_tree(os.path.join(path, entry), depth + 1) for entry in entries]
    return {"type": "directory", "name": name, "children": children}
