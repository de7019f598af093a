"""What users import keeps working after the package's regrouping: the pytest entry point,
the console scripts, the agent contract, the env front doors and the solutions' waits."""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points

import pytest


def test_the_pytest11_entry_point_is_named_osworld_and_loads_the_hooks() -> None:
    (point,) = [point for point in entry_points(group="pytest11") if point.name == "osworld"]
    module = point.load()
    assert callable(module.pytest_addoption) and callable(module.pytest_configure)


@pytest.mark.parametrize("script", ["pytest-osworld", "pytest-osworld-fetch", "pytest-osworld-image"])
def test_each_console_script_resolves_to_a_main(script: str) -> None:
    (point,) = [point for point in entry_points(group="console_scripts") if point.name == script]
    assert callable(point.load())


def test_the_agent_contract_is_importable_where_agents_import_it() -> None:
    from pytest_osworld.agent import Action, AgentConfig, AgentStep, Observation
    from pytest_osworld.agent.contract import AgentConfig as Contracted

    assert AgentConfig is Contracted
    assert AgentStep(actions=[Action(kind="DONE")]).actions[0].is_terminal
    assert Observation.__module__ == "pytest_osworld.agent.contract"


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("pytest_osworld.env", "DesktopEnv"),
        ("pytest_osworld.guest.waits", "wait_element"),
        ("pytest_osworld.guest.waits", "click_element"),
    ],
)
def test_public_modules_keep_their_names(module: str, name: str) -> None:
    assert hasattr(importlib.import_module(module), name)
