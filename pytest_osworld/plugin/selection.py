"""Collection: which files are tasks, and which collected tasks run.

This module owns the collection hooks: ``pytest_collect_file`` (OSWorld and OmniACT task
JSON files), ``pytest_ignore_collect`` (never inside the results folder), and
``pytest_collection_modifyitems`` (``--manifest``, ``--shard`` (see :mod:`.shards`),
``--skip-done``, ``--known-broken``, and the run's checks once the tasks to run are known).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_osworld.agent.contract import AGENTS
from pytest_osworld.omniact.collect import OmniactFile, OmniactItem, SplitFile, omniact_file_for
from pytest_osworld.plugin.collect import TaskFile, TaskItem, is_task_file
from pytest_osworld.plugin.fixtures import NO_AGENT
from pytest_osworld.plugin.preflight import check_run
from pytest_osworld.plugin.reachability import no_network_line
from pytest_osworld.plugin.shards import apply_shard
from pytest_osworld.task.assets import AssetCache
from pytest_osworld.task.settings import SETTINGS_KEY

#: A JSON file named on the command line that is not a task.
NOT_A_TASK = (
    '{path} is not an OSWorld task: a task file is a JSON object with an "instruction" and an '
    '"evaluator", such as OSWorld\'s evaluation_examples/examples/<domain>/<task id>.json{hint}'
)
#: The hint for a file that looks like a manifest (domain -> list of task ids).
NOT_A_TASK_MANIFEST = (
    ".\n  It looks like a manifest (domain -> task ids): run the tasks it lists with "
    "pytest evaluation_examples/examples --manifest={path}"
)
#: The hint for a file that looks like an OmniACT split whose entries are not samples.
NOT_A_TASK_SPLIT = (
    '.\n  It looks like a split file of OmniACT\'s release, but no entry is {"task": ..., "image": '
    '..., "box": ...} (paths relative to the split file\'s folder)'
)
#: An agent was chosen, and the paths given hold no task at all.
NO_TASKS_FOUND = (
    "no OSWorld task found in {paths} ({source}), yet --agent={agent!r} asks to run tasks.\n"
    "  Fix: point pytest at task files or folders of them: <domain>/<task id>.json, each a JSON "
    'object with an "instruction" and an "evaluator" (for OSWorld\'s own tasks, '
    "evaluation_examples/examples)."
)

#: Known-broken tasks of the run: {task id: reason}.
KNOWN_BROKEN_KEY = pytest.StashKey[dict[str, str]]()
#: The line a plain run prints after collection when its downloads cannot succeed.
NO_NETWORK_KEY = pytest.StashKey[str]()


def load_known_broken(path: Path | None) -> dict[str, str]:
    """``<task id>: reason`` lines (``#`` comments allowed) -> {task id: reason}."""
    if path is None:
        return {}
    broken: dict[str, str] = {}
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        task_id, sep, reason = text.partition(":")
        if not sep or not reason.strip():
            raise pytest.UsageError(f"{path}:{number}: expected '<task id>: reason', got {line!r}")
        broken[task_id.strip()] = reason.strip()
    return broken


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Never collect inside the results folder."""
    settings = config.stash.get(SETTINGS_KEY, None)
    if (
        settings is not None
        and collection_path == settings.results_dir.parent
        and collection_path.name == "results"
    ):
        return True
    return None


class NotATaskFile(pytest.File):
    """A JSON file named on the command line that is not a task: a collection error saying so."""

    def collect(self) -> list[pytest.Item]:
        """Raise the collection error of :data:`NOT_A_TASK` (with a hint for manifests)."""
        hint = ""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8", errors="replace"))
        except (OSError, ValueError):
            data = None
        if isinstance(data, dict) and data and all(isinstance(v, list) for v in data.values()):
            hint = NOT_A_TASK_MANIFEST.format(path=self.path)
        elif isinstance(data, dict) and data and all(isinstance(v, dict) for v in data.values()):
            hint = NOT_A_TASK_SPLIT
        raise self.CollectError(NOT_A_TASK.format(path=self.path, hint=hint))


def pytest_collect_file(
    file_path: Path, parent: pytest.Collector
) -> TaskFile | OmniactFile | SplitFile | NotATaskFile | None:
    """Collect OSWorld task JSON files, OmniACT task files and split files of OmniACT's
    release; other JSON files are left alone, unless named on the command line, where they
    are a collection error that says why."""
    if file_path.suffix != ".json":
        return None
    omniact = omniact_file_for(file_path, parent)
    if omniact is not None:
        return omniact
    explicit = parent.session.isinitpath(file_path)
    if not is_task_file(file_path, explicit=explicit):
        return NotATaskFile.from_parent(parent, path=file_path) if explicit else None
    return TaskFile.from_parent(parent, path=file_path)


def load_manifest(path: Path) -> set[tuple[str, str]]:
    """The (domain, task id) pairs an OSWorld manifest (``{"domain": [ids]}``) lists.

    An unreadable or malformed file is a ``pytest.UsageError`` naming it.
    """
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise pytest.UsageError(f"--manifest {path}: cannot read it: {exc}") from exc
    if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
        raise pytest.UsageError(f"--manifest {path}: expected an object of domain -> list of task ids")
    return {(str(domain), str(task_id)) for domain, ids in data.items() for task_id in ids}


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Apply ``--manifest``, ``--shard``, ``--skip-done`` and ``--known-broken``, in that order;
    check the run if it has tasks."""
    settings = config.stash[SETTINGS_KEY]
    if settings.manifest is not None:
        wanted = load_manifest(settings.manifest)
        keep, drop = [], []
        for item in items:
            if isinstance(item, TaskItem) and (item.task.domain, item.task.id) not in wanted:
                drop.append(item)
            else:
                keep.append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep
    apply_shard(config, items)
    settings = config.stash[SETTINGS_KEY]
    if settings.skip_done and settings.results_dir.is_dir():
        from pytest_osworld.report.resume import completed_tasks

        done = completed_tasks(
            settings.results_dir,
            action_space=settings.action_space,
            observation_type=settings.observation_type,
            model=settings.model,
        )
        finished = [i for i in items if isinstance(i, TaskItem) and (i.task.domain, i.task.id) in done]
        if finished:
            config.hook.pytest_deselected(items=finished)
            items[:] = [i for i in items if i not in finished]
    broken = config.stash[KNOWN_BROKEN_KEY]
    for item in items:
        if isinstance(item, TaskItem) and item.task.id in broken:
            item.add_marker(pytest.mark.xfail(reason=f"known broken: {broken[item.task.id]}", strict=True))
    tasks = [item for item in items if isinstance(item, TaskItem)]
    is_worker = getattr(config, "workerinput", None) is not None
    if config.option.collectonly or is_worker:
        return
    if tasks and not settings.agent:
        raise pytest.UsageError(NO_AGENT.format(names=", ".join(AGENTS.names())))
    if not items and settings.agent and session.testsfailed == 0 and not _selecting(config):
        raise pytest.UsageError(
            NO_TASKS_FOUND.format(paths=_paths(config), source=_paths_source(config), agent=settings.agent)
        )
    if any(isinstance(item, TaskItem | OmniactItem) for item in items):
        # Before any desktop starts: the agent (built once, kept for the fixture) and
        # the results folder. The xdist controller does the same in xdist_hooks.
        check_run(config, settings, keep_agent=True)
        assets = AssetCache(settings.asset_cache, offline=settings.offline)
        line = no_network_line([item.task for item in tasks], assets)
        if line is not None:
            config.stash[NO_NETWORK_KEY] = line


def pytest_report_collectionfinish(config: pytest.Config) -> list[str]:
    """Below "collected N items", before any task runs: the no-network line, when it applies
    (the xdist controller writes it itself, in :mod:`~pytest_osworld.plugin.xdist_hooks`)."""
    line = config.stash.get(NO_NETWORK_KEY, None)
    return [line] if line else []


def _selecting(config: pytest.Config) -> bool:
    """Whether -k, -m, --deselect, --manifest, --shard or --skip-done may have deselected every task."""
    settings = config.stash[SETTINGS_KEY]
    options = config.option
    return bool(
        options.keyword
        or options.markexpr
        or getattr(options, "deselect", None)
        or settings.manifest
        or settings.skip_done
        or settings.shard
    )


def _paths(config: pytest.Config) -> str:
    """The paths pytest collected from, as the user gave them."""
    return ", ".join(repr(str(arg)) for arg in config.args) or repr(".")


def _paths_source(config: pytest.Config) -> str:
    """Where the collected paths came from."""
    source = config.args_source
    if source == pytest.Config.ArgsSource.TESTPATHS:
        return "ini testpaths"
    if source == pytest.Config.ArgsSource.ARGS:
        return "command line"
    return "the current folder"
