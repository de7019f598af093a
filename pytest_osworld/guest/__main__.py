"""Command line of the guest server: ``python -m pytest_osworld.guest``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_osworld.guest.memory import keep_large_buffers
from pytest_osworld.guest.server import GuestApp
from pytest_osworld.guest.server_http import make_server, serve


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, bind the socket and serve until terminated."""
    parser = argparse.ArgumentParser(
        prog="python -m pytest_osworld.guest",
        description="OSWorld-compatible guest server with bearer-token authentication.",
    )
    parser.add_argument("--token-file", required=True, help="file holding the bearer token")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--unix-socket", help="serve on this unix socket path")
    where.add_argument("--port", type=int, help="serve on this TCP port")
    parser.add_argument("--host", default="127.0.0.1", help="TCP address (default loopback)")
    parser.add_argument("--verbose", action="store_true", help="log every request to stderr")
    args = parser.parse_args(argv)
    try:
        token = Path(args.token_file).read_text().strip()
    except OSError as exc:
        parser.error(f"cannot read --token-file: {exc}")
    if not token:
        parser.error(f"--token-file {args.token_file} is empty")
    keep_large_buffers()  # screenshots and uploads reuse their buffers (see guest/memory.py)
    app = GuestApp(token)
    server = make_server(app, unix_socket=args.unix_socket, host=args.host, port=args.port or 0)
    server.verbose = args.verbose  # type: ignore[attr-defined]
    where_text = args.unix_socket or f"{args.host}:{server.server_address[1]}"
    print(f"guest: serving on {where_text}", file=sys.stderr, flush=True)
    serve(app, server)
    return 0


if __name__ == "__main__":
    sys.exit(main())
