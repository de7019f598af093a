"""Which broken-environment evidence turns an evaluation error into an ERROR."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_osworld.errors import EnvironmentFailure, GuestError, GuestUnreachable
from pytest_osworld.guest_client.client import GuestClient
from pytest_osworld.plugin.collect import _raise_if_environment_died


class Guest:
    """A guest whose /health raises ``error`` (or answers ready)."""

    def __init__(self, error: Exception | None) -> None:
        self.error = error

    def health(self) -> dict[str, Any]:
        if self.error is not None:
            raise self.error
        return {"ready": True}


def check(error: Exception | None) -> None:
    item: Any = SimpleNamespace(funcargs={})
    ctx: Any = SimpleNamespace(guest=Guest(error))
    _raise_if_environment_died(item, ctx, "vm_file: /home/user/x.xlsx not found")


@pytest.mark.parametrize(
    "error",
    [None, GuestError("guest /health: HTTP 404: not found", status=404), GuestError("not JSON")],
    ids=["ready", "no-health-endpoint", "odd-answer"],
)
def test_a_guest_that_answers_leaves_the_evaluation_error_alone(error: Exception | None) -> None:
    check(error)


def test_a_guest_that_does_not_answer_makes_it_an_error() -> None:
    with pytest.raises(
        EnvironmentFailure, match=r"^the environment stopped answering \(.*\); the evaluation"
    ):
        check(GuestUnreachable("guest /health: failed after 3 attempt(s): ConnectionRefusedError"))


def test_the_client_says_unreachable_when_nothing_listens(tmp_path: Path) -> None:
    client = GuestClient(unix_socket=str(tmp_path / "none.sock"), token="t", timeout=1.0, retries=1)
    with pytest.raises(GuestUnreachable, match="failed after 1 attempt"):
        client.health()
