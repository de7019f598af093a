"""The local desktop's home template is whole or not used: its check, its rebuilds."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from pytest_osworld.errors import EnvironmentFailure
from pytest_osworld.providers.local_template import (
    BUILD_ATTEMPTS,
    IN_A_CONTAINER,
    REQUIRED_FILES,
    ensure_template,
    missing_template_files,
    sandbox_hint,
    template_key,
)


def everything(program: str) -> bool:
    """Every application counts as installed: all of REQUIRED_FILES is required."""
    return True


def write_whole_home(home: Path) -> None:
    """Every required file, with the tables and JSON the check looks for."""
    tables = {rel: table for required in REQUIRED_FILES for rel, table in required.tables}
    for required in REQUIRED_FILES:
        for rel in required.paths:
            path = home / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if rel in tables:
                with sqlite3.connect(path) as db:
                    db.execute(f"CREATE TABLE {tables[rel]} (x)")
                db.close()
            elif rel in required.json:
                path.write_text(json.dumps({"profile": {"exit_type": "Normal"}}))
            elif rel.endswith("/extensions"):
                path.mkdir(parents=True, exist_ok=True)
            else:
                path.write_text("x")


def test_a_whole_home_has_nothing_missing(tmp_path: Path) -> None:
    write_whole_home(tmp_path)
    assert missing_template_files(tmp_path, installed=everything) == []


def test_an_empty_home_misses_every_required_file(tmp_path: Path) -> None:
    problems = missing_template_files(tmp_path, installed=everything)
    expected = [f"{rel} is missing" for required in REQUIRED_FILES for rel in required.paths]
    assert problems == expected


@pytest.mark.parametrize(
    ("rel", "damage", "problem"),
    [
        (".config/google-chrome/Default/Cookies", "remove", "is missing"),
        (".config/google-chrome/Default/History", "remove", "is missing"),
        (".config/google-chrome/Default/Web Data", "empty", "has no 'keywords' table"),
        (".config/google-chrome/Default/Cookies", "garbage", "has no 'cookies' table"),
        (".config/google-chrome/Default/Preferences", "garbage", "is not a JSON object"),
        (".config/google-chrome/Local State", "remove", "is missing"),
        (".config/GIMP/2.10/pluginrc", "remove", "is missing"),
        (".config/libreoffice/4/user/registrymodifications.xcu", "remove", "is missing"),
    ],
)
def test_one_damaged_file_is_named(tmp_path: Path, rel: str, damage: str, problem: str) -> None:
    write_whole_home(tmp_path)
    path = tmp_path / rel
    if damage == "remove":
        path.unlink()
    elif damage == "empty":
        path.write_bytes(b"")
    else:
        path.write_bytes(b"not a database, not JSON")
    assert missing_template_files(tmp_path, installed=everything) == [f"{rel} {problem}"]


def test_a_database_left_with_a_hot_journal_is_named(tmp_path: Path) -> None:
    """A copy taken in the middle of a write (database and journal) needs a rollback before
    anyone can read it, which a reader that may not write cannot do."""
    write_whole_home(tmp_path)
    rel = ".config/google-chrome/Default/Cookies"
    live = tmp_path / "live.db"
    writer = sqlite3.connect(live, isolation_level=None)
    writer.execute("PRAGMA cache_size=1")  # spill changed pages into the file before commit
    writer.execute("CREATE TABLE cookies (x)")
    writer.execute("INSERT INTO cookies VALUES (zeroblob(100000))")
    writer.execute("BEGIN")
    writer.execute("UPDATE cookies SET x = zeroblob(200000)")
    shutil.copy(live, tmp_path / rel)
    shutil.copy(tmp_path / "live.db-journal", tmp_path / f"{rel}-journal")
    writer.execute("ROLLBACK")
    writer.close()
    problems = missing_template_files(tmp_path, installed=everything)
    assert len(problems) == 1 and problems[0].startswith(f"{rel} cannot be read without writing to it")
    with sqlite3.connect(tmp_path / rel) as db:  # what build_template.sh does: a rollback
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    db.close()
    assert missing_template_files(tmp_path, installed=everything) == []


def test_an_application_not_installed_needs_none_of_its_files(tmp_path: Path) -> None:
    write_whole_home(tmp_path)
    (tmp_path / ".config/google-chrome/Default/Cookies").unlink()
    assert missing_template_files(tmp_path, installed=lambda program: program != "chromium") == []


def _templates(cache: Path) -> Path:
    return cache / "templates"


def test_a_cached_template_that_is_not_whole_is_rebuilt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = template_key()
    old = _templates(tmp_path) / key
    old.mkdir(parents=True)
    (old / "left-by-an-old-build").write_text("x")
    (_templates(tmp_path) / f"{key}.done").write_text("built")
    builds: list[Path] = []

    def build(staging: Path) -> None:
        builds.append(staging)
        write_whole_home(staging)

    def check(home: Path) -> list[str]:
        return missing_template_files(home, installed=everything)

    target = ensure_template(tmp_path, rebuild=False, build=build, check=check)
    assert len(builds) == 1
    assert target == old
    assert not (target / "left-by-an-old-build").exists()
    assert check(target) == []
    assert "is not whole (.config/mimeapps.list is missing" in capsys.readouterr().err
    # Now whole: the next start reuses it without a build.
    assert ensure_template(tmp_path, rebuild=False, build=build, check=check) == target
    assert len(builds) == 1


def test_an_incomplete_build_is_tried_again_then_used(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    attempts: list[Path] = []

    def build(staging: Path) -> None:
        attempts.append(staging)
        write_whole_home(staging)
        if len(attempts) < BUILD_ATTEMPTS:
            (staging / ".config/google-chrome/Default/Cookies").unlink()

    def check(home: Path) -> list[str]:
        return missing_template_files(home, installed=everything)

    target = ensure_template(tmp_path, rebuild=False, build=build, check=check)
    assert len(attempts) == BUILD_ATTEMPTS
    assert check(target) == []
    assert (_templates(tmp_path) / f"{template_key()}.done").is_file()
    assert all(not staging.exists() for staging in attempts)
    err = capsys.readouterr().err
    assert "build 1 is not whole (.config/google-chrome/Default/Cookies is missing); trying again" in err


def test_a_build_never_whole_is_an_error_naming_what_is_missing(tmp_path: Path) -> None:
    attempts: list[Path] = []

    def build(staging: Path) -> None:
        attempts.append(staging)
        write_whole_home(staging)
        (staging / ".config/google-chrome/Default/Cookies").unlink()

    def check(home: Path) -> list[str]:
        return missing_template_files(home, installed=everything)

    with pytest.raises(EnvironmentFailure) as raised:
        ensure_template(tmp_path, rebuild=False, build=build, check=check, log="/x/build.log")
    message = str(raised.value)
    assert (
        f"incomplete after {BUILD_ATTEMPTS} builds: .config/google-chrome/Default/Cookies is missing"
        in message
    )
    assert "/x/build.log" in message and "google-chrome" in message
    assert len(attempts) == BUILD_ATTEMPTS
    key = template_key()
    assert not (_templates(tmp_path) / key).exists()
    assert not (_templates(tmp_path) / f"{key}.done").exists()
    assert list(_templates(tmp_path).glob(f"{key}.staging-*")) == []


def test_rebuild_replaces_a_whole_template(tmp_path: Path) -> None:
    builds: list[Path] = []

    def build(staging: Path) -> None:
        builds.append(staging)
        write_whole_home(staging)
        (staging / "build-number").write_text(str(len(builds)))

    def check(home: Path) -> list[str]:
        return missing_template_files(home, installed=everything)

    ensure_template(tmp_path, rebuild=False, build=build, check=check)
    target = ensure_template(tmp_path, rebuild=True, build=build, check=check)
    assert (target / "build-number").read_text() == "2"


def test_bubblewrap_failing_in_a_container_names_the_engine_flags(tmp_path: Path) -> None:
    marker = tmp_path / ".containerenv"
    failed = "bwrap: Can't mount proc on /newroot/proc: Operation not permitted"
    assert sandbox_hint(failed, (marker,)) == ""  # not in a container
    marker.write_text("")
    assert sandbox_hint(failed, (marker,)) == IN_A_CONTAINER
    assert "unmask=ALL" in IN_A_CONTAINER and "systempaths=unconfined" in IN_A_CONTAINER
    assert sandbox_hint("template: soffice init failed", (marker,)) == ""  # not bubblewrap's
