"""The task model: OSWorld's task JSON, parsed and validated on load.

The schema is OSWorld's, unchanged (OSWORLD-CONTRACT.md section 1). Every problem is a
:class:`~pytest_osworld.errors.TaskFileError` naming the file, the JSON path (``$.a.b[2]``)
and what is wrong. Fields the runtime does not use are kept in :attr:`Task.raw`.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pytest_osworld.errors import TaskFileError

SPECIAL_ACTIONS = ("WAIT", "DONE", "FAIL")

#: JSON types by the names the error messages use.
_TYPE_NAMES: dict[type, str] = {
    str: "a string",
    bool: "true or false",
    list: "a list",
    dict: "an object",
    int: "a number",
    float: "a number",
}


@dataclass(frozen=True)
class Step:
    """One setup or postconfig step: ``{"type": ..., "parameters": {...}}``."""

    type: str
    parameters: dict[str, Any]
    json_path: str


@dataclass(frozen=True)
class GetterSpec:
    """A ``result`` or ``expected`` entry: a getter type and its configuration."""

    type: str
    config: dict[str, Any]
    json_path: str


@dataclass(frozen=True)
class MetricSpec:
    """One metric call: the function name, its getters and its options."""

    func: str
    result: GetterSpec | None
    expected: GetterSpec | None
    options: dict[str, Any]
    json_path: str


@dataclass(frozen=True)
class EvaluatorSpec:
    """The ``evaluator`` object: metrics, how they combine, and postconfig steps."""

    metrics: tuple[MetricSpec, ...]
    conj: Literal["and", "or"]
    postconfig: tuple[Step, ...]

    @property
    def infeasible(self) -> bool:
        """True when the task is meant to be declared infeasible (``func: infeasible``)."""
        return len(self.metrics) == 1 and self.metrics[0].func == "infeasible"

    def getters(self) -> list[GetterSpec]:
        """Every getter the evaluator uses, in order."""
        found: list[GetterSpec] = []
        for metric in self.metrics:
            found.extend(g for g in (metric.result, metric.expected) if g is not None)
        return found


@dataclass(frozen=True)
class Task:
    """One OSWorld task, validated."""

    id: str
    instruction: str
    domain: str
    path: Path
    sha256: str
    config: tuple[Step, ...]
    evaluator: EvaluatorSpec
    proxy: bool
    related_apps: tuple[str, ...]
    snapshot: str
    solution: tuple[str | dict[str, Any], ...] | None
    raw: dict[str, Any] = field(repr=False)

    @property
    def nodename(self) -> str:
        """The test item's name: ``<domain>/<task id>``."""
        return f"{self.domain}/{self.id}"

    @property
    def infeasible(self) -> bool:
        """True for tasks whose correct answer is FAIL."""
        return self.evaluator.infeasible


def looks_like_task(data: object) -> bool:
    """True if parsed JSON is meant to be a task (an object with an instruction or evaluator).

    Other JSON files next to tasks, such as OSWorld's ``test_all.json`` manifest, are not.
    """
    return isinstance(data, dict) and ("evaluator" in data or "instruction" in data)


def load_task(path: Path, domain: str | None = None) -> Task:
    """Read and validate the task file at ``path``.

    ``domain`` defaults to the name of the file's directory, as in OSWorld's
    ``examples/<domain>/<id>.json`` layout.
    """
    try:
        blob = path.read_bytes()
    except OSError as exc:
        raise TaskFileError(str(path), "$", f"cannot read the file: {exc}") from exc
    try:
        data = json.loads(blob)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        where = f"line {exc.lineno} column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else "$"
        raise TaskFileError(str(path), "$", f"not valid JSON ({where}): {exc}") from exc
    return parse_task(data, path, hashlib.sha256(blob).hexdigest(), domain or path.parent.name)


def parse_task(data: object, path: Path, sha256: str, domain: str) -> Task:
    """Validate parsed task JSON and build a :class:`Task`."""
    v = _Validator(str(path))
    obj = v.object(data, "$")
    task_id = v.task_id(v.required(obj, "id", "$"), "$.id")
    instruction = v.nonempty_str(v.required(obj, "instruction", "$"), "$.instruction")
    config = v.steps(obj.get("config", []), "$.config")
    evaluator = v.evaluator(v.required(obj, "evaluator", "$"), "$.evaluator")
    proxy = v.typed(obj.get("proxy", False), bool, "$.proxy")
    apps = v.typed(obj.get("related_apps", []), list, "$.related_apps")
    related = tuple(v.typed(app, str, f"$.related_apps[{i}]") for i, app in enumerate(apps))
    snapshot = v.typed(obj.get("snapshot", ""), str, "$.snapshot")
    solution = v.solution(obj["solution"], "$.solution") if "solution" in obj else None
    return Task(
        id=task_id,
        instruction=instruction,
        domain=domain,
        path=path,
        sha256=sha256,
        config=config,
        evaluator=evaluator,
        proxy=proxy,
        related_apps=related,
        snapshot=snapshot,
        solution=solution,
        raw=obj,
    )


def validate_solution(value: Any, path: str, json_path: str) -> tuple[str | dict[str, Any], ...]:
    """A reference solution checked as in a task file; a :class:`TaskFileError` if malformed."""
    return _Validator(path).solution(value, json_path)


class _Validator:
    """Type checks that raise :class:`TaskFileError` with the JSON path."""

    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, json_path: str, problem: str) -> TaskFileError:
        return TaskFileError(self.path, json_path, problem)

    def typed(self, value: Any, kind: type, json_path: str) -> Any:
        ok = isinstance(value, kind) and not (kind in (int, float) and isinstance(value, bool))
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            ok = True
        if not ok:
            raise self.fail(json_path, f"expected {_TYPE_NAMES[kind]}, got {_describe(value)}")
        return value

    def object(self, value: Any, json_path: str) -> dict[str, Any]:
        return dict(self.typed(value, dict, json_path))

    def required(self, obj: dict[str, Any], key: str, json_path: str) -> Any:
        if key not in obj:
            raise self.fail(json_path, f"missing required key {key!r}")
        return obj[key]

    def nonempty_str(self, value: Any, json_path: str) -> str:
        text = self.typed(value, str, json_path)
        if not text.strip():
            raise self.fail(json_path, "must not be empty")
        return str(text)

    def task_id(self, value: Any, json_path: str) -> str:
        """The id names the task's results folder: no separators, control characters or dots only."""
        text = self.nonempty_str(value, json_path)
        bad = next((ch for ch in text if ch in "/\\" or ord(ch) < 32 or ord(ch) == 127), None)
        if bad is not None:
            raise self.fail(
                json_path,
                f"the task id contains {bad!r}, which cannot be part of a results folder name; "
                "use letters, digits, '-', '_' and '.' (OSWorld ids are UUIDs)",
            )
        if text.strip(".") == "":
            raise self.fail(json_path, f"the task id {text!r} is not a usable folder name; use a UUID")
        return text

    def steps(self, value: Any, json_path: str) -> tuple[Step, ...]:
        items = self.typed(value, list, json_path)
        steps = []
        for i, item in enumerate(items):
            where = f"{json_path}[{i}]"
            step = self.object(item, where)
            step_type = self.nonempty_str(self.required(step, "type", where), f"{where}.type")
            params = self.object(step.get("parameters", {}), f"{where}.parameters")
            steps.append(Step(step_type, params, where))
        return tuple(steps)

    def getter(self, value: Any, json_path: str) -> GetterSpec | None:
        if value is None or value == {}:
            return None
        obj = self.object(value, json_path)
        getter_type = self.nonempty_str(self.required(obj, "type", json_path), f"{json_path}.type")
        return GetterSpec(getter_type, obj, json_path)

    def evaluator(self, value: Any, json_path: str) -> EvaluatorSpec:
        obj = self.object(value, json_path)
        func = self.required(obj, "func", json_path)
        conj = obj.get("conj", "and")
        if conj not in ("and", "or"):
            raise self.fail(f"{json_path}.conj", f"expected 'and' or 'or', got {_describe(conj)}")
        postconfig = self.steps(obj.get("postconfig", []), f"{json_path}.postconfig")
        if isinstance(func, list):
            if not func:
                raise self.fail(f"{json_path}.func", "the list of metrics is empty")
            n = len(func)
            columns = {}
            for key in ("result", "expected", "options"):
                column = obj.get(key, [None] * n)
                self.typed(column, list, f"{json_path}.{key}")
                if len(column) != n:
                    raise self.fail(
                        f"{json_path}.{key}",
                        f"has {len(column)} entries but func lists {n} metrics; "
                        "the lists must be the same length",
                    )
                columns[key] = column
            metrics = tuple(
                self.metric(
                    func[i],
                    columns["result"][i],
                    columns["expected"][i],
                    columns["options"][i],
                    json_path,
                    f"[{i}]",
                )
                for i in range(n)
            )
        else:
            for key in ("result", "expected", "options"):
                if isinstance(obj.get(key), list):
                    raise self.fail(f"{json_path}.{key}", "is a list but func is a single metric name")
            metrics = (
                self.metric(func, obj.get("result"), obj.get("expected"), obj.get("options"), json_path, ""),
            )
        return EvaluatorSpec(metrics=metrics, conj=conj, postconfig=postconfig)

    def metric(
        self, func: Any, result: Any, expected: Any, options: Any, base: str, index: str
    ) -> MetricSpec:
        name = self.nonempty_str(func, f"{base}.func{index}")
        opts = {} if options is None else self.object(options, f"{base}.options{index}")
        return MetricSpec(
            func=name,
            result=self.getter(result, f"{base}.result{index}"),
            expected=self.getter(expected, f"{base}.expected{index}"),
            options=opts,
            json_path=f"{base}.func{index}",
        )

    def solution(self, value: Any, json_path: str) -> tuple[str | dict[str, Any], ...]:
        items = self.typed(value, list, json_path)
        if not items:
            raise self.fail(json_path, "the reference solution is empty; end it with DONE or FAIL")
        actions: list[str | dict[str, Any]] = []
        for i, item in enumerate(items):
            where = f"{json_path}[{i}]"
            if isinstance(item, str):
                actions.append(item)
            elif isinstance(item, dict):
                if not isinstance(item.get("action_type"), str):
                    raise self.fail(where, "a computer_13 action needs a string 'action_type'")
                actions.append(item)
            else:
                raise self.fail(where, f"expected pyautogui code or an action, got {_describe(item)}")
        last = actions[-1]
        last_type = last.get("action_type") if isinstance(last, dict) else last.strip()
        if last_type not in ("DONE", "FAIL"):
            raise self.fail(f"{json_path}[{len(items) - 1}]", "the solution must end with DONE or FAIL")
        return tuple(actions)


def _describe(value: Any) -> str:
    """A short description of a JSON value for error messages."""
    if value is None:
        return "null"
    for kind, name in _TYPE_NAMES.items():
        if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
            text = json.dumps(value)
            return f"{name} {text[:40] + '...' if len(text) > 40 else text}"
    return type(value).__name__


def normalise_app(name: str) -> str:
    """``"LibreOffice Calc"`` -> ``"libreoffice_calc"``, for the ``app`` marker."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
