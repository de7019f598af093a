"""A stand-in for OSWorld's in-VM server, baked into the stand-in image of its VM.

OSWorld's image cannot be downloaded on our machines, so the Vagrant test of
``image=osworld`` boots a stand-in: our Debian box's disk with its desktop running at boot
and this server on port 5000. Like OSWorld's server it asks for no token and knows only
OSWorld's routes (anything else is a 404, as from Flask), so a client that relied on one
of our own routes (``/health``) would fail here. Each request is handed to the desktop's
guest server on its unix socket, with that server's token added.

    python standin_server.py --listen 0.0.0.0:5000 --socket /run/osworld/ctl/guest.sock \
        --token-file /etc/osworld/token

Standard library only: it runs on the image's interpreter.
"""

from __future__ import annotations

import argparse
import http.client
import socket
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

#: The routes of OSWorld's server (desktop_env/server/main.py), as OSWORLD-CONTRACT.md lists them.
OSWORLD_ROUTES = frozenset(
    {
        "/execute",
        "/setup/execute",
        "/execute_with_verification",
        "/setup/execute_with_verification",
        "/setup/launch",
        "/screenshot",
        "/terminal",
        "/accessibility",
        "/screen_size",
        "/window_size",
        "/desktop_path",
        "/wallpaper",
        "/list_directory",
        "/file",
        "/setup/upload",
        "/platform",
        "/cursor_position",
        "/setup/change_wallpaper",
        "/setup/download_file",
        "/setup/open_file",
        "/setup/activate_window",
        "/setup/close_window",
        "/start_recording",
        "/end_recording",
        "/run_python",
        "/run_bash_script",
    }
)
#: Request headers passed on (the rest describe this hop).
PASSED = ("content-type", "accept")


class UnixConnection(http.client.HTTPConnection):
    """HTTP over a unix socket."""

    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self.path = path

    def connect(self) -> None:
        """Connect to the unix socket."""
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.path)


def handler(socket_path: str, token: str) -> type[BaseHTTPRequestHandler]:
    """The request handler class for one guest socket and token."""

    class Relay(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _relay(self) -> None:
            route = self.path.split("?", 1)[0]
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            if route not in OSWORLD_ROUTES:
                self._answer(404, b"<!doctype html><title>404 Not Found</title>", "text/html")
                return
            headers = {k: v for k, v in self.headers.items() if k.lower() in PASSED}
            headers["Authorization"] = f"Bearer {token}"
            connection = UnixConnection(socket_path, timeout=1900)
            try:
                connection.request(self.command, self.path, body=body, headers=headers)
                reply = connection.getresponse()
                data = reply.read()
                self._answer(
                    reply.status, data, reply.getheader("Content-Type") or "application/octet-stream"
                )
            except OSError as exc:
                self._answer(502, f"guest unreachable: {exc}".encode(), "text/plain")
            finally:
                connection.close()

        def _answer(self, status: int, data: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = _relay

        def log_message(self, format: str, *args: object) -> None:
            """Quiet: the journal would fill with one line per screenshot."""

    return Relay


def main() -> None:
    """Serve until killed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--listen", default="0.0.0.0:5000")
    parser.add_argument("--socket", required=True)
    parser.add_argument("--token-file", required=True)
    args = parser.parse_args()
    host, _, port = args.listen.rpartition(":")
    token = Path(args.token_file).read_text().strip()
    server = ThreadingHTTPServer((host, int(port)), handler(args.socket, token))
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
