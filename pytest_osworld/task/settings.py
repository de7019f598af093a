"""The run's settings: what the command-line options and ini values resolved to.

:mod:`pytest_osworld.plugin.settings` declares the options and resolves them into one
:class:`Settings`, once, at configure; every layer above the task model reads the run's
choices from it (the live view, the OmniACT items, the reports, the commands) without
knowing how they were given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest


@dataclass(frozen=True)
class Settings:
    """The resolved settings of a run (plain values, safe to pass to workers)."""

    agent: str | None
    agent_args: dict[str, str]
    model: str | None
    provider: str
    provider_args: dict[str, str]
    max_steps: int
    task_timeout: float
    observation_type: str
    action_space: str
    results_dir: Path
    asset_cache: Path
    pass_threshold: float
    offline: bool
    manifest: Path | None
    known_broken: Path | None
    solutions: Path | None = None
    repeat: int = 1
    skip_done: bool = False
    rescore: Path | None = None
    record: bool = False
    live: bool = False
    pause_on_fail: bool = False
    record_solutions: Path | None = None
    #: ``(K, N)`` with ``--shard K/N``; None runs every task.
    shard: tuple[int, int] | None = None
    shard_durations: Path | None = None
    #: Set at collection when sharded: the sha256 of every task of the whole run before the
    #: split (:func:`pytest_osworld.plugin.shards.tasks_fingerprint`), equal in all its shards.
    shard_tasks_sha256: str | None = None
    sources: dict[str, str] = field(default_factory=dict)
    #: ``--omniact-scoring``: the scoring that decides OmniACT items (``official`` or ``paper``).
    omniact_scoring: str = "official"
    #: ``--budgets``: the smaller step budgets each task is also scored at, ascending, each
    #: below ``max_steps`` (empty: none).
    budgets: tuple[int, ...] = ()

    @property
    def shard_label(self) -> str | None:
        """``"K/N"`` when sharded, else None."""
        return f"{self.shard[0]}/{self.shard[1]}" if self.shard else None

    def header_lines(self) -> list[str]:
        """The active settings, for the report header."""
        model = f" model={self.model}" if self.model else ""
        lines = [
            f"osworld: agent={self.agent or '(none)'}{model} provider={self.provider} "
            f"observation={self.observation_type} actions={self.action_space} "
            f"max_steps={self.max_steps} pass>={self.pass_threshold:g}"
            + (f" budgets={','.join(map(str, self.budgets))}" if self.budgets else "")
            + (" offline" if self.offline else "")
            + (f" shard={self.shard_label}" if self.shard else "")
            + (f" omniact_scoring={self.omniact_scoring}" if self.omniact_scoring != "official" else ""),
            f"osworld: results={self.results_dir} asset_cache={self.asset_cache}"
            + (f" solutions={self.solutions}" if self.solutions else ""),
        ]
        if self.provider == "vagrant" and self.provider_args.get("server") == "osworld":
            netns = self.provider_args.get("netns")
            where = f"network namespace {netns}" if netns else "host-only network"
            lines.append(
                "osworld: server=osworld: the VM image's own server answers with NO TOKEN "
                f"(any command, as a sudo user); the VM is reachable only on a {where}"
            )
        return lines

    def shard_provenance(self) -> dict[str, Any]:
        """``shard`` ("K/N") and ``shard_tasks_sha256`` with ``--shard``; empty without it."""
        if self.shard is None:
            return {}
        return {"shard": self.shard_label, "shard_tasks_sha256": self.shard_tasks_sha256}


#: Where a pytest run keeps its :class:`Settings` (``config.stash[SETTINGS_KEY]``).
SETTINGS_KEY = pytest.StashKey[Settings]()
