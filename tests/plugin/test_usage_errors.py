"""Explained usage errors: one message per mistake, before any desktop starts.

Every test runs against a spy provider that leaves a file behind when it starts, and
checks the golden text of the message (value, where it came from, the fix), the exit
code, and that no provider was started.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_osworld.plugin import preflight
from pytest_osworld.providers.vagrant import VagrantProvider

SPY_CONFTEST = """
from pathlib import Path

from pytest_osworld.providers import PROVIDERS
from pytest_osworld.providers.fake import FakeProvider

STARTED = Path(__file__).with_name("provider-started")


class SpyProvider(FakeProvider):
    name = "spy"

    def _start_impl(self):
        with STARTED.open("a") as log:
            log.write(self.config.worker_id + "\\n")


PROVIDERS.register("spy", SpyProvider)
"""

MY_AGENTS = """
from pytest_osworld.agent.actions import Action
from pytest_osworld.agent.contract import AgentStep

NAME = "not a factory"


class Good:
    def __init__(self, config):
        self.config = config

    def reset(self, task):
        pass

    def act(self, instruction, observation):
        return AgentStep(actions=[Action(kind="DONE")])


class NoConfig:
    def __init__(self):
        pass

    def reset(self, task):
        pass

    def act(self, instruction, observation):
        return AgentStep(actions=[Action(kind="DONE")])


class NoAct:
    def __init__(self, config):
        pass

    def reset(self, task):
        pass


def make_dict(config):
    return {"reset": None}


class Crashes:
    def __init__(self, config):
        raise RuntimeError("no GPU found")

    def reset(self, task):
        pass

    def act(self, instruction, observation):
        pass
"""


def _ini(pytester: pytest.Pytester, *extra: str) -> None:
    lines = [
        "[pytest]",
        "osworld_provider = spy",
        "osworld_asset_cache = .assets",
        "osworld_results_dir = results/run",
        "filterwarnings = ignore::pytest.PytestAssertRewriteWarning",
        *extra,
    ]
    (pytester.path / "tox.ini").write_text("\n".join(lines) + "\n")


@pytest.fixture
def spy(pytester: pytest.Pytester, write_task) -> Path:
    """Two tasks, a spy provider, our agents module; returns the file a provider start writes."""
    _ini(pytester)
    pytester.makeconftest(SPY_CONFTEST)
    pytester.makepyfile(my_agents=MY_AGENTS)
    pytester.syspathinsert()
    write_task(task_id="11111111-0000-0000-0000-000000000001")
    write_task(task_id="11111111-0000-0000-0000-000000000002")
    return pytester.path / "provider-started"


def _usage_error(result: pytest.RunResult, started: Path) -> str:
    """The run stopped with a usage error, printed once, and no provider started."""
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str() + result.stderr.str()
    assert not started.exists(), f"a provider started: {started.read_text()}"
    errors = [line for line in result.stderr.lines if line.startswith("ERROR: ")]
    assert len(errors) == 1, result.stderr.str()
    return result.stderr.str()


def test_agent_control_run_passes(pytester: pytest.Pytester, spy: Path) -> None:
    """The good agent of the same module runs: the checks below fail for their own reason."""
    result = pytester.runpytest("tasks", "--agent=my_agents:Good")
    result.assert_outcomes(failed=2)
    assert spy.read_text() == "main\n"


def test_agent_module_that_does_not_exist(pytester: pytest.Pytester, spy: Path) -> None:
    result = pytester.runpytest("tasks", "--agent=no_such_agents:Agent")
    _usage_error(result, spy)
    result.stderr.fnmatch_lines(
        [
            "ERROR: --agent='no_such_agents:Agent' (command line --agent): no module named "
            f"'no_such_agents' can be imported from here ({pytester.path}).",
            "  Fix: install the package that provides it, or put its folder on the path: "
            "`pythonpath = <folder>` in the ini file, or PYTHONPATH=<folder>, or run `python -m pytest` "
            "from the folder that contains 'no_such_agents.py'.",
        ]
    )


def test_agent_module_whose_import_fails(pytester: pytest.Pytester, spy: Path) -> None:
    pytester.makepyfile(needs_torch="import torch_that_is_not_installed\n\nclass Agent: pass\n")
    result = pytester.runpytest("tasks", "--agent=needs_torch:Agent")
    _usage_error(result, spy)
    result.stderr.fnmatch_lines(
        [
            "ERROR: --agent='needs_torch:Agent' (command line --agent): importing 'needs_torch' failed: "
            "ModuleNotFoundError: No module named 'torch_that_is_not_installed'",
            f"  at {pytester.path / 'needs_torch.py'}:1 in <module>",
            "  Fix: the error is in that module (or a module it imports); "
            "`python -c 'import needs_torch'` shows it.",
        ]
    )


def test_agent_attribute_that_does_not_exist(pytester: pytest.Pytester, spy: Path) -> None:
    result = pytester.runpytest("tasks", "--agent=my_agents:Goood")
    _usage_error(result, spy)
    result.stderr.fnmatch_lines(
        [
            "ERROR: --agent='my_agents:Goood' (command line --agent): module 'my_agents' "
            f"({pytester.path / 'my_agents.py'}) has no attribute 'Goood'; did you mean 'Good'?.",
            "  Fix: name a class or function defined there, such as --agent=my_agents:Good.",
        ]
    )


def test_agent_that_is_not_callable(pytester: pytest.Pytester, spy: Path) -> None:
    result = pytester.runpytest("tasks", "--agent=my_agents:NAME")
    _usage_error(result, spy)
    result.stderr.fnmatch_lines(
        [
            "ERROR: --agent='my_agents:NAME' (command line --agent): 'NAME' is a str 'not a factory', "
            "not a class or function that builds an agent.",
            "  An agent factory is called once per worker as factory(config), config being a",
        ]
    )


def test_agent_class_that_takes_no_config(pytester: pytest.Pytester, spy: Path) -> None:
    """The issue's case: every task was an ERROR with a TypeError traceback from fixtures.py."""
    result = pytester.runpytest("tasks", "--agent=my_agents:NoConfig")
    text = _usage_error(result, spy)
    result.stderr.fnmatch_lines(
        [
            "ERROR: --agent='my_agents:NoConfig' (command line --agent): NoConfig() cannot be called "
            "with one AgentConfig (too many positional arguments).",
            "  An agent factory is called once per worker as factory(config), config being a",
            "  pytest_osworld.agent.AgentConfig; what it returns needs reset(task) and",
            "  act(instruction, observation) -> AgentStep (close() is optional). For example:",
            "",
            "    from pytest_osworld.agent import Action, AgentConfig, AgentStep, Observation",
            "",
            "    class NoConfig:",
            "        def __init__(self, config: AgentConfig) -> None:",
            "            self.config = config",
            "",
            "        def reset(self, task) -> None:",
            "            pass",
            "",
            "        def act(self, instruction: str, observation: Observation) -> AgentStep:",
            '            return AgentStep(actions=[Action(kind="DONE")])',
        ]
    )
    assert "Traceback" not in text and "fixtures.py" not in text + result.stdout.str()


def test_agent_class_without_act(pytester: pytest.Pytester, spy: Path) -> None:
    result = pytester.runpytest("tasks", "--agent=my_agents:NoAct")
    _usage_error(result, spy)
    result.stderr.fnmatch_lines(
        [
            "ERROR: --agent='my_agents:NoAct' (command line --agent): class NoAct has no act(): "
            "it is not an agent.",
            "    class NoAct:",
        ]
    )


def test_agent_function_that_returns_no_agent(pytester: pytest.Pytester, spy: Path) -> None:
    result = pytester.runpytest("tasks", "--agent=my_agents:make_dict")
    _usage_error(result, spy)
    result.stderr.fnmatch_lines(
        [
            "ERROR: --agent='my_agents:make_dict' (command line --agent): the dict that make_dict "
            "returned has no reset() or act(): it is not an agent.",
            "    class MyAgent:",
        ]
    )


def test_agent_constructor_that_raises(pytester: pytest.Pytester, spy: Path) -> None:
    result = pytester.runpytest("tasks", "--agent=my_agents:Crashes")
    _usage_error(result, spy)
    result.stderr.fnmatch_lines(
        [
            "ERROR: --agent='my_agents:Crashes' (command line --agent): building the agent raised "
            "RuntimeError: no GPU found",
            f"  at {pytester.path / 'my_agents.py'}:*in __init__",
            "  Fix: the error is in the agent's own constructor, which runs once per worker as factory(config).",
        ]
    )


def test_malformed_agent_spec(pytester: pytest.Pytester, spy: Path) -> None:
    result = pytester.runpytest("tasks", "--agent=my_agents:")
    _usage_error(result, spy)
    result.stderr.fnmatch_lines(
        [
            "ERROR: --agent='my_agents:' (command line --agent): expected a registered agent or "
            "'module:attr' (for example --agent=my_agents:MyAgent); registered agents: *noop*replay*"
        ]
    )


@pytest.mark.parametrize("where", ["command line", "ini"])
def test_model_agent_without_its_api_key(
    pytester: pytest.Pytester, spy: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """Once, before any desktop: not one ERROR per task after each restore."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    if where == "ini":
        _ini(pytester, "osworld_agent = claude3")
        result = pytester.runpytest("tasks")
        source = "ini osworld_agent"
    else:
        result = pytester.runpytest("tasks", "--agent=claude3")
        source = "command line --agent"
    _usage_error(result, spy)
    result.stderr.fnmatch_lines(
        [
            f"ERROR: --agent='claude3' ({source}): the agent cannot start: agent 'claude3' needs an "
            "API key: set ANTHROPIC_API_KEY (or name another variable with --agent-arg api_key_env=NAME)"
        ]
    )


def test_bad_agent_under_xdist_is_one_error_before_any_desktop(
    pytester: pytest.Pytester, spy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    result = pytester.runpytest("tasks", "--agent=claude3", "-n", "2")
    text = _usage_error(result, spy)
    assert (text + result.stdout.str()).count("needs an API key") == 1
    result = pytester.runpytest("tasks", "--agent=my_agents:NoConfig", "-n", "2")
    text = _usage_error(result, spy)
    assert (text + result.stdout.str()).count("cannot be called with one AgentConfig") == 1


def test_collect_only_builds_no_agent(pytester: pytest.Pytester, spy: Path) -> None:
    assert pytester.runpytest("tasks", "--agent=my_agents:Crashes", "--collect-only").ret == 0


def test_unknown_provider_arg(pytester: pytest.Pytester, spy: Path) -> None:
    result = pytester.runpytest("tasks", "--agent=noop", "--provider=local", "--provider-arg", "colour=blue")
    _usage_error(result, spy)
    result.stderr.fnmatch_lines(
        [
            "ERROR: --provider-arg colour=blue (command line --provider-arg): the 'local' provider "
            "rejects it: unknown local provider option(s): colour.",
            "  Fix: correct or drop that --provider-arg; docs/desktop.md, section 'Options', lists "
            "the local provider's options",
        ]
    )
    assert not (pytester.path / "results").exists()


def test_token_less_osworld_server_on_a_reachable_network(pytester: pytest.Pytester, spy: Path) -> None:
    """OSWorld's image with its own server (no token) must not sit on a routable network."""
    args = ["--provider-arg", "image=osworld", "--provider-arg", "image_file=/images/Ubuntu.qcow2"]
    args += ["--provider-arg", "server=osworld"]
    result = pytester.runpytest("tasks", "--agent=noop", "--provider=vagrant", *args)
    _usage_error(result, spy)
    result.stderr.fnmatch_lines(
        [
            "ERROR: --provider-arg image=osworld image_file=/images/Ubuntu.qcow2 server=osworld "
            "(command line --provider-arg): the 'vagrant' provider rejects it: vagrant provider "
            "option server=osworld talks to the image's own server, which has no token and runs "
            "any command it is sent (as a user with sudo), so it is allowed only where nothing but "
            "this host can reach the VM: add --provider-arg netns=NAME*--provider-arg vm_network=host-only*",
        ]
    )
    assert not (pytester.path / "results").exists()


def test_bad_network_provider_arg_from_the_ini(pytester: pytest.Pytester, spy: Path) -> None:
    _ini(pytester, "osworld_provider_args = network=internet")
    result = pytester.runpytest("tasks", "--agent=noop")
    _usage_error(result, spy)
    result.stderr.fnmatch_lines(
        [
            "ERROR: --provider-arg network='internet' (ini osworld_provider_args): expected network=none "
            "(the default: no network inside the desktop) or network=shared (the host's network, for "
            "tasks that need the live web)"
        ]
    )


VAGRANT_NETWORK_FIX = (
    "  Fix: drop network={value}; a VM's network is set by the vagrant provider's vm_network option: "
    "pass --provider-arg vm_network=host-only for an isolated libvirt network with no route out, or "
    "leave vm_network=nat (the default) for NAT with a route out through the hypervisor"
)


@pytest.mark.parametrize("value", ["none", "shared"])
def test_network_given_to_vagrant_is_refused(pytester: pytest.Pytester, spy: Path, value: str) -> None:
    """A VM always has its own network: network= would be ignored, so it is an error naming vm_network."""
    args = ["--provider-arg", "box=osworld/b", "--provider-arg", f"network={value}"]
    result = pytester.runpytest("tasks", "--agent=noop", "--provider=vagrant", *args)
    _usage_error(result, spy)
    result.stderr.fnmatch_lines(
        [
            f"ERROR: --provider-arg network='{value}' (command line --provider-arg): the 'vagrant' "
            "provider would ignore it: network= sets the local desktop's network, not this "
            "provider's desktop's.",
            VAGRANT_NETWORK_FIX.format(value=value),
        ]
    )
    assert not (pytester.path / "results").exists()


@pytest.mark.parametrize("value", ["none", "shared"])
def test_network_given_to_remote_is_refused(pytester: pytest.Pytester, spy: Path, value: str) -> None:
    _ini(pytester, "osworld_provider_args =", "    urls=http://10.0.0.5:5000", f"    network={value}")
    result = pytester.runpytest("tasks", "--agent=noop", "--provider=remote")
    _usage_error(result, spy)
    result.stderr.fnmatch_lines(
        [
            f"ERROR: --provider-arg network='{value}' (ini osworld_provider_args): the 'remote' "
            "provider would ignore it: network= sets the local desktop's network, not this "
            "provider's desktop's.",
            f"  Fix: drop network={value}; a remote desktop's network is whatever the pool's desktops "
            "have, which pytest-osworld does not change: set it up on those desktops (steps that load "
            "a live page run there as they are), or use the local provider, which honours "
            "network=none|shared",
        ]
    )


@pytest.mark.parametrize("provider", ["vagrant", "remote"])
def test_no_network_given_is_fine_for_every_provider(
    pytester: pytest.Pytester, spy: Path, provider: str
) -> None:
    """Leaving network= out is never an error: only an explicit value the provider would ignore."""
    args = {"vagrant": "box=osworld/b", "remote": "urls=http://10.0.0.5:5000"}[provider]
    result = pytester.runpytest("tasks", f"--provider={provider}", "--provider-arg", args, "--collect-only")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str() + result.stderr.str()


@pytest.mark.parametrize("value", ["none", "shared"])
def test_local_honours_network(pytester: pytest.Pytester, spy: Path, value: str) -> None:
    result = pytester.runpytest(
        "tasks", "--provider=local", "--provider-arg", f"network={value}", "--collect-only"
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str() + result.stderr.str()
    assert "ERROR: " not in result.stderr.str()


def test_vagrant_option_that_would_be_ignored(pytester: pytest.Pytester, spy: Path) -> None:
    """A vagrant option given where the provider would not use it is refused with the rest."""
    args = ["--provider-arg", "box=osworld/b", "--provider-arg", "vagrant_provider=virtualbox"]
    args += ["--provider-arg", "storage_pool=osworld"]
    result = pytester.runpytest("tasks", "--agent=noop", "--provider=vagrant", *args)
    _usage_error(result, spy)
    result.stderr.fnmatch_lines(
        [
            "ERROR: --provider-arg box=osworld/b vagrant_provider=virtualbox storage_pool=osworld "
            "(command line --provider-arg): the 'vagrant' provider rejects it: vagrant provider option "
            "storage_pool=osworld is for vagrant_provider=libvirt; with vagrant_provider=virtualbox it "
            "would be ignored: drop it, or use vagrant_provider=libvirt.",
            "  Fix: correct or drop that --provider-arg; docs/vagrant.md, section 'Options', lists the "
            "vagrant provider's options",
        ]
    )


def test_results_folder_behind_a_file(pytester: pytest.Pytester, spy: Path) -> None:
    (pytester.path / "afile").write_text("not a folder")
    result = pytester.runpytest("tasks", "--agent=noop", "--results-dir=afile/results")
    _usage_error(result, spy)
    result.stderr.fnmatch_lines(
        [
            "ERROR: --results-dir='afile/results' (command line --results-dir): the results folder "
            "cannot be written: afile is a file, not a folder.",
            "  Fix: pass --results-dir=DIR (or osworld_results_dir in the ini file) naming a folder you "
            "can write, or start pytest from a writable folder (the default is ./results/<UTC time> there).",
        ]
    )


def test_results_folder_behind_a_file_under_xdist(pytester: pytest.Pytester, spy: Path) -> None:
    (pytester.path / "afile").write_text("not a folder")
    result = pytester.runpytest("tasks", "--agent=noop", "--results-dir=afile/results", "-n", "2")
    text = _usage_error(result, spy)
    assert text.count("afile is a file, not a folder") == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through any permission bits")
def test_results_folder_without_write_permission(pytester: pytest.Pytester, spy: Path) -> None:
    locked = pytester.path / "locked"
    locked.mkdir(mode=0o500)
    try:
        result = pytester.runpytest("tasks", "--agent=noop", "--results-dir=locked/results")
    finally:
        locked.chmod(0o700)
    _usage_error(result, spy)
    result.stderr.fnmatch_lines(["*the results folder cannot be written: no permission to write in locked.*"])


def test_json_named_on_the_command_line_that_is_not_a_task(pytester: pytest.Pytester, spy: Path) -> None:
    (pytester.path / "notes.json").write_text('{"title": "my notes"}')
    result = pytester.runpytest("notes.json", "--agent=noop")
    assert not spy.exists()
    result.stdout.fnmatch_lines(
        [
            "*ERROR collecting notes.json*",
            f"{pytester.path / 'notes.json'} is not an OSWorld task: a task file is a JSON object with an "
            '"instruction" and an "evaluator", such as OSWorld\'s '
            "evaluation_examples/examples/<domain>/<task id>.json",
        ]
    )
    assert "ERROR: not found" not in result.stderr.str()


def test_manifest_named_as_a_task_path(pytester: pytest.Pytester, spy: Path) -> None:
    manifest = pytester.path / "test_small.json"
    manifest.write_text('{"os": ["11111111-0000-0000-0000-000000000001"]}')
    result = pytester.runpytest("test_small.json", "--agent=noop")
    assert not spy.exists()
    result.stdout.fnmatch_lines(
        [
            f"{manifest} is not an OSWorld task: *<task id>.json.",
            "  It looks like a manifest (domain -> task ids): run the tasks it lists with "
            f"pytest evaluation_examples/examples --manifest={manifest}",
        ]
    )


def test_folder_without_tasks(pytester: pytest.Pytester, spy: Path) -> None:
    (pytester.path / "empty").mkdir()
    result = pytester.runpytest("empty", "--agent=noop")
    _usage_error(result, spy)
    result.stderr.fnmatch_lines(
        [
            "ERROR: no OSWorld task found in 'empty' (command line), yet --agent='noop' asks to run tasks.",
            "  Fix: point pytest at task files or folders of them: <domain>/<task id>.json, each a JSON "
            'object with an "instruction" and an "evaluator" (for OSWorld\'s own tasks, '
            "evaluation_examples/examples).",
        ]
    )
    # without an agent, or when -k chose nothing, pytest's own "no tests ran" stands
    assert pytester.runpytest("empty").ret == pytest.ExitCode.NO_TESTS_COLLECTED
    assert (
        pytester.runpytest("tasks", "--agent=noop", "-k", "nothing").ret == pytest.ExitCode.NO_TESTS_COLLECTED
    )


def test_templates_are_the_module_constants() -> None:
    """The messages above are built from preflight's constants, which name value and source."""
    for name in ("AGENT_NO_MODULE", "AGENT_NO_ATTR", "AGENT_BAD_SIGNATURE", "AGENT_REFUSED", "AGENT_CRASHED"):
        assert getattr(preflight, name).startswith(preflight.AGENT_PREFIX)
    assert "{source}" in preflight.RESULTS_NOT_WRITABLE
    assert "{source}" in preflight.PROVIDER_ARG_REJECTED
    assert "{source}" in preflight.PROVIDER_NETWORK_IGNORED
    for value in ("none", "shared"):
        assert (
            VAGRANT_NETWORK_FIX.format(value=value)
            == "  "
            + preflight.PROVIDER_NETWORK_IGNORED.format(
                value=value, source="s", provider="vagrant", instead=VagrantProvider.network_instead
            ).split("\n  ")[1]
        )


def test_osworld_agent_that_is_not_installed(pytester: pytest.Pytester, spy: Path, monkeypatch) -> None:
    """``--agent=osworld:...`` imports OSWorld's class before any desktop; a missing install
    is one usage error naming the install script."""
    monkeypatch.setenv("PYTEST_OSWORLD_OSWORLD_AGENTS", str(pytester.path / "no-install"))
    result = pytester.runpytest("tasks", "--agent=osworld:no_such_pkg.agent.PromptAgent")
    _usage_error(result, spy)
    result.stderr.fnmatch_lines(
        [
            "ERROR: --agent='osworld:no_such_pkg.agent.PromptAgent' (command line --agent): "
            "cannot import OSWorld agent 'osworld:no_such_pkg.agent.PromptAgent' "
            "(ModuleNotFoundError: No module named 'no_such_pkg'); install OSWorld's agents with "
            "`python scripts/osworld-agents`*See docs/env.md, 'OSWorld's own agents under pytest'."
        ]
    )


def test_osworld_prompt_agent_without_its_key(pytester: pytest.Pytester, spy: Path, monkeypatch) -> None:
    """OSWorld's PromptAgent swallows a missing key at every step; we refuse it once instead."""
    import pwd

    from pytest_osworld.agents.osworld_adapter import enable_osworld_agents

    # pytester moves HOME; scripts/osworld-agents installed under the real one.
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(pwd.getpwuid(os.getuid()).pw_dir, ".cache")
    installed = Path(cache) / "pytest-osworld" / "osworld-agents"
    monkeypatch.setenv("PYTEST_OSWORLD_OSWORLD_AGENTS", str(installed))
    enable_osworld_agents(installed)
    pytest.importorskip(
        "mm_agents.agent", reason="OSWorld's agents are not installed (scripts/osworld-agents)"
    )
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = pytester.runpytest("tasks", "--agent=osworld:mm_agents.agent.PromptAgent", "--model=gpt-4o")
    _usage_error(result, spy)
    result.stderr.fnmatch_lines(
        [
            "ERROR: --agent='osworld:mm_agents.agent.PromptAgent' (command line --agent): the agent "
            "cannot start: OPENAI_API_KEY is not set: OSWorld's agents send 'gpt-4o' to its provider's "
            "API with that key; for a local OpenAI-compatible server, set OPENAI_BASE_URL and any "
            "non-empty key"
        ]
    )
