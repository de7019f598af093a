"""The subpackages stand in one order, and each imports only from those below it.

The order is the one written in docs/architecture-map.md (its "The layers" block), so the
page and the code cannot drift apart. Every import counts (module level, inside functions,
under ``TYPE_CHECKING``), read with ``ast`` by :mod:`import_graph`. A module of
``pytest_osworld/`` belongs to the layer named by its first component (``plugin``,
``task``, ...; the top-level modules ``registry.py``, ``errors.py`` and ``__init__.py`` are
layers of their own), and every module of ``agents/`` to the ``agents`` layer.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from import_graph import ROOT, import_graph, imported_modules, module_files

MAP = ROOT / "docs" / "architecture-map.md"
#: A layer line of the map's block: ``name/`` or ``name.py``, then what it owns.
LAYER_LINE = re.compile(r"^(?P<name>[a-z_]+)(?P<kind>/|\.py)\s+\S")


def documented_order(text: str) -> list[str]:
    """The layers of the map's "The layers" block, top down (``registry.py`` -> ``registry``,
    ``__init__.py`` -> ``__init__``)."""
    section = text.split("## The layers", 1)[1]
    block = section.split("```", 2)[1]
    order = []
    for line in block.splitlines():
        match = LAYER_LINE.match(line)
        if match:
            order.append(match["name"])
    return order


def layer_of(module: str) -> str | None:
    """The layer a module of ours stands in, or None outside the package (``parity``)."""
    parts = module.split(".")
    if parts[0] != "pytest_osworld":
        return None
    if len(parts) == 1:
        return "__init__"
    return parts[1]


def violations(graph: dict[str, set[str]], order: list[str]) -> list[str]:
    """Each import that does not go down the order, as ``a -> b (layer x imports layer y)``."""
    rank = {name: index for index, name in enumerate(order)}
    found = []
    for source in sorted(graph):
        source_layer = layer_of(source)
        if source_layer is None:
            continue
        for target in sorted(graph[source]):
            target_layer = layer_of(target)
            if target_layer is None or target_layer == source_layer:
                continue
            if rank[target_layer] <= rank[source_layer]:
                found.append(f"{source} -> {target} (layer {source_layer} imports layer {target_layer})")
    return found


def test_the_map_lists_every_subpackage_once() -> None:
    order = documented_order(MAP.read_text(encoding="utf-8"))
    layers = {layer for name in module_files() if (layer := layer_of(name)) is not None}
    assert sorted(order) == sorted(set(order)), "a layer is listed twice"
    assert set(order) == layers, (
        f"docs/architecture-map.md lists {sorted(set(order) - layers)} that do not exist "
        f"and misses {sorted(layers - set(order))}"
    )


def test_every_import_goes_down_the_layers() -> None:
    order = documented_order(MAP.read_text(encoding="utf-8"))
    found = violations(import_graph(), order)
    assert not found, (
        "imports that go up or sideways (move what both need down, or pass it in):\n" + "\n".join(found)
    )


def test_a_planted_import_that_goes_up_is_found() -> None:
    """A setup step that imports the plugin's settings, inside a function and under
    ``TYPE_CHECKING``, is two violations; the real graph with it planted fails the check."""
    modules = set(module_files())
    planted = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from pytest_osworld.plugin.settings import resolve\n"
        "def later():\n"
        "    from pytest_osworld.report import results\n"
    )
    name = "pytest_osworld.setup_steps.basic"
    graph = import_graph()
    graph[name] = graph[name] | imported_modules(
        name, Path("pytest_osworld/setup_steps/basic.py"), modules, source=planted
    )
    order = documented_order(MAP.read_text(encoding="utf-8"))
    found = violations(graph, order)
    assert f"{name} -> pytest_osworld.plugin.settings (layer setup_steps imports layer plugin)" in found
    assert f"{name} -> pytest_osworld.report.results (layer setup_steps imports layer report)" in found


@pytest.mark.parametrize(
    ("edge", "bad"),
    [
        (("pytest_osworld.plugin.collect", "pytest_osworld.task.model"), False),
        (("pytest_osworld.task.model", "pytest_osworld.plugin.collect"), True),
        (("pytest_osworld.agents.basic", "pytest_osworld.agent.contract"), False),
        (("pytest_osworld.agent.contract", "pytest_osworld.agents.basic"), True),
        (("pytest_osworld.plugin.collect", "pytest_osworld.plugin.settings"), False),
        (("pytest_osworld.registry", "pytest_osworld.errors"), False),
    ],
)
def test_the_rule_on_single_edges(edge: tuple[str, str], bad: bool) -> None:
    order = documented_order(MAP.read_text(encoding="utf-8"))
    assert bool(violations({edge[0]: {edge[1]}}, order)) is bad
