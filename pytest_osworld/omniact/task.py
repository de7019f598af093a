"""The OmniACT task file: one JSON object per task, its screenshot beside it.

```json
{
  "id": "calc-bold-header",
  "instruction": "Make the selected cells bold",
  "image": "calc-bold-header.png",
  "script": "pyautogui.click(27, 51)  # box: bold",
  "boxes": {"bold": [18, 42, 18, 18]},
  "domain": "desktop",
  "app": "libreoffice_calc"
}
```

``script`` is the gold PyAutoGUI script; ``boxes`` gives, for every pointer action of it
whose position is known, the target element's bounding box ``[x, y, w, h]`` in the
image's pixels, under the name of a ``# box: NAME`` comment on the action's line, or
under the action's 1-based line number in the script. Validation is strict and every
error is a :class:`~pytest_osworld.errors.TaskFileError` naming the file and the JSON
path: the image must be a PNG in the task's folder, every gold point must lie in its
box, and every box must be used. See ``docs/omniact.md``.
"""

from __future__ import annotations

import hashlib
import json
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_osworld.errors import TaskFileError
from pytest_osworld.omniact.score import POINTER_KINDS, Box, ScriptAction, ScriptError, parse_script
from pytest_osworld.task.model import EvaluatorSpec, Task

#: The ``domain`` values of the paper's two halves.
DOMAINS = ("desktop", "web")
#: Keys a task file may have; anything else is an error (a typo would otherwise be lost).
KNOWN_KEYS = frozenset({"id", "instruction", "image", "script", "boxes", "domain", "app", "source", "notes"})
#: The pytest item name prefix and the domain the agents see.
NODE_PREFIX = "omniact"
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class OmniactTask:
    """One OmniACT task, validated: an instruction, a screenshot, a gold script and boxes."""

    id: str
    instruction: str
    image: Path
    script: str
    boxes: dict[str, Box]
    domain: str
    app: str | None
    path: Path
    sha256: str
    #: The gold script's actions, parsed once.
    actions: tuple[ScriptAction, ...]
    #: The image's size in pixels (width, height).
    image_size: tuple[int, int]
    raw: dict[str, Any] = field(repr=False)

    @property
    def nodename(self) -> str:
        """The test item's name: ``omniact/<id>``."""
        return f"{NODE_PREFIX}/{self.id}"

    def screenshot(self) -> bytes:
        """The task's screenshot as PNG bytes."""
        return self.image.read_bytes()

    def agent_task(self) -> Task:
        """The task as the agent contract's :class:`~pytest_osworld.task.model.Task`.

        No setup and no evaluator (scoring is offline); the ``solution`` is the gold
        script as one pyautogui code action, then DONE, so ``--agent=replay`` answers
        with the gold script.
        """
        return omniact_agent_task(
            self.id, self.instruction, self.app, self.script, self.path, self.sha256, self.raw
        )


def omniact_agent_task(
    task_id: str, instruction: str, app: str | None, script: str, path: Path, sha256: str, raw: dict[str, Any]
) -> Task:
    """An OmniACT sample (ours or the release's) as the agent contract's
    :class:`~pytest_osworld.task.model.Task`: no setup and no evaluator (scoring is offline),
    the gold ``script`` as one code action then DONE as its ``solution``."""
    return Task(
        id=task_id,
        instruction=instruction,
        domain=NODE_PREFIX,
        path=path,
        sha256=sha256,
        config=(),
        evaluator=EvaluatorSpec(metrics=(), conj="and", postconfig=()),
        proxy=False,
        related_apps=(app,) if app else (),
        snapshot="",
        solution=(script, "DONE"),
        raw=raw,
    )


def looks_like_omniact(data: object) -> bool:
    """True if parsed JSON is meant to be an OmniACT task.

    An OmniACT task is an object with a ``script`` and an ``image`` or ``boxes``, and no
    ``evaluator`` (which makes a file an OSWorld task).
    """
    return (
        isinstance(data, dict)
        and "evaluator" not in data
        and "script" in data
        and ("image" in data or "boxes" in data)
    )


def png_size(blob: bytes) -> tuple[int, int]:
    """Width and height from a PNG's header; ValueError if ``blob`` is not a PNG."""
    if len(blob) < 24 or not blob.startswith(_PNG_MAGIC) or blob[12:16] != b"IHDR":
        raise ValueError("not a PNG file")
    width, height = struct.unpack(">II", blob[16:24])
    return int(width), int(height)


def load_omniact_task(path: Path) -> OmniactTask:
    """Read and validate the OmniACT task file at ``path``."""
    try:
        blob = path.read_bytes()
    except OSError as exc:
        raise TaskFileError(str(path), "$", f"cannot read the file: {exc}") from exc
    try:
        data = json.loads(blob)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        where = f"line {exc.lineno} column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else "$"
        raise TaskFileError(str(path), "$", f"not valid JSON ({where}): {exc}") from exc
    return parse_omniact_task(data, path, hashlib.sha256(blob).hexdigest())


def parse_omniact_task(data: object, path: Path, sha256: str) -> OmniactTask:
    """Validate parsed OmniACT JSON and build an :class:`OmniactTask`."""

    def fail(json_path: str, problem: str) -> TaskFileError:
        return TaskFileError(str(path), json_path, problem)

    if not isinstance(data, dict):
        raise fail("$", f"expected an object, got {type(data).__name__}")
    unknown = sorted(set(data) - KNOWN_KEYS)
    if unknown:
        raise fail(f"$.{unknown[0]}", f"unknown key; an OmniACT task has {', '.join(sorted(KNOWN_KEYS))}")

    def text(key: str, *, required: bool = True) -> str | None:
        if key not in data:
            if required:
                raise fail("$", f"missing required key {key!r}")
            return None
        value = data[key]
        if not isinstance(value, str):
            raise fail(f"$.{key}", f"expected a string, got {_describe(value)}")
        if not value.strip():
            raise fail(f"$.{key}", "must not be empty")
        return value

    task_id = text("id") or ""
    if not _ID.match(task_id):
        raise fail("$.id", "use letters, digits, '.', '_' and '-' only (it names the test item)")
    instruction = text("instruction") or ""
    image_name = text("image") or ""
    script = text("script") or ""
    domain = text("domain", required=False) or "desktop"
    if domain not in DOMAINS:
        raise fail("$.domain", f"expected one of {', '.join(DOMAINS)}, got {domain!r}")
    app = text("app", required=False)

    image = path.parent / image_name
    if Path(image_name).is_absolute() or image.resolve().parent != path.parent.resolve():
        raise fail("$.image", "must name a file in the task's own folder")
    try:
        image_size = png_size(image.read_bytes())
    except OSError as exc:
        raise fail("$.image", f"cannot read {image}: {exc.strerror or exc}") from None
    except ValueError:
        raise fail("$.image", f"{image} is not a PNG file") from None

    try:
        actions = tuple(parse_script(script))
    except ScriptError as exc:
        raise fail("$.script", str(exc)) from None
    if not actions:
        raise fail("$.script", "the gold script has no pyautogui actions")

    if "boxes" not in data:
        raise fail("$", "missing required key 'boxes'")
    raw_boxes = data["boxes"]
    if not isinstance(raw_boxes, dict):
        raise fail("$.boxes", f"expected an object, got {_describe(raw_boxes)}")
    boxes: dict[str, Box] = {}
    for key, value in raw_boxes.items():
        where = f"$.boxes.{key}"
        if (
            not isinstance(value, list)
            or len(value) != 4
            or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
        ):
            raise fail(where, f"expected [x, y, width, height] numbers, got {_describe(value)}")
        x, y, w, h = (float(v) for v in value)
        if w <= 0 or h <= 0:
            raise fail(where, "width and height must be positive")
        if x < 0 or y < 0 or x + w > image_size[0] or y + h > image_size[1]:
            raise fail(where, f"the box leaves the {image_size[0]}x{image_size[1]} image")
        boxes[key] = Box(x, y, w, h)

    used: set[str] = set()
    for number, action in enumerate(actions, start=1):
        if action.kind not in POINTER_KINDS or action.point is None:
            continue
        key = action.box_key
        where = f"$.script (line {action.line}, action {number} {action.kind})"
        if key not in boxes:
            raise fail(where, f'no box for this action: add "boxes": {{{json.dumps(key)}: [x, y, w, h]}}')
        if not boxes[key].contains(*action.point):
            px, py = action.point
            raise fail(where, f"the gold point ({px:g}, {py:g}) is outside its box {key!r}")
        used.add(key)
    for number, action in enumerate(actions, start=1):
        if action.kind == "write" and action.text is None:
            raise fail(f"$.script (line {action.line}, action {number})", "write needs a literal string")
        if action.kind in ("press", "hotkey", "keyDown", "keyUp") and action.keys is None:
            raise fail(f"$.script (line {action.line}, action {number})", f"{action.kind} needs literal keys")
    unused = sorted(set(boxes) - used)
    if unused:
        raise fail(f"$.boxes.{unused[0]}", "no pointer action of the script uses this box")

    return OmniactTask(
        id=task_id,
        instruction=instruction,
        image=image,
        script=script,
        boxes=boxes,
        domain=domain,
        app=app,
        path=path,
        sha256=sha256,
        actions=actions,
        image_size=image_size,
        raw=dict(data),
    )


def _describe(value: object) -> str:
    """A short description of a JSON value for error messages."""
    if value is None:
        return "null"
    text = json.dumps(value)
    shown = text[:40] + "..." if len(text) > 40 else text
    kind = {str: "a string", bool: "true or false", list: "a list", dict: "an object"}.get(
        type(value), "a number"
    )
    return f"{kind} {shown}"
