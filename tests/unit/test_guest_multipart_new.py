"""The guest's multipart parser: the fast split agrees with the standard library's MIME parser.

The fast path must give the same fields as :func:`parse_with_email` on every body it
takes, and leave every other body to it (never a different answer, never a crash).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_osworld.guest import server_multipart
from pytest_osworld.guest.server_multipart import (
    MultipartError,
    parse_multipart,
    parse_with_email,
    split_simple,
)

BOUNDARY = "b0undary-7f3a"
CONTENT_TYPE = f"multipart/form-data; boundary={BOUNDARY}"


def part(name: str | None, content: bytes, filename: str | None = None, extra: bytes = b"") -> bytes:
    """One part, as requests and our client write it (without its delimiter)."""
    disposition = b"Content-Disposition: form-data"
    if name is not None:
        disposition += f'; name="{name}"'.encode()
    if filename is not None:
        disposition += f'; filename="{filename}"'.encode()
    return disposition + b"\r\n" + extra + b"\r\n" + content


def body_of(*parts: bytes, boundary: str = BOUNDARY, preamble: bytes = b"", epilogue: bytes = b"") -> bytes:
    """Parts joined by delimiters, closed, with optional preamble and epilogue."""
    delimiter = b"--" + boundary.encode()
    out = preamble + (b"\r\n" if preamble else b"")
    for item in parts:
        out += delimiter + b"\r\n" + item + b"\r\n"
    return out + delimiter + b"--\r\n" + epilogue


def outcome(func: Any, body: bytes) -> Any:
    """The fields a parser gives, or the message of the error it raises."""
    try:
        return func(CONTENT_TYPE, body)
    except MultipartError as exc:
        return f"error: {exc}"


def fast_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the slow path fail loudly, to prove a body went through the fast one."""

    def refuse(content_type: str, body: bytes) -> dict[str, Any]:
        raise AssertionError("the body fell back to the email parser")

    monkeypatch.setattr(server_multipart, "parse_with_email", refuse)


def test_the_upload_our_client_sends_takes_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    data = bytes(range(256)) * 4096 + b"\r\n--boundary-like--\r\n"
    body = body_of(
        part("file_path", b"/tmp/blob.bin"),
        part("file_data", data, "blob.bin", b"Content-Type: application/octet-stream\r\n"),
    )
    fast_only(monkeypatch)
    fields = parse_multipart(CONTENT_TYPE, body)
    assert fields == {"file_path": "/tmp/blob.bin", "file_data": data}


def test_text_fields_are_decoded_and_files_stay_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    body = body_of(
        part("note", "h\u00e9llo \xff".encode("latin-1")),
        part("file_data", b"\xff\x00raw"),
        part("other", b"\xff\x00", "x.bin"),
        part(None, b"nameless"),
        part("note", b"second"),
    )
    fast_only(monkeypatch)
    fields = parse_multipart(f'multipart/form-data; boundary="{BOUNDARY}"', body)
    assert fields == {"note": "second", "file_data": b"\xff\x00raw", "other": b"\xff\x00"}
    assert fields == parse_with_email(CONTENT_TYPE, body) | {"note": "second"}


@pytest.mark.parametrize(
    ("label", "body"),
    [
        ("bare LF line ends", body_of(part("file_path", b"/x")).replace(b"\r\n", b"\n")),
        ("no closing delimiter", f"--{BOUNDARY}\r\n".encode() + part("file_path", b"/x") + b"\r\n"),
        (
            "base64 part",
            body_of(part("file_data", b"aGVsbG8=", "f", b"Content-Transfer-Encoding: base64\r\n")),
        ),
        ("delimiter followed by junk", body_of(part("a", b"1\r\n--" + BOUNDARY.encode() + b"junk"))),
        ("a part that is not headers", f"--{BOUNDARY}\r\nnot a part".encode()),
        ("no delimiter at all", b"just bytes"),
        ("no part at all", body_of()),
    ],
)
def test_odd_bodies_go_to_the_email_parser_and_get_its_answer(label: str, body: bytes) -> None:
    assert split_simple(BOUNDARY.encode(), body) is None, label
    assert outcome(parse_multipart, body) == outcome(parse_with_email, body)


def test_a_base64_part_is_decoded_like_the_email_parser_does() -> None:
    body = body_of(part("file_data", b"aGVsbG8=", "f", b"Content-Transfer-Encoding: base64\r\n"))
    assert parse_multipart(CONTENT_TYPE, body)["file_data"] == b"hello"


def test_a_body_without_a_boundary_is_not_multipart() -> None:
    with pytest.raises(MultipartError, match="malformed multipart body"):
        parse_multipart("multipart/form-data", b"junk")


names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=8)
contents = st.binary(max_size=300) | st.sampled_from(
    [b"\r\n", b"--", b"\r\n--" + BOUNDARY.encode() + b"x", b"\r\n\r\n", b"\r\n--"]
).flatmap(lambda tricky: st.binary(max_size=20).map(lambda tail: tricky + tail))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    parts=st.lists(
        st.tuples(st.none() | names, contents, st.none() | names, st.booleans()),
        max_size=5,
    ),
    preamble=st.sampled_from([b"", b"preamble text"]),
    epilogue=st.sampled_from([b"", b"epilogue\r\n"]),
)
def test_fast_and_email_parsers_agree_on_generated_bodies(
    parts: list[tuple[str | None, bytes, str | None, bool]], preamble: bytes, epilogue: bytes
) -> None:
    built = [
        part(name, content, filename, b"Content-Type: application/octet-stream\r\n" if typed else b"")
        for name, content, filename, typed in parts
    ]
    body = body_of(*built, preamble=preamble, epilogue=epilogue)
    assert outcome(parse_multipart, body) == outcome(parse_with_email, body)


def test_a_large_file_is_split_much_faster_than_the_email_parser_reads_it() -> None:
    """Relative, so a loaded machine cannot fail it: the fast path does far less work."""
    boundary = uuid.uuid4().hex
    data = bytes(range(256)) * 4096 * 4
    body = body_of(part("file_path", b"/tmp/x"), part("file_data", data, "x"), boundary=boundary)
    content_type = f"multipart/form-data; boundary={boundary}"

    def best(func: Any) -> float:
        times = []
        for _ in range(3):
            start = time.perf_counter()
            assert func(content_type, body)["file_data"] == data
            times.append(time.perf_counter() - start)
        return min(times)

    assert best(parse_multipart) * 5 < best(parse_with_email)


# -- part headers without the email parser -------------------------------------------------------

header_name = st.sampled_from(["Content-Disposition", "content-disposition", "CONTENT-DISPOSITION"])
param_value = st.sampled_from(
    ["file_path", "file_data", "a b", "", "x;y", "é", 'q"x', "back\\slash", "tab\tx"]
)


@st.composite
def part_headers(draw: st.DrawFn) -> bytes:
    """Header blocks in the shapes clients write, and a few they should not."""
    params = []
    for key in draw(st.lists(st.sampled_from(["name", "filename", "NAME", "filename*", "size"]), max_size=3)):
        value = draw(param_value)
        quoted = draw(st.booleans()) or not value.isidentifier()
        text = f'"{value}"' if quoted else value
        if key == "filename*":
            text = f"UTF-8''{value}"
        params.append(f"{draw(st.sampled_from(['; ', ';', ' ; ']))}{key}={text}")
    lines = [f"{draw(header_name)}:{draw(st.sampled_from([' ', '', '  ']))}form-data{''.join(params)}"]
    if draw(st.booleans()):
        lines.append(
            f"Content-Type: application/octet-stream{draw(st.sampled_from(['', '; name=n.bin', '; charset=utf-8']))}"
        )
    if draw(st.booleans()):
        lines.append(
            f"Content-Transfer-Encoding: {draw(st.sampled_from(['binary', '8bit', 'BINARY', 'base64']))}"
        )
    if draw(st.booleans()):
        lines.append(
            draw(st.sampled_from(["X-Extra: 1", "X Bad: 2", " folded", "Content-Disposition: inline"]))
        )
    return "\r\n".join(draw(st.permutations(lines))).encode("utf-8")


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(heads=st.lists(part_headers(), min_size=1, max_size=3), content=st.binary(max_size=40))
def test_parts_with_generated_headers_read_like_the_email_parser_reads_them(
    heads: list[bytes], content: bytes
) -> None:
    body = body_of(*(head + b"\r\n\r\n" + content for head in heads))
    assert outcome(parse_multipart, body) == outcome(parse_with_email, body)


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b'Content-Disposition: form-data; name="file_path"', ("file_path", False)),
        (
            b'Content-Disposition: form-data; name="file_data"; filename="blob.bin"\r\n'
            b"Content-Type: application/octet-stream",
            ("file_data", True),
        ),
        (b"content-disposition: form-data; name=note\r\ncontent-type: text/plain; name=x", ("note", True)),
        (b"", (None, False)),
        (b"Content-Disposition: form-data; filename*=UTF-8''x.txt; name=a", None),
        (b'Content-Disposition: form-data; name="a\\"b"', None),
        (b"Content-Disposition: form-data; name=a\r\nContent-Disposition: form-data; name=b", None),
        (b"Content-Disposition: form-data; name=a\r\nContent-Transfer-Encoding: base64", None),
        ('Content-Disposition: form-data; name="\u00e9"'.encode(), None),
    ],
)
def test_plain_headers_are_read_directly_and_the_rest_is_left_to_email(
    head: bytes, expected: tuple[str | None, bool] | None
) -> None:
    assert server_multipart.plain_part_headers(head) == expected


def test_the_upload_osworld_sends_through_requests_takes_the_fast_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """OSWorld's controller posts ``files=`` and ``data=`` with requests, i.e. urllib3's encoder."""
    filepost = pytest.importorskip("urllib3.filepost")
    data = bytes(range(256)) * 1024
    body, content_type = filepost.encode_multipart_formdata(
        {"file_path": "/home/user/Desktop/é.xlsx", "file_data": ("é.xlsx", data)}
    )
    fast_only(monkeypatch)
    assert parse_multipart(content_type, body) == {
        "file_path": "/home/user/Desktop/é.xlsx",
        "file_data": data,
    }
