"""The real home template: built while every core is busy it is whole, and a template that
lost a required file is rebuilt at the next start.

A first run on a fresh machine builds the template while xdist workers and their desktops
start beside it; that is the load this reproduces (processes spinning on every core for
the build's whole duration). Needs the apt packages of scripts/install.sh.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from pytest_osworld.providers.base import ProviderConfig
from pytest_osworld.providers.local import TEMPLATE_BUILDING, TEMPLATE_BUILT, LocalProvider
from pytest_osworld.providers.local_template import missing_template_files, template_key

pytestmark = pytest.mark.desktop

CHROME_DEFAULT = ".config/google-chrome/Default"


@contextmanager
def every_core_busy() -> Iterator[None]:
    """A process spinning on each core (and one more) until the block ends."""
    spinners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range((os.cpu_count() or 2) + 1)
    ]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def prepare(cache: Path, work: Path) -> list[str]:
    """What the controller does before a run's first desktop (which builds the template if it
    must): the lines it said."""
    said: list[str] = []
    config = ProviderConfig(worker_id="tpl", options={"cache_dir": str(cache)}, work_dir=str(work))
    LocalProvider.prepare(config, said.append)
    return said


@pytest.fixture(scope="module")
def built_under_load(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A template cache whose template was built with every core busy, and what was said."""
    if not (Path("/usr/bin/chromium").exists() and Path("/usr/bin/bwrap").exists()):
        pytest.skip("needs the desktop's packages (scripts/install.sh)")
    cache = tmp_path_factory.mktemp("template-cache")
    with every_core_busy():
        said = prepare(cache, tmp_path_factory.mktemp("work"))
    return cache, said


@pytest.fixture
def cache_built_under_load(built_under_load: tuple[Path, list[str]]) -> Path:
    return built_under_load[0]


def table_names(path: Path) -> set[str]:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        names = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    db.close()
    return names


def test_a_template_built_under_load_is_whole(cache_built_under_load: Path) -> None:
    template = cache_built_under_load / "templates" / template_key()
    assert (cache_built_under_load / "templates" / f"{template_key()}.done").is_file()
    assert missing_template_files(template) == []
    # What OSWorld's history and cookie getters and its update_browse_history step read,
    # at the paths they read (Chromium on Linux keeps cookies in Default/Cookies).
    assert "urls" in table_names(template / CHROME_DEFAULT / "History")
    assert "cookies" in table_names(template / CHROME_DEFAULT / "Cookies")
    assert "keywords" in table_names(template / CHROME_DEFAULT / "Web Data")
    assert not (template / CHROME_DEFAULT / "Network" / "Cookies").exists()
    prefs = json.loads((template / CHROME_DEFAULT / "Preferences").read_text())
    assert prefs["profile"]["exit_type"] == "Normal"
    assert prefs["browser"]["has_seen_welcome_page"] is True


def test_preparing_says_that_the_template_is_built_and_how_long_it_took(
    built_under_load: tuple[Path, list[str]], tmp_path: Path
) -> None:
    cache, said = built_under_load
    assert said[0] == TEMPLATE_BUILDING.format(cache=cache / "templates")
    assert re.fullmatch(TEMPLATE_BUILT.replace("({seconds:.0f} s)", r"\(\d+ s\)"), said[1])
    assert len(said) == 2
    # Ready: the next run's controller says nothing and builds nothing.
    assert prepare(cache, tmp_path) == []


def test_a_template_missing_a_required_file_is_rebuilt(
    cache_built_under_load: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    template = cache_built_under_load / "templates" / template_key()
    cookies = template / CHROME_DEFAULT / "Cookies"
    cookies.unlink()
    said = prepare(cache_built_under_load, tmp_path)
    assert said[0].startswith("building the local desktop's home template")
    err = capfd.readouterr().err
    assert f"{CHROME_DEFAULT}/Cookies is missing); rebuilding it" in err
    assert "cookies" in table_names(cookies)
    assert missing_template_files(template) == []
