"""The container image: built from Debian's packages alone by ``./container/build.sh``, the
``os`` tasks pass inside it under Podman (and Docker, where its daemon runs), with their
results in a folder of the host, and the engine flags bubblewrap needs are the ones the
README names.

Slow (the first build takes minutes; README.md, "Any host: the container image"), so it
runs only when asked: ``OSWORLD_CONTAINER_TESTS=1 .venv/bin/pytest tests/container`` (as
root; build.sh installs Podman and mmdebstrap on Debian).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from engines import engine_env

#: The flags each engine needs for bubblewrap inside the container (README.md).
SANDBOX_FLAGS = {
    "podman": ["--security-opt", "unmask=ALL", "--security-opt", "seccomp=unconfined"],
    "docker": ["--security-opt", "systempaths=unconfined", "--security-opt", "seccomp=unconfined"],
}

pytestmark = [
    pytest.mark.container,
    pytest.mark.skipif(
        os.environ.get("OSWORLD_CONTAINER_TESTS") != "1",
        reason="builds the container image (minutes): run with OSWORLD_CONTAINER_TESTS=1",
    ),
]


@pytest.fixture(params=["podman", "docker"])
def engine(request: pytest.FixtureRequest, image: str) -> str:
    """An engine holding the image: Podman built it; Docker gets a copy when its daemon runs."""
    name: str = request.param
    if name == "docker":
        if subprocess.run(["docker", "info"], capture_output=True, check=False).returncode != 0:
            pytest.skip("no Docker daemon here")
        if image_id("docker", image) != image_id("podman", image):  # none yet, or an older build
            subprocess.run(f"podman save {image} | docker load", shell=True, check=True, capture_output=True)
    return name


def image_id(engine: str, image: str) -> str:
    """The image's ID in ``engine`` without its ``sha256:`` prefix ('' when it has none)."""
    found = subprocess.run(
        [engine, "image", "inspect", "--format", "{{.Id}}", image],
        capture_output=True,
        text=True,
        check=False,
    )
    return found.stdout.strip().removeprefix("sha256:") if found.returncode == 0 else ""


def run_tasks(engine: str, image: str, results: Path, flags: list[str]) -> subprocess.CompletedProcess[str]:
    """``pytest --agent=replay -n 2 tasks/os`` in the image, results into ``results``, no network."""
    return subprocess.run(
        [engine, "run", "--rm", "--network", "none", *flags, "--shm-size=1g", "-v", f"{results}:/results",
         image, "--agent=replay", "-n", "2", "-p", "no:cacheprovider", "tasks/os"],
        capture_output=True, text=True, timeout=1800, env=engine_env(engine, image), check=False,
    )  # fmt: skip


def test_the_os_tasks_pass_inside_the_container(engine: str, image: str, tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    run = run_tasks(engine, image, results, SANDBOX_FLAGS[engine])
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "4 passed" in run.stdout.splitlines()[-1]
    written = sorted(results.rglob("result.json"))
    assert len(written) == 4, written
    for path in written:
        result = json.loads(path.read_text())
        assert result["outcome"] == "passed" and result["score"] == 1, result
    assert (results / "index.html").is_file()


@pytest.mark.parametrize("drop", [0, 2], ids=["without-the-first-flag", "without-the-second-flag"])
def test_each_flag_is_needed_and_its_absence_is_an_error_naming_them(
    engine: str, image: str, tmp_path: Path, drop: int
) -> None:
    """Without either flag bubblewrap cannot make the sandbox: every task is an ERROR (a
    broken environment), not a FAIL, and the message names the flags to add."""
    flags = SANDBOX_FLAGS[engine][:drop] + SANDBOX_FLAGS[engine][drop + 2 :]
    run = run_tasks(engine, image, tmp_path, flags)
    assert run.returncode != 0
    assert "4 errors" in run.stdout.splitlines()[-1]
    assert "bwrap: " in run.stdout
    assert " ".join(SANDBOX_FLAGS[engine]) in run.stdout
