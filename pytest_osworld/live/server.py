"""One desktop's live view on the host's loopback: the page, noVNC and the VNC bridge.

:class:`LiveServer` listens on ``127.0.0.1`` only, on a port of its own, and serves:

- ``/``: the live page (:data:`PAGE`): the desktop in noVNC, the task it runs, and the
  buttons a person needs (take over; Done, Fail, Infeasible when the person is the agent);
- ``/novnc/...``: Debian's noVNC (``/usr/share/novnc``), unchanged;
- ``/vnc``: a WebSocket whose binary messages are relayed to and from the desktop's VNC
  server (x11vnc, reached through the guest server: :meth:`GuestClient.open_vnc`), the
  part websockify plays elsewhere;
- ``/events``: a WebSocket of JSON messages: the page's state out, the person's clicks in.

Every request needs the view's secret: ``?s=<secret>`` on the page's link, which the page
turns into a cookie scoped to this port, so noVNC's own requests carry it. A wrong or
missing secret gets 403 and nothing else; a request whose ``Host`` or ``Origin`` is not
this loopback address is refused too (no DNS rebinding, no cross-site WebSocket). The
server knows nothing of pytest: what a take-over or a verdict does is a callback.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import mimetypes
import secrets
import socket
import threading
import urllib.parse
from collections.abc import Callable
from http.cookies import SimpleCookie
from importlib import resources
from pathlib import Path
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

#: Where Debian's ``novnc`` package puts noVNC.
NOVNC_DIR = Path("/usr/share/novnc")
#: The person's verdicts a page may send, and what the agent ends with.
VERDICTS = ("DONE", "FAIL", "INFEASIBLE")
#: The live page's template (``{label}`` is filled in; the rest is static).
PAGE = "page.html"


class LiveServer:
    """The live view of one desktop, served on ``127.0.0.1:<port>`` behind a secret."""

    def __init__(self, label: str, novnc_dir: Path = NOVNC_DIR) -> None:
        if not (novnc_dir / "vnc.html").is_file():
            raise FileNotFoundError(
                f"noVNC is not installed ({novnc_dir / 'vnc.html'} is missing): "
                "install Debian's novnc package (scripts/install.sh does)"
            )
        self.label = label
        self.secret = secrets.token_urlsafe(24)
        self.novnc_dir = novnc_dir.resolve()
        self.port = 0
        #: Opens a connection to the desktop's VNC server (the socket and the bytes already
        #: read; blocking, run in a thread), or None while no desktop runs.
        self.connect_vnc: Callable[[], tuple[socket.socket, bytes]] | None = None
        #: Called (in the server's thread) when the person asks to take over the desktop.
        self.on_take_over: Callable[[], None] | None = None
        #: Called with a verdict of :data:`VERDICTS` when the person ends a task.
        self.on_verdict: Callable[[str], None] | None = None
        self._state: dict[str, Any] = {
            "label": label,
            "mode": "view",
            "task": None,
            "take_over": True,
            "verdicts": False,
        }
        self._watchers: set[ServerConnection] = set()
        self._loop = asyncio.new_event_loop()
        self._server: Server | None = None
        self._thread: threading.Thread | None = None
        self._page = resources.files("pytest_osworld.live").joinpath(PAGE).read_text(encoding="utf-8")

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Bind a free loopback port and serve in a daemon thread."""
        ready = threading.Event()
        failure: list[BaseException] = []

        async def listen() -> Server:
            return await serve(
                self._websocket,
                "127.0.0.1",
                0,
                process_request=self._process_request,
                select_subprotocol=_binary_if_offered,
                max_size=2**22,
                compression=None,
            )

        def run() -> None:
            asyncio.set_event_loop(self._loop)
            try:
                self._server = self._loop.run_until_complete(listen())
                self.port = int(next(iter(self._server.sockets)).getsockname()[1])
            except BaseException as exc:
                failure.append(exc)
                return
            finally:
                ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, name=f"osworld-live-{self.label}", daemon=True)
        self._thread.start()
        if not ready.wait(10.0):
            raise RuntimeError("the live view's server did not start within 10 s")
        if failure:
            raise RuntimeError(f"the live view's server did not start: {failure[0]}") from failure[0]

    def close(self) -> None:
        """Stop serving and drop every connection."""
        server = self._server
        if server is None:
            return
        self._server = None

        async def shut() -> None:
            server.close()
            await server.wait_closed()

        with contextlib.suppress(RuntimeError):
            asyncio.run_coroutine_threadsafe(shut(), self._loop).result(timeout=5.0)
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=5.0)

    @property
    def url(self) -> str:
        """The link a person opens: the page, already connected, the secret in it."""
        return f"http://127.0.0.1:{self.port}/?s={self.secret}"

    @property
    def address(self) -> str:
        """The view's address without its secret (safe to write into reports)."""
        return f"http://127.0.0.1:{self.port}/"

    # -- state shown on the page -------------------------------------------------------------

    @property
    def mode(self) -> str:
        """``view`` (input is not passed on) or ``control`` (the person's input reaches the desktop)."""
        return str(self._state["mode"])

    def update(self, **changes: Any) -> None:
        """Change what the page shows (``task``, ``mode``, ``verdicts``, ``problem``) and tell every page."""
        self._state.update(changes)
        if self._server is not None:
            asyncio.run_coroutine_threadsafe(self._broadcast(), self._loop)

    async def _broadcast(self) -> None:
        message = json.dumps(self._state)
        for watcher in list(self._watchers):
            with contextlib.suppress(ConnectionClosed):
                await watcher.send(message)

    # -- HTTP --------------------------------------------------------------------------------

    def _authorized(self, request: Request) -> bool:
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(request.path).query)
        offered = query.get("s", [""])[0]
        if not offered:
            cookie = SimpleCookie(request.headers.get("Cookie", ""))
            morsel = cookie.get(self.cookie_name)
            offered = morsel.value if morsel is not None else ""
        return bool(offered) and hmac.compare_digest(offered.encode(), self.secret.encode())

    @property
    def cookie_name(self) -> str:
        """The cookie that carries the secret: one per port (cookies ignore ports)."""
        return f"osworld_live_{self.port}"

    def _same_origin(self, request: Request) -> bool:
        hosts = {f"127.0.0.1:{self.port}", f"localhost:{self.port}"}
        if request.headers.get("Host", "") not in hosts:
            return False
        origin = request.headers.get("Origin")
        return origin is None or origin in {f"http://{host}" for host in hosts}

    def _process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        if not self._same_origin(request):
            return _plain(
                connection,
                403,
                "wrong Host or Origin: the live view answers on its own loopback address only",
            )
        if not self._authorized(request):
            return _plain(connection, 403, "this live view needs its secret: open the link pytest printed")
        path = urllib.parse.urlsplit(request.path).path
        if path in ("/vnc", "/events"):
            return None  # the WebSocket handshake goes on
        if path == "/":
            page = self._page.replace("{label}", self.label)
            response = _plain(connection, 200, page, "text/html; charset=utf-8")
            _set(
                response, "Set-Cookie", f"{self.cookie_name}={self.secret}; Path=/; HttpOnly; SameSite=Strict"
            )
            _set(response, "Cache-Control", "no-store")
            _set(response, "Referrer-Policy", "no-referrer")
            return response
        if path.startswith("/novnc/"):
            return self._static(connection, path[len("/novnc/") :])
        return _plain(connection, 404, "no such page")

    def _static(self, connection: ServerConnection, relative: str) -> Response:
        """A file of noVNC's folder; nothing outside it."""
        candidate = (self.novnc_dir / urllib.parse.unquote(relative)).resolve()
        if not candidate.is_relative_to(self.novnc_dir) or not candidate.is_file():
            return _plain(connection, 404, "no such file")
        kind = mimetypes.guess_type(candidate.name)[0] or "application/octet-stream"
        if candidate.suffix == ".js":
            kind = "text/javascript"
        response = _plain(connection, 200, "", kind)
        response.body = candidate.read_bytes()
        _set(response, "Content-Length", str(len(response.body)))
        return response

    # -- WebSockets --------------------------------------------------------------------------

    async def _websocket(self, connection: ServerConnection) -> None:
        path = urllib.parse.urlsplit(connection.request.path if connection.request else "/").path
        if path == "/vnc":
            await self._relay(connection)
        else:
            await self._events(connection)

    async def _relay(self, connection: ServerConnection) -> None:
        """Bytes between the browser and the desktop's VNC server, until either side ends."""
        connect = self.connect_vnc
        if connect is None:
            await connection.close(1013, "no desktop is running right now")
            return
        try:
            sock, first = await asyncio.to_thread(connect)
        except Exception as exc:  # the guest's error, whatever it is, goes to the page
            reason = f"the desktop's VNC server: {exc}".encode()[:120].decode("utf-8", "ignore")
            await connection.close(1013, reason)
            return
        sock.setblocking(False)
        reader, writer = await asyncio.open_connection(sock=sock)
        if first:
            await connection.send(first)

        async def upstream() -> None:
            async for message in connection:
                writer.write(message if isinstance(message, bytes) else message.encode())
                await writer.drain()

        async def downstream() -> None:
            while data := await reader.read(1 << 16):
                await connection.send(data)

        tasks = [asyncio.ensure_future(upstream()), asyncio.ensure_future(downstream())]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            writer.close()
            with contextlib.suppress(OSError, ConnectionClosed):
                await connection.close()

    async def _events(self, connection: ServerConnection) -> None:
        """The page's channel: state out, ``take_over`` and ``verdict`` in."""
        self._watchers.add(connection)
        try:
            await connection.send(json.dumps(self._state))
            async for message in connection:
                await self._on_message(message)
        except ConnectionClosed:
            pass
        finally:
            self._watchers.discard(connection)

    async def _on_message(self, message: str | bytes) -> None:
        try:
            data = json.loads(message)
        except (ValueError, TypeError):
            return
        if not isinstance(data, dict):
            return
        if data.get("action") == "take_over" and self.on_take_over is not None:
            try:
                await asyncio.to_thread(self.on_take_over)
            except Exception as exc:  # the desktop's answer, whatever it is, goes to the page
                self.update(problem=f"could not take over: {exc}"[:300])
        elif (
            data.get("action") == "verdict"
            and data.get("verdict") in VERDICTS
            and self._state.get("verdicts")
            and self.on_verdict is not None
        ):
            self.on_verdict(str(data["verdict"]))


def _plain(
    connection: ServerConnection, status: int, text: str, kind: str = "text/plain; charset=utf-8"
) -> Response:
    response = connection.respond(status, text)
    _set(response, "Content-Type", kind)
    _set(response, "X-Content-Type-Options", "nosniff")
    return response


def _set(response: Response, name: str, value: str) -> None:
    """Set one header (the headers are a multi-map: replace, never add a second value)."""
    if name in response.headers:
        del response.headers[name]
    response.headers[name] = value


def _binary_if_offered(connection: ServerConnection, offered: Any) -> Any:
    """Accept noVNC with or without its ``binary`` subprotocol."""
    return "binary" if "binary" in offered else None
