"""The guest server: OSWorld's in-VM HTTP API, served inside each desktop.

Same paths and payloads as OSWorld's server (OSWORLD-CONTRACT.md section 4), so OSWorld's
tools can drive our desktops and our client can drive OSWorld's VMs. What differs:

- every request needs ``Authorization: Bearer <token>`` (compared in constant time);
  without it the answer is 401, and malformed requests get a 4xx with a JSON reason;
- a stalled request is dropped after ``server_http.REQUEST_TIMEOUT`` and an idle connection after
  ``server_http.IDLE_TIMEOUT``, so slow clients never hold more than their own thread;
- there is no debug mode and no interactive error page;
- agent code runs in a persistent worker that imported pyautogui once
  (:mod:`pytest_osworld.guest.worker`), not in a new interpreter per action;
- ``/health`` reports readiness: X, the window manager, the AT-SPI registry, the worker.

This module owns :class:`GuestApp`: the route table, the token check, the dispatch that
turns every failure into a JSON status, and the observation routes (health, screenshot,
accessibility tree, terminal, screen, cursor, platform). Its neighbours own the rest:

- :mod:`~pytest_osworld.guest.server_protocol`: requests, responses, argument checks;
- :mod:`~pytest_osworld.guest.server_commands`: programs, worker code and windows;
- :mod:`~pytest_osworld.guest.server_files`: files, uploads, wallpaper and recording;
- :mod:`~pytest_osworld.guest.input_record`: a person's input, recorded as pyautogui
  actions (``/input/start``, ``/input/take``, ``/input/stop``; ``--agent=human``);
- :mod:`~pytest_osworld.guest.vnc`: the live view's x11vnc, started when first watched
  (``GET /vnc`` upgraded to VNC's bytes, ``POST /vnc/input`` to take over).

Their public names are re-exported here. The HTTP transport,
:mod:`~pytest_osworld.guest.server_http`, imports this module and not the other way round: the
app knows nothing of HTTP (``make_server`` and ``serve`` are there, and the limits of a request).
"""

from __future__ import annotations

import hmac
import os
import subprocess
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from pytest_osworld.guest import a11y, desktop
from pytest_osworld.guest.input_record import InputSession, NoRecording
from pytest_osworld.guest.server_commands import (
    DEFAULT_OPEN_TIMEOUT,
    DESKTOP_WRAPPERS,
    MAX_OPEN_TIMEOUT,
    OPENERS,
    CommandRoutes,
)
from pytest_osworld.guest.server_files import RECORDING_PATH, FileRoutes
from pytest_osworld.guest.server_protocol import (
    HTTPError,
    Request,
    Response,
    command_argv,
    expand_path,
    number_field,
    pyautogui_snippet,
    str_field,
)
from pytest_osworld.guest.vnc import VNC_UPGRADE, VncServer
from pytest_osworld.guest.worker import ActionWorker

__all__ = [
    "DEFAULT_OPEN_TIMEOUT",
    "DESKTOP_WRAPPERS",
    "MAX_OPEN_TIMEOUT",
    "OPENERS",
    "RECORDING_PATH",
    "GuestApp",
    "HTTPError",
    "Request",
    "Response",
    "command_argv",
    "expand_path",
    "pyautogui_snippet",
]


#: The window manager name GNOME Shell (mutter) announces; its dock fills in after it.
SHELL_WM = "GNOME Shell"
#: The parts of ``/health`` that must all be true for ``ready``. ``shell`` and
#: ``xsettings`` are true at once unless the window manager is GNOME Shell.
READY_PARTS = ("x", "wm", "atspi", "worker", "shell", "xsettings")
#: How long the server's own warm-up keeps trying to reach ready (a provider waits 60 s).
WARM_UP_SECONDS = 120.0


class GuestApp(CommandRoutes, FileRoutes):
    """Routes and their implementations; independent of the HTTP transport."""

    def __init__(self, token: str, worker: ActionWorker | None = None) -> None:
        if not token:
            raise ValueError("the guest server needs a non-empty token")
        self._token = token.encode()
        self.worker = worker or ActionWorker()
        self.screen = desktop.Screen()
        self.tree = a11y.TreeBuilder()
        self._recording: subprocess.Popen[bytes] | None = None
        self._recording_lock = threading.Lock()
        #: The person's input recording (``/input/...``, for ``--agent=human``).
        self.input = InputSession()
        #: The live view's VNC server (``/vnc``, ``/vnc/input``), started when first asked for.
        self.vnc = VncServer()
        self._shell_seen = False
        #: held while a thread walks the shell's tree (the warm-up and /health may both ask)
        self._shell_walk = threading.Lock()
        get, post, both = frozenset({"GET"}), frozenset({"POST"}), frozenset({"GET", "POST"})
        self.routes: dict[str, tuple[frozenset[str], Callable[[Request], Response]]] = {
            "/health": (get, self.health),
            "/screenshot": (get, self.screenshot),
            "/accessibility": (get, self.accessibility),
            "/terminal": (get, self.terminal),
            "/execute": (post, self.execute),
            "/setup/execute": (post, self.execute),
            "/setup/launch": (post, self.launch),
            "/setup/open_file": (post, self.open_file),
            "/setup/activate_window": (post, self.activate_window),
            "/setup/close_window": (post, self.close_window),
            "/file": (post, self.read_file),
            "/setup/upload": (post, self.upload),
            "/list_directory": (post, self.list_directory),
            "/screen_size": (both, self.screen_size),
            "/window_size": (post, self.window_size),
            "/cursor_position": (get, self.cursor_position),
            "/wallpaper": (post, self.wallpaper),
            "/setup/change_wallpaper": (post, self.change_wallpaper),
            "/desktop_path": (post, self.desktop_path),
            "/platform": (get, self.platform),
            "/start_recording": (post, self.start_recording),
            "/end_recording": (post, self.end_recording),
            "/input/start": (post, self.input_start),
            "/input/take": (post, self.input_take),
            "/input/stop": (post, self.input_stop),
            "/vnc": (get, self.vnc_upgrade_required),
            "/vnc/input": (post, self.vnc_input),
            "/run_python": (post, self.run_python),
            "/run_bash_script": (post, self.run_bash_script),
        }

    # -- dispatch ------------------------------------------------------------------------------

    def authorized(self, header: str | None) -> bool:
        """Whether an ``Authorization`` header carries this server's token."""
        if not header or not header.startswith("Bearer "):
            return False
        return hmac.compare_digest(header[len("Bearer ") :].strip().encode(), self._token)

    def handle(self, request: Request) -> Response:
        """Authorize, route and run one request; every failure becomes a JSON status."""
        if not self.authorized(request.headers.get("authorization")):
            return Response.of_json({"status": "error", "message": "missing or wrong bearer token"}, 401)
        route = self.routes.get(request.path)
        if route is None:
            return Response.of_json({"status": "error", "message": "no such endpoint"}, 404)
        methods, func = route
        if request.method not in methods:
            return Response.of_json(
                {"status": "error", "message": f"use {' or '.join(sorted(methods))}"}, 405
            )
        try:
            return func(request)
        except HTTPError as exc:
            return Response.of_json({"status": "error", "message": exc.reason}, exc.status)
        except Exception as exc:
            traceback.print_exc()
            return Response.of_json({"status": "error", "message": f"{type(exc).__name__}: {exc}"}, 500)

    # -- observation -------------------------------------------------------------------------

    def health(self, request: Request) -> Response:
        """Readiness of X, the window manager, AT-SPI, the action worker and, under GNOME
        Shell, the dock and the XSETTINGS daemon."""
        return Response.of_json(self.readiness())

    def start_warming(self, timeout: float = WARM_UP_SECONDS) -> threading.Thread:
        """Bring the desktop to ready in the background (start the action worker, see the
        shell's dock) without waiting for ``/health`` to ask; a desktop nobody polls yet (a
        provider's warm spare) is then ready at once when somebody does."""

        def warm() -> None:
            deadline = time.monotonic() + timeout
            while not self.readiness()["ready"] and time.monotonic() < deadline:
                time.sleep(0.1)

        thread = threading.Thread(target=warm, name="guest-warm-up", daemon=True)
        thread.start()
        return thread

    def readiness(self) -> dict[str, Any]:
        """``/health``'s answer: each part's state, and ``ready`` when all of them are."""
        state: dict[str, Any] = {"server": True}
        try:
            desktop.screen_size()
            state["x"] = True
        except Exception as exc:
            state["x"] = False
            state["x_error"] = str(exc)
        try:
            state["wm"] = desktop.window_manager_name() if state["x"] else None
        except Exception:
            state["wm"] = None
        if not state["x"]:
            # Without X, AT-SPI's library cannot find its bus and aborts the whole process
            # (a GLib error, not an exception), and the worker's pyautogui cannot start:
            # the server stays up and says why instead.
            state["atspi"] = state["worker"] = False
            state["atspi_error"] = state["worker_error"] = "no X display"
        else:
            try:
                state["atspi"] = a11y.registry_alive()
            except Exception as exc:
                state["atspi"] = False
                state["atspi_error"] = str(exc)
            try:
                self.worker.ensure_started()
                state["worker"] = True
            except Exception as exc:
                state["worker"] = False
                state["worker_error"] = str(exc)
        state["shell"] = self._shell_ready(state["wm"]) if state["atspi"] else False
        try:
            state["xsettings"] = state["wm"] != SHELL_WM or desktop.xsettings_manager_running()
        except Exception:
            state["xsettings"] = False
        state["ready"] = all(state[key] for key in READY_PARTS)
        return state

    def _shell_ready(self, wm: str | None) -> bool:
        """True unless the window manager is GNOME Shell whose dock is not on screen yet
        (:func:`~pytest_osworld.guest.a11y.shell_ready`); once seen, not asked again.

        One walk at a time: a caller that finds another's walk under way waits for it and
        takes its answer. Each walk reads the shell's whole tree, 0.3-0.7 s of CPU for the
        shell and for us while it starts, and the warm-up and ``/health`` polls overlap.
        """
        if wm != SHELL_WM or self._shell_seen:
            return True
        if not self._shell_walk.acquire(blocking=False):
            with self._shell_walk:
                return self._shell_seen
        try:
            self._shell_seen = a11y.shell_ready()
        except Exception:
            return False
        finally:
            self._shell_walk.release()
        return self._shell_seen

    def screenshot(self, request: Request) -> Response:
        """The screen as PNG, cursor drawn in."""
        return Response(200, self.screen.grab_png(), "image/png")

    def accessibility(self, request: Request) -> Response:
        """``{"AT": xml}``."""
        return Response.of_json({"AT": self.tree.build()})

    def terminal(self, request: Request) -> Response:
        """``{"output": text | null, "status": "success"}``."""
        return Response.of_json({"output": a11y.focused_terminal_text(), "status": "success"})

    def screen_size(self, request: Request) -> Response:
        """``{"width", "height"}``."""
        width, height = desktop.screen_size()
        return Response.of_json({"width": width, "height": height})

    def window_size(self, request: Request) -> Response:
        """Size of the first window of a WM class, 404 when none matches."""
        name = str_field(request.fields(), "app_class_name")
        size = desktop.window_size(name)
        if size is None:
            raise HTTPError(404, f"no window of class {name!r}")
        return Response.of_json({"width": size[0], "height": size[1]})

    def cursor_position(self, request: Request) -> Response:
        """``[x, y]``."""
        return Response.of_json(list(desktop.cursor_position()))

    def platform(self, request: Request) -> Response:
        """``Linux``."""
        import platform

        return Response.of_text(platform.system())

    def desktop_path(self, request: Request) -> Response:
        """``{"desktop_path"}``, 404 when the folder is missing."""
        path = os.path.expanduser("~/Desktop")
        if not os.path.isdir(path):
            raise HTTPError(404, f"{path} does not exist")
        return Response.of_json({"desktop_path": path})

    # -- a person's input (for --agent=human) ------------------------------------------------

    def input_start(self, request: Request) -> Response:
        """Start recording the X input; 409 when a recording runs. The first action's
        ``wait_before`` counts from this call."""
        try:
            self.input.start()
        except NoRecording as exc:
            raise HTTPError(409, str(exc)) from exc
        return Response.of_json({"status": "success"})

    def input_take(self, request: Request) -> Response:
        """``{"actions": [{"code", "wait_before"}], "pending": N}`` of the input since the
        last take (see :meth:`InputSession.take`; ``quiet`` in seconds); 409 when none runs."""
        fields = request.fields()
        quiet = number_field(fields, "quiet", 1.0) if "quiet" in fields else 0.0
        try:
            actions, pending = self.input.take(desktop.screen_size(), quiet)
        except NoRecording as exc:
            raise HTTPError(409, str(exc)) from exc
        return Response.of_json({"actions": [action.as_dict() for action in actions], "pending": pending})

    def input_stop(self, request: Request) -> Response:
        """Stop recording; the actions not taken yet, as ``/input/take``; 409 when none runs."""
        try:
            actions = self.input.stop(desktop.screen_size())
        except NoRecording as exc:
            raise HTTPError(409, str(exc)) from exc
        return Response.of_json({"actions": [action.as_dict() for action in actions]})

    # -- live view ---------------------------------------------------------------------------

    def vnc_upgrade_required(self, request: Request) -> Response:
        """``GET /vnc`` without the upgrade header: say how to ask for the VNC bridge."""
        raise HTTPError(426, f"GET /vnc bridges to the desktop's VNC server: send Upgrade: {VNC_UPGRADE}")

    def vnc_input(self, request: Request) -> Response:
        """Let the live view's input reach the desktop (a person takes over)."""
        self.vnc.allow_input()
        return Response.of_json({"status": "success", "input": True})
