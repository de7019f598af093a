"""``multipart/form-data`` bodies of the guest server (``/setup/upload``, form posts).

Owns :func:`parse_multipart`. A well-formed body (CRLF line ends, a closing delimiter,
parts without a content transfer encoding: what ``requests``, ``urllib3`` and our own
client send) is split with ``bytes.find`` on the delimiter, so a file part costs one
slice however large it is; only each part's few header lines go through :mod:`email`.
Anything else (bare LF line ends, a missing closing delimiter, base64 or
quoted-printable parts, stray bytes after a delimiter) is handed to the standard
library's MIME parser as a whole, which accepts more and is about a hundred times
slower on a large file. Both give the same fields for every body the fast path takes.
"""

from __future__ import annotations

import email.message
import email.parser
import email.policy
import re
from typing import Any

#: Content transfer encodings under which a part's bytes are its content as sent.
_IDENTITY_ENCODINGS = frozenset({"", "7bit", "8bit", "binary"})

_HEADERS = email.parser.BytesHeaderParser(policy=email.policy.HTTP)

# The plain shape of a part's headers, read without :mod:`email` (whose structured header
# parsing costs about a millisecond per part). ``*`` is left out of tokens so that
# RFC 2231 parameters (``filename*=UTF-8''...``) go to the email parser.
_TOKEN = r"[!#$%&'+.^_`|~0-9A-Za-z-]+"
_HEADER_NAME = re.compile(r"[!-9;-~]+")
_VALUE_HEAD = re.compile(rf"[ \t]*({_TOKEN}(?:/{_TOKEN})?)[ \t]*")
_PARAM = re.compile(rf"[ \t]*;[ \t]*({_TOKEN})=(?:\"([^\"\\\r\n]*)\"|({_TOKEN}))[ \t]*")


class MultipartError(ValueError):
    """The body is not multipart at all (no boundary, or not a MIME multipart message)."""


def parse_multipart(content_type: str, body: bytes) -> dict[str, Any]:
    """Fields of a ``multipart/form-data`` body by name; file parts (and ``file_data``) as bytes.

    A part with a filename, or named ``file_data``, keeps its bytes; any other part is
    text (UTF-8, undecodable bytes replaced). A part without a name is skipped; a name
    given twice keeps its last part. Raises :class:`MultipartError` when the body is not
    multipart at all.
    """
    boundary = _boundary(content_type)
    if boundary is not None:
        fields = split_simple(boundary, body)
        if fields is not None:
            return fields
    return parse_with_email(content_type, body)


def _boundary(content_type: str) -> bytes | None:
    """The boundary parameter of a content type (quoted or not), or None."""
    header = email.message.Message()
    header["Content-Type"] = content_type
    value = header.get_param("boundary")
    if not isinstance(value, str) or not 0 < len(value) <= 200:
        return None
    try:
        return value.encode("ascii")
    except UnicodeEncodeError:
        return None


def split_simple(boundary: bytes, body: bytes) -> dict[str, Any] | None:
    """The fields of a well-formed body, or None when the body needs the full MIME parser."""
    delimiter = b"--" + boundary
    separator = b"\r\n" + delimiter
    if body.startswith(delimiter):
        first = 0
    else:
        found = body.find(separator)
        if found < 0:
            return None
        first = found + 2
    pos = first
    fields: dict[str, Any] = {}
    while True:
        pos += len(delimiter)
        if body.startswith(b"--", pos):
            # The closing delimiter (an epilogue after it is ignored). A body without a
            # single part is not multipart to the email parser: let it say so.
            return fields if pos > len(delimiter) + first else None
        line_end = body.find(b"\r\n", pos)
        if line_end < 0 or body[pos:line_end].strip(b" \t"):
            return None
        head_start = line_end + 2
        if body.startswith(b"\r\n", head_start):
            head_end = content_start = head_start
            content_start += 2
        else:
            head_end = body.find(b"\r\n\r\n", head_start)
            if head_end < 0:
                return None
            content_start = head_end + 4
        content_end = body.find(separator, content_start)
        if content_end < 0:
            return None
        if not _add_part(fields, body[head_start:head_end], body, content_start, content_end):
            return None
        pos = content_end + 2


def _add_part(fields: dict[str, Any], head: bytes, body: bytes, start: int, end: int) -> bool:
    """Add one part's field; False when its headers need the full MIME parser."""
    plain = plain_part_headers(head)
    if plain is not None:
        name, has_filename = plain
    else:
        headers = _HEADERS.parsebytes(head + b"\r\n\r\n")
        encoding = str(headers.get("content-transfer-encoding", "")).strip().lower()
        if headers.defects or encoding not in _IDENTITY_ENCODINGS:
            return False
        found = headers.get_param("name", header="content-disposition")
        name = found if isinstance(found, str) else None
        has_filename = headers.get_filename() is not None
    if name is None:
        return True
    data = body[start:end]
    if not has_filename and name != "file_data":
        fields[name] = data.decode("utf-8", "replace")
    else:
        fields[name] = data
    return True


def plain_part_headers(head: bytes) -> tuple[str | None, bool] | None:
    """``(name, has a filename)`` of a part's headers in their plain shape, else None.

    Plain: ASCII ``Name: value`` lines, each header once, parameters as tokens or quoted
    strings without escapes, no RFC 2231 parameters, an identity transfer encoding. The
    filename is Content-Disposition's ``filename``, else Content-Type's ``name`` (as
    :meth:`email.message.Message.get_filename` reads it).
    """
    try:
        text = head.decode("ascii")
    except UnicodeDecodeError:
        return None
    headers: dict[str, str] = {}
    for line in text.split("\r\n") if text else ():
        key, colon, value = line.partition(":")
        if not colon or not _HEADER_NAME.fullmatch(key) or key.lower() in headers:
            return None
        headers[key.lower()] = value
    encoding = headers.get("content-transfer-encoding")
    if encoding is not None and encoding.strip().lower() not in _IDENTITY_ENCODINGS:
        return None
    disposition = _params(headers.get("content-disposition", ""))
    content_type = _params(headers.get("content-type", ""))
    if disposition is None or content_type is None:
        return None
    filename = disposition.get("filename", content_type.get("name"))
    return disposition.get("name"), filename is not None


def _params(value: str) -> dict[str, str] | None:
    """The parameters of a header value (lower-case names), {} for none, None if not plain."""
    if not value:
        return {}
    head = _VALUE_HEAD.match(value)
    if head is None:
        return None
    params: dict[str, str] = {}
    pos = head.end()
    while pos < len(value):
        param = _PARAM.match(value, pos)
        if param is None:
            return None
        key = param.group(1).lower()
        if key in params:
            return None
        params[key] = param.group(2) if param.group(2) is not None else param.group(3)
        pos = param.end()
    return params


def parse_with_email(content_type: str, body: bytes) -> dict[str, Any]:
    """The fields as the standard library's MIME parser reads the whole body (any shape)."""
    parser = email.parser.BytesParser(policy=email.policy.HTTP)
    message = parser.parsebytes(b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + body)
    if not message.is_multipart():
        raise MultipartError("malformed multipart body")
    result: dict[str, Any] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not isinstance(name, str):
            continue
        payload = part.get_payload(decode=True)
        data = payload if isinstance(payload, bytes) else b""
        if part.get_filename() is None and name != "file_data":
            result[name] = data.decode("utf-8", "replace")
        else:
            result[name] = data
    return result
