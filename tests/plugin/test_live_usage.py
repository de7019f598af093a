"""The live options' usage errors: each explained once, before any desktop starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.plugin.test_usage_errors import SPY_CONFTEST, _ini, _usage_error


@pytest.fixture
def spy(pytester: pytest.Pytester, write_task) -> Path:
    """One task and a spy provider (which has no live view); the file a provider start writes."""
    _ini(pytester)
    pytester.makeconftest(SPY_CONFTEST)
    write_task(task_id="11111111-0000-0000-0000-000000000001")
    return pytester.path / "provider-started"


def test_live_on_a_provider_without_a_live_view(pytester: pytest.Pytester, spy: Path) -> None:
    result = pytester.runpytest("tasks", "--agent=noop", "--live")
    text = _usage_error(result, spy)
    assert "--live: the 'spy' provider's desktops cannot be watched live: use --provider=local" in text


def test_live_on_osworld_s_own_server_in_its_image(pytester: pytest.Pytester, spy: Path) -> None:
    result = pytester.runpytest(
        "tasks",
        "--agent=noop",
        "--live",
        "--provider=vagrant",
        "--provider-arg=image=osworld",
        "--provider-arg=image_file=Ubuntu.qcow2",
        "--provider-arg=server=osworld",
        "--provider-arg=vm_network=host-only",
    )
    text = _usage_error(result, spy)
    assert "--live: the vagrant provider's server=osworld talks to the image's own server" in text
    assert "use server=ours (the default)" in text


def test_human_agent_needs_a_live_view_too(pytester: pytest.Pytester, spy: Path) -> None:
    text = _usage_error(pytester.runpytest("tasks", "--agent=human"), spy)
    assert "--agent=human: the 'spy' provider's desktops cannot be watched live" in text


def test_pause_on_fail_refuses_xdist(pytester: pytest.Pytester, spy: Path) -> None:
    result = pytester.runpytest("tasks", "--agent=noop", "--pause-on-fail", "-n", "2", "--provider=local")
    text = _usage_error(result, spy)
    assert "--pause-on-fail waits for Enter in this terminal, which xdist's workers cannot read" in text


def test_record_solutions_is_for_the_human_agent(pytester: pytest.Pytester, spy: Path) -> None:
    result = pytester.runpytest("tasks", "--agent=noop", "--record-solutions=s.json")
    text = _usage_error(result, spy)
    assert "--record-solutions s.json: only --agent=human records solutions" in text


def test_record_solutions_into_a_file_that_is_not_a_solutions_file(
    pytester: pytest.Pytester, spy: Path
) -> None:
    (pytester.path / "notes.json").write_text("[1, 2]")
    result = pytester.runpytest("tasks", "--agent=human", "--record-solutions=notes.json", "--provider=local")
    text = _usage_error(result, spy)
    assert "--record-solutions notes.json: expected a JSON object" in text
