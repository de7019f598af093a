"""OSWorld's image as a box: options, hashing, unzip, the overlay box; the download command.

The qcow2 files here are small real ones made with ``qemu-img``; the overlay's backing
file is read back with ``qemu-img info``. The download runs against the local stand-in of
the Hugging Face Hub from ``test_hub_fetch``.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

import pytest
from test_hub_fetch import StandIn, _hf_env, stand_in  # noqa: F401 (fixtures)

from pytest_osworld.commands import fetch_image as image_fetch
from pytest_osworld.providers.osworld_image import BOX_PREFIX, file_sha256, prepare_image
from pytest_osworld.providers.vagrant import VagrantOptions, VagrantProvider
from pytest_osworld.providers.vagrant_config import VagrantError, vagrant_env
from pytest_osworld.task.settings import Settings

needs_qemu_img = pytest.mark.skipif(shutil.which("qemu-img") is None, reason="needs qemu-img")


def _qcow2(path: Path, size: str = "64M") -> Path:
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", str(path), size], check=True)
    return path


# -- options ------------------------------------------------------------------------------


def test_image_options(tmp_path: Path) -> None:
    opts = VagrantOptions.parse({"image": "osworld", "image_file": str(tmp_path / "Ubuntu.qcow2")})
    assert (opts.image, opts.server, opts.vm_network) == ("osworld", "ours", "nat")
    assert opts.image_file == tmp_path / "Ubuntu.qcow2"
    opts = VagrantOptions.parse(
        {"image": "osworld", "image_file": "/i.zip", "server": "osworld", "netns": "osw"}
    )
    assert opts.server == "osworld"
    opts = VagrantOptions.parse(
        {"image": "osworld", "image_file": "/i.zip", "server": "osworld", "vm_network": "host-only"}
    )
    env = vagrant_env(
        opts,
        name="osworld-main",
        box="b",
        dotfile_dir=tmp_path,
        console_log=tmp_path / "c",
        package=None,
        token_file=None,
        screen=(1920, 1080),
        host_port=None,
        base={},
    )
    assert (env["OSWORLD_IMAGE_SERVER"], env["OSWORLD_MGMT_MODE"]) == ("osworld", "none")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"image": "windows", "image_file": "/w.qcow2"}, "the one image known is osworld"),
        ({"image": "osworld"}, "needs image_file=PATH"),
        ({"box": "b", "image_file": "/i.qcow2"}, "image_file needs image=osworld"),
        ({"image": "osworld", "image_file": "/i.qcow2", "box": "b"}, "replaces box and build"),
        ({"image": "osworld", "image_file": "/i.qcow2", "server": "theirs"}, "use ours or osworld"),
        ({"box": "b", "server": "osworld", "netns": "n"}, "server=osworld needs image=osworld"),
        ({"image": "osworld", "image_file": "/i.qcow2", "vm_network": "bridged"}, "use nat or host-only"),
    ],
)
def test_bad_image_options(options: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        VagrantOptions.parse(options)


def test_osworld_server_on_a_reachable_network_is_a_usage_error() -> None:
    """The image's own server runs anything it is sent, without a token: never on NAT."""
    with pytest.raises(ValueError) as caught:
        VagrantProvider.check_options({"image": "osworld", "image_file": "/i.qcow2", "server": "osworld"})
    message = str(caught.value)
    assert "no token" in message and "netns=NAME" in message and "vm_network=host-only" in message


def _settings(tmp_path: Path, provider_args: dict[str, str]) -> Settings:
    return Settings(
        agent="replay",
        agent_args={},
        model=None,
        provider="vagrant",
        provider_args=provider_args,
        max_steps=15,
        task_timeout=600.0,
        observation_type="screenshot",
        action_space="pyautogui",
        results_dir=tmp_path,
        asset_cache=tmp_path,
        pass_threshold=1.0,
        offline=True,
        manifest=None,
        known_broken=None,
    )


def test_header_warns_of_the_token_less_server(tmp_path: Path) -> None:
    theirs = _settings(tmp_path, {"image": "osworld", "server": "osworld", "netns": "osw"})
    joined = "\n".join(theirs.header_lines())
    assert "NO TOKEN" in joined and "network namespace osw" in joined
    ours = _settings(tmp_path, {"image": "osworld"})
    assert "NO TOKEN" not in "\n".join(ours.header_lines())


# -- import -------------------------------------------------------------------------------


def test_hash_is_read_once_per_file_version(tmp_path: Path) -> None:
    image = tmp_path / "Ubuntu.qcow2"
    image.write_bytes(b"a" * 100_000)
    first = file_sha256(image, tmp_path, progress=io.StringIO())
    assert first == hashlib.sha256(b"a" * 100_000).hexdigest()
    memo = json.loads((tmp_path / "hashes.json").read_text())
    assert list(memo.values()) == [first]
    # Same path, size and mtime: the remembered hash, without reading (proved by a lie).
    key = next(iter(memo))
    (tmp_path / "hashes.json").write_text(json.dumps({key: "remembered"}))
    assert file_sha256(image, tmp_path, progress=io.StringIO()) == "remembered"
    # A changed file is hashed again.
    image.write_bytes(b"b" * 100_000)
    os.utime(image, ns=(time.time_ns(), time.time_ns() + 10**9))
    assert file_sha256(image, tmp_path, progress=io.StringIO()) == hashlib.sha256(b"b" * 100_000).hexdigest()


@needs_qemu_img
def test_qcow2_becomes_an_overlay_box(tmp_path: Path) -> None:
    image = _qcow2(tmp_path / "Ubuntu.qcow2", "3G")
    before = image.read_bytes()
    imported = prepare_image(image, tmp_path / "cache", progress=io.StringIO())
    assert imported.sha256 == hashlib.sha256(before).hexdigest()
    assert imported.box == BOX_PREFIX + imported.sha256[:12]
    assert imported.disk == image.resolve()
    with tarfile.open(imported.box_file) as tar:
        assert sorted(tar.getnames()) == ["Vagrantfile", "box.img", "metadata.json"]
        metadata = json.load(tar.extractfile("metadata.json"))  # type: ignore[arg-type]
        overlay = tar.extractfile("box.img")
        assert overlay is not None
        (tmp_path / "out").mkdir()
        (tmp_path / "out" / "box.img").write_bytes(overlay.read())
    assert metadata == {"provider": "libvirt", "format": "qcow2", "virtual_size": 3}
    info = json.loads(
        subprocess.run(
            ["qemu-img", "info", "--output=json", str(tmp_path / "out" / "box.img")],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    assert info["backing-filename"] == str(image.resolve())
    assert info["virtual-size"] == 3 << 30
    # The overlay is small: the image is not copied.
    assert (tmp_path / "out" / "box.img").stat().st_size < 1 << 20
    assert image.read_bytes() == before
    # A second session reuses the box file as it is.
    mtime = imported.box_file.stat().st_mtime_ns
    again = prepare_image(image, tmp_path / "cache", progress=io.StringIO())
    assert again == imported and imported.box_file.stat().st_mtime_ns == mtime


@needs_qemu_img
def test_zip_is_unpacked_once(tmp_path: Path) -> None:
    inner = _qcow2(tmp_path / "Ubuntu.qcow2")
    archive = tmp_path / "Ubuntu.qcow2.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.write(inner, "Ubuntu.qcow2")
    inner.unlink()
    imported = prepare_image(archive, tmp_path / "cache", progress=io.StringIO())
    assert imported.sha256 == hashlib.sha256(archive.read_bytes()).hexdigest()
    assert imported.disk.name == "Ubuntu.qcow2" and imported.disk.parent.name == imported.sha256[:12]
    assert not list(imported.disk.parent.glob("*.part"))
    mtime = imported.disk.stat().st_mtime_ns
    assert prepare_image(archive, tmp_path / "cache", progress=io.StringIO()).disk == imported.disk
    assert imported.disk.stat().st_mtime_ns == mtime


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("missing.qcow2", None, "does not exist"),
        ("Ubuntu.vmdk", b"x", "expected a .qcow2 file"),
        ("broken.zip", b"not a zip", "not a readable zip"),
        ("empty.zip", "empty-zip", "holds no .qcow2"),
        ("raw.qcow2", b"\0" * 4096, "raw image, not qcow2"),
    ],
)
def test_bad_image_files(tmp_path: Path, name: str, content: object, message: str) -> None:
    if name == "raw.qcow2" and shutil.which("qemu-img") is None:
        pytest.skip("needs qemu-img")
    path = tmp_path / name
    if content == "empty-zip":
        with zipfile.ZipFile(path, "w") as bundle:
            bundle.writestr("README.txt", "no image here")
    elif isinstance(content, bytes):
        path.write_bytes(content)
    with pytest.raises(VagrantError, match=message):
        prepare_image(path, tmp_path / "cache", progress=io.StringIO())


# -- download -----------------------------------------------------------------------------

IMAGE_REPO = "xlangai/ubuntu_osworld"


def _image_stand_in(stand_in: StandIn, size: int) -> bytes:  # noqa: F811
    data = hashlib.sha256(b"image").digest() * (size // 32)
    stand_in.repo = IMAGE_REPO
    stand_in.files = {"Ubuntu.qcow2.zip": data}
    return data


def test_download_resumes_a_dropped_transfer_and_shows_progress(
    stand_in: StandIn,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from huggingface_hub import constants

    data = _image_stand_in(stand_in, 2 * constants.DOWNLOAD_CHUNK_SIZE + 4096)
    stand_in.drop_after["Ubuntu.qcow2.zip"] = constants.DOWNLOAD_CHUNK_SIZE + 100
    code = image_fetch.main(["download", "--dest", str(tmp_path / "img"), "--endpoint", stand_in.endpoint])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert (tmp_path / "img" / "Ubuntu.qcow2.zip").read_bytes() == data
    assert out.strip() == str(tmp_path / "img" / "Ubuntu.qcow2.zip")
    # The retry asks for exactly what is missing.
    assert [rng for _, rng in stand_in.gets()] == [None, f"bytes={constants.DOWNLOAD_CHUNK_SIZE + 100}-"]
    assert "Ubuntu.qcow2.zip" in err and "%" in err and "resuming" in err  # the progress bar
    assert not list((tmp_path / "img").glob(".*.part"))
    assert "pytest-osworld-image prepare" in err


def test_download_interrupted_then_run_again_resumes(stand_in: StandIn, tmp_path: Path) -> None:  # noqa: F811
    """The command is killed mid-transfer (as by Ctrl-C); the next run asks only for the rest."""
    from huggingface_hub import constants

    data = _image_stand_in(stand_in, 3 * constants.DOWNLOAD_CHUNK_SIZE)
    stand_in.stall_after["Ubuntu.qcow2.zip"] = 2 * constants.DOWNLOAD_CHUNK_SIZE + 10
    argv = [
        sys.executable,
        "-m",
        "pytest_osworld.commands.fetch_image",
        "download",
        "--dest",
        str(tmp_path / "img"),
    ]
    argv += ["--endpoint", stand_in.endpoint]
    # SIGINT as a terminal gives it: a run started in the background by a non-interactive
    # shell (`.ci/run &`) inherits it ignored, and Python then never raises KeyboardInterrupt.
    first = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=os.environ.copy(),
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 120
    partial: list[Path] = []
    while time.monotonic() < deadline and first.poll() is None:
        partial = [
            p
            for p in (tmp_path / "img").glob(".*.part")
            if p.stat().st_size >= 2 * constants.DOWNLOAD_CHUNK_SIZE + 10
        ]
        if partial:
            break
        time.sleep(0.1)
    if not partial:
        first.kill()
        raise AssertionError(f"the first run never got two chunks on disk: {first.communicate()}")
    first.send_signal(signal.SIGINT)
    first.communicate(timeout=30)
    assert not (tmp_path / "img" / "Ubuntu.qcow2.zip").exists()
    stand_in.stall_after.clear()
    second = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert second.returncode == 0, second.stderr[-2000:]
    assert (tmp_path / "img" / "Ubuntu.qcow2.zip").read_bytes() == data
    ranges = [rng for _, rng in stand_in.gets()]
    assert ranges == [None, f"bytes={2 * constants.DOWNLOAD_CHUNK_SIZE + 10}-"], ranges


def test_download_failure_says_how_to_resume(
    stand_in: StandIn,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _image_stand_in(stand_in, 4096)
    stand_in.resolve_status = 503
    code = image_fetch.main(["download", "--dest", str(tmp_path / "img"), "--endpoint", stand_in.endpoint])
    assert code == 1
    err = capsys.readouterr().err
    assert "download of xlangai/ubuntu_osworld/Ubuntu.qcow2.zip failed" in err and "resume" in err
