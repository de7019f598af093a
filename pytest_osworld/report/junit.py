"""One JUnit file from several runs: their own JUnit files merged, or one made from results.

A run keeps its JUnit file when pytest was given ``--junitxml`` inside the results folder
(``--junitxml=RESULTS/junit.xml``): :func:`junit_files` finds such files at the top of a
results folder. For a run without one, :func:`testcase_from_result` makes each test case
from a ``result.json``, with the properties the plugin writes (``pytest_runtest_setup``'s
identity, the phase times, then the verdict's). :func:`merged_junit` puts every test case
into one ``<testsuite>``, as a single run's file has, with the counts added up (as
junitparser's merge does).
"""

from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_osworld.report.failure import EVAL_ERROR_HEAD, FAIL_HEAD
from pytest_osworld.report.summary import result_verdict
from pytest_osworld.task.timings import FIXED_OVERHEAD, PHASES, PROPERTY

#: The file a merge writes.
JUNIT_NAME = "junit.xml"
#: pytest's names for the root and the suite (``junit_suite_name`` defaults to ``pytest``).
SUITES_NAME = "pytest tests"
SUITE_NAME = "pytest"


class JUnitError(ValueError):
    """A JUnit file that cannot be read."""


@dataclass
class Suite:
    """Test cases and the suite attributes that add up (time) or combine (timestamp, host)."""

    cases: list[ET.Element] = field(default_factory=list)
    time: float = 0.0
    timestamps: list[str] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)


def junit_files(results_dir: Path) -> list[Path]:
    """The JUnit files at the top of a results folder (``*.xml`` whose root is a test suite)."""
    found = []
    for path in sorted(results_dir.glob("*.xml")):
        try:
            root = ET.parse(path).getroot()
        except (OSError, ET.ParseError) as exc:
            raise JUnitError(f"{path}: cannot read it as XML: {exc}") from exc
        if root.tag in ("testsuites", "testsuite"):
            found.append(path)
    return found


def read_junit(path: Path) -> Suite:
    """Every test case of a JUnit file, and its suites' time, timestamps and hosts."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise JUnitError(f"{path}: cannot read it as XML: {exc}") from exc
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    suite = Suite()
    for node in suites:
        suite.cases += node.findall("testcase")
        suite.time += _float(node.get("time"))
        suite.timestamps += [node.get("timestamp", "")] if node.get("timestamp") else []
        suite.hosts += [node.get("hostname", "")] if node.get("hostname") else []
    return suite


def suite_from_results(results: Iterable[tuple[Path, dict[str, Any]]]) -> Suite:
    """Test cases made from ``(result.json path, its data)`` pairs."""
    suite = Suite()
    for path, result in results:
        suite.cases.append(testcase_from_result(result))
        suite.time += _float(result.get("duration_s"))
        try:
            stamp = dt.datetime.fromtimestamp(path.stat().st_mtime - _float(result.get("duration_s")), dt.UTC)
            suite.timestamps.append(stamp.astimezone().isoformat())
        except OSError:
            pass
        host = (result.get("provenance") or {}).get("host")
        if isinstance(host, str) and host:
            suite.hosts.append(host)
    return suite


def merged_junit(suites: Iterable[Suite]) -> ET.ElementTree[ET.Element]:
    """One ``<testsuites>`` with one ``<testsuite>`` holding every case; a case that two
    suites both hold (same class name and name) is kept from the later suite."""
    cases: dict[tuple[str, str], ET.Element] = {}
    total = Suite()
    for suite in suites:
        for case in suite.cases:
            key = (case.get("classname", ""), case.get("name", ""))
            cases.pop(key, None)
            cases[key] = case
        total.time += suite.time
        total.timestamps += suite.timestamps
        total.hosts += suite.hosts
    ordered = [cases[key] for key in sorted(cases)]
    kinds = ("error", "failure", "skipped")
    counts = {kind: sum(len(case.findall(kind)) for case in ordered) for kind in kinds}
    node = ET.Element(
        "testsuite",
        name=SUITE_NAME,
        errors=str(counts["error"]),
        failures=str(counts["failure"]),
        skipped=str(counts["skipped"]),
        tests=str(len(ordered)),
        time=f"{total.time:.3f}",
        timestamp=min(total.timestamps) if total.timestamps else "",
        hostname=",".join(sorted(set(total.hosts))),
    )
    node.extend(ordered)
    root = ET.Element("testsuites", name=SUITES_NAME)
    root.append(node)
    return ET.ElementTree(root)


def write_junit(tree: ET.ElementTree[ET.Element], path: Path) -> Path:
    """Write ``tree`` to ``path`` (UTF-8, with an XML declaration)."""
    tree.write(path, encoding="utf-8", xml_declaration=True)
    return path


def junit_names(nodeid: str) -> tuple[str, str]:
    """``(classname, name)`` of a node id, as pytest's junitxml names test cases."""
    names = nodeid.split("::")
    names[0] = names[0].replace("/", ".").removesuffix(".py")
    return ".".join(names[:-1]), names[-1]


def testcase_from_result(result: dict[str, Any]) -> ET.Element:
    """The test case a run writes for the task of ``result`` (a parsed ``result.json``)."""
    classname, name = junit_names(str(result.get("nodeid") or result.get("task_id", "task")))
    seconds = f"{_float(result.get('duration_s')):.3f}"
    case = ET.Element("testcase", classname=classname, name=name, time=seconds)
    props = ET.SubElement(case, "properties")
    for key, value in result_properties(result):
        ET.SubElement(props, "property", name=key, value=str(value))
    verdict = result_verdict(result)
    reason = str(result.get("reason") or "")
    if verdict in ("failed", "error"):
        message = _failure_head(result) if verdict == "failed" else reason.split("\n", 1)[0]
        child = ET.SubElement(case, "failure" if verdict == "failed" else "error", message=message)
        child.text = reason
    elif verdict in ("skipped", "xfailed"):
        kind = "pytest.xfail" if verdict == "xfailed" else "pytest.skip"
        ET.SubElement(case, "skipped", type=kind, message=reason.split("\n", 1)[0])
    return case


def result_properties(result: dict[str, Any]) -> list[tuple[str, Any]]:
    """The JUnit properties the plugin writes for the task of ``result``, in its order."""
    prov = result.get("provenance")
    prov = prov if isinstance(prov, dict) else {}
    if prov.get("benchmark") == "omniact":
        return _omniact_properties(result, prov)
    provider = str(prov.get("provider") or "").split(" ", 1)[0]
    props: list[tuple[str, Any]] = [
        ("benchmark", "osworld"),
        ("domain", result.get("domain", "")),
        ("task_id", result.get("task_id", "")),
        ("agent", prov.get("agent") or ""),
        ("model", prov.get("model") or ""),
        ("provider", provider),
        ("max_steps", result.get("max_steps", prov.get("max_steps", ""))),
        ("task_sha256", prov.get("task_sha256", "")),
        ("plugin_version", prov.get("plugin_version", "")),
        ("host", prov.get("host", "")),
        ("worker", prov.get("worker", "")),
    ]
    if prov.get("shard"):
        props.append(("shard", prov["shard"]))
    timings = result.get("timings")
    if isinstance(timings, dict) and isinstance(timings.get("phases"), dict):
        phases = timings["phases"]
        props += [(PROPERTY.format(phase=name), f"{_float(phases.get(name)):.3f}") for name in PHASES]
        props.append((FIXED_OVERHEAD, f"{_float(timings.get('fixed_overhead')):.3f}"))
    if result.get("outcome") in ("passed", "failed", "eval_error") and result.get("score") is not None:
        usage = _dict(result.get("usage"))
        props += [
            ("score", f"{_float(result.get('score')):.4f}"),
            ("outcome", result["outcome"]),
            ("end_reason", result.get("end_reason") or ""),
            ("steps", result.get("steps", 0)),
            ("duration", f"{_float(result.get('duration_s')):.3f}"),
            ("input_tokens", usage.get("input_tokens", 0)),
            ("output_tokens", usage.get("output_tokens", 0)),
            *budget_properties(result.get("scores_at")),
        ]
    return props


#: The JUnit property of a task's score at one step budget (``--budgets``).
BUDGET_PROPERTY = "score_at_{budget}"
#: Its value for a replay that parted from the run (no score).
BUDGET_DIVERGED = "diverged at step {step}"
#: Its value for a replay that could not run (no score).
BUDGET_ERROR = "error"


def budget_properties(scores_at: Any) -> list[tuple[str, str]]:
    """One ``score_at_<k>`` property per budget of ``result.json``'s ``scores_at`` (none without
    it): the score (4 decimals), ``diverged at step J`` or ``error``."""
    if not isinstance(scores_at, dict):
        return []
    props = []
    for budget, entry in scores_at.items():
        entry = _dict(entry)
        if entry.get("end") == "diverged":
            value = BUDGET_DIVERGED.format(step=entry.get("diverged_at", "?"))
        elif entry.get("score") is None:
            value = BUDGET_ERROR
        else:
            value = f"{_float(entry.get('score')):.4f}"
        props.append((BUDGET_PROPERTY.format(budget=budget), value))
    return props


def _omniact_properties(result: dict[str, Any], prov: dict[str, Any]) -> list[tuple[str, Any]]:
    return omniact_properties(result)


def omniact_properties(result: dict[str, Any]) -> list[tuple[str, Any]]:
    """The JUnit properties of an OmniACT item, from its ``result.json`` data (the plugin
    writes these for the item itself, so a JUnit file made from results is the run's).

    ``sequence_score`` and ``action_score`` (4 decimals) are the deciding scoring's, named
    in ``scoring``; ``official_*`` and ``paper_*`` are each scoring's, in full precision
    (``official_*`` only when the sample has an official gold); ``weight`` is gold lines -
    0.9; a release sample adds ``split`` and ``sample_key``.
    """
    prov = _dict(result.get("provenance"))
    block = _dict(result.get("omniact"))
    metrics = result.get("metrics")
    scores = metrics[0] if isinstance(metrics, list) and metrics and isinstance(metrics[0], dict) else {}
    usage = _dict(result.get("usage"))
    props: list[tuple[str, Any]] = [
        ("benchmark", "omniact"),
        ("task_id", result.get("task_id", "")),
        ("domain", block.get("domain") or result.get("domain", "")),
        ("agent", prov.get("agent") or ""),
    ]
    if block.get("decided_by"):
        props.append(("scoring", block["decided_by"]))
    props += [
        ("sequence_score", f"{_float(scores.get('sequence_score')):.4f}"),
        ("action_score", f"{_float(scores.get('action_score')):.4f}"),
        ("score", f"{_float(result.get('score')):.4f}"),
        ("outcome", result.get("outcome", "")),
    ]
    for name in ("official", "paper"):
        figures = block.get(name)
        if isinstance(figures, dict):
            props += [
                (f"{name}_sequence_score", repr(_float(figures.get("sequence_score")))),
                (f"{name}_action_score", repr(_float(figures.get("action_score")))),
            ]
    if block:
        paper = _dict(block.get("paper"))
        official = _dict(block.get("official"))
        props.append(("weight", repr(_float(official.get("weight", paper.get("weight"))))))
    if block.get("layout") == "release":
        props += [("split", block.get("split") or ""), ("sample_key", block.get("key") or "")]
    props += [
        ("input_tokens", usage.get("input_tokens", 0)),
        ("output_tokens", usage.get("output_tokens", 0)),
    ]
    return props


def _failure_head(result: dict[str, Any]) -> str:
    """The first line of a failed task's message, as the run printed it."""
    reason = str(result.get("reason") or "").split("\n", 1)[0]
    if result.get("outcome") == "eval_error":
        return EVAL_ERROR_HEAD.format(reason=reason)
    if result.get("score") is None:
        return reason
    return FAIL_HEAD.format(
        score=_float(result.get("score")), threshold=_float(result.get("threshold")), reason=reason
    )


def _dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a dict, else an empty one."""
    return value if isinstance(value, dict) else {}


def _float(value: Any) -> float:
    """``value`` as a float (0.0 for anything that is not a number)."""
    if isinstance(value, bool):
        return 0.0
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value))
    except ValueError:
        return 0.0
