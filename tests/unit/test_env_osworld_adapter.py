"""Loading OSWorld-style agent classes by name and building them from the run's settings."""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from pytest_osworld.agent.contract import AgentConfig, Observation
from pytest_osworld.agents.osworld_adapter import (
    AGENTS_DIR_ENV,
    OSWorldAdapter,
    constructor_arguments,
    enable_osworld_agents,
    load_osworld_class,
    osworld_agents_dir,
    osworld_factory,
)


class LikePromptAgent:
    """The constructor shape of mm_agents' PromptAgent."""

    def __init__(
        self,
        platform: str = "ubuntu",
        model: str = "gpt-4-vision-preview",
        max_tokens: int = 1500,
        top_p: float = 0.9,
        action_space: str = "computer_13",
        observation_type: str = "screenshot_a11y_tree",
        verbose: bool = False,
        client_password: str = "password",
    ) -> None:
        self.kwargs = dict(
            platform=platform,
            model=model,
            max_tokens=max_tokens,
            top_p=top_p,
            action_space=action_space,
            observation_type=observation_type,
            verbose=verbose,
            client_password=client_password,
        )
        self.resets = 0

    def reset(self, _logger: Any = None) -> None:
        self.resets += 1

    def predict(self, instruction: str, obs: dict[str, Any]) -> tuple[str, list[Any]]:
        return "```python\npyautogui.click(1, 2)\n```", ["pyautogui.click(1, 2)", "DONE"]


def config(**args: str) -> AgentConfig:
    return AgentConfig(
        name="osworld:x.LikePromptAgent",
        model="gpt-4o",
        args=args,
        observation_type="screenshot",
        action_space="pyautogui",
        client_password="secret",
    )


def test_settings_and_agent_args_become_constructor_keywords() -> None:
    kwargs = constructor_arguments(LikePromptAgent, config(max_tokens="900", top_p="0.5", verbose="yes"))
    assert kwargs == {
        "model": "gpt-4o",
        "action_space": "pyautogui",
        "observation_type": "screenshot",
        "client_password": "secret",
        "max_tokens": 900,
        "top_p": 0.5,
        "verbose": True,
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            {"tempreature": "1"},
            "--agent-arg tempreature: LikePromptAgent takes no such keyword; it takes platform, model",
        ),
        ({"max_tokens": "many"}, "--agent-arg max_tokens='many': expected int like the default 1500"),
        ({"verbose": "maybe"}, "--agent-arg verbose='maybe': expected bool like the default False"),
    ],
)
def test_bad_agent_args_are_explained(args: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        constructor_arguments(LikePromptAgent, config(**args))


def test_factory_builds_the_class_and_wraps_it(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("fake_mm_agents_for_test")
    module.LikePromptAgent = LikePromptAgent  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fake_mm_agents_for_test", module)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # gpt-* models need it (check_model_key)
    agent = osworld_factory("osworld:fake_mm_agents_for_test.LikePromptAgent")(config())
    assert isinstance(agent, OSWorldAdapter)
    inner = agent.inner
    assert isinstance(inner, LikePromptAgent) and inner.kwargs["model"] == "gpt-4o"
    step = agent.act("do it", Observation(instruction="do it", screenshot=b"png"))
    assert [a.kind for a in step.actions] == ["code", "DONE"]


def test_missing_agents_say_how_to_install_them(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(AGENTS_DIR_ENV, str(tmp_path))
    with pytest.raises(ImportError, match=r"install OSWorld's agents with `python scripts/osworld-agents`"):
        load_osworld_class("osworld:no_such_package_here.agent.PromptAgent")
    with pytest.raises(ImportError, match="has no 'Nope'"):
        load_osworld_class("osworld:json.Nope")
    with pytest.raises(ValueError, match="not of the form"):
        load_osworld_class("osworld:PromptAgent")


def test_the_install_folder_goes_last_on_sys_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for sub in ("site", "stubs", "tiktoken"):
        (tmp_path / sub).mkdir()
    monkeypatch.setenv(AGENTS_DIR_ENV, str(tmp_path))
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    monkeypatch.setattr(sys, "path", list(sys.path))
    assert osworld_agents_dir() == tmp_path
    enable_osworld_agents()
    assert sys.path[-2:] == [str(tmp_path / "site"), str(tmp_path / "stubs")]
    assert Path(os.environ["TIKTOKEN_CACHE_DIR"]) == tmp_path / "tiktoken"
