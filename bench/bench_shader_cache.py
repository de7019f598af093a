"""What the home template's shader cache saves GNOME Shell when a task opens its first window.

Restores gnome desktops one after another (each had ``--spare-wait`` seconds to start as a
warm spare), lets each sit ``--idle`` seconds, then opens a terminal and its context menu as
a task's first steps would, and reads gnome-shell's CPU seconds (user and system, from
``/proc``) over that: once with the shader cache the template gave the desktop, once with the
cache deleted just before (so the window's and the menu's shaders are compiled there, as
they were before the template held them). Alternates the two ``--runs`` times each and prints
the medians, and how many shaders each desktop compiled for them.

    .venv/bin/python bench/bench_shader_cache.py --runs 3
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time

from pytest_osworld.guest_client.api import Guest
from pytest_osworld.providers.base import ProviderConfig
from pytest_osworld.providers.local import LocalProvider

#: gnome-shell's CPU seconds (user + system, clock ticks of 1/100 s).
SHELL_CPU = "awk '{print ($14 + $15) / 100}' /proc/$(pgrep -x gnome-shell | head -1)/stat"
#: The shader cache's entries.
ENTRIES = "find ~/.cache/mesa_shader_cache -type f 2>/dev/null | wc -l"
#: A task's first steps: a terminal, then its context menu.
FIRST_STEPS = (
    "import subprocess, time\n"
    "from pytest_osworld.guest.waits import wait_window\n"
    "subprocess.Popen(['gnome-terminal'])\n"
    "wait_window(wm_class='gnome-terminal', timeout=20, activate=True)\n"
    "time.sleep(1.0)\n"
    "w, h = pyautogui.size()\n"
    "pyautogui.rightClick(w // 2, h // 2)\n"
    "time.sleep(1.0)\n"
    "pyautogui.press('escape')\n"
)
#: Time left after the steps for the shell to finish drawing them.
AFTER = 3.0


def _number(guest: Guest, command: str) -> float:
    return float(guest.execute(["bash", "-c", command]).output.split()[-1])


def measure(guest: Guest, keep_cache: bool) -> tuple[float, int]:
    """gnome-shell's CPU seconds for the first steps, and the shaders compiled for them."""
    if not keep_cache:
        guest.execute(["bash", "-c", "find ~/.cache/mesa_shader_cache -mindepth 2 -type f -delete"])
    entries = int(_number(guest, ENTRIES))
    before = _number(guest, SHELL_CPU)
    done = guest.run_python(FIRST_STEPS, timeout=40.0)
    if done.returncode != 0:
        raise RuntimeError(f"the first steps failed: {done.error or done.output}")
    time.sleep(AFTER)
    return _number(guest, SHELL_CPU) - before, int(_number(guest, ENTRIES)) - entries


def main(argv: list[str]) -> int:
    """Measure and print."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--idle", type=float, default=10.0, help="seconds a desktop sits before the steps")
    parser.add_argument("--spare-wait", type=float, default=10.0, help="time the warm spare had to start")
    args = parser.parse_args(argv)
    config = ProviderConfig(worker_id="shaders", work_dir=tempfile.mkdtemp(), options={"session": "gnome"})
    provider = LocalProvider(config)
    provider.start()
    found: dict[bool, list[tuple[float, int]]] = {True: [], False: []}
    try:
        provider.restore("init_state")
        for _ in range(args.runs):
            for keep in (True, False):
                time.sleep(args.spare_wait)
                env = provider.restore("init_state")
                time.sleep(args.idle)
                found[keep].append(measure(env.guest, keep))
    finally:
        provider.stop()
    print(f"gnome-shell for a first terminal and its context menu ({args.runs} desktops each, medians)")
    for keep, label in ((True, "template's cache"), (False, "cache deleted")):
        cpu = statistics.median(c for c, _ in found[keep])
        compiled = statistics.median(n for _, n in found[keep])
        print(f"  {label:17s} {cpu:5.2f} CPU s, {compiled:4.1f} shaders compiled")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
