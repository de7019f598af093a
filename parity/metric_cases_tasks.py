"""Metric parity cases built from what OSWorld's tasks really pass to each metric.

Every task's evaluator is read; each metric use gives its ``options`` and, when the
expected side is a ``rule``, its rules dict. Files come from
:mod:`parity.metric_cases_files`; values (command output, URLs, tab lists...) are derived
from the rules themselves: the rule's own values, a one-character mutation, empty values.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parity.metric_cases_files import family
from parity.metric_cases_shapes import shaped

FILE_GETTERS = frozenset(
    {
        "vm_file",
        "cloud_file",
        "cache_file",
        "googledrive_file",
        "vm_wallpaper",
        "audio_in_slide",
        "background_image_in_slide",
        "vscode_config",
        "vlc_config",
        "gimp_config_file",
        "vlc_playing_info",
    }
)
RULE_TYPES = frozenset({"rule", "rule_relativeTime"})
RESULT_VARIANTS = ("same", "near", "other", "empty", "malformed")
SEEDS = (1, 2)
#: More seeds for pictures: "different photograph" pairs are where image metrics part ways.
IMAGE_SEEDS = (1, 2, 3, 4, 5, 6)
IMAGE_KINDS = frozenset({".png", ".jpg", ".jpeg", ".gif"})


@dataclass
class MetricUse:
    """One metric as one task uses it."""

    task: str
    metric: str
    options: dict[str, Any]
    result: dict[str, Any] | None
    expected: dict[str, Any] | None


@dataclass
class Case:
    """One call to compare: ``metric(result, expected, **options)`` (no expected if absent)."""

    id: str
    metric: str
    result: Any
    options: dict[str, Any] = field(default_factory=dict)
    expected: Any = None
    has_expected: bool = False

    def as_json(self) -> dict[str, Any]:
        """The JSON object both sides read."""
        return {
            "id": self.id,
            "metric": self.metric,
            "result": self.result,
            "expected": self.expected,
            "has_expected": self.has_expected,
            "options": self.options,
        }


def _pick(spec: Any, index: int, count: int) -> dict[str, Any] | None:
    if isinstance(spec, list):
        if count > 1 and len(spec) == count:
            spec = spec[index]
        elif spec:
            spec = spec[0]
        else:
            return None
    return spec if isinstance(spec, dict) else None


def read_uses(folder: Path) -> list[MetricUse]:
    """Every metric use of every task JSON under ``folder``."""
    uses: list[MetricUse] = []
    for path in sorted(folder.rglob("*.json")):
        try:
            task = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        evaluator = task.get("evaluator") if isinstance(task, dict) else None
        if not isinstance(evaluator, dict):
            continue
        funcs = evaluator.get("func")
        names = funcs if isinstance(funcs, list) else [funcs]
        options = evaluator.get("options", {})
        for index, name in enumerate(names):
            if not isinstance(name, str) or name == "infeasible":
                continue
            opts = options[index] if isinstance(options, list) and index < len(options) else options
            uses.append(
                MetricUse(
                    task=str(task.get("id", path.stem)),
                    metric=name,
                    options=opts if isinstance(opts, dict) else {},
                    result=_pick(evaluator.get("result"), index, len(names)),
                    expected=_pick(evaluator.get("expected"), index, len(names)),
                )
            )
    return uses


def _ext(spec: dict[str, Any]) -> str:
    if spec.get("type") == "vlc_config":
        return ".vlcrc"
    target = spec.get("dest") or spec.get("path") or ""
    if isinstance(target, list):
        target = target[0] if target else ""
    return os.path.splitext(str(target))[1].lower()


def _mutate(value: Any) -> Any:
    """``value`` with one character changed (the first string found), else ``None``."""
    if isinstance(value, str) and value:
        index = len(value) // 2
        return value[:index] + ("x" if value[index] != "x" else "y") + value[index + 1 :]
    if isinstance(value, list):
        for index, item in enumerate(value):
            changed = _mutate(item)
            if changed is not None:
                return [*value[:index], changed, *value[index + 1 :]]
    if isinstance(value, dict):
        for key, item in value.items():
            changed = _mutate(item)
            if changed is not None:
                return {**value, key: changed}
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    return None


def value_candidates(rules: Any, getter: str | None = None) -> list[tuple[str, Any]]:
    """Results to try against a rule: its own values, mutations and empty values.

    Only values of the shape ``getter`` gives are kept (see :mod:`parity.metric_cases_shapes`).
    """
    found: list[tuple[str, Any]] = []
    if isinstance(rules, dict):
        for key, value in rules.items():
            found.append((f"rule-{key}", value))
            found.append((f"near-{key}", _mutate(value)))
    elif rules is not None:
        found += [("rule", rules), ("near", _mutate(rules))]
    found += [("rules-dict", rules), ("empty-str", ""), ("text", "hello world"), ("empty-list", [])]
    found += [("empty-dict", {}), ("none", None)]
    found = shaped(getter, found)
    unique: dict[str, tuple[str, Any]] = {}
    for label, value in found:
        unique.setdefault(json.dumps(value, sort_keys=True, default=str), (label, value))
    return list(unique.values())


class FilePool:
    """File families made on demand, one per (extension, seed)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._made: dict[tuple[str, int], dict[str, Path]] = {}

    def get(self, ext: str, seed: int) -> dict[str, Path]:
        """The family of kind ``ext`` for ``seed`` (written on first use)."""
        key = (ext, seed)
        if key not in self._made:
            self._made[key] = family(self.folder / (ext.strip(".") or "noext"), ext, seed)
        return self._made[key]


def _file_value(spec: dict[str, Any], path: Path) -> Any:
    """One path, or a list of paths when the getter fetches several files (a list ``dest``)."""
    targets = spec.get("dest") or spec.get("path") or []
    if spec.get("multi") or isinstance(targets, list):
        count = len(targets) if isinstance(targets, list) else 1
        return [str(path)] * max(count, 1)
    return str(path)


def cases_for(use: MetricUse, pool: FilePool, number: int) -> Iterator[Case]:
    """The cases of one metric use (file variants or rule-derived values)."""
    prefix = f"{use.task[:8]}/{use.metric}#{number}"
    result_spec, expected_spec = use.result or {}, use.expected
    has_expected = expected_spec is not None
    result_is_file = result_spec.get("type") in FILE_GETTERS
    expected_type = expected_spec.get("type") if expected_spec else None
    rules = expected_spec.get("rules") if expected_type in RULE_TYPES and expected_spec else None
    if result_spec.get("type") in RULE_TYPES:
        # The rules on the result side (is_in_vm_clickboard): values go to the expected side.
        getter = (expected_spec or {}).get("type")
        for label, value in value_candidates(result_spec.get("rules"), getter):
            yield Case(f"{prefix}/{label}", use.metric, result_spec.get("rules"), use.options, value, True)
        return
    seeds = IMAGE_SEEDS if result_is_file and _ext(result_spec) in IMAGE_KINDS else SEEDS
    for seed in seeds:
        if result_is_file:
            files = pool.get(_ext(result_spec), seed)
            for variant in RESULT_VARIANTS:
                if variant not in files:
                    continue
                result = _file_value(result_spec, files[variant])
                if expected_spec and expected_spec.get("type") in FILE_GETTERS:
                    expected_files = pool.get(_ext(expected_spec), seed)
                    if "base" in expected_files:
                        yield Case(
                            f"{prefix}/s{seed}/{variant}-vs-base",
                            use.metric,
                            result,
                            use.options,
                            _file_value(expected_spec, expected_files["base"]),
                            True,
                        )
                    if variant == "same":
                        empty = _file_value(expected_spec, expected_files["empty"])
                        yield Case(
                            f"{prefix}/s{seed}/base-vs-empty", use.metric, result, use.options, empty, True
                        )
                else:
                    yield Case(
                        f"{prefix}/s{seed}/{variant}", use.metric, result, use.options, rules, has_expected
                    )
        elif seed == SEEDS[0]:
            extra = [(f"value{index}", value) for index, value in enumerate(result_spec.get("values", []))]
            for label, value in value_candidates(rules, result_spec.get("type")) + extra:
                yield Case(f"{prefix}/{label}", use.metric, value, use.options, rules, has_expected)
    if result_is_file:
        yield Case(f"{prefix}/none", use.metric, None, use.options, rules, has_expected)
    if (
        result_is_file
        and _ext(result_spec) in IMAGE_KINDS
        and expected_type in FILE_GETTERS
        and expected_spec
    ):
        # Two different photographs: every ordered pair of the seeds' base pictures.
        for first, second in itertools.permutations(IMAGE_SEEDS, 2):
            result = _file_value(result_spec, pool.get(_ext(result_spec), first)["base"])
            expected = _file_value(expected_spec, pool.get(_ext(expected_spec), second)["base"])
            yield Case(
                f"{prefix}/photo{first}-vs-photo{second}", use.metric, result, use.options, expected, True
            )
