"""The vagrant provider's diagnostics: log tails cleaned of terminal noise, and the VM's
state asked of libvirt (``virsh domstate --reason``) or of ``vagrant status``, explained.

What the provider appends to its errors and reports when a VM stops answering comes from
here; nothing in this module changes a VM.
"""

from __future__ import annotations

import io
import re
import subprocess
from pathlib import Path

from pytest_osworld.providers.vagrant_config import VagrantOptions

#: Lines of the serial console and of Vagrant's output appended to errors.
CONSOLE_LINES = 40
VAGRANT_LINES = 25


def clean_output(text: str) -> str:
    """Terminal output as a log: colours dropped, ``\\r``-redrawn progress lines collapsed."""
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)
    lines = []
    for line in text.split("\n"):
        parts = [part for part in line.split("\r") if part.strip()]
        lines.append(parts[-1] if parts else "")
    return "\n".join(lines)


def tail(path: Path, lines: int) -> str:
    """The last ``lines`` lines of a text file (empty when it cannot be read)."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, io.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - 200_000))
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return "\n".join(clean_output(text).splitlines()[-lines:])


#: What libvirt's ``domstate --reason`` reasons mean for a VM that should be running.
_DOMSTATE_REASONS = {
    ("shut off", "destroyed"): "powered off during the task",
    ("shut off", "shutdown"): "shut down from inside the guest during the task",
    ("shut off", "crashed"): "stopped by a crash during the task",
    ("shut off", "failed"): "QEMU failed during the task",
    ("crashed", "panicked"): "the guest kernel panicked",
}


def explain_domstate(text: str) -> str:
    """``virsh domstate --reason`` output (``shut off (destroyed)``) as a phrase for errors."""
    match = re.match(r"^\s*([a-z ]+?)\s*(?:\(([^)]*)\))?\s*$", text.splitlines()[0] if text else "")
    if match is None:
        return text.strip()
    state, reason = match.group(1), (match.group(2) or "").strip()
    meaning = _DOMSTATE_REASONS.get((state, reason))
    if meaning is not None:
        return f"{state} ({meaning}; libvirt reason: {reason})"
    if reason:
        return f"{state} (libvirt reason: {reason})"
    return state


def libvirt_state(options: VagrantOptions, machine: str) -> str | None:
    """The domain's state from ``virsh domstate --reason`` (inside ``netns``), explained.

    ``gone (...)`` when libvirt no longer knows the domain; ``None`` when virsh could
    not say.
    """
    args = ["virsh", "-c", options.libvirt_uri, "domstate", "--reason", machine]
    argv = [*(["ip", "netns", "exec", options.netns] if options.netns else []), *args]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode == 0 and proc.stdout.strip():
        return explain_domstate(proc.stdout.strip())
    if "failed to get domain" in proc.stderr or "Domain not found" in proc.stderr:
        return "gone (its libvirt domain no longer exists)"
    return None


def vagrant_status_state(status: str) -> str | None:
    """The state in ``vagrant status --machine-readable`` output: ``running``, or
    ``<state> (vagrant status)``; ``None`` when the output names none."""
    match = re.search(r",state,([A-Za-z_]+)", status)
    if match is None:
        return None
    state = match.group(1)
    return "running" if state == "running" else f"{state} (vagrant status)"
