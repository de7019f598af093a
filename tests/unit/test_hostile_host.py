"""Hostile input on the host: names that try to leave their folder, archives, XML bombs, huge answers.

Every case asserts the typed rejection and its message, and that nothing was written
outside the folder the input was meant to stay in (each test works in its own
``tmp_path``, with a ``sandbox`` subfolder as the target and the rest as "outside").
"""

from __future__ import annotations

import contextlib
import http.server
import io
import json
import os
import tarfile
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_osworld.agent.observe import MAX_TREE_CHARS, filter_nodes
from pytest_osworld.errors import EnvironmentFailure, GetterError, GuestError, TaskFileError
from pytest_osworld.evaluators.getters import GETTERS
from pytest_osworld.evaluators.metrics import chrome as chrome_metrics
from pytest_osworld.evaluators.metrics.chrome import _safe_extract, compare_archive
from pytest_osworld.evaluators.metrics.general import check_accessibility_tree
from pytest_osworld.guest_client.client import GuestClient
from pytest_osworld.providers.fake import FakeGuest
from pytest_osworld.report.results import MAX_COMPONENT, TaskRecorder, safe_component
from pytest_osworld.setup_steps.basic import execute_step
from pytest_osworld.task.assets import AssetCache, AssetError, AssetTooLarge
from pytest_osworld.task.context import TaskContext
from pytest_osworld.task.model import load_task, parse_task
from pytest_osworld.task.paths import MAX_NAME_BYTES, contained_path

SECRET = "TOP-SECRET-HOST-FILE"


def files_outside(tmp_path: Path, sandbox: Path) -> list[str]:
    """Every file or link under ``tmp_path`` outside ``sandbox`` (the test's own inputs aside)."""
    found = []
    for folder, dirs, files in os.walk(tmp_path):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            path = Path(folder, name)
            if path.is_relative_to(sandbox) or path.is_relative_to(tmp_path / "inputs"):
                continue
            if path.name not in ("secret.txt", "task.json"):
                found.append(str(path.relative_to(tmp_path)))
    return sorted(found)


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    folder = tmp_path / "inputs" / "b" / "sandbox"
    folder.mkdir(parents=True)
    (tmp_path / "secret.txt").write_text(SECRET)
    return folder


# -- names from task files: dest, stdout, cache paths -----------------------------------------

HOSTILE_NAMES: list[tuple[object, str]] = [
    ("../escaped.txt", "escapes the folder"),
    ("../../../escaped.txt", "escapes the folder"),
    ("sub/../../escaped.txt", "escapes the folder"),
    ("/tmp/escaped.txt", "is an absolute path"),
    ("//etc/passwd", "is an absolute path"),
    ("a\x00b.txt", "contains a NUL byte"),
    ("x" * 300, f"longer than {MAX_NAME_BYTES} bytes"),
    ("d/" + "é" * 200, f"longer than {MAX_NAME_BYTES} bytes"),
    ("", "is empty"),
    ("   ", "is empty"),
    (".", "escapes the folder"),
    ("sub/..", "escapes the folder"),
    (5, "is not a string"),
    (["a.txt"], "is not a string"),
    (None, "is not a string"),
]


@pytest.mark.parametrize(("name", "problem"), HOSTILE_NAMES)
def test_contained_path_refuses_names_that_leave_the_folder(
    sandbox: Path, name: object, problem: str
) -> None:
    with pytest.raises(GetterError) as info:
        contained_path(sandbox, name, what="vm_file dest", error=GetterError)
    message = str(info.value)
    assert message.startswith("vm_file dest ")
    assert problem in message
    assert f"give a relative file name inside {sandbox}" in message


def test_contained_path_refuses_a_symlink_that_points_out(tmp_path: Path, sandbox: Path) -> None:
    (sandbox / "link").symlink_to(tmp_path)
    with pytest.raises(GetterError, match="escapes the folder"):
        contained_path(sandbox, "link/escaped.txt", what="dest", error=GetterError)


@pytest.mark.parametrize(
    "name",
    [
        "result.xlsx",
        "sub/dir/file.txt",
        "./x.txt",
        "sub/../x.txt",
        "\u202egpj.exe",
        "ﬁle名前.docx",
        "a..b",
        "..x",
    ],
)
def test_contained_path_keeps_ordinary_and_unicode_names_inside(sandbox: Path, name: str) -> None:
    target = contained_path(sandbox, name, what="dest", error=GetterError)
    assert target.is_relative_to(sandbox.resolve()) and target != sandbox.resolve()


def _task(tmp_path: Path) -> Any:
    data = {"id": "t1", "instruction": "do it", "evaluator": {"func": "exact_match"}}
    return parse_task(data, tmp_path / "task.json", "0" * 64, "os")


def _ctx(tmp_path: Path, work: Path, files: dict[str, bytes] | None = None) -> TaskContext:
    guest = FakeGuest(files or {"/home/user/x.txt": b"payload"})
    return TaskContext(_task(tmp_path), guest, AssetCache(tmp_path / "cache", offline=True), work)  # type: ignore[arg-type]


@pytest.mark.parametrize(("dest", "problem"), [(n, p) for n, p in HOSTILE_NAMES if not isinstance(n, list)])
def test_vm_file_refuses_a_hostile_dest_and_writes_nothing(
    tmp_path: Path, sandbox: Path, dest: object, problem: str
) -> None:
    ctx = _ctx(tmp_path, sandbox)
    with pytest.raises(GetterError, match="dest") as info:
        GETTERS.get("vm_file")(ctx, {"path": "/home/user/x.txt", "dest": dest})
    assert problem in str(info.value)
    assert files_outside(tmp_path, sandbox) == []
    assert list(sandbox.iterdir()) == []


@pytest.mark.parametrize(
    ("getter", "config"),
    [
        ("vm_wallpaper", {"dest": "../wall.png"}),
        ("cache_file", {"path": "../../secret.txt"}),
        ("vlc_config", {"dest": "/tmp/vlcrc"}),
        ("gimp_config_file", {"file_name": "gimprc", "dest": "../gimprc"}),
    ],
)
def test_other_getters_that_write_files_refuse_escaping_names(
    tmp_path: Path, sandbox: Path, getter: str, config: dict[str, Any]
) -> None:
    files = {"/home/user/.config/GIMP/2.10/gimprc": b"x", "/home/user/.config/vlc/vlcrc": b"x"}
    ctx = _ctx(tmp_path, sandbox, files)
    with pytest.raises(GetterError, match=r"escapes the folder|is an absolute path"):
        GETTERS.get(getter)(ctx, config)
    assert files_outside(tmp_path, sandbox) == []


def test_cache_file_names_the_problem_with_the_work_folder_itself(tmp_path: Path, sandbox: Path) -> None:
    """``.`` is the work folder, not a file a postconfig wrote: the message says so."""
    ctx = _ctx(tmp_path, sandbox)
    with pytest.raises(GetterError, match=r"cache_file path '\.' escapes the folder"):
        GETTERS.get("cache_file")(ctx, {"path": "."})


def test_vm_file_with_an_ordinary_dest_still_works(tmp_path: Path, sandbox: Path) -> None:
    ctx = _ctx(tmp_path, sandbox)
    got = GETTERS.get("vm_file")(ctx, {"path": "/home/user/x.txt", "dest": "out/x.txt"})
    assert got == (sandbox / "out" / "x.txt").resolve() and got.read_bytes() == b"payload"


@pytest.mark.parametrize(
    ("name", "problem"), [(n, p) for n, p in HOSTILE_NAMES if isinstance(n, str) and n.strip()]
)
def test_execute_step_output_files_stay_in_the_work_folder(
    tmp_path: Path, sandbox: Path, name: str, problem: str
) -> None:
    ctx = _ctx(tmp_path, sandbox)
    with pytest.raises(EnvironmentFailure, match="execute output file") as info:
        execute_step(ctx, ["echo", "hi"], stdout=name)
    assert problem in str(info.value)
    assert files_outside(tmp_path, sandbox) == []


# -- task ids and the results folder ------------------------------------------------------------


@pytest.mark.parametrize(
    ("task_id", "shown"),
    [
        ("../../escape", "'/'"),
        ("/etc/passwd", "'/'"),
        ("a\\b", "'\\\\'"),
        ("nul\x00byte", "'\\x00'"),
        ("line\nbreak", "'\\n'"),
        ("tab\there", "'\\t'"),
        ("bell\x07", "'\\x07'"),
        ("del\x7f", "'\\x7f'"),
    ],
)
def test_task_ids_with_separators_or_control_characters_are_refused(
    tmp_path: Path, task_id: str, shown: str
) -> None:
    path = tmp_path / "os" / "t.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"id": task_id, "instruction": "x", "evaluator": {"func": "exact_match"}}))
    with pytest.raises(TaskFileError) as info:
        load_task(path)
    assert info.value.json_path == "$.id"
    assert f"the task id contains {shown}" in info.value.problem
    assert "OSWorld ids are UUIDs" in info.value.problem


@pytest.mark.parametrize("task_id", [".", "..", "...."])
def test_task_ids_made_of_dots_are_refused(tmp_path: Path, task_id: str) -> None:
    data = {"id": task_id, "instruction": "x", "evaluator": {"func": "exact_match"}}
    with pytest.raises(TaskFileError, match="is not a usable folder name"):
        parse_task(data, tmp_path / "t.json", "0" * 64, "os")


@pytest.mark.parametrize(
    "task_id",
    [
        "357ef137-7eeb-4c80-a3bb-0951f26a8aff",
        "\uff21\uff22\uff23",
        "\u202egnp.exe",
        "a..b",
        "x" * 5000,
        "ümlaut id",
    ],
)
def test_odd_but_harmless_ids_load_and_their_results_stay_inside(tmp_path: Path, task_id: str) -> None:
    task = parse_task(
        {"id": task_id, "instruction": "x", "evaluator": {"func": "exact_match"}},
        tmp_path / "t.json",
        "0",
        "os",
    )
    root = tmp_path / "results"
    recorder = TaskRecorder(root, "pyautogui", "screenshot", "m", "os", task.id)
    assert recorder.dir.resolve().is_relative_to(root.resolve())
    assert len(recorder.dir.name) <= MAX_COMPONENT
    assert files_outside(tmp_path, root) == []


@pytest.mark.parametrize(
    "hostile",
    ["../../../x", "/abs/path", "..", ".", "", "a\x00b", "\u2024\u2024/\u2024\u2024", "名/../..", "x" * 1000],
)
def test_the_recorder_contains_every_path_part(tmp_path: Path, hostile: str) -> None:
    """action space, observation type, model, domain and task id all come from outside."""
    root = tmp_path / "results"
    recorder = TaskRecorder(root, hostile, hostile, hostile, hostile, hostile, repeat=2)
    assert recorder.dir.resolve().is_relative_to(root.resolve())
    assert len(recorder.dir.relative_to(root).parts) == 5
    assert files_outside(tmp_path, root) == []


def test_long_ids_that_share_a_prefix_get_different_folders(tmp_path: Path) -> None:
    """Before the fix both were cut to the same 120 characters and shared one folder."""
    first, second = "a" * 200 + "-one", "a" * 200 + "-two"
    assert safe_component(first) != safe_component(second)
    assert len(safe_component(first)) == MAX_COMPONENT
    assert safe_component("short-id") == "short-id"


# -- the asset cache ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("https://h.example/a/../../../etc/passwd", "escapes the cache"),
        ("https://h.example/a/%2e%2e/%2e%2e/x", "escapes the cache"),
        ("https://h.example/a/..%2f..%2fother.example%2fx", "escapes the cache"),
        ("https://h.example/a/%00x", "escapes the cache"),
        ("https://../x", "escapes the cache"),
        ("https://h.example/" + "y" * 300, f"longer than {MAX_NAME_BYTES} bytes"),
        ("ftp://h.example/x", "not a cacheable URL"),
        ("https:///x", "not a cacheable URL"),
    ],
)
def test_cache_paths_from_hostile_urls_are_refused(tmp_path: Path, url: str, problem: str) -> None:
    cache = AssetCache(tmp_path / "cache", offline=True)
    with pytest.raises(AssetError) as info:
        cache.path_for(url)
    assert problem in str(info.value) and url in str(info.value)


def test_cache_paths_of_ordinary_urls_keep_the_documented_layout(tmp_path: Path) -> None:
    cache = AssetCache(tmp_path / "cache", offline=True)
    assert (
        cache.path_for("https://h.example:8443/d/f%20g.xlsx?x=1").parent
        == tmp_path / "cache" / "h.example_8443" / "d"
    )


class _BigHandler(http.server.BaseHTTPRequestHandler):
    """``/declared`` claims 10 GB; ``/liar`` claims 10 bytes and sends 3 MB; ``/none`` sends 3 MB unlabeled."""

    def do_GET(self) -> None:
        self.send_response(200)
        if self.path == "/declared":
            self.send_header("Content-Length", str(10 * 10**9))
        elif self.path == "/liar":
            self.send_header("Content-Length", "10")
        self.send_header("Connection", "close")
        self.end_headers()
        with contextlib.suppress(OSError):  # the client may hang up early, as it should
            self.wfile.write(b"\0" * (3 << 20))

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def big_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _BigHandler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(
    ("path", "said"), [("/declared", "it declares 10000000000 bytes"), ("/none", "received more")]
)
def test_downloads_over_the_limit_are_refused_and_nothing_is_kept(
    tmp_path: Path, big_server: str, path: str, said: str
) -> None:
    cache = AssetCache(tmp_path / "cache", attempts=3, timeout=10, max_bytes=1 << 20)
    started = time.monotonic()
    with pytest.raises(AssetTooLarge) as info:
        cache.fetch(big_server + path)
    assert f"larger than the cache's limit of {1 << 20} bytes" in str(info.value)
    assert said in str(info.value)
    assert time.monotonic() - started < 5, "a too-large asset must not be retried"
    assert [p for p in (tmp_path / "cache").rglob("*") if p.is_file()] == []


def test_a_download_that_lies_about_its_length_is_not_cached_short(tmp_path: Path, big_server: str) -> None:
    """urllib stops at the declared 10 bytes: the cache holds what was promised, no more."""
    cache = AssetCache(tmp_path / "cache", attempts=1, timeout=10, max_bytes=1 << 20)
    assert cache.fetch(big_server + "/liar").stat().st_size == 10


def test_the_default_download_limit_is_generous() -> None:
    assert AssetCache(Path("/nonexistent")).max_bytes >= 1 << 30


# -- archives from the environment ---------------------------------------------------------------


def _zip(path: Path, members: list[tuple[str | zipfile.ZipInfo, bytes]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members:
            archive.writestr(name, data)
    return path


def _symlink_zip_member(name: str, target: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.external_attr = (0o120777 << 16) | 0x10  # S_IFLNK, as `zip --symlinks` stores it
    info.create_system = 3
    return info


def _tar(path: Path, members: list[tarfile.TarInfo], data: dict[str, bytes] | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w") as archive:
        for info in members:
            payload = (data or {}).get(info.name)
            if payload is not None:
                info.size = len(payload)
            archive.addfile(info, io.BytesIO(payload) if payload is not None else None)
    return path


def _tarinfo(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    return info


@pytest.mark.parametrize(
    ("members", "escaping"),
    [
        ([("../../../escaped.txt", b"x")], "../../../escaped.txt"),
        ([("ok.txt", b"ok"), ("sub/../../../../escaped.txt", b"x")], "sub/../../../../escaped.txt"),
    ],
)
def test_zip_members_that_climb_out_are_refused(
    tmp_path: Path, sandbox: Path, members: Any, escaping: str
) -> None:
    archive = _zip(tmp_path / "inputs" / "in.zip", members)
    with pytest.raises(ValueError, match="archive member escapes the target") as info:
        _safe_extract(str(archive), str(sandbox / "out"))
    assert repr(escaping) in str(info.value)
    assert files_outside(tmp_path, sandbox) == []
    assert not (sandbox / "out").exists() or list((sandbox / "out").rglob("*")) == []


def test_absolute_zip_members_are_refused(tmp_path: Path, sandbox: Path) -> None:
    archive = _zip(tmp_path / "inputs" / "in.zip", [(str(tmp_path / "abs-escaped.txt"), b"x")])
    with pytest.raises(ValueError, match="escapes the target"):
        _safe_extract(str(archive), str(sandbox / "out"))
    assert files_outside(tmp_path, sandbox) == []


def test_zip_symlink_members_are_written_as_plain_files(tmp_path: Path, sandbox: Path) -> None:
    archive = _zip(
        tmp_path / "inputs" / "in.zip",
        [(_symlink_zip_member("link", str(tmp_path)), str(tmp_path).encode()), ("link/escaped.txt", b"x")],
    )
    with contextlib.suppress(ValueError, OSError):  # refusing is as good as containing
        _safe_extract(str(archive), str(sandbox / "out"))
    assert not any(p.is_symlink() for p in sandbox.rglob("*"))
    assert files_outside(tmp_path, sandbox) == []


@pytest.mark.parametrize(
    ("members", "data", "escaping"),
    [
        ([_tarinfo("../../../escaped.txt")], {"../../../escaped.txt": b"x"}, "../../../escaped.txt"),
        ([_tarinfo("/abs-escaped.txt")], {"/abs-escaped.txt": b"x"}, "/abs-escaped.txt"),
        ([_tarinfo("d/../../../escaped", tarfile.DIRTYPE)], {}, "d/../../../escaped"),
    ],
)
def test_tar_members_that_climb_out_are_refused(
    tmp_path: Path, sandbox: Path, members: Any, data: dict[str, bytes], escaping: str
) -> None:
    archive = _tar(tmp_path / "inputs" / "in.tar", members, data)
    with pytest.raises(ValueError, match="archive member escapes the target") as info:
        _safe_extract(str(archive), str(sandbox / "out"))
    assert repr(escaping) in str(info.value)
    assert files_outside(tmp_path, sandbox) == []


def test_tar_links_devices_and_fifos_are_never_created(tmp_path: Path, sandbox: Path) -> None:
    """A symlink to the outside and then a file "through" it: the link is skipped, the file lands inside."""
    members = [
        _tarinfo("link", tarfile.SYMTYPE, str(tmp_path)),
        _tarinfo("hard", tarfile.LNKTYPE, str(tmp_path / "secret.txt")),
        _tarinfo("fifo", tarfile.FIFOTYPE),
        _tarinfo("dev", tarfile.CHRTYPE),
        _tarinfo("link/escaped.txt"),
    ]
    archive = _tar(tmp_path / "inputs" / "in.tar", members, {"link/escaped.txt": b"x"})
    _safe_extract(str(archive), str(sandbox / "out"))
    out = sandbox / "out"
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == ["link", "link/escaped.txt"]
    assert not (out / "link").is_symlink() and (out / "link").is_dir()
    assert files_outside(tmp_path, sandbox) == []


def test_tars_made_with_dot_members_unpack(tmp_path: Path) -> None:
    """``tar -C dir -cf x.tar .`` stores ``./`` first; before the fix it was refused as escaping."""
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "a.txt").write_text("same\n")
    for name in ("got.tar", "want.tar"):
        with tarfile.open(tmp_path / name, "w") as archive:
            archive.add(folder, arcname=".")
    score = compare_archive(str(tmp_path / "got.tar"), str(tmp_path / "want.tar"), file_type="text")
    assert score.value == 1.0, score.reason


def test_zip_bombs_are_refused_by_declared_size_before_writing(tmp_path: Path, sandbox: Path) -> None:
    """A member that declares 3 GiB (the central directory is what zipfile trusts and enforces)."""
    archive = _zip(tmp_path / "inputs" / "bomb.zip", [("big.bin", b"\0" * 1000)])
    blob = bytearray(archive.read_bytes())
    central = blob.rindex(b"PK\x01\x02")
    blob[central + 24 : central + 28] = (3 << 30).to_bytes(4, "little")
    archive.write_bytes(bytes(blob))
    with pytest.raises(ValueError, match=r"archive unpacks to 3221225472 bytes, over the limit of \d+ bytes"):
        _safe_extract(str(archive), str(sandbox / "out"))
    assert not (sandbox / "out").exists() or list((sandbox / "out").rglob("*")) == []


def test_a_real_compressed_bomb_is_refused(
    tmp_path: Path, sandbox: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chrome_metrics, "MAX_ARCHIVE_BYTES", 1 << 20)
    archive = _zip(tmp_path / "inputs" / "bomb.zip", [("zeros.bin", b"\0" * (4 << 20))])
    assert archive.stat().st_size < 20_000
    with pytest.raises(ValueError, match=f"over the limit of {1 << 20} bytes"):
        _safe_extract(str(archive), str(sandbox / "out"))


def test_archives_with_too_many_members_are_refused(
    tmp_path: Path, sandbox: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chrome_metrics, "MAX_ARCHIVE_MEMBERS", 10)
    archive = _zip(tmp_path / "inputs" / "many.zip", [(f"f{i}", b"") for i in range(11)])
    with pytest.raises(ValueError, match="archive has 11 members, over the limit of 10"):
        _safe_extract(str(archive), str(sandbox / "out"))


def test_compare_archive_turns_a_hostile_archive_into_a_zero_with_the_reason(tmp_path: Path) -> None:
    bad = _zip(tmp_path / "bad.zip", [("../../escaped.txt", b"x")])
    good = _zip(tmp_path / "good.zip", [("escaped.txt", b"x")])
    score = compare_archive(str(bad), str(good))
    assert score.value == 0.0
    assert score.reason.startswith("cannot unpack: archive member escapes the target")


@pytest.mark.parametrize("file_path", ["../..", "/etc", "a/../../..", "..\\.."])
def test_compare_archive_file_path_cannot_leave_the_archive(tmp_path: Path, file_path: str) -> None:
    """Before the fix ``file_path: "/etc"`` compared the host's /etc with itself and scored 1."""
    one = _zip(tmp_path / "one.zip", [("a.txt", b"1")])
    two = _zip(tmp_path / "two.zip", [("a.txt", b"2")])
    score = compare_archive(str(one), str(two), file_path=file_path)
    assert score.value == 0.0
    assert score.reason == f"option file_path {file_path!r} must be a relative folder inside the archive"


# -- XML from the environment ---------------------------------------------------------------------

LAUGHS = (
    '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY l0 "lol">'
    + "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
    + "]><desktop-frame>&l9;</desktop-frame>"
)
QUADRATIC = (
    '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "'
    + "x" * 50_000
    + '">]><desktop-frame>'
    + "&a;" * 20_000
    + "</desktop-frame>"
)


def xxe(tmp_path: Path) -> str:
    return (
        f'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file://{tmp_path}/secret.txt">]>'
        '<desktop-frame><entry name="Address and search bar">&x;</entry></desktop-frame>'
    )


def calc_like_tree(elements: int = 3000, depth: int = 40) -> str:
    """A tree the size of a real Calc window's: thousands of cells, a few dozen levels deep."""
    ns = 'xmlns:st="https://accessibility.ubuntu.example.org/ns/state"'
    ns += ' xmlns:cp="https://accessibility.ubuntu.example.org/ns/component"'
    opening = "".join("<filler>" for _ in range(depth))
    cells = "".join(
        f'<table-cell name="C{i}" st:showing="true" st:visible="true" st:enabled="true"'
        f' cp:screencoord="({i % 50}, {i // 50})" cp:size="(10, 10)">{i}</table-cell>'
        for i in range(elements)
    )
    return f"<desktop-frame {ns}>{opening}{cells}{'</filler>' * depth}</desktop-frame>"


@pytest.mark.parametrize("bomb", [LAUGHS, QUADRATIC], ids=["billion-laughs", "quadratic-blowup"])
def test_entity_bombs_in_the_a11y_tree_are_refused_fast(bomb: str) -> None:
    started = time.monotonic()
    with pytest.raises(ValueError, match="the accessibility tree is not valid XML"):
        filter_nodes(bomb)
    score = check_accessibility_tree(bomb, {"selectors": ["entry"]})
    assert score.value == 0.0 and score.reason.startswith("accessibility tree is not XML")
    assert time.monotonic() - started < 5


def test_external_entities_in_the_a11y_tree_are_never_loaded(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text(SECRET)
    from pytest_osworld.evaluators.getters.chrome import omnibox_text

    with pytest.raises(ValueError) as info:
        filter_nodes(xxe(tmp_path))
    assert SECRET not in str(info.value)
    with pytest.raises(GetterError) as got:
        omnibox_text(xxe(tmp_path))
    assert SECRET not in str(got.value) and "not valid XML" in str(got.value)
    score = check_accessibility_tree(xxe(tmp_path), {"selectors": ["entry"], "text": SECRET})
    assert score.value == 0.0 and SECRET not in score.reason.replace("no element has text", "")


def test_deep_nesting_is_handled_without_recursion_errors() -> None:
    deep = "<desktop-frame>" + "<filler>" * 200_000 + "</filler>" * 200_000 + "</desktop-frame>"
    assert filter_nodes(deep) == []
    score = check_accessibility_tree(deep, {"selectors": ["entry"]})
    assert score.value == 0.0  # lxml refuses past depth 256; either way, no crash


def test_trees_over_the_size_limit_are_refused_with_the_limit_named(monkeypatch: pytest.MonkeyPatch) -> None:
    import pytest_osworld.agent.observe as observe

    monkeypatch.setattr(observe, "MAX_TREE_CHARS", 1000)
    with pytest.raises(ValueError, match="characters, over the limit of 1000"):
        observe.filter_nodes("<desktop-frame>" + " " * 2000 + "</desktop-frame>")
    assert MAX_TREE_CHARS >= 16 * 1024 * 1024


def test_real_sized_trees_fit_the_limits() -> None:
    tree = calc_like_tree()
    assert len(filter_nodes(tree)) == 3000
    assert check_accessibility_tree(tree, {"selectors": ["table-cell"]}).value == 1.0


# -- office files (zip + XML) --------------------------------------------------------------------

DTD_LAUGHS = (
    '<!DOCTYPE r [<!ENTITY l0 "lol">'
    + "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
    + "]>"
)


def _poison(blob: bytes, member: str, dtd: str, marker: bytes = b"POISON") -> bytes:
    """The office file ``blob`` with a DTD put into ``member`` and the marker text made ``&l9;``."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(blob)) as zin, zipfile.ZipFile(out, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename == member:
                text = data.decode()
                head, sep, rest = text.partition("?>")
                text = head + sep + dtd + rest if sep else dtd + text
                data = text.encode().replace(marker, b"&l9;")
            zout.writestr(info, data)
    return out.getvalue()


def _office_files() -> dict[str, tuple[bytes, str]]:
    import docx
    import openpyxl
    import pptx

    book = openpyxl.Workbook()
    book.active["A1"] = "POISON"
    xlsx = io.BytesIO()
    book.save(xlsx)
    document = docx.Document()
    document.add_paragraph("POISON")
    docx_blob = io.BytesIO()
    document.save(docx_blob)
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "POISON"
    pptx_blob = io.BytesIO()
    deck.save(pptx_blob)
    return {
        "xlsx": (xlsx.getvalue(), "xl/worksheets/sheet1.xml"),
        "docx": (docx_blob.getvalue(), "word/document.xml"),
        "pptx": (pptx_blob.getvalue(), "ppt/slides/slide1.xml"),
    }


def _load_office(kind: str, blob: bytes) -> str:
    import docx
    import openpyxl
    import pptx

    if kind == "xlsx":
        return str(openpyxl.load_workbook(io.BytesIO(blob)).active["A1"].value)
    if kind == "docx":
        return "".join(p.text for p in docx.Document(io.BytesIO(blob)).paragraphs)
    deck = pptx.Presentation(io.BytesIO(blob))
    return "".join(shape.text_frame.text for shape in deck.slides[0].shapes if shape.has_text_frame)


@pytest.mark.parametrize("kind", ["xlsx", "docx", "pptx"])
def test_office_files_with_an_entity_bomb_fail_to_load_fast(kind: str) -> None:
    blob, member = _office_files()[kind]
    assert "POISON" in _load_office(kind, blob)
    started = time.monotonic()
    with pytest.raises(Exception) as info:  # each library raises its own parse error
        _load_office(kind, _poison(blob, member, DTD_LAUGHS))
    assert type(info.value).__name__ in ("XMLSyntaxError", "ValueError", "ParseError", "EntitiesForbidden")
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("kind", ["xlsx", "docx", "pptx"])
def test_office_files_never_load_external_entities(tmp_path: Path, kind: str) -> None:
    (tmp_path / "secret.txt").write_text(SECRET)
    blob, member = _office_files()[kind]
    dtd = f'<!DOCTYPE r [<!ENTITY l9 SYSTEM "file://{tmp_path}/secret.txt">]>'
    try:
        text = _load_office(kind, _poison(blob, member, dtd))
    except Exception as exc:  # a refusal is fine; a leak is not
        text = str(exc)
    assert SECRET not in text


@pytest.mark.parametrize(
    ("kind", "metric", "reason"),
    [
        ("docx", "docs:compare_docx_files", "cannot read the documents: Maximum entity amplification"),
        # With defusedxml installed openpyxl refuses the DTD when it opens the file;
        # without it, expat's amplification limit stops the sheet's parse in a rule.
        ("xlsx", "table:compare_table", "as a workbook: "),
        ("pptx", "slides:compare_pptx_files", "cannot read the decks: Maximum entity amplification"),
    ],
)
def test_office_metrics_score_a_bombed_file_zero_with_the_reason(
    tmp_path: Path, kind: str, metric: str, reason: str
) -> None:
    from pytest_osworld.registry import load_entry_point

    compare: Any = load_entry_point(f"pytest_osworld.evaluators.metrics.{metric}")
    blob, member = _office_files()[kind]
    (tmp_path / f"gold.{kind}").write_bytes(blob)
    (tmp_path / f"got.{kind}").write_bytes(_poison(blob, member, DTD_LAUGHS))
    started = time.monotonic()
    # A rule that reads the sheet (a table metric with no rules never reads one).
    options = (
        {"rules": [{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}]} if kind == "xlsx" else {}
    )
    score = compare(str(tmp_path / f"got.{kind}"), str(tmp_path / f"gold.{kind}"), **options)
    assert score.value == 0.0
    assert reason in score.reason
    assert time.monotonic() - started < 5


# -- answers from the guest that are too large -----------------------------------------------


def test_the_client_refuses_a_guest_answer_over_its_limit(tmp_path: Path, big_server: str) -> None:
    client = GuestClient(url=big_server, retries=1, timeout=10)
    client.max_response_bytes = 1 << 20
    with pytest.raises(GuestError, match=r"larger than the client's limit of 1048576 bytes \(it declares"):
        client.request("GET", "/declared", idempotent=True)
    with pytest.raises(GuestError, match=r"larger than the client's limit of 1048576 bytes \(it sent more"):
        client.request("GET", "/none", idempotent=True)
    assert client.request("GET", "/liar").body == b"\0" * 10


def test_the_client_default_limit_is_generous() -> None:
    assert GuestClient(url="http://127.0.0.1:1").max_response_bytes >= 1 << 30
