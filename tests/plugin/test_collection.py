"""Collection of task files: ids, keywords, markers, manifests, and clean collection errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

OSWORLD = Path(__file__).resolve().parents[3] / "shared" / "osworld"
needs_osworld = pytest.mark.skipif(not (OSWORLD / "examples").is_dir(), reason="OSWorld tasks not present")
ITEM_RE = re.compile(r"::(?P<domain>[a-z_]+)/(?P<id>[0-9a-f-]{36})$")

pytestmark = pytest.mark.usefixtures("fake_ini")


def _collected(result: pytest.RunResult) -> tuple[list[str], list[str]]:
    items = [line for line in result.stdout.lines if "::" in line and not line.startswith("ERROR")]
    errors = [line for line in result.stdout.lines if line.startswith("ERROR ")]
    return items, errors


@needs_osworld
def test_osworld_tree_collects_every_task(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--collect-only", "-q", str(OSWORLD / "examples"))
    items, errors = _collected(result)
    assert len(items) == 369
    assert not errors
    for item in items:
        match = ITEM_RE.search(item)
        assert match, item
        assert f"{match['domain']}/{match['id']}.json::" in item


@needs_osworld
def test_k_thunderbird_selects_the_thunderbird_domain(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--collect-only", "-q", "-k", "thunderbird", str(OSWORLD / "examples"))
    items, errors = _collected(result)
    assert not errors
    assert all("::thunderbird/" in item for item in items)
    assert len(items) == 15


@needs_osworld
@pytest.mark.parametrize(
    ("expr", "count"), [("network", 81), ("gdrive", 8), ("infeasible", 29), ("proxy", 52)]
)
def test_markers_from_task_data(pytester: pytest.Pytester, expr: str, count: int) -> None:
    result = pytester.runpytest("--collect-only", "-q", "-m", expr, str(OSWORLD / "examples"))
    result.stdout.fnmatch_lines([f"{count}/369 tests collected*"])


def test_non_task_json_is_not_collected(pytester: pytest.Pytester, write_task) -> None:
    write_task()
    (pytester.path / "tasks" / "test_all.json").write_text(json.dumps({"os": ["x"]}))
    (pytester.path / "tasks" / "package.json").write_text(json.dumps({"name": "x", "version": "1"}))
    result = pytester.runpytest("--collect-only", "-q", "tasks")
    items, errors = _collected(result)
    assert len(items) == 1 and not errors


def test_malformed_file_is_an_error_for_that_file_only(pytester: pytest.Pytester, write_task) -> None:
    write_task()
    bad = write_task(task_id="11111111-0000-0000-0000-00000000000b")
    data = json.loads(bad.read_text())
    data["evaluator"]["result"] = ["not", "a", "dict"]
    bad.write_text(json.dumps(data))
    broken_syntax = pytester.path / "tasks" / "os" / "broken.json"
    broken_syntax.write_text('{"id": "x", "instruction": "hi", "evaluator": {"func": "exact_match",}}')
    result = pytester.runpytest("tasks", "--agent=replay")
    result.assert_outcomes(passed=1, errors=2)
    result.stdout.fnmatch_lines_random(
        [
            "invalid OSWorld task file */11111111-0000-0000-0000-00000000000b.json: at $.evaluator.result: "
            "is a list but func is a single metric name",
            "invalid OSWorld task file */broken.json: at $: not valid JSON (line 1 column 70)*",
        ]
    )


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda t: t.pop("instruction"), "at $: missing required key 'instruction'"),
        (lambda t: t.update(id=7), "at $.id: expected a string, got a number 7"),
        (lambda t: t.update(proxy="yes"), 'at $.proxy: expected true or false, got a string "yes"'),
        (
            lambda t: t.update(config=[{"parameters": {}}]),
            "at $.config[0]: missing required key 'type'",
        ),
        (
            lambda t: t["evaluator"].update(conj="xor"),
            "at $.evaluator.conj: expected 'and' or 'or'*",
        ),
        (
            lambda t: t["evaluator"].update(func=["exact_match", "exact_match"], result=[{"type": "rule"}]),
            "at $.evaluator.result: has 1 entries but func lists 2 metrics*",
        ),
        (
            lambda t: t.update(solution=["pass"]),
            "at $.solution[0]: the solution must end with DONE or FAIL",
        ),
        (
            lambda t: t["evaluator"].update(func="exact_mach"),
            "at $.evaluator.func: unknown metric 'exact_mach'; did you mean 'exact_match'?",
        ),
        (
            lambda t: t.update(config=[{"type": "launchh", "parameters": {}}]),
            "at $.config[0].type: unknown setup step type 'launchh'; did you mean 'launch'?",
        ),
        (
            lambda t: t["evaluator"]["result"].update(type="vm_fil"),
            "at $.evaluator.result.type: unknown getter type 'vm_fil'; did you mean 'vm_file'?",
        ),
    ],
)
def test_task_file_errors_name_the_json_path(pytester: pytest.Pytester, write_task, mutate, message) -> None:
    path = write_task()
    data = json.loads(path.read_text())
    mutate(data)
    path.write_text(json.dumps(data))
    result = pytester.runpytest("--collect-only", "tasks")
    result.stdout.fnmatch_lines([f"invalid OSWorld task file {path}: {message}"])


def test_manifest_selects_a_subset(pytester: pytest.Pytester, write_task) -> None:
    write_task(task_id="11111111-0000-0000-0000-000000000001")
    write_task(task_id="11111111-0000-0000-0000-000000000002")
    write_task("chrome", task_id="11111111-0000-0000-0000-000000000003")
    manifest = pytester.path / "small.json"
    manifest.write_text(json.dumps({"os": ["11111111-0000-0000-0000-000000000002"], "chrome": []}))
    result = pytester.runpytest("--collect-only", "-q", "tasks", f"--manifest={manifest}")
    items, _ = _collected(result)
    assert [i.split("::")[1] for i in items] == ["os/11111111-0000-0000-0000-000000000002"]
    result.stdout.fnmatch_lines(["*1/3 tests collected (2 deselected)*"])


def test_keywords_and_markers(pytester: pytest.Pytester, write_task) -> None:
    write_task(
        "libreoffice_calc",
        task_id="11111111-0000-0000-0000-000000000001",
        related_apps=["LibreOffice Calc", "thunderbird"],
    )
    write_task("vs_code", task_id="11111111-0000-0000-0000-000000000002")
    write_task(
        "os",
        task_id="11111111-0000-0000-0000-000000000003",
        evaluator={"func": "infeasible"},
        solution=["FAIL"],
    )

    def selected(*args: str) -> list[str]:
        items, _ = _collected(pytester.runpytest("--collect-only", "-q", "tasks", *args))
        return sorted(i.split("::")[1].split("/")[0] for i in items)

    assert selected("-k", "calc") == ["libreoffice_calc"]
    assert selected("-k", "vscode") == ["vs_code"]
    assert selected("-k", "thunderbird") == []
    assert selected("-m", "app(name='thunderbird')") == ["libreoffice_calc"]
    assert selected("-m", "app(name='libreoffice_calc')") == ["libreoffice_calc"]
    assert selected("-m", "infeasible") == ["os"]
    assert selected("-m", "libreoffice_calc or os") == ["libreoffice_calc", "os"]


def test_running_tasks_without_an_agent_is_a_usage_error(pytester: pytest.Pytester, write_task) -> None:
    write_task()
    result = pytester.runpytest("tasks")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*no agent chosen: OSWorld tasks need --agent NAME (or module:attr). Available agents: *noop*replay*"
        ]
    )
    # collecting alone needs no agent
    assert pytester.runpytest("--collect-only", "tasks").ret == 0


def test_no_agent_under_xdist_is_a_usage_error(pytester: pytest.Pytester, write_task) -> None:
    write_task()
    result = pytester.runpytest("tasks", "-n", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines(["*no agent chosen: OSWorld tasks need --agent NAME*"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--max-steps=zero"],
            "*--max-steps='zero' (command line --max-steps): expected a positive whole number*",
        ),
        (
            ["--pass-threshold=2"],
            "*--pass-threshold='2' (command line --pass-threshold): expected a number between 0 and 1*",
        ),
        (
            ["--observation-type=pixels"],
            "*--observation-type='pixels'*expected one of screenshot, a11y_tree, screenshot_a11y_tree, som*",
        ),
        (
            ["--agent=repaly"],
            "*--agent='repaly' (command line --agent): unknown agent; did you mean 'replay'?*",
        ),
        (["--provider=vagrnt"], "*--provider='vagrnt'*unknown provider*available: *"),
        (
            ["--agent-arg=novalue"],
            "*--agent-arg=?'novalue'? (command line --agent-arg): expected key=value*",
        ),
    ],
)
def test_bad_option_values_are_usage_errors(pytester: pytest.Pytester, args, message) -> None:
    result = pytester.runpytest("--collect-only", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_bad_ini_value_names_the_ini(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nosworld_max_steps = -3\nosworld_provider = fake\n")
    result = pytester.runpytest("--collect-only")
    result.stderr.fnmatch_lines(
        ["*--max-steps='-3' (ini osworld_max_steps): expected a positive whole number*"]
    )


def test_help_shows_the_osworld_group(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(["OSWorld tasks (pytest-osworld):", "*--agent=NAME*", "*--max-steps=N*"])


def test_header_shows_settings(pytester: pytest.Pytester, write_task) -> None:
    write_task()
    result = pytester.runpytest("--collect-only", "tasks", "--agent=noop", "--max-steps=7")
    result.stdout.fnmatch_lines(
        ["osworld: agent=noop provider=fake observation=screenshot actions=pyautogui max_steps=7 pass>=1"]
    )


def test_every_option_has_an_ini_twin_in_help(pytester: pytest.Pytester) -> None:
    from pytest_osworld.plugin.settings import OPTIONS

    result = pytester.runpytest("--help")
    out = result.stdout.str()
    ini_section = out[out.index("[pytest] configuration options") :]
    for opt in OPTIONS:
        assert opt.flag in out, opt.flag
        assert re.search(rf"^  {opt.ini} \(", ini_section, re.MULTILINE), opt.ini


BAD_VALUES = [
    # (option, ini name, bad value, what the message says is wrong)
    ("--agent", "osworld_agent", "repaly", "unknown agent; did you mean 'replay'?"),
    ("--provider", "osworld_provider", "vagrnt", "unknown provider*"),
    ("--max-steps", "osworld_max_steps", "0", "expected a positive whole number"),
    ("--task-timeout", "osworld_task_timeout", "soon", "expected a positive number of seconds"),
    ("--observation-type", "osworld_observation_type", "pixels", "expected one of screenshot*"),
    ("--action-space", "osworld_action_space", "mouse", "expected one of pyautogui, computer_13"),
    ("--pass-threshold", "osworld_pass_threshold", "1.5", "expected a number between 0 and 1"),
    ("--repeat", "osworld_repeat", "twice", "expected a positive whole number"),
    ("--manifest", "osworld_manifest", "nope.json", "no such file"),
    ("--known-broken", "osworld_known_broken", "nope.txt", "no such file"),
    ("--agent-arg", "osworld_agent_args", "novalue", "expected key=value"),
    ("--provider-arg", "osworld_provider_args", "novalue", "expected key=value"),
]


@pytest.mark.parametrize(("flag", "ini", "value", "problem"), BAD_VALUES, ids=[b[0] for b in BAD_VALUES])
def test_bad_values_name_value_and_source(pytester: pytest.Pytester, flag, ini, value, problem) -> None:
    """The same bad value, from the command line and from the ini file: both sources named."""
    result = pytester.runpytest("--collect-only", f"{flag}={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{flag}=*{value}* (command line {flag}): {problem}*"])

    pytester.makeini(f"[pytest]\n{ini} = {value}\n")
    result = pytester.runpytest("--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{flag}=*{value}* (ini {ini}): {problem}*"])


def test_command_line_wins_over_ini(pytester: pytest.Pytester, write_task) -> None:
    pytester.makeini(
        "[pytest]\nosworld_provider = fake\nosworld_max_steps = 3\nosworld_agent = noop\n"
        "osworld_observation_type = a11y_tree\nosworld_pass_threshold = 0.5\nosworld_offline = true\n"
    )
    write_task()
    result = pytester.runpytest("--collect-only", "tasks")
    result.stdout.fnmatch_lines(
        [
            "osworld: agent=noop provider=fake observation=a11y_tree actions=pyautogui max_steps=3 pass>=0.5 offline"
        ]
    )
    result = pytester.runpytest("--collect-only", "tasks", "--max-steps=9", "--agent=replay")
    result.stdout.fnmatch_lines(["osworld: agent=replay provider=fake * max_steps=9 pass>=0.5 offline"])


SUITE = Path(__file__).resolve().parents[2] / "tasks"


def _last_code(step: object) -> str:
    return step if isinstance(step, str) else str(step.get("action_type")) if isinstance(step, dict) else ""


def test_our_suite_is_ready_for_the_self_check(pytester: pytest.Pytester) -> None:
    """ARCHITECTURE.md section 8, the part that needs no desktop: every task of ``tasks/``
    collects, and each OSWorld-format task has a solution that ends as its evaluator wants
    (FAIL for an infeasible task, DONE otherwise), so replay can score 1 and noop 0."""
    from pytest_osworld.task.model import load_task

    result = pytester.runpytest("--collect-only", "-q", str(SUITE))
    items, errors = _collected(result)
    assert not errors
    # Tasks live in domain folders; files at the top (osworld_solutions.json) are not tasks,
    # and OmniACT's samples (JSON files, a split in the release layout) are checked apart.
    release = SUITE / "omniact_release"
    files = sorted(
        p
        for p in SUITE.rglob("*.json")
        if p.parent.name != "omniact" and p.parent != SUITE and not p.is_relative_to(release)
    )
    assert files
    collected = {item.split("::")[0] for item in items}
    split_items = [item for item in items if item.split("::")[0].endswith("omniact_release/test.json")]
    assert len(split_items) == len(json.loads((release / "test.json").read_text()))
    for path in files:
        rel = f"tasks/{path.relative_to(SUITE)}"
        assert any(c == rel or c.endswith(f"/{rel}") for c in collected), path
        task = load_task(path)
        assert task.solution, f"{path}: no solution for the replay agent"
        want = "FAIL" if task.infeasible else "DONE"
        assert _last_code(task.solution[-1]) == want, path
