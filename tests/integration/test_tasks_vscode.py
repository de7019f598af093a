"""The VS Code tasks of the offline suite, proven both ways on a real desktop.

VS Code in the local desktop is code-server (installed by scripts/install.sh into
``.cache/code-server``) in a Chromium app window, started by ``local_desktop/bin/code``.
For every task, a deliberately wrong end state (a one-line change of the solution, listed
in ``WRONG`` with the reason) must score less than 1.0. Without code-server the tasks must
be skipped, naming the missing program.
The other way, the reference solution scoring 1.0 through the plugin, is checked for
every task by ``scripts/selfcheck.py`` (CI runs it after the tests).
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from task_harness import run_task, with_solution_line

from pytest_osworld.errors import NeedsCapability
from pytest_osworld.providers.local import LocalProvider
from pytest_osworld.task.model import load_task

pytestmark = pytest.mark.desktop

ROOT = Path(__file__).resolve().parents[2]
TASKS = ROOT / "tasks"
CODE_SERVER = ROOT / ".cache" / "code-server" / "node_modules" / "code-server"
INSTALLED = (CODE_SERVER / "out" / "node" / "entry.js").is_file()
needs_code = pytest.mark.skipif(not INSTALLED, reason="code-server is not installed (scripts/install.sh)")

#: Every VS Code task file (relative to ``tasks/``).
VSCODE_TASKS = [
    "vs_code/f7b59661-11fb-4ed5-ad62-78a2ec63ab15.json",
    "vs_code/ce328979-ee56-4332-ab3d-707ae6b2fc30.json",
    "vs_code/3e8d3c84-2fae-4028-bb16-a643406916c6.json",
    "vs_code/541fc66d-b9ec-4d04-a25b-1a13c1d78810.json",
]

#: (task file, solution line, replacement, why the end state is wrong).
WRONG = [
    (
        "vs_code/f7b59661-11fb-4ed5-ad62-78a2ec63ab15.json",
        2,
        "from pytest_osworld.guest.waits import click_element, wait_element\n"
        "pyautogui.hotkey('ctrl', 'f')\n"
        "wait_element('entry', 'Search settings', app='Chromium', partial=True, state='focused', timeout=10)\n"
        "pyautogui.hotkey('ctrl', 'a')\npyautogui.write('@id:files.trimFinalNewlines', interval=0.02)",
        "turns on trimming final newlines instead of inserting one",
    ),
    (
        "vs_code/ce328979-ee56-4332-ab3d-707ae6b2fc30.json",
        0,
        "from pytest_osworld.guest.waits import wait_element\n"
        "pyautogui.hotkey('ctrl', 'k')\npyautogui.hotkey('ctrl', 't')\n"
        "wait_element('entry', 'Select Color Theme', app='Chromium', partial=True, timeout=20)\n"
        "pyautogui.write('Solarized Light', interval=0.02)\n"
        "wait_element('list-item', 'Solarized Light', app='Chromium', state='selected', timeout=20)",
        "picks Solarized Light",
    ),
    (
        "vs_code/3e8d3c84-2fae-4028-bb16-a643406916c6.json",
        3,
        "pyautogui.hotkey('ctrl', 'alt', 'i')",
        "binds Ctrl+Alt+I instead of Ctrl+Alt+U",
    ),
    (
        "vs_code/541fc66d-b9ec-4d04-a25b-1a13c1d78810.json",
        1,
        "import time\npyautogui.write('calc_total', interval=0.04)\npyautogui.press('tab')\n"
        "pyautogui.write('computeTotal', interval=0.04)\ntime.sleep(1.5)",
        "renames the function to computeTotal",
    ),
]


@needs_code
@pytest.mark.parametrize(("name", "index", "replacement", "why"), WRONG, ids=[w[0] for w in WRONG])
def test_wrong_end_state_scores_below_one(
    desktop: LocalProvider, tmp_path: Path, name: str, index: int, replacement: str, why: str
) -> None:
    """A one-line change of the solution leaves a wrong end state, which scores below 1.0."""
    task = with_solution_line(load_task(TASKS / name), index, replacement)
    _, evaluation = run_task(desktop, task, tmp_path)
    assert evaluation.score < 1.0, f"{why}: {evaluation}"


@pytest.mark.skipif(INSTALLED, reason="code-server is installed; the skip path needs it absent")
@pytest.mark.parametrize("name", VSCODE_TASKS)
def test_tasks_skip_without_code_server(desktop: LocalProvider, tmp_path: Path, name: str) -> None:
    """Without code-server, launching ``code`` is a missing program: the task is skipped."""
    with pytest.raises(NeedsCapability, match="'code'"):
        run_task(desktop, TASKS / name, tmp_path)


def _vsix(publisher: str, name: str) -> bytes:
    """A minimal extension package (what ``vsce package`` makes for an empty extension)."""
    package = {
        "name": name,
        "publisher": publisher,
        "version": "0.0.1",
        "engines": {"vscode": "^1.80.0"},
        "displayName": "Offline test extension",
    }
    manifest = (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        '<PackageManifest Version="2.0.0" xmlns="http://schemas.microsoft.com/developer/vsx-schema/2011">'
        f'<Metadata><Identity Language="en-US" Id="{name}" Version="0.0.1" Publisher="{publisher}"/>'
        f"<DisplayName>{name}</DisplayName><Description/></Metadata>"
        '<Installation><InstallationTarget Id="Microsoft.VisualStudio.Code"/></Installation>'
        "<Dependencies/><Assets>"
        '<Asset Type="Microsoft.VisualStudio.Code.Manifest" Path="extension/package.json" Addressable="true"/>'
        "</Assets></PackageManifest>"
    )
    types = (
        '<?xml version="1.0" encoding="utf-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension=".json" ContentType="application/json"/>'
        '<Default Extension=".vsixmanifest" ContentType="text/xml"/></Types>'
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("[Content_Types].xml", types)
        archive.writestr("extension.vsixmanifest", manifest)
        archive.writestr("extension/package.json", json.dumps(package))
    return buffer.getvalue()


@needs_code
def test_code_cli_lists_and_installs_extensions_offline(desktop: LocalProvider) -> None:
    """``code --version``, ``--install-extension X.vsix`` and ``--list-extensions`` work offline,
    also in OSWorld's un-piped ``code --list-extensions | grep ID`` form."""
    guest = desktop.restore("init_state").guest
    version = guest.execute(["code", "--version"])
    assert version.returncode == 0 and version.output.startswith("1."), version
    assert guest.execute(["code", "--list-extensions"]).output.strip() == ""
    guest.upload_file("/home/user/offline-test.vsix", _vsix("pytest-osworld", "offline-test"))
    installed = guest.execute(["code", "--install-extension", "/home/user/offline-test.vsix"])
    assert installed.returncode == 0, installed
    listed = guest.execute(["code", "--list-extensions", "|", "grep", "pytest-osworld.offline-test"])
    assert "pytest-osworld.offline-test" in listed.output, listed
    assert (guest.execute(["ls", "/home/user/.vscode/extensions"]).output or "").strip()


def test_every_vscode_task_has_a_wrong_variant() -> None:
    """The table covers each task once, and each replacement really changes the solution."""
    assert sorted(w[0] for w in WRONG) == sorted(VSCODE_TASKS)
    assert sorted(p.relative_to(TASKS).as_posix() for p in (TASKS / "vs_code").glob("*.json")) == sorted(
        VSCODE_TASKS
    )
    for name, index, replacement, _ in WRONG:
        solution = load_task(TASKS / name).solution
        assert solution is not None and solution[index] != replacement
