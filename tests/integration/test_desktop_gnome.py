"""The local desktop's ``gnome`` session: GNOME Shell with Ubuntu's top bar and dock.

A restored desktop shows the top bar and the dock on the left (pixels of the screenshot),
its accessibility tree has gnome-shell as an application with the Activities button and
the dock's favourites, a click on the dock's Thunderbird (found in the tree, not at a
fixed place) opens Thunderbird, and GNOME Settings opens at a panel as a user opens it.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import time
from pathlib import Path

import pytest
from PIL import Image, ImageStat

from pytest_osworld.providers.base import Environment
from pytest_osworld.providers.local import LocalProvider

pytestmark = [
    pytest.mark.desktop,
    pytest.mark.skipif(shutil.which("gnome-shell") is None, reason="gnome-shell is not installed"),
]

#: The dock's favourites, as the session's settings list them (Chrome first, as OSWorld's).
FAVOURITES = (
    "Google Chrome",
    "Thunderbird",
    "VLC media player",
    "LibreOffice Writer",
    "LibreOffice Calc",
    "LibreOffice Impress",
    "Files",
    "GNU Image Manipulation Program",
)


def shell_tree(env: Environment, timeout: float = 20.0) -> str:
    """The tree once gnome-shell's dock lists its favourites (it fills in just after start)."""
    deadline = time.monotonic() + timeout
    while True:
        tree = env.guest.accessibility_tree()
        if 'name="Thunderbird"' in tree or time.monotonic() > deadline:
            return tree
        time.sleep(0.5)


def test_top_bar_and_dock_on_screen_and_in_the_tree(gnome: LocalProvider, tmp_path: Path) -> None:
    env = gnome.restore("init_state")
    assert "gnome session" in env.image
    tree = shell_tree(env)
    assert '<application name="gnome-shell">' in tree
    assert 'name="Activities"' in tree
    for name in FAVOURITES:
        match = re.search(
            rf'push-button name="{re.escape(name)}"[^>]*cp:screencoord="\((\d+), (\d+)\)"', tree
        )
        assert match, f"dock item {name!r} is not on screen in the tree"
        assert int(match.group(1)) < 80, f"dock item {name!r} is not on the left: {match.group(0)}"
    shot = Image.open(io.BytesIO(env.guest.screenshot())).convert("RGB")
    shot.save(tmp_path / "gnome.png")
    assert shot.size == (1920, 1080)
    top_bar = ImageStat.Stat(shot.crop((300, 0, 900, 20))).mean
    dock = ImageStat.Stat(shot.crop((0, 600, 70, 900))).mean
    desktop = ImageStat.Stat(shot.crop((800, 400, 1200, 700))).mean
    assert max(top_bar) < 60, f"no dark top bar: {top_bar}"
    assert max(dock) < 60, f"no dark dock on the left: {dock}"
    assert max(desktop) > 60, f"the desktop behind them is as dark as they are: {desktop}"
    assert "Activities" not in env.guest.execute(["wmctrl", "-l"]).output  # no overview window


def test_waits_walk_only_the_application_they_wait_on(gnome: LocalProvider) -> None:
    """A wait with ``app=`` reads only the applications so named (any case): the others,
    the shell included, are asked their name and nothing more."""
    env = gnome.restore("init_state")
    shell_tree(env)
    listed = (
        env.guest.run_python(
            "import json\n"
            "from pytest_osworld.guest.waits import desktop_tree\n"
            "for app in (None, 'SHELL', 'no such app'):\n"
            "    print(json.dumps([[a.get('name'), len(list(a.iter()))] for a in desktop_tree(app)]))"
        )
        .output.strip()
        .splitlines()[-3:]
    )
    every, shell, nothing = (json.loads(line) for line in listed)
    assert "gnome-shell" in dict(every) and len(every) > 1, every
    # The shell alone, read in full. The two walks are not the same instant, and the shell's
    # tree changes between them (one CI run counted 1,447 elements, then 1,411), so its
    # size is compared within a tenth, not exactly: a walk that asked only its name has 1.
    assert [name for name, _ in shell] == ["gnome-shell"], shell
    assert abs(shell[0][1] - dict(every)["gnome-shell"]) <= dict(every)["gnome-shell"] / 10, (shell, every)
    assert nothing == []


def test_gtk_apps_get_ubuntus_theme_and_font_at_ready(gnome: LocalProvider) -> None:
    """GNOME's XSETTINGS daemon hands the session's settings to GTK apps: a GTK 3 app
    started as soon as the desktop is ready (no waiting) gets Yaru and the Ubuntu font, as
    on Ubuntu, not GTK's Adwaita and Sans 10."""
    env = gnome.restore("init_state")
    probe = (
        "import gi; gi.require_version('Gtk', '3.0'); from gi.repository import Gtk; "
        "s = Gtk.Settings.get_default(); "
        "print(s.props.gtk_theme_name, s.props.gtk_icon_theme_name, s.props.gtk_font_name, sep='|')"
    )
    result = env.guest.execute(["python3", "-c", probe])
    assert result.output.strip().splitlines()[-1:] == ["Yaru|Yaru|Ubuntu 11"], result.output


def test_a_desktop_starts_with_the_shaders_its_first_window_and_menus_need(gnome: LocalProvider) -> None:
    """The home template holds the shader cache of a desktop that drew a terminal window, its
    menus and the overview (the provider's warm-up, before its first restore), so a desktop
    doing that again compiles few shaders of its own. Without it, the same exercise compiled
    13 to 17 in every desktop (the first window's alone a dozen)."""
    env = gnome.restore("init_state")
    code = (
        "from pytest_osworld.guest.shader_warm_up import cache_entries, exercise\n"
        "before = cache_entries()\nprint(before, exercise() - before)"
    )
    result = env.guest.run_python(code, timeout=60.0)
    assert result.returncode == 0, result.error or result.output
    start, compiled = (int(n) for n in result.output.split()[-2:])
    assert start >= 20 and compiled <= 6, result.output


def test_a_desktop_starts_with_gstreamers_plugin_registry(gnome: LocalProvider) -> None:
    """The home template holds GStreamer's plugin registry, so the screencast service GNOME
    Shell starts with it does not scan every plugin again (about 1 CPU-second a desktop): the
    registry a desktop has 10 s after its restore is still the template's, older than the
    restore. Without it, each desktop wrote its own within a few seconds of its start."""
    restored = time.time()
    env = gnome.restore("init_state")
    time.sleep(10)
    found = env.guest.execute(["sh", "-c", "stat -c %Y ~/.cache/gstreamer-1.0/registry.*.bin"])
    assert found.returncode == 0, f"no GStreamer registry in the home: {found.output}"
    assert int(found.output.split()[0]) < restored, "the desktop wrote its own registry"


def test_each_ubuntu_font_face_is_one_file_with_latin_and_digits(gnome: LocalProvider) -> None:
    """The Ubuntu font the apps get is one face per weight and style, each with the digits
    and Latin letters: with a file per script under one name (as Fontsource ships it),
    LibreOffice took the first one fontconfig listed and drew its UI's digits as boxes."""
    env = gnome.restore("init_state")
    faces = env.guest.execute(["fc-list", "Ubuntu:style=Regular", "file"]).output.split()
    latin = env.guest.execute(["fc-list", "Ubuntu:style=Regular:charset=30-39 41-5a 61-7a", "file"])
    assert len(faces) == 1 and latin.output.split() == faces, (faces, latin.output)


def test_thunderbird_opens_from_the_dock(gnome: LocalProvider) -> None:
    env = gnome.restore("init_state")
    tree = shell_tree(env)
    match = re.search(
        r'push-button name="Thunderbird"[^>]*cp:screencoord="\((\d+), (\d+)\)" cp:size="\((\d+), (\d+)\)"',
        tree,
    )
    assert match, "no Thunderbird in the dock"
    x, y, width, height = map(int, match.groups())
    env.guest.run_python(f"pyautogui.click({x + width // 2}, {y + height // 2})")
    deadline = time.monotonic() + 90
    windows = ""
    while time.monotonic() < deadline:
        windows = env.guest.execute(["wmctrl", "-lx"]).output
        if "thunderbird" in windows.lower():
            break
        time.sleep(1)
    assert "thunderbird" in windows.lower(), f"Thunderbird did not open from the dock:\n{windows}"


def test_open_settings_shows_a_panel_below_the_sidebars_fold(gnome: LocalProvider) -> None:
    """The solutions' way into GNOME Settings: the top bar's system menu, then a sidebar
    row that is out of view until the sidebar scrolls; its panel's own check box shows."""
    env = gnome.restore("init_state")
    shell_tree(env)
    opened = env.guest.run_python(
        "from pytest_osworld.guest.gnome_settings import open_settings\n"
        "from pytest_osworld.guest.waits_gtk4 import wait_gtk4_element\n"
        "row = open_settings('Accessibility')\n"
        "box = wait_gtk4_element('check box', 'Large Text', app='control', window='Settings')\n"
        "print('opened', row.name, 'showing', box.name)",
        timeout=120,
    )
    assert "opened Accessibility showing Large Text" in opened.output, opened


def test_desktop_env_reset_shows_the_shell(tmp_path: Path) -> None:
    """OSWorld's front door on the default provider (the gnome session): the first
    observation after ``reset()`` already has the top bar and the dock, on screen and in
    the tree (no waiting)."""
    from pytest_osworld.env import DesktopEnv

    env = DesktopEnv(action_space="pyautogui", results_dir=tmp_path / "results")
    try:
        observation = env.reset()
    finally:
        env.close()
    tree = observation["accessibility_tree"]
    assert '<application name="gnome-shell">' in tree
    assert 'name="Activities"' in tree
    for name in FAVOURITES:
        assert f'push-button name="{name}"' in tree, f"dock item {name!r} is not in the first tree"
    shot = Image.open(io.BytesIO(observation["screenshot"])).convert("RGB")
    assert max(ImageStat.Stat(shot.crop((300, 0, 900, 20))).mean) < 60, "no dark top bar"
    assert max(ImageStat.Stat(shot.crop((0, 600, 70, 900))).mean) < 60, "no dark dock on the left"
