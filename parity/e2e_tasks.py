"""Which tasks the end-to-end parity level runs, and how OSWorld's side receives them.

OSWorld's tasks: those of ``../shared/osworld/examples`` beside the repository (or
``$OSWORLD_EXAMPLES``)
whose ``config`` and ``evaluator`` contain no ``http://``/``https://`` URL at all (they
fetch nothing from the web; 65 of 369). Our own tasks: ``tasks/<domain>/*.json`` with an
``evaluator``.

Our own tasks name their files by paths relative to the task file (``assets/<id>/x``,
``../thunderbird/assets/x``),
which our plugin resolves itself. OSWorld's setup controller and ``cloud_file`` getter only
download URLs, so for OSWorld's side every such string is rewritten to a URL of
:class:`AssetServer`, a loopback HTTP server over the tasks folder: OSWorld then downloads
the very same bytes on the host and uploads them with its own client code.
"""

from __future__ import annotations

import json
import os
import re
import threading
from dataclasses import dataclass
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

URL = re.compile(r"https?://")
#: OSWorld's examples in shared/ beside the clone, as CI lays them out.
DEFAULT_EXAMPLES = Path(__file__).resolve().parent.parent.parent / "shared" / "osworld" / "examples"


@dataclass(frozen=True)
class E2ETask:
    """One task to run: its file, its JSON, and the group it is reported under."""

    path: Path
    data: dict[str, Any]
    origin: str  # "osworld" or "own"

    @property
    def name(self) -> str:
        """``<domain>/<id>`` for progress lines and disagreement cases."""
        return f"{self.path.parent.name}/{self.data.get('id', self.path.stem)}"

    @property
    def solution(self) -> list[Any] | None:
        """The reference solution, when the task has one."""
        value = self.data.get("solution")
        return list(value) if isinstance(value, list) else None


def examples_dir() -> Path:
    """OSWorld's examples folder (``$OSWORLD_EXAMPLES`` overrides the default)."""
    return Path(os.environ.get("OSWORLD_EXAMPLES") or DEFAULT_EXAMPLES)


def fetches_no_url(data: dict[str, Any]) -> bool:
    """Whether a task's ``config`` and ``evaluator`` mention no http(s) URL anywhere."""
    text = json.dumps({"config": data.get("config"), "evaluator": data.get("evaluator")})
    return URL.search(text) is None


def osworld_no_url_tasks(examples: Path) -> list[E2ETask]:
    """OSWorld's tasks that fetch no URL, sorted by domain and id."""
    found = []
    for path in sorted(examples.glob("*/*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if fetches_no_url(data):
            found.append(E2ETask(path, data, "osworld"))
    return found


def own_tasks(tasks_dir: Path) -> list[E2ETask]:
    """Our own tasks (files with an ``evaluator``), sorted by domain and id."""
    found = []
    for path in sorted(tasks_dir.glob("*/*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and "evaluator" in data:
            found.append(E2ETask(path, data, "own"))
    return found


def for_oracle(task: E2ETask, tasks_dir: Path, base_url: str) -> dict[str, Any]:
    """The task JSON as OSWorld's ``DesktopEnv.reset`` receives it.

    OSWorld's tasks go unchanged. In our own tasks, every string starting with ``assets/``
    or ``../`` that names a file under ``tasks_dir`` (relative to the task file) becomes a
    URL of the asset server; nothing else changes.
    """
    if task.origin != "own":
        return task.data
    root = tasks_dir.resolve()

    def rewrite(value: Any) -> Any:
        if isinstance(value, str) and value.startswith(("assets/", "../")):
            local = (task.path.parent / value).resolve()
            if local.is_file() and local.is_relative_to(root):
                return f"{base_url}/{local.relative_to(root).as_posix()}"
            return value
        if isinstance(value, list):
            return [rewrite(v) for v in value]
        if isinstance(value, dict):
            return {k: rewrite(v) for k, v in value.items()}
        return value

    data = dict(task.data)
    for key in ("config", "evaluator"):
        if key in data:
            data[key] = rewrite(data[key])
    return data


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """No access log."""


class AssetServer:
    """A loopback HTTP server over ``root`` (read-only files) for OSWorld's downloads."""

    def __init__(self, root: Path) -> None:
        handler = partial(_QuietHandler, directory=str(root))
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="e2e-assets", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop serving."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5.0)
