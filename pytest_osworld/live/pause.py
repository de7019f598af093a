"""``--pause-on-fail``: after a task fails or errors, its desktop waits for a person.

The terminal shows why the task failed and the live link; the desktop stays as the agent
left it (nothing restores it before the next task starts). The person can take over in
the browser, change the desktop, and ask for the evaluation again, as often as they like:

- Enter (or end of input) goes on with the run;
- ``e`` + Enter runs the task's evaluator again on the desktop as it is now;
- ``t`` + Enter takes over (the same as the page's button).

The task's outcome stays the agent's: an evaluation asked for during a pause is only shown.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from typing import TextIO

import pytest

from pytest_osworld.agent.actions import Action
from pytest_osworld.evaluators.evaluate import evaluate
from pytest_osworld.live.session import LiveView
from pytest_osworld.task.context import TaskContext
from pytest_osworld.task.settings import SETTINGS_KEY

#: One evaluation asked for during a pause: the score and the evaluator's first reason.
Reevaluate = Callable[[], tuple[float, str]]
PROMPT = "osworld: paused. [Enter] go on  [e] evaluate again  [t] take over: "


def pause_after_failure(
    config: pytest.Config,
    nodeid: str,
    reasons: str,
    live: LiveView | None,
    reevaluate: Reevaluate,
    stdin: TextIO | None = None,
) -> None:
    """Hold the run on a failed task until the person presses Enter (see module docs)."""
    with _terminal(config) as write:
        write(f"\nosworld: {nodeid} did not pass; its desktop stays as the agent left it.")
        for line in reasons.strip().splitlines():
            write(f"    {line}")
        if live is not None:
            write(f"osworld: live view: {live.url}  (Take over there to change the desktop)")
        source = stdin if stdin is not None else sys.stdin
        while True:
            write(PROMPT, newline=False)
            answer = source.readline()
            command = answer.strip().lower()
            if not answer or not command:
                write("osworld: going on.")
                return
            if command == "e":
                try:
                    score, reason = reevaluate()
                except Exception as exc:  # the desktop may have been broken by hand
                    write(f"osworld: the evaluation failed: {type(exc).__name__}: {exc}")
                    continue
                write(f"osworld: evaluated again: score {score:g}" + (f" ({reason})" if reason else ""))
            elif command == "t" and live is not None:
                try:
                    live.take_over()
                except Exception as exc:
                    write(f"osworld: could not take over: {exc}")
                    continue
                write("osworld: you have control of the desktop in the live view.")
            else:
                write(f"osworld: {command!r}? Enter goes on, e evaluates again, t takes over.")


@contextlib.contextmanager
def _terminal(config: pytest.Config) -> Iterator[Callable[..., None]]:
    """Writes to the real terminal, with pytest's capture (stdin too) suspended."""
    capture = config.pluginmanager.get_plugin("capturemanager")
    reporter = config.pluginmanager.get_plugin("terminalreporter")

    def write(text: str, newline: bool = True) -> None:
        if reporter is None:
            print(text, end="\n" if newline else "", flush=True)
            return
        reporter.write(text + ("\n" if newline else ""), flush=True)

    if capture is None:
        yield write
        return
    capture.suspend_global_capture(in_=True)
    try:
        yield write
    finally:
        capture.resume_global_capture()


def pause_if_asked(
    item: pytest.Item, context: TaskContext, last_action: Action | None, reasons: str, live: LiveView | None
) -> None:
    """With ``--pause-on-fail``, hold the run on ``item``'s failure; otherwise do nothing."""
    if not item.config.stash[SETTINGS_KEY].pause_on_fail:
        return

    def reevaluate() -> tuple[float, str]:
        evaluation = evaluate(context, last_action)
        return evaluation.score, evaluation.first_reason() or (evaluation.error or "")

    pause_after_failure(item.config, item.nodeid, reasons, live, reevaluate)
