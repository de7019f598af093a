"""What each process of a local desktop session costs per task: CPU seconds and memory.

Restores a desktop as a task would (the warm spare had ``--spare-wait`` seconds to start),
waits ``--seconds`` (30: past the settle wait of most tasks), then reads every process of
the sandbox from ``/proc``: its CPU seconds since it started (user and system) and its
resident memory. Every process in the sandbox started with that desktop, so the figures are
its cost per task. A process's CPU seconds include those of its children that have exited
(Linux adds them to the parent that reaps them): a program that starts, works and exits
(GStreamer's plugin scanner, a D-Bus service that quits when idle) counts under the process
that reaped it, ``bwrap`` (the sandbox's first process) for the orphans. Prints one line per
program (processes of one command summed), the most costly first, and the sandbox's total.

    .venv/bin/python bench/bench_session_processes.py --session gnome --runs 3
    .venv/bin/python bench/bench_session_processes.py --session openbox --runs 3

With ``--runs N`` the figures are medians over N desktops.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from pytest_osworld.guest_client.api import Guest
from pytest_osworld.providers.base import ProviderConfig
from pytest_osworld.providers.local import LocalProvider

#: Each process's ``stat`` and ``statm`` and its command, one line each.
READ_PROCESSES = (
    'for p in /proc/[0-9]*; do s=$(cat "$p/stat" 2>/dev/null) && m=$(cat "$p/statm" 2>/dev/null)'
    ' && c=$(tr "\\0" " " < "$p/cmdline" 2>/dev/null | cut -c1-80) && echo "$s|$m|$c"; done'
)
#: Clock ticks per second (Linux's USER_HZ).
TICKS = 100
PAGE_MIB = 4096 / 2**20


def program(command: str, comm: str) -> str:
    """A short name for a process: its executable's base name and, for interpreters and
    services, the first argument that tells them apart."""
    parts = command.split()
    if not parts:
        return comm
    name = Path(parts[0]).name
    if name in {"python3", "python", "gjs", "sh", "bash"} and len(parts) > 1:
        return f"{name} {Path(parts[1]).name}"
    return name


def costs(guest: Guest) -> dict[str, tuple[float, float]]:
    """CPU seconds and resident MiB of each program in the sandbox now."""
    output = guest.execute(READ_PROCESSES, shell=True, timeout=30.0).output
    found: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for line in output.splitlines():
        stat, _, rest = line.partition("|")
        statm, _, command = rest.partition("|")
        if ")" not in stat or not statm:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        # utime, stime, then cutime, cstime: the children it has reaped
        cpu = sum(int(value) for value in fields[11:15]) / TICKS
        resident = int(statm.split()[1]) * PAGE_MIB
        entry = found[program(command, comm)]
        entry[0] += cpu
        entry[1] += resident
    return {name: (cpu, mib) for name, (cpu, mib) in found.items()}


def main(argv: list[str]) -> int:
    """Measure and print."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--session", default="gnome", choices=("gnome", "openbox"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=30.0, help="how long after the restore")
    parser.add_argument("--spare-wait", type=float, default=10.0, help="time the warm spare had to start")
    args = parser.parse_args(argv)
    config = ProviderConfig(worker_id="procs", work_dir=tempfile.mkdtemp(), options={"session": args.session})
    provider = LocalProvider(config)
    provider.start()
    runs: list[dict[str, tuple[float, float]]] = []
    try:
        provider.restore("init_state")
        for _ in range(args.runs):
            time.sleep(args.spare_wait)
            started = time.monotonic()
            env = provider.restore("init_state")
            time.sleep(max(0.0, started + args.seconds - time.monotonic()))
            runs.append(costs(env.guest))
    finally:
        provider.stop()
    names = sorted({name for run in runs for name in run})
    rows = []
    for name in names:
        cpu = statistics.median(run.get(name, (0.0, 0.0))[0] for run in runs)
        mib = statistics.median(run.get(name, (0.0, 0.0))[1] for run in runs)
        rows.append((cpu, mib, name))
    rows.sort(reverse=True)
    total_cpu = statistics.median(sum(c for c, _ in run.values()) for run in runs)
    total_mib = statistics.median(sum(m for _, m in run.values()) for run in runs)
    print(f"session {args.session}: {args.runs} desktops, {args.seconds:.0f} s after each restore (medians)")
    print(f"{'CPU s':>7} {'RSS MiB':>8}  program")
    for cpu, mib, name in rows:
        if cpu >= 0.01 or mib >= 5:
            print(f"{cpu:7.2f} {mib:8.1f}  {name}")
    print(f"{total_cpu:7.2f} {total_mib:8.1f}  all (resident memory counts shared pages once per process)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
