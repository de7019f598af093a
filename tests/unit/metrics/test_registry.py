"""Every metric a task uses is registered, loads lazily and is a documented function."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_osworld.errors import UnknownNameError
from pytest_osworld.evaluators.metrics import INFEASIBLE_MESSAGE, METRIC_TABLE, METRICS, infeasible

EXAMPLES = Path(__file__).resolve().parents[4] / "shared" / "osworld" / "examples"


def _used_metric_names() -> set[str]:
    names: set[str] = set()
    for task in EXAMPLES.glob("*/*.json"):
        func = json.loads(task.read_text(encoding="utf-8"))["evaluator"]["func"]
        names.update(func if isinstance(func, list) else [func])
    return names


@pytest.mark.skipif(not EXAMPLES.is_dir(), reason="the OSWorld task corpus is not beside the checkout")
def test_every_metric_used_by_the_tasks_is_registered() -> None:
    used = _used_metric_names()
    assert len(used) == 111
    assert sorted(used - set(METRICS.names())) == []


@pytest.mark.parametrize("name", METRICS.names())
def test_every_entry_loads_a_documented_function(name: str) -> None:
    metric = METRICS.get(name)
    assert callable(metric)
    assert metric.__doc__ and metric.__doc__.strip()


def test_a_typo_suggests_the_right_name() -> None:
    with pytest.raises(UnknownNameError, match="did you mean 'compare_table'"):
        METRICS.check("compare_tabel")


def test_infeasible_cannot_be_called() -> None:
    with pytest.raises(TypeError, match="never calls it"):
        infeasible(None)
    assert "FAIL" in INFEASIBLE_MESSAGE


def test_importing_the_metrics_loads_no_heavy_library() -> None:
    code = (
        "import sys; from pytest_osworld.evaluators.metrics import METRICS;"
        "[METRICS.get(n) for n in METRICS.names()];"
        "heavy = {'openpyxl', 'docx', 'pptx', 'PIL', 'numpy', 'skimage', 'pypdf', 'av', 'lxml'};"
        "print(sorted(heavy & {m.split('.')[0] for m in sys.modules}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_metric_has_a_test_of_its_own() -> None:
    """Each registered metric is called by name (``module.metric``) in a metric test module.

    A new metric without a table of cases fails here; whether the cases include a score
    of 1 and a lower score with its reason is checked by reading them.
    """
    referenced: set[str] = set()
    for module in Path(__file__).parent.glob("test_*.py"):
        if module.name == Path(__file__).name:
            continue
        tree = ast.parse(module.read_text(encoding="utf-8"))
        referenced.update(node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute))
    assert sorted(name for name, _ in METRIC_TABLE if name not in referenced) == []
