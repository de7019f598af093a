"""Run settings: command-line options with ini twins, resolved and validated once.

Precedence is ini < command line. Every bad value raises ``pytest.UsageError`` naming
the value, where it came from and what is accepted.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

from pytest_osworld.task.assets import default_cache_dir

OBSERVATION_TYPES = ("screenshot", "a11y_tree", "screenshot_a11y_tree", "som")
ACTION_SPACES = ("pyautogui", "computer_13")
#: What a bad ``--shard`` value is told.
SHARD_PROBLEM = "expected K/N, two whole numbers with 1 <= K <= N, such as 2/4"
#: ``--shard-durations`` given without ``--shard``: it would be ignored.
SHARD_DURATIONS_ALONE = "has no effect without --shard K/N (set both, or neither)"
#: ``--shard-durations`` naming something that is not a folder.
NO_RESULTS_FOLDER = "no such results folder"
_SHARD_RE = re.compile(r"^\s*([0-9]+)\s*/\s*([0-9]+)\s*$")

BAD_VALUE = "{name}={value!r} ({source}): {problem}"

T = TypeVar("T")


@dataclass(frozen=True)
class Option:
    """One setting: its command-line flag, ini name, default and help."""

    dest: str
    flag: str
    ini: str
    help: str
    default: Any = None
    kind: str = "string"  # string | bool | args
    metavar: str | None = None


OPTIONS: tuple[Option, ...] = (
    Option(
        "agent",
        "--agent",
        "osworld_agent",
        "agent to run: a registered name or module:attr",
        metavar="NAME",
    ),
    Option(
        "agent_args",
        "--agent-arg",
        "osworld_agent_args",
        "agent option key=value (repeatable)",
        kind="args",
        metavar="KEY=VALUE",
    ),
    Option("model", "--model", "osworld_model", "model name passed to model agents", metavar="MODEL"),
    Option(
        "provider",
        "--provider",
        "osworld_provider",
        "where desktops come from: local (default), vagrant, remote",
        "local",
        metavar="NAME",
    ),
    Option(
        "provider_args",
        "--provider-arg",
        "osworld_provider_args",
        "provider option key=value (repeatable)",
        kind="args",
        metavar="KEY=VALUE",
    ),
    Option(
        "max_steps",
        "--max-steps",
        "osworld_max_steps",
        "agent calls per task (default 15)",
        "15",
        metavar="N",
    ),
    Option(
        "task_timeout",
        "--task-timeout",
        "osworld_task_timeout",
        "wall-clock budget of one episode in seconds (default 3600)",
        "3600",
        metavar="SECONDS",
    ),
    Option(
        "observation_type",
        "--observation-type",
        "osworld_observation_type",
        f"one of {', '.join(OBSERVATION_TYPES)} (default screenshot)",
        "screenshot",
        metavar="TYPE",
    ),
    Option(
        "action_space",
        "--action-space",
        "osworld_action_space",
        f"one of {', '.join(ACTION_SPACES)} (default pyautogui)",
        "pyautogui",
        metavar="SPACE",
    ),
    Option(
        "results_dir",
        "--results-dir",
        "osworld_results_dir",
        "where trajectories and results go (default ./results/<UTC time> under the folder pytest "
        "was started from)",
        metavar="DIR",
    ),
    Option(
        "asset_cache",
        "--asset-cache",
        "osworld_asset_cache",
        f"asset cache folder (default {default_cache_dir()})",
        metavar="DIR",
    ),
    Option(
        "pass_threshold",
        "--pass-threshold",
        "osworld_pass_threshold",
        "score a task needs to pass (default 1.0)",
        "1.0",
        metavar="SCORE",
    ),
    Option(
        "offline",
        "--offline",
        "osworld_offline",
        "never download assets: tasks whose assets are not cached are skipped",
        False,
        kind="bool",
    ),
    Option(
        "manifest",
        "--manifest",
        "osworld_manifest",
        "run only the tasks listed in an OSWorld manifest such as test_small.json",
        metavar="FILE",
    ),
    Option(
        "repeat",
        "--repeat",
        "osworld_repeat",
        "run each task N times; the summary reports pass@1 with a confidence interval and pass@N",
        "1",
        metavar="N",
    ),
    Option(
        "skip_done",
        "--skip-done",
        "osworld_skip_done",
        "skip tasks that already have a result in --results-dir (resume an interrupted run)",
        False,
        kind="bool",
    ),
    Option(
        "record",
        "--record",
        "osworld_record",
        "record the screen during each episode to recording.mp4 in the task's results folder",
        False,
        kind="bool",
    ),
    Option(
        "live",
        "--live",
        "osworld_live",
        "watch each desktop in a browser while tasks run: prints one link per worker "
        "(loopback only, a secret per desktop); view only until you take over",
        False,
        kind="bool",
    ),
    Option(
        "pause_on_fail",
        "--pause-on-fail",
        "osworld_pause_on_fail",
        "after a task fails or errors, keep its desktop, print the reasons and the live link, "
        "and wait for Enter (e + Enter evaluates again); not with -n",
        False,
        kind="bool",
    ),
    Option(
        "record_solutions",
        "--record-solutions",
        "osworld_record_solutions",
        "with --agent=human: write what you did as reference solutions to FILE (the --solutions "
        "format; tasks already in it are replaced)",
        metavar="FILE",
    ),
    Option(
        "rescore",
        "--rescore",
        "osworld_rescore",
        "re-run only the metrics on the evaluator inputs saved in a results folder, then exit",
        metavar="RESULTS",
    ),
    Option(
        "known_broken",
        "--known-broken",
        "osworld_known_broken",
        "file of known-broken tasks ('<task id>: reason' per line), run as strict xfail",
        metavar="FILE",
    ),
    Option(
        "solutions",
        "--solutions",
        "osworld_solutions",
        "JSON file of reference solutions by task path ('os/<id>.json'), played by --agent=replay",
        metavar="FILE",
    ),
    Option(
        "shard",
        "--shard",
        "osworld_shard",
        "run only shard K of N: every task is in exactly one shard, the same on every machine; "
        "combine the shards' results folders with 'pytest-osworld merge'",
        metavar="K/N",
    ),
    Option(
        "shard_durations",
        "--shard-durations",
        "osworld_shard_durations",
        "balance the shards by the task durations in an earlier run's results folder "
        "(default: by task counts per domain)",
        metavar="RESULTS",
    ),
)


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
            + (" offline" if self.offline else "")
            + (f" shard={self.shard_label}" if self.shard else ""),
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


SETTINGS_KEY = pytest.StashKey["Settings"]()


def add_options(parser: pytest.Parser) -> None:
    """Register the ``osworld`` option group and the ini twins."""
    group = parser.getgroup("osworld", "OSWorld tasks (pytest-osworld)")
    for opt in OPTIONS:
        if opt.kind == "bool":
            group.addoption(opt.flag, action="store_true", dest=opt.dest, default=None, help=opt.help)
            parser.addini(opt.ini, opt.help, type="bool", default=opt.default)
        elif opt.kind == "args":
            group.addoption(
                opt.flag,
                action="append",
                dest=opt.dest,
                default=None,
                metavar=opt.metavar,
                help=opt.help,
            )
            parser.addini(opt.ini, opt.help, type="linelist", default=[])
        else:
            group.addoption(
                opt.flag,
                action="store",
                dest=opt.dest,
                default=None,
                metavar=opt.metavar,
                help=opt.help,
            )
            parser.addini(opt.ini, opt.help, default=opt.default)


def _raw(config: pytest.Config, opt: Option) -> tuple[Any, str]:
    """The value of ``opt`` and where it came from."""
    value = config.getoption(opt.dest)
    if value is not None:
        return value, f"command line {opt.flag}"
    ini = config.getini(opt.ini)
    if opt.kind == "args":
        return list(ini or []), f"ini {opt.ini}"
    if ini not in (None, "", []):
        return ini, f"ini {opt.ini}"
    return opt.default, "default"


def _parse(opt: Option, value: Any, source: str, convert: Callable[[Any], T], problem: str) -> T:
    try:
        return convert(value)
    except (TypeError, ValueError):
        raise pytest.UsageError(
            BAD_VALUE.format(name=opt.flag, value=value, source=source, problem=problem)
        ) from None


def _positive_int(value: Any) -> int:
    number = int(value)
    if number < 1:
        raise ValueError
    return number


def _positive_float(value: Any) -> float:
    number = float(value)
    if not number > 0:
        raise ValueError
    return number


def _threshold(value: Any) -> float:
    number = float(value)
    if not 0.0 <= number <= 1.0:
        raise ValueError
    return number


def _choice(choices: tuple[str, ...]) -> Callable[[Any], str]:
    def convert(value: Any) -> str:
        if value not in choices:
            raise ValueError
        return str(value)

    return convert


def _shard(value: Any) -> tuple[int, int]:
    match = _SHARD_RE.match(str(value))
    if match is None:
        raise ValueError
    index, count = int(match.group(1)), int(match.group(2))
    if not 1 <= index <= count:
        raise ValueError
    return index, count


def _pairs(value: Any) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for item in value:
        key, sep, val = str(item).partition("=")
        if not sep or not key.strip():
            raise ValueError
        pairs[key.strip()] = val
    return pairs


def resolve(config: pytest.Config) -> Settings:
    """Read and validate every option; raise ``pytest.UsageError`` on a bad value."""
    by_dest = {opt.dest: opt for opt in OPTIONS}
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for opt in OPTIONS:
        values[opt.dest], sources[opt.dest] = _raw(config, opt)

    def get(dest: str, convert: Callable[[Any], T], problem: str) -> T:
        return _parse(by_dest[dest], values[dest], sources[dest], convert, problem)

    results = values["results_dir"]
    if results:
        results_dir = Path(results)
    else:
        # Where pytest was started, never the rootdir: without an ini file pytest's rootdir
        # is the common folder of the paths given, which would put results inside a task tree.
        started_in = Path(config.invocation_params.dir)
        results_dir = started_in / "results" / time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())

    def existing_file(dest: str, flag: str) -> Path | None:
        """The file an option names, or None when unset; a usage error if it is missing."""
        path = Path(values[dest]) if values[dest] else None
        if path is not None and not path.is_file():
            raise pytest.UsageError(
                BAD_VALUE.format(name=flag, value=str(path), source=sources[dest], problem="no such file")
            )
        return path

    manifest = existing_file("manifest", "--manifest")
    known = existing_file("known_broken", "--known-broken")
    solutions = existing_file("solutions", "--solutions")
    shard = get("shard", _shard, SHARD_PROBLEM) if values["shard"] else None
    durations = Path(values["shard_durations"]) if values["shard_durations"] else None
    if durations is not None:
        problem = None if shard else SHARD_DURATIONS_ALONE
        problem = problem or (None if durations.is_dir() else NO_RESULTS_FOLDER)
        if problem:
            raise pytest.UsageError(
                BAD_VALUE.format(
                    name="--shard-durations",
                    value=str(durations),
                    source=sources["shard_durations"],
                    problem=problem,
                )
            )
    return Settings(
        agent=values["agent"] or None,
        agent_args=get("agent_args", _pairs, "expected key=value"),
        model=values["model"] or None,
        provider=str(values["provider"]),
        provider_args=get("provider_args", _pairs, "expected key=value"),
        max_steps=get("max_steps", _positive_int, "expected a positive whole number"),
        task_timeout=get("task_timeout", _positive_float, "expected a positive number of seconds"),
        observation_type=get(
            "observation_type",
            _choice(OBSERVATION_TYPES),
            f"expected one of {', '.join(OBSERVATION_TYPES)}",
        ),
        action_space=get(
            "action_space", _choice(ACTION_SPACES), f"expected one of {', '.join(ACTION_SPACES)}"
        ),
        results_dir=results_dir,
        asset_cache=Path(values["asset_cache"]) if values["asset_cache"] else default_cache_dir(),
        pass_threshold=get("pass_threshold", _threshold, "expected a number between 0 and 1"),
        offline=bool(values["offline"]),
        manifest=manifest,
        known_broken=known,
        solutions=solutions,
        repeat=get("repeat", _positive_int, "expected a positive whole number"),
        skip_done=bool(values["skip_done"]),
        rescore=Path(values["rescore"]) if values["rescore"] else None,
        record=bool(values["record"]),
        live=bool(values["live"]),
        pause_on_fail=bool(values["pause_on_fail"]),
        record_solutions=Path(values["record_solutions"]) if values["record_solutions"] else None,
        shard=shard,
        shard_durations=durations,
        sources=sources,
    )
