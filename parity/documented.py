"""Which disagreements with OSWorld are documented as deliberate (docs/parity.md).

A name is documented iff docs/parity.md, under the heading ``## Deliberate differences``
(up to the next ``## `` heading), has a bullet that starts with the name in backticks,
e.g. ``- `compare_table`: ...``. Several names may open one bullet:
``- `check_qt_bgcone`, `check_qt_max_volume`: ...``. Only top-level bullets count: an
indented sub-bullet details its parent and names no metric.
"""

from __future__ import annotations

import re
from pathlib import Path

HEADING = "## Deliberate differences"
_BULLET = re.compile(r"^[-*]\s+((?:`[^`]+`\s*(?:,|and|/)?\s*)+)")
_NAME = re.compile(r"`([^`]+)`")


def parse_documented(text: str) -> set[str]:
    """Names documented in the ``## Deliberate differences`` section of ``text``."""
    names: set[str] = set()
    inside = False
    for line in text.splitlines():
        if line.startswith("## "):
            inside = line.strip() == HEADING
            continue
        if not inside:
            continue
        match = _BULLET.match(line)
        if match:
            names.update(_NAME.findall(match.group(1)))
    return names


def documented_names(root: Path) -> set[str]:
    """Names documented in ``root/docs/parity.md`` (empty when the file is missing)."""
    path = root / "docs" / "parity.md"
    if not path.is_file():
        return set()
    return parse_documented(path.read_text(encoding="utf-8"))
