"""The import graph of our own modules, read with ``ast`` (shared by the import tests).

Every import statement counts, wherever it stands: at module level, inside a function, or
under ``if TYPE_CHECKING:``; a lazy import only hides a dependency, and a type-only one still
ties two modules together. ``from package import name`` counts as an import of
``package.name`` when that is a module, else of ``package``.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

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


def imported_modules(name: str, path: Path, modules: set[str], source: str | None = None) -> set[str]:
    """Which of ``modules`` the module ``name`` (in ``path``, or given as ``source``) imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    text = path.read_text(encoding="utf-8") if source is None else source
    for node in ast.walk(ast.parse(text, str(path))):
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
