"""Which broken-environment evidence turns an evaluation error into an ERROR."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_osworld.episode import task_run
from pytest_osworld.episode.task_run import DesktopGone, TaskRun
from pytest_osworld.errors import EnvironmentFailure, GuestError, GuestUnreachable
from pytest_osworld.evaluators.evaluate import Evaluation
from pytest_osworld.guest_client.client import GuestClient


class Guest:
    """A guest whose /health raises ``error`` (or answers ready)."""

    def __init__(self, error: Exception | None) -> None:
        self.error = error

    def health(self) -> dict[str, Any]:
        if self.error is not None:
            raise self.error
        return {"ready": True}


def check(error: Exception | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """A task run's evaluation that failed (a getter's error) on a guest whose /health does as
    ``error`` says, on a provider with nothing to add."""
    failed = Evaluation(score=0.0, error="vm_file: /home/user/x.xlsx not found")
    monkeypatch.setattr(task_run, "evaluate", lambda ctx, last, timings: failed)
    provider: Any = SimpleNamespace(diagnose=lambda: "", name="fake")
    assets: Any = SimpleNamespace()
    run = TaskRun(None, provider, assets)
    run.context = SimpleNamespace(guest=Guest(error))  # type: ignore[assignment]
    assert run.evaluate(None) is failed


@pytest.mark.parametrize(
    "error",
    [None, GuestError("guest /health: HTTP 404: not found", status=404), GuestError("not JSON")],
    ids=["ready", "no-health-endpoint", "odd-answer"],
)
def test_a_guest_that_answers_leaves_the_evaluation_error_alone(
    error: Exception | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    check(error, monkeypatch)


def test_a_guest_that_does_not_answer_makes_it_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(
        EnvironmentFailure, match=r"^the environment stopped answering \(.*\); the evaluation"
    ) as raised:
        check(
            GuestUnreachable("guest /health: failed after 3 attempt(s): ConnectionRefusedError"), monkeypatch
        )
    assert isinstance(raised.value, DesktopGone)
    assert raised.value.error == "vm_file: /home/user/x.xlsx not found"


def test_the_client_says_unreachable_when_nothing_listens(tmp_path: Path) -> None:
    client = GuestClient(unix_socket=str(tmp_path / "none.sock"), token="t", timeout=1.0, retries=1)
    with pytest.raises(GuestUnreachable, match="failed after 1 attempt"):
        client.health()
