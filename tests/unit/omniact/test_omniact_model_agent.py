"""A split of the release run by a model agent, against a local stand-in for its endpoint.

``--agent=openai-compatible`` talks through the real ``openai`` SDK to a local server that
answers each sample's request with that sample's prediction (generated to exercise every
rule of the official scorer, with its official scores known by construction). Every item
must carry those scores in its JUnit properties, and the run's dataset figures must be the
ones ``pytest-osworld omniact-score`` gives on the ``omniact_predictions.json`` it wrote.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_wire import FAKE_KEY, ProviderServer, start, with_text
from release_cases import MUTATIONS, generated_cases, write_release

from pytest_osworld.commands.cli import main as cli_main
from pytest_osworld.report.omniact_predictions import FIGURES_NAME, PREDICTIONS_NAME

pytestmark = [
    pytest.mark.usefixtures("omniact_project"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

#: Enough samples that every rule of the generator is exercised (checked below).
COUNT = 160
SEED = 5301


@pytest.fixture
def provider_server() -> Iterator[ProviderServer]:
    """A local server answering with recordings; stopped after the test."""
    state = ProviderServer()
    server = start(state)
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def answer(prediction: str) -> str:
    """A model's answer holding the prediction as its one code block."""
    return f"The screen shows what I need.\n```python\n{prediction}\n```\nDONE"


def test_every_item_gets_its_official_scores_and_the_figures_are_omniact_scores(
    pytester: pytest.Pytester,
    provider_server: ProviderServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cases = generated_cases(COUNT, seed=SEED)
    exercised = {rule for case in cases for rule in case.rule.split("+")}
    assert set(MUTATIONS) <= exercised, set(MUTATIONS) - exercised
    split = write_release(pytester.path / "release", cases)
    provider_server.play(*(with_text("openai_step", answer(case.prediction)) for case in cases))
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    result = pytester.runpytest(
        str(split),
        "--agent=openai-compatible",
        "--model=stand-in",
        f"--agent-arg=base_url={provider_server.url}/v1",
        "--junitxml=junit.xml",
    )
    passing = sum(1 for case in cases if case.expected_action >= 1.0)
    result.assert_outcomes(passed=passing, failed=COUNT - passing)
    # one request per sample, each about its own sample, with its screenshot
    assert len(provider_server.requests) == COUNT
    for case, request in zip(cases, provider_server.requests, strict=True):
        body = json.dumps(request.body)
        assert case.instruction in body and "data:image/png;base64," in body

    root = ET.parse(pytester.path / "junit.xml").getroot()
    props = {
        str(node.get("name")): {p.get("name"): p.get("value") for p in node.iter("property")}
        for node in root.iter("testcase")
    }
    assert sorted(props) == sorted(f"omniact/test/{case.key}" for case in cases)
    for case in cases:
        found = props[f"omniact/test/{case.key}"]
        where = (case.key, case.rule, case.prediction)
        assert float(found["official_sequence_score"]) == case.expected_sequence, where
        assert float(found["official_action_score"]) == pytest.approx(case.expected_action, abs=1e-9), where
        # the official scoring decides: the unprefixed scores are its own
        assert found["scoring"] == "official"
        assert found["sequence_score"] == f"{case.expected_sequence:.4f}", where
        assert float(found["action_score"]) == pytest.approx(case.expected_action, abs=5e-5), where
        assert float(found["weight"]) == pytest.approx(case.weight, abs=1e-12)
        assert found["outcome"] == ("passed" if case.expected_action >= 1.0 else "failed"), where

    # the predictions file holds what the model wrote; omniact-score on it gives the run's figures
    folder = pytester.path / "results" / "run"
    predictions = folder / PREDICTIONS_NAME
    assert json.loads(predictions.read_text()) == {case.key: case.prediction for case in cases}
    run_figures = json.loads((folder / FIGURES_NAME).read_text())["figures"]
    capsys.readouterr()
    for scoring in ("official", "paper"):
        assert cli_main(["omniact-score", str(split), str(predictions), "--scoring", scoring, "--json"]) == 0
        rescored = json.loads(capsys.readouterr().out)["dataset"]
        for name in ("all", "desktop", "web"):
            theirs = rescored if name == "all" else rescored[name]
            ours = run_figures[scoring][name]
            for field in ("samples", "sequence_score", "action_score", "ideal_score"):
                assert ours[field] == pytest.approx(theirs[field], abs=1e-12), (scoring, name, field)
            for field in ("click_penalty", "press_penalty", "write_penalty"):
                assert ours[field] == pytest.approx(theirs[field], abs=1e-12), (scoring, name, field)
    # and the terminal's line of all samples shows them
    official = run_figures["official"]["all"]
    paper = run_figures["paper"]["all"]
    result.stdout.fnmatch_lines(
        [
            f"    all * {COUNT} samples  official sequence {official['sequence_score']:.3f} action "
            f"{official['action_score']:.3f}  |  paper sequence {paper['sequence_score']:.3f} action "
            f"{paper['action_score']:.3f}"
        ]
    )
    # every sample's result.json keeps the script text both scorings read
    for path in Path(folder).rglob("omniact/test_*/result.json"):
        block = json.loads(path.read_text())["omniact"]
        assert block["prediction"] == cases[int(block["key"])].prediction
