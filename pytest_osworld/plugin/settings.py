"""Run settings: command-line options with ini twins, resolved and validated once.

Precedence is ini < command line. Every bad value raises ``pytest.UsageError`` naming
the value, where it came from and what is accepted.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from pytest_osworld.omniact.scorings import DEFAULT_SCORING, SCORINGS
from pytest_osworld.plugin import option_values as values_of
from pytest_osworld.plugin.option_values import ValueProblem
from pytest_osworld.task.assets import default_cache_dir
from pytest_osworld.task.settings import Settings

OBSERVATION_TYPES = ("screenshot", "a11y_tree", "screenshot_a11y_tree", "som")
ACTION_SPACES = ("pyautogui", "computer_13")
#: What a bad ``--shard`` value is told.
SHARD_PROBLEM = "expected K/N, two whole numbers with 1 <= K <= N, such as 2/4"
#: ``--shard-durations`` given without ``--shard``: it would be ignored.
SHARD_DURATIONS_ALONE = "has no effect without --shard K/N (set both, or neither)"
#: ``--shard-durations`` naming something that is not a folder.
NO_RESULTS_FOLDER = "no such results folder"

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
        "budgets",
        "--budgets",
        "osworld_budgets",
        "also score each task at these smaller step budgets (such as 15,50; each below "
        "--max-steps), from one run: the agent's first K steps replayed on a fresh desktop, "
        "no model call (the summary, report and result.json's scores_at show them)",
        "",
        metavar="K,K",
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
        "omniact_scoring",
        "--omniact-scoring",
        "osworld_omniact_scoring",
        f"which scoring decides an OmniACT item's pass or fail and the headline: "
        f"{' or '.join(SCORINGS)} (default {DEFAULT_SCORING}: OmniACT's released scorer, as "
        "published numbers use); both are always computed",
        DEFAULT_SCORING,
        metavar="SCORING",
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
    if ini not in (None, "", []) and ini != opt.default:  # pytest hands back the ini's default too
        return ini, f"ini {opt.ini}"
    return opt.default, "default"


def _parse(opt: Option, value: Any, source: str, convert: Callable[[Any], T], problem: str) -> T:
    try:
        return convert(value)
    except ValueProblem as exc:
        raise pytest.UsageError(
            BAD_VALUE.format(name=opt.flag, value=value, source=source, problem=str(exc))
        ) from None
    except (TypeError, ValueError):
        raise pytest.UsageError(
            BAD_VALUE.format(name=opt.flag, value=value, source=source, problem=problem)
        ) from None


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
    shard = get("shard", values_of.shard, SHARD_PROBLEM) if values["shard"] else None
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
    max_steps = get("max_steps", values_of.positive_int, "expected a positive whole number")
    budgets = get(
        "budgets",
        lambda value: values_of.budgets(value, max_steps, sources["max_steps"]),
        values_of.BUDGETS_PROBLEM,
    )
    return Settings(
        agent=values["agent"] or None,
        agent_args=get("agent_args", values_of.pairs, "expected key=value"),
        model=values["model"] or None,
        provider=str(values["provider"]),
        provider_args=get("provider_args", values_of.pairs, "expected key=value"),
        max_steps=max_steps,
        budgets=budgets,
        task_timeout=get("task_timeout", values_of.positive_float, "expected a positive number of seconds"),
        observation_type=get(
            "observation_type",
            values_of.choice(OBSERVATION_TYPES),
            f"expected one of {', '.join(OBSERVATION_TYPES)}",
        ),
        action_space=get(
            "action_space", values_of.choice(ACTION_SPACES), f"expected one of {', '.join(ACTION_SPACES)}"
        ),
        results_dir=results_dir,
        asset_cache=Path(values["asset_cache"]) if values["asset_cache"] else default_cache_dir(),
        pass_threshold=get("pass_threshold", values_of.threshold, "expected a number between 0 and 1"),
        omniact_scoring=get(
            "omniact_scoring", values_of.choice(SCORINGS), f"expected one of {', '.join(SCORINGS)}"
        ),
        offline=bool(values["offline"]),
        manifest=manifest,
        known_broken=known,
        solutions=solutions,
        repeat=get("repeat", values_of.positive_int, "expected a positive whole number"),
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
