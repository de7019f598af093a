"""Runs without a network say so once, before any task starts.

Most of OSWorld's tasks download their files in setup. Without a network each of them
restores a desktop, tries its downloads and ends as an ERROR, one by one. This module
looks at the collected tasks before any of them runs: the URLs they would download that
are not in the asset cache, grouped by host; a probe of those hosts (name resolution, then
a TCP connection, through the proxy that ``urllib`` would use); and, when none of them can
be reached, one line that says how many tasks cannot succeed and what to do instead
(``--offline`` or ``pytest-osworld-fetch``). The tasks still run and end as ERROR with
their own reasons, so the denominator stays honest.
"""

from __future__ import annotations

import concurrent.futures
import errno
import socket
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import pytest

from pytest_osworld.task.assets import AssetCache, AssetError, task_asset_urls
from pytest_osworld.task.model import Task
from pytest_osworld.task.settings import Settings

#: The line printed once when no host the collected tasks download from can be reached.
NO_NETWORK = (
    "pytest-osworld: no network: {count} of {total} collected task(s) download files that are "
    "not in the asset cache, and {reason}; they will end as ERROR. Run with --offline to skip "
    "them, or fill the cache first with `pytest-osworld-fetch TASK_PATHS` on a machine with a network"
)
#: Hosts probed at most (the ones most tasks need first).
MAX_HOSTS = 3
#: Seconds allowed for one host's name resolution and for one connection.
PROBE_TIMEOUT = 3.0
#: Connection errors that mean "no route", not "slow".
_UNREACHABLE = {errno.ECONNREFUSED, errno.ENETUNREACH, errno.EHOSTUNREACH, errno.EADDRNOTAVAIL}


@dataclass(frozen=True)
class Needs:
    """The collected tasks that download files not in the cache, by host."""

    total: int
    by_host: dict[str, tuple[str, set[str]]]
    """host -> (one URL of it, the task ids that need that host)."""


def uncached_downloads(tasks: Iterable[Task], assets: AssetCache) -> Needs:
    """The http(s) files ``tasks`` would download that ``assets`` does not hold yet."""
    total = 0
    by_host: dict[str, tuple[str, set[str]]] = {}
    for task in tasks:
        total += 1
        for url in task_asset_urls(task):
            parts = urllib.parse.urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                continue
            try:
                if assets.is_cached(url, task.path.parent):
                    continue
            except AssetError:
                continue  # a bad URL is the task's own error, reported when it runs
            _example, ids = by_host.setdefault(parts.hostname, (url, set()))
            ids.add(f"{task.domain}/{task.id}")
    return Needs(total=total, by_host=by_host)


def why_unreachable(url: str, timeout: float = PROBE_TIMEOUT) -> str | None:
    """Why ``url``'s host (or the proxy for it) cannot be reached, or None when it can
    (or when the probe cannot tell, e.g. a connection that only times out)."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    proxy = urllib.request.getproxies().get(parts.scheme)
    if proxy and not urllib.request.proxy_bypass(host):
        proxied = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
        host, port = proxied.hostname or "", proxied.port or 8080
        what = f"the proxy {host}:{port} for {parts.hostname}"
    else:
        what = host
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    try:
        addresses = pool.submit(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM).result(timeout)
    except socket.gaierror as exc:
        return f"{what} does not resolve ({exc.strerror})"
    except (concurrent.futures.TimeoutError, OSError):
        return None
    finally:
        pool.shutdown(wait=False)
    last = ""
    for family, kind, proto, _name, address in addresses:
        try:
            with socket.socket(family, kind, proto) as sock:
                sock.settimeout(timeout)
                sock.connect(address)
            return None
        except OSError as exc:
            if exc.errno not in _UNREACHABLE:
                return None
            last = exc.strerror or str(exc)
    return f"{what} cannot be reached ({last})" if last else None


def no_network_line(
    tasks: Iterable[Task],
    assets: AssetCache,
    *,
    probe: Callable[[str], str | None] = why_unreachable,
) -> str | None:
    """The one line to print when none of the hosts the tasks need can be reached, else None.

    Nothing is probed with ``--offline`` (such tasks are skipped) or when every file is
    cached. A host that answers means the network is there: the tasks' own downloads then
    report what fails, one by one.
    """
    if assets.offline:
        return None
    needs = uncached_downloads(tasks, assets)
    if not needs.by_host:
        return None
    hosts = sorted(needs.by_host, key=lambda host: (-len(needs.by_host[host][1]), host))[:MAX_HOSTS]
    reasons = []
    for host in hosts:
        reason = probe(needs.by_host[host][0])
        if reason is None:
            return None
        reasons.append(reason)
    blocked = set().union(*(needs.by_host[host][1] for host in needs.by_host))
    return NO_NETWORK.format(count=len(blocked), total=needs.total, reason="; ".join(reasons))


def announce_no_network(config: pytest.Config, settings: Settings, tasks: Iterable[Task]) -> str | None:
    """Write :func:`no_network_line` in the terminal (and return it) when it applies."""
    line = no_network_line(tasks, AssetCache(settings.asset_cache, offline=settings.offline))
    if line is not None:
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.ensure_newline()
            reporter.write_line(line, yellow=True, bold=True)
        else:
            config.get_terminal_writer().line(line)
    return line
