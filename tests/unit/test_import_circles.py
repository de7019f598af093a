"""No import circles between our modules: a module never imports, directly or through others,
a module that imports it back.

The graph is read with ``ast`` from the source of ``pytest_osworld/``, ``agents/`` (installed as
``pytest_osworld.agents``) and ``parity/``. Every import statement counts, wherever it stands:
at module level, inside a function, or under ``if TYPE_CHECKING:``; a lazy import only hides a
circle, and a type-only one still ties two modules together. ``from package import name``
counts as an import of ``package.name`` when that is a module, else of ``package``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Source folder -> the dotted name it is imported as.
PACKAGES = {"pytest_osworld": "pytest_osworld", "agents": "pytest_osworld.agents", "parity": "parity"}


def module_files() -> dict[str, Path]:
    """Every module's dotted name and its file (a package is its ``__init__.py``)."""
    modules: dict[str, Path] = {}
    for folder, dotted in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join((dotted, *parts))] = path
    return modules


def imported_modules(name: str, path: Path, modules: set[str]) -> set[str]:
    """Which of ``modules`` the module ``name`` (in ``path``) imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            for alias in node.names:
                if f"{base}.{alias.name}" in modules:
                    found.add(f"{base}.{alias.name}")
                elif base in modules:
                    found.add(base)
    found.discard(name)
    return found


def import_graph() -> dict[str, set[str]]:
    """Each of our modules -> the set of our modules it imports."""
    modules = module_files()
    return {name: imported_modules(name, path, set(modules)) for name, path in modules.items()}


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
