"""A process's last task tells the provider that no restore follows (no warm spare for nobody)."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.usefixtures("fake_ini")

#: Records, for each task run, what the provider was told at its restore.
RECORDER = """
import json, os

def pytest_runtest_call(item):
    provider = item.funcargs.get("osworld_provider")
    if provider is not None:
        with open(os.environ["ORDER_LOG"], "a") as log:
            log.write(json.dumps([item.name, os.environ.get("PYTEST_XDIST_WORKER"), provider.more_restores]) + "\\n")
"""


def _ids(count: int) -> list[str]:
    return [f"11111111-0000-0000-0000-00000000000{k}" for k in range(1, count + 1)]


@pytest.mark.parametrize("workers", [0, 2])
def test_only_the_last_task_of_each_process_expects_no_more_restores(
    pytester: pytest.Pytester, write_task, monkeypatch, workers: int
) -> None:
    for task_id in _ids(4):
        write_task(task_id=task_id)
    pytester.makeconftest(RECORDER)
    log = pytester.path / "order.jsonl"
    monkeypatch.setenv("ORDER_LOG", str(log))
    args = ["tasks", "--agent=replay", "-p", "no:randomly"]
    if workers:
        args += ["-n", str(workers)]
    result = pytester.runpytest_subprocess(*args) if workers else pytester.runpytest(*args)
    result.assert_outcomes(passed=4)
    runs = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(runs) == 4
    by_process: dict[str | None, list[bool]] = {}
    for _, worker, more in runs:
        by_process.setdefault(worker, []).append(more)
    # Within each process, in the order its tasks ran: every task but the last expects more.
    for flags in by_process.values():
        assert flags == [True] * (len(flags) - 1) + [False], by_process
