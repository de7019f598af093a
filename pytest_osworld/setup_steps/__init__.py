"""Setup steps: one handler per OSWorld ``config``/``postconfig`` step type.

A handler is ``handler(ctx: TaskContext, **parameters) -> None``; it raises on failure.
The :func:`run_steps` driver names the step index and type in the error.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from pytest_osworld.errors import EnvironmentFailure, NeedsCapability, OSWorldError, SetupStepError
from pytest_osworld.registry import Registry
from pytest_osworld.task.context import TaskContext
from pytest_osworld.task.model import Step

if TYPE_CHECKING:
    from pytest_osworld.task.timings import TaskTimings

StepHandler = Callable[..., None]

#: Step types by OSWorld's names.
SETUP_STEPS: Registry[StepHandler] = Registry("setup step type")
_BASIC = "pytest_osworld.setup_steps.basic"
for _name in (
    "download",
    "launch",
    "open",
    "execute",
    "command",
    "sleep",
    "activate_window",
    "close_window",
    "upload_file",
    "change_wallpaper",
):
    SETUP_STEPS.register(_name, f"{_BASIC}:{_name}_step")
_CHROME = "pytest_osworld.setup_steps.chrome"
for _name in (
    "chrome_open_tabs",
    "chrome_close_tabs",
    "update_browse_history",
    "googledrive",
    "login",
):
    SETUP_STEPS.register(_name, f"{_CHROME}:{_name}_step")


#: Step types that start a program; a ``sleep`` right after one waits for it.
STARTING_STEPS = frozenset({"launch", "open"})


def run_steps(
    ctx: TaskContext,
    steps: Sequence[Step],
    phase: str = "setup",
    timings: TaskTimings | None = None,
    sleep_until_settled: Callable[[float], None] | None = None,
) -> None:
    """Run ``steps`` in order; the first failure raises with its index, type and cause.

    In the ``setup`` phase failures are :class:`SetupStepError` (an ERROR); in
    ``postconfig`` the caller turns them into evaluation errors. With ``timings``, each
    step's seconds (a failed one's too) go to ``phase``, OSWorld's ``sleep`` steps to
    ``setup_sleep``, and one entry per step to ``timings.setup_steps``.

    ``sleep_until_settled`` (from the settle wait, :mod:`pytest_osworld.episode.settle`) takes
    the place of a ``sleep`` step that follows a ``launch`` or ``open`` (other sleeps between
    them count as one): such a sleep gives the program time to come up, and ends once it
    has; its entry in ``timings.setup_steps`` says ``"until_settled": true``.
    """
    total = len(steps)
    clock = timings.clock if timings is not None else time.perf_counter
    previous = ""
    for index, step in enumerate(steps, start=1):
        started = clock()
        early = sleep_until_settled is not None and step.type == "sleep" and previous in STARTING_STEPS
        try:
            if early and sleep_until_settled is not None:
                _sleep_until_settled(sleep_until_settled, step, index, total)
            else:
                _run_step(ctx, step, index, total)
        finally:
            if timings is not None:
                seconds = clock() - started
                timings.add("setup_sleep" if step.type == "sleep" else phase, seconds)
                entry: dict[str, Any] = {
                    "index": index,
                    "type": step.type,
                    "phase": phase,
                    "seconds": round(seconds, 3),
                }
                if early:
                    entry["until_settled"] = True
                timings.setup_steps.append(entry)
        if step.type != "sleep":
            previous = step.type


def _sleep_until_settled(wait: Callable[[float], None], step: Step, index: int, total: int) -> None:
    """A ``sleep`` step's seconds, as :func:`_run_step` checks them, waited for with ``wait``."""
    try:
        handler_parameters(step.parameters, ["seconds"])
        seconds = float(step.parameters["seconds"])
    except (KeyError, TypeError, ValueError) as exc:
        raise SetupStepError(index, total, step.type, f"bad parameters at {step.json_path}: {exc}") from exc
    wait(seconds)


def _run_step(ctx: TaskContext, step: Step, index: int, total: int) -> None:
    """Run one step; errors name its index, type and cause."""
    handler = SETUP_STEPS.get(step.type)
    try:
        handler(ctx, **step.parameters)
    except NeedsCapability:
        raise
    except (TypeError, ValueError, KeyError) as exc:
        # Wrong names or wrong JSON types in the step's parameters (``"seconds": "soon"``,
        # ``"files": [{}]``): say where, instead of a bare traceback.
        problem = f"missing key {exc}" if isinstance(exc, KeyError) else str(exc)
        raise SetupStepError(
            index, total, step.type, f"bad parameters at {step.json_path}: {problem}"
        ) from exc
    except (OSWorldError, OSError) as exc:
        cause = str(exc) if isinstance(exc, EnvironmentFailure) else f"{type(exc).__name__}: {exc}"
        raise SetupStepError(index, total, step.type, cause) from exc


def handler_parameters(params: dict[str, Any], allowed: Sequence[str]) -> None:
    """Raise ``TypeError`` naming unknown parameters (for handlers taking ``**extra``)."""
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise TypeError(f"unexpected parameters {unknown}; allowed: {list(allowed)}")
