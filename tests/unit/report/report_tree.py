"""Builders of small results trees for the report tests (written with the real TaskRecorder)."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from pytest_osworld.agent.actions import Action
from pytest_osworld.agent.contract import Usage
from pytest_osworld.episode.loop import StepRecord
from pytest_osworld.episode.result import TaskResult
from pytest_osworld.report.results import TaskRecorder

ACTION_SPACE, OBSERVATION, MODEL = "pyautogui", "screenshot", "test-model"


def png(
    size: tuple[int, int] = (48, 30), color: tuple[int, int, int] = (40, 90, 160), label: str = ""
) -> bytes:
    """A real PNG: a plain background with a title bar and an optional label."""
    image = Image.new("RGB", size, (236, 239, 244))
    draw = ImageDraw.Draw(image)
    bar = max(4, size[1] // 14)
    draw.rectangle([0, 0, size[0], bar], fill=color)
    draw.rectangle(
        [size[0] // 8, bar * 2, size[0] * 7 // 8, size[1] - bar], outline=color, width=max(1, bar // 4)
    )
    if label:
        draw.text((size[0] // 8 + 8, bar * 2 + 8), label, fill=(20, 20, 20))
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def write_task_file(
    folder: Path, task_id: str, domain: str, instruction: str, evaluator: dict[str, Any]
) -> Path:
    """An OSWorld task file at ``folder/<domain>/<task_id>.json``."""
    path = folder / domain / f"{task_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps({"id": task_id, "instruction": instruction, "config": [], "evaluator": evaluator})
    )
    return path


def record_task(
    root: Path,
    domain: str,
    task_id: str,
    *,
    outcome: str | None = "passed",
    score: float | None = 1.0,
    steps: list[dict[str, Any]] | None = None,
    reason: str = "",
    metrics: list[dict[str, Any]] | None = None,
    evaluator_inputs: list[dict[str, Any]] | None = None,
    eval_files: dict[str, str] | None = None,
    infeasible: bool = False,
    end_reason: str = "done",
    task_file: Path | None = None,
    model: str = MODEL,
    size: tuple[int, int] = (48, 30),
    recording: bool = False,
    duration_s: float = 12.5,
) -> Path:
    """Record one task as a run would; ``outcome=None`` stops before result.json (a crash)."""
    recorder = TaskRecorder(root, ACTION_SPACE, OBSERVATION, model, domain, task_id)
    recorder.initial_screenshot(png(size, label="before step 1"))
    steps = steps if steps is not None else [{"code": "pyautogui.click(10, 10)"}, {"special": "DONE"}]
    for index, spec in enumerate(steps, start=1):
        if "special" in spec:
            actions = [Action(kind=spec["special"])]
        else:
            actions = [Action(kind="code", code=spec["code"])]
        recorder.step(
            StepRecord(
                index=index,
                started=1_700_000_000.0 + index,
                duration=spec.get("duration", 2.0),
                response=spec.get("response", f"```python\n{spec.get('code', '')}\n```"),
                thought=spec.get("thought", f"thinking about step {index}"),
                actions=actions,
                action_errors=spec.get("action_errors", []),
                parse_error=spec.get("parse_error"),
                usage=Usage(1000, 50, 0.01),
                screenshot=None if spec.get("no_screenshot") else png(size, label=f"after step {index}"),
            )
        )
    for name, text in (eval_files or {}).items():
        target = recorder.work_dir() / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    if recording:
        (recorder.dir / "recording.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42")
    if outcome is None:
        return recorder.dir
    provenance: dict[str, Any] = {
        "plugin_version": "0.0.test",
        "provider": "fake",
        "agent": "scripted",
        "model": model,
        "max_steps": 15,
        "observation_type": OBSERVATION,
        "action_space": ACTION_SPACE,
    }
    if task_file is not None:
        provenance["task_file"] = str(task_file)
        provenance["task_sha256"] = hashlib.sha256(task_file.read_bytes()).hexdigest()
    recorder.finish(
        TaskResult(
            task_id=task_id,
            domain=domain,
            nodeid=f"tasks/{domain}/{task_id}.json::{domain}/{task_id}",
            outcome=outcome,
            score=score,
            threshold=1.0,
            end_reason=end_reason,
            steps=len(steps),
            max_steps=15,
            duration_s=duration_s,
            infeasible=infeasible,
            reason=reason,
            metrics=metrics or [],
            usage={
                "input_tokens": 1000 * len(steps),
                "output_tokens": 50 * len(steps),
                "cost_usd": 0.01 * len(steps),
            },
            provenance=provenance,
            evaluator_inputs=evaluator_inputs or [],
        )
    )
    return recorder.dir


def metric(
    func: str,
    value: float | None,
    reason: str,
    status: str = "evaluated",
    result: str = "",
    expected: str = "",
) -> dict[str, Any]:
    """One metric outcome as result.json holds it."""
    return {
        "func": func,
        "status": status,
        "value": value,
        "reason": reason,
        "result": result,
        "expected": expected,
    }
