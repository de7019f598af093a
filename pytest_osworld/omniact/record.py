"""What an OmniACT item leaves in its results folder: ``result.json`` with both scorings.

The folder is ``<results>/<action space>/<observation>/<model>/omniact/<task id>/`` (a
release sample's task id is ``<split>/<key>``, its folder ``<split>_<key>``) with
``response.txt`` (the agent's whole answer), ``script.py`` (the script text both scorings
read) and ``result.json``. Besides the fields every task has (``score``: the deciding
scoring's action score), ``result.json`` holds an ``omniact`` object, plain data that the
report, the summary and ``omniact_predictions.json`` are made from
(:mod:`pytest_osworld.report.omniact_figures`, :mod:`pytest_osworld.report.omniact_predictions`):

``layout``, ``split``, ``split_file``, ``key``, ``index``, ``domain``, ``app``
    which sample it is (``index``: its position in the split);
``scoring``, ``decided_by``
    the scoring asked for (``--omniact-scoring``) and the one that decided (``paper`` for a
    JSON sample the official scoring cannot read);
``prediction``
    the script text as the model wrote it (both scorings read it);
``official``, ``paper``
    each scoring's weight, sequence and action scores, click, press and write penalties
    (fractions of the sample), reason and penalties (``official`` is null without an
    official gold; ``official_problem`` says why).
"""

from __future__ import annotations

from typing import Any

from pytest_osworld import __version__
from pytest_osworld.agent.contract import Usage
from pytest_osworld.episode.result import TaskResult
from pytest_osworld.omniact.sample import BothScores, Sample
from pytest_osworld.report.results import TaskRecorder
from pytest_osworld.task.settings import Settings

#: The domain folder of OmniACT results, and the summary's benchmark.
RESULTS_DOMAIN = "omniact"


def omniact_block(sample: Sample, scores: BothScores, scoring: str, prediction: str) -> dict[str, Any]:
    """The ``omniact`` object of a sample's ``result.json`` (see the module's doc)."""
    figures = scores.figures(sample)
    official: dict[str, Any] | None = None
    if scores.official is not None and figures["official"] is not None:
        official = {
            **figures["official"].to_row(),
            "reason": scores.official.reason(),
            "penalties": [p.to_json() for p in scores.official.penalties if scores.official.sequence_flag],
        }
    paper_row = figures["paper"]
    paper = {
        **(paper_row.to_row() if paper_row is not None else {}),
        "reason": scores.paper.first_reason(),
        "expected": list(scores.paper.expected_kinds),
        "predicted": list(scores.paper.predicted_kinds),
        "penalties": [p.to_json() for p in scores.paper.penalties],
    }
    return {
        "layout": sample.layout,
        "split": sample.split,
        "split_file": str(sample.path) if sample.layout == "release" else None,
        "key": sample.key,
        "index": sample.index,
        "domain": sample.domain,
        "app": sample.app,
        "scoring": scoring,
        "decided_by": scores.deciding(scoring),
        "prediction": prediction,
        "official": official,
        "official_problem": scores.official_problem,
        "paper": paper,
    }


def write_result(
    *,
    nodeid: str,
    sample: Sample,
    scores: BothScores,
    settings: Settings,
    prediction: str,
    response: str,
    passed: bool,
    duration: float,
    usage: Usage,
) -> dict[str, Any]:
    """Write the sample's results folder; return its ``result.json`` data."""
    scoring = settings.omniact_scoring
    recorder = TaskRecorder(
        settings.results_dir,
        settings.action_space,
        settings.observation_type,
        settings.model or settings.agent or "agent",
        RESULTS_DOMAIN,
        sample.task_id,
    )
    (recorder.dir / "response.txt").write_text(response or prediction)
    (recorder.dir / "script.py").write_text(prediction + ("\n" if prediction else ""))
    action = scores.action_score(scoring)
    metric: dict[str, Any] = {
        "func": "omniact",
        "scoring": scores.deciding(scoring),
        "value": round(action, 6),
        "status": "scored",
        "sequence_score": round(scores.sequence_score(scoring), 6),
        "action_score": round(action, 6),
        "reason": scores.reason(scoring),
    }
    result = TaskResult(
        task_id=sample.task_id,
        domain=RESULTS_DOMAIN,
        nodeid=nodeid,
        outcome="passed" if passed else "failed",
        score=round(action, 6),
        threshold=settings.pass_threshold,
        end_reason="DONE",
        steps=1,
        max_steps=1,
        duration_s=round(duration, 3),
        infeasible=False,
        reason=scores.reason(scoring),
        metrics=[metric],
        usage={
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cost_usd": round(usage.cost_usd, 6),
        },
        provenance={
            "task_file": str(sample.source),
            "task_sha256": sample.sha256,
            "plugin_version": __version__,
            "agent": settings.agent,
            "model": settings.model,
            "benchmark": "omniact",
        }
        | settings.shard_provenance(),
        instruction=sample.instruction,
    )
    data = result.to_json()
    data["omniact"] = omniact_block(sample, scores, scoring, prediction)
    recorder.finish(result, extra={"omniact": data["omniact"]})
    return data
