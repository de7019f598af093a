"""Requests, responses and argument checks of the guest server (no I/O, no routes).

Owns :class:`Request` (a parsed HTTP request and its body as JSON, form or multipart
fields), :class:`Response`, :class:`HTTPError` (a failure that becomes a status with a
JSON reason), the field readers every route uses to validate its arguments, and the
normalisation of ``/execute`` commands (:func:`command_argv`, :func:`pyautogui_snippet`).
"""

from __future__ import annotations

import json
import math
import os
import shlex
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from pytest_osworld.guest import server_multipart


class HTTPError(Exception):
    """A request that cannot be served: turned into ``status`` with a JSON reason."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass
class Request:
    """One parsed HTTP request."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes = b""

    def content_type(self) -> str:
        """The media type without parameters, lower-case."""
        return self.headers.get("content-type", "").split(";")[0].strip().lower()

    def json(self) -> dict[str, Any]:
        """The body as a JSON object (400 when it is not one)."""
        if not self.body:
            return {}
        try:
            value = json.loads(self.body)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise HTTPError(400, f"body is not valid JSON: {exc}") from exc
        if not isinstance(value, dict):
            raise HTTPError(400, "JSON body must be an object")
        return value

    def fields(self) -> dict[str, Any]:
        """Form fields (urlencoded or multipart; file parts as bytes) or JSON keys."""
        kind = self.content_type()
        if kind == "application/json":
            return self.json()
        if kind == "multipart/form-data":
            return parse_multipart(self.headers.get("content-type", ""), self.body)
        if kind in ("application/x-www-form-urlencoded", ""):
            try:
                text = self.body.decode()
            except UnicodeDecodeError as exc:
                raise HTTPError(400, "form body is not UTF-8") from exc
            if text.lstrip().startswith("{"):
                return self.json()
            return {k: v[-1] for k, v in urllib.parse.parse_qs(text).items()}
        raise HTTPError(415, f"unsupported content type {kind!r}")


@dataclass
class Response:
    """What a route returns: status, body and its media type."""

    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of_json(cls, value: Any, status: int = 200) -> Response:
        """A JSON response."""
        return cls(status, json.dumps(value).encode())

    @classmethod
    def of_text(cls, text: str, status: int = 200) -> Response:
        """A plain-text response."""
        return cls(status, text.encode(), "text/plain; charset=utf-8")


def parse_multipart(content_type: str, body: bytes) -> dict[str, Any]:
    """Fields of a ``multipart/form-data`` body: file parts (and ``file_data``) as bytes.

    See :mod:`pytest_osworld.guest.server_multipart`; a body that is not multipart is a 400.
    """
    try:
        return server_multipart.parse_multipart(content_type, body)
    except server_multipart.MultipartError as exc:
        raise HTTPError(400, str(exc)) from exc


def str_field(fields: dict[str, Any], key: str, *, required: bool = True) -> str:
    """A text field without NUL bytes (bytes are decoded); 400 when missing and ``required``."""
    value = fields.get(key)
    if value is None or value == "":
        if required:
            raise HTTPError(400, f"missing field {key!r}")
        return ""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if not isinstance(value, str):
        raise HTTPError(400, f"field {key!r} must be a string")
    if "\x00" in value:
        raise HTTPError(400, f"field {key!r} contains a NUL byte")
    return value


def bool_field(fields: dict[str, Any], key: str) -> bool:
    """``true``/``false`` (OSWorld also sends the strings ``"true"``/``"false"``, and 0/1)."""
    value = fields.get(key, False)
    if value is None:
        return False
    if isinstance(value, str):
        return value.lower() in ("1", "true", "yes")
    if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return bool(value)
    raise HTTPError(400, f"field {key!r} must be true or false")


def number_field(fields: dict[str, Any], key: str, default: float) -> float:
    """A positive, finite number of seconds (JSON ``NaN``/``Infinity`` and booleans are refused)."""
    value = fields.get(key, default)
    if isinstance(value, bool):
        raise HTTPError(400, f"field {key!r} must be a number")
    try:
        number = float(value)
    except (TypeError, ValueError) as exc:
        raise HTTPError(400, f"field {key!r} must be a number") from exc
    if not math.isfinite(number):
        raise HTTPError(400, f"field {key!r} must be a finite number")
    if number <= 0:
        raise HTTPError(400, f"field {key!r} must be positive")
    return number


def expand_path(path: str) -> str:
    """``~`` and ``$VAR`` expanded, as OSWorld's server does for file paths."""
    return os.path.expanduser(os.path.expandvars(path))


def command_argv(command: Any, shell: bool) -> list[str] | str:
    """Normalise an ``/execute`` command: a list, or one string for the shell.

    A string without ``shell`` is split like a shell would; arguments starting with
    ``~/`` are expanded (OSWorld does the same).
    """
    if isinstance(command, str):
        if "\x00" in command:
            raise HTTPError(400, "'command' contains a NUL byte")
        if shell:
            return command
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise HTTPError(400, f"cannot split command: {exc}") from exc
    elif isinstance(command, list) and all(isinstance(arg, str) for arg in command):
        if any("\x00" in arg for arg in command):
            raise HTTPError(400, "'command' contains a NUL byte")
        if shell:
            return " ".join(command)
        argv = list(command)
    else:
        raise HTTPError(400, "'command' must be a string or a list of strings")
    if not argv:
        raise HTTPError(400, "'command' is empty")
    return [os.path.expanduser(arg) if arg.startswith("~") else arg for arg in argv]


def pyautogui_snippet(argv: list[str] | str) -> str | None:
    """The code of ``python -c "import pyautogui..."``, which runs in the worker instead."""
    if isinstance(argv, str) or len(argv) != 3 or argv[1] != "-c":
        return None
    if os.path.basename(argv[0]) not in ("python", "python3"):
        return None
    code = argv[2]
    return code if code.lstrip().startswith("import pyautogui") else None
