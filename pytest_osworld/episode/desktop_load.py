"""How busy the programs that setup started are, for the settle wait: CPU used and waited for.

A program that is still starting (LibreOffice loading its document, GIMP its plug-ins behind
a splash) keeps a CPU busy between the bursts in which it draws; once it has drawn what it
shows, it is idle. :class:`DemandProbe` asks the guest, through ``/execute`` (which every
guest server offers, OSWorld's own included), for each process's CPU time and its time spent
waiting for a CPU (``/proc/<pid>/schedstat``), and gives the *demand* between two looks: the
seconds of CPU the programs used or waited for. Waiting counts because on a loaded machine a
starting program gets little CPU while it still wants it.

Only processes that were not there before setup count (the probe is given the ones that
were): the programs setup started and whatever they started. The desktop's own processes
(the shell, the X server, the guest server, a VM's daemons) are left out, so their own load,
which differs from one desktop to the next, does not decide. The probing process is left out
too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pytest_osworld.errors import GuestError
from pytest_osworld.guest_client.api import Guest

#: The prober's own pid, then ``/proc/<pid>/schedstat:<cpu ns> <wait ns> <slices>`` for every
#: process, by one ``grep`` (the shell ``exec``s it, so the pid it printed is grep's own).
PROBE = 'echo $$; exec grep -H "" /proc/[0-9]*/schedstat'


def parse_probe(output: str) -> dict[str, float]:
    """Each process's seconds of CPU used plus waited for, from :data:`PROBE`'s output (the
    prober itself left out)."""
    lines = output.splitlines()
    prober = lines[0].strip() if lines else ""
    found: dict[str, float] = {}
    for line in lines[1:]:
        path, _, values = line.partition(":")
        pid = path.removeprefix("/proc/").removesuffix("/schedstat")
        numbers = values.split()
        if (
            pid.isdigit()
            and pid != prober
            and len(numbers) >= 2
            and numbers[0].isdigit()
            and numbers[1].isdigit()
        ):
            found[pid] = (int(numbers[0]) + int(numbers[1])) / 1e9
    return found


@dataclass
class DemandProbe:
    """The CPU demand of the processes not in ``before`` between successive :meth:`sample` calls."""

    guest: Guest
    #: The processes that were there before setup (:meth:`processes`), which do not count.
    before: frozenset[str] = frozenset()
    #: False once the guest could not answer (no ``/proc``, no shell): the wait then goes
    #: by the windows and the screen alone.
    available: bool = True
    _last: dict[str, float] | None = field(default=None, repr=False)

    def processes(self) -> frozenset[str]:
        """The pids there are now (empty, and :attr:`available` False, if the guest cannot say)."""
        return frozenset(self._read() or ())

    def _read(self) -> dict[str, float] | None:
        if not self.available:
            return None
        try:
            answer = self.guest.execute(["sh", "-c", PROBE], timeout=10.0)
        except GuestError:
            self.available = False
            return None
        found = parse_probe(answer.output)
        if not found:
            self.available = False
            return None
        return found

    def sample(self) -> float | None:
        """Seconds of CPU used or waited for since the previous sample by the processes not in
        :attr:`before` (None for the first sample, and when the guest cannot say)."""
        now = self._read()
        if now is None:
            return None
        now = {pid: seconds for pid, seconds in now.items() if pid not in self.before}
        last, self._last = self._last, now
        if last is None:
            return None
        # A process that ended since the last sample drops out; a new one counts from its start.
        return sum(max(seconds - last.get(pid, 0.0), 0.0) for pid, seconds in now.items())
