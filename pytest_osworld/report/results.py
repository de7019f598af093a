"""The results directory, in OSWorld's layout, written as the run goes.

``<results>/<action_space>/<observation_type>/<model>/<domain>/<task_id>/`` holds
``traj.jsonl`` (one line per step, appended and flushed at once), ``step_N.png``,
``result.txt`` (the score, as OSWorld writes it) and ``result.json`` (ours).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from pytest_osworld.episode.loop import StepRecord
from pytest_osworld.episode.result import TaskResult
from pytest_osworld.errors import OSWorldError

_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


#: The longest folder name :func:`safe_component` returns.
MAX_COMPONENT = 120


def safe_component(text: str) -> str:
    """``text`` made safe as one path component (no separators, no ``..``).

    A name longer than :data:`MAX_COMPONENT` is cut and ends with a short hash of the whole
    text, so two long ids that share a prefix still get folders of their own.
    """
    cleaned = _SAFE.sub("_", text).strip("._") or "_"
    if len(cleaned) > MAX_COMPONENT:
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:10]
        cleaned = f"{cleaned[: MAX_COMPONENT - 11]}-{digest}"
    return cleaned


class TaskRecorder:
    """Writes one task's folder: the trajectory step by step, then the result.

    ``fresh=False`` opens an existing folder without clearing it: the xdist controller
    uses it to add the result of a task whose worker died, keeping the steps it wrote.
    """

    def __init__(
        self,
        root: Path,
        action_space: str,
        observation_type: str,
        model: str,
        domain: str,
        task_id: str,
        repeat: int = 1,
        fresh: bool = True,
    ) -> None:
        folder = safe_component(task_id) + (f".repeat-{repeat}" if repeat > 1 else "")
        self.dir = root.joinpath(
            safe_component(action_space),
            safe_component(observation_type),
            safe_component(model),
            safe_component(domain),
            folder,
        )
        if not self.dir.resolve().is_relative_to(root.resolve()):
            raise OSWorldError(f"results folder for task {task_id!r} would escape {root}")
        self.dir.mkdir(parents=True, exist_ok=True)
        self.traj = self.dir / "traj.jsonl"
        if fresh:
            self.traj.write_text("")
            for stale in ("result.txt", "result.json"):
                (self.dir / stale).unlink(missing_ok=True)
        self.last_screenshot: Path | None = None
        #: How many agent steps are in ``traj.jsonl`` (what an ERROR result reports).
        self.steps_written = self._count_steps() if not fresh else 0

    def _count_steps(self) -> int:
        """The step lines already in ``traj.jsonl`` (error lines are not steps)."""
        try:
            lines = self.traj.read_text(errors="replace").splitlines()
        except OSError:
            return 0
        count = 0
        for line in lines:
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut short by the crash
            count += isinstance(entry, dict) and "step_num" in entry
        return count

    def work_dir(self) -> Path:
        """Where getters put the files they fetch (kept for re-scoring)."""
        path = self.dir / "eval_inputs"
        path.mkdir(exist_ok=True)
        return path

    def step(self, record: StepRecord) -> None:
        """Append one step to ``traj.jsonl`` and write its screenshot."""
        line = record.to_json()
        if record.screenshot:
            name = f"step_{record.index}.png"
            (self.dir / name).write_bytes(record.screenshot)
            self.last_screenshot = self.dir / name
            line["screenshot_file"] = name
        with self.traj.open("a") as handle:
            handle.write(json.dumps(line) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        self.steps_written += 1

    def initial_screenshot(self, png: bytes | None) -> None:
        """Keep the screen as it was before the first step."""
        if png:
            (self.dir / "step_0.png").write_bytes(png)
            self.last_screenshot = self.last_screenshot or self.dir / "step_0.png"

    def error(self, message: str) -> None:
        """Record an error in the trajectory, as OSWorld does."""
        with self.traj.open("a") as handle:
            handle.write(json.dumps({"Error": message}) + "\n")
            handle.flush()
            os.fsync(handle.fileno())

    def annotate(self, fields: dict[str, Any]) -> None:
        """Add ``fields`` to the ``result.json`` already written (atomically; no-op without one)."""
        path = self.dir / "result.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if not isinstance(data, dict):
            return
        data.update(fields)
        tmp = self.dir / "result.json.tmp"
        tmp.write_text(json.dumps(data, indent=2, default=str))
        os.replace(tmp, path)

    def finish(self, result: TaskResult, extra: dict[str, Any] | None = None) -> None:
        """Write ``result.json`` always, and ``result.txt`` when there is a score.

        ``extra`` adds fields of another benchmark's result (OmniACT's ``omniact`` object).
        """
        data = result.to_json()
        if extra:
            data.update(extra)
        tmp = self.dir / "result.json.tmp"
        tmp.write_text(json.dumps(data, indent=2, default=str))
        os.replace(tmp, self.dir / "result.json")
        if result.score is not None:
            (self.dir / "result.txt").write_text(f"{result.score}\n")
