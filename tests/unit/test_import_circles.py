"""No import circles between our modules: a module never imports, directly or through others,
a module that imports it back.

The graph is read with ``ast`` from the source of ``pytest_osworld/``, ``agents/`` (installed as
``pytest_osworld.agents``) and ``parity/``. Every import statement counts, wherever it stands:
at module level, inside a function, or under ``if TYPE_CHECKING:``; a lazy import only hides a
circle, and a type-only one still ties two modules together. ``from package import name``
counts as an import of ``package.name`` when that is a module, else of ``package``.
"""

from __future__ import annotations

import pytest
from import_graph import import_graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index_of: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index_of[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index_of:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index_of[target])
        if low[node] == index_of[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index_of:
            visit(node)
    return sorted(found)


def test_our_modules_import_each_other_in_one_direction_only() -> None:
    found = circles(import_graph())
    message = "\n".join(" <-> ".join(component) for component in found)
    assert not found, f"import circles (break each so that one side no longer imports the other):\n{message}"


def test_the_graph_sees_known_edges() -> None:
    """The reader finds absolute, relative and ``from package import module`` imports."""
    graph = import_graph()
    assert "pytest_osworld.errors" in graph["pytest_osworld.registry"]
    assert "pytest_osworld.agents.prompts" in graph["pytest_osworld.agents.llm"]
    assert graph["parity.end_to_end"] & {"parity.e2e_run", "parity.e2e_tasks"}


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": {"b"}, "b": {"a"}, "c": {"a"}}, [["a", "b"]]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, [["a", "b", "c"]]),
        ({"a": {"b"}, "b": set()}, []),
    ],
)
def test_circles_are_found(graph: dict[str, set[str]], expected: list[list[str]]) -> None:
    assert circles(graph) == expected
