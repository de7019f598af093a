"""OmniACT's release, read as it is laid out: split files, task files, screenshots, box files.

The release (the Hugging Face dataset ``Writer/omniact``) has, at its root:

* **split files** ``train.json``, ``val.json``, ``test.json``: a JSON object from a key
  (``"0"``, ``"1"``, ...) to ``{"task": ..., "image": ..., "box": ...}``, paths relative to
  the release's root (by default the split file's folder);
* **task files** ``data/tasks/<desktop|web>/<app or site>/task_<screen>.<n>.txt``: a line
  ``Task: <instruction>``, a line ``Output Script:``, then the gold script, one
  ``pyautogui`` call a line;
* **screenshots** ``data/data/<desktop|web>/<app or site>/screen_<k>.png``;
* **box files** ``data/metadata/<desktop|web>/boxes/<app or site>/screen_<k>.json``: a JSON
  object from an element's name to ``{"top_left": [x, y], "bottom_right": [x, y],
  "label": ...}`` in the screenshot's pixels.

**The web path rewrite.** For web samples the split files name
``data/data/web/<site>/screen_<k>.png`` and ``data/metadata/web/boxes/<site>/screen_<k>.json``
but the release's files are ``screen<k>.png`` and ``screen<k>_boxes.json``. Every tool
that reads the release rewrites these paths, and so do we: a path is used as written when
that file exists, else rewritten (:func:`web_image_path`, :func:`web_boxes_path`).

:func:`read_split` reads a split into one :class:`ReleaseSample` per key, in the split's
order. A bad sample (missing file, task file without its gold script, box file that is not
JSON, gold click at no box's centre) becomes one :class:`ReleaseSampleError` in its place,
naming the key, the file and what to do; the other samples are read. Only a split file
that cannot be read at all raises (:class:`ReleaseSplitError`). Screenshots are not
decoded: their size comes from the PNG header, and shared files are read once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_osworld.errors import TaskFileError
from pytest_osworld.omniact.official import GoldScriptError, OfficialGold, prepare_gold
from pytest_osworld.omniact.official_text import kept_lines
from pytest_osworld.omniact.penalties import Box
from pytest_osworld.omniact.task import png_size

#: The pytest item name prefix: ``omniact/<split>/<key>``.
NODE_PREFIX = "omniact"
#: The keys of a split file's entry.
ENTRY_FIELDS = ("task", "image", "box")
#: The domains, as the task paths name them.
DOMAINS = ("desktop", "web")
#: How many bytes of a PNG hold its size.
_PNG_HEADER = 24

#: Message templates (tests match them).
SPLIT_UNREADABLE = "cannot read the split file: {error}"
SPLIT_NOT_JSON = "the split file is not JSON ({error}); download it again"
SPLIT_NOT_OBJECT = 'expected an object from sample key to {{"task", "image", "box"}}, got {got}'
ENTRY_NOT_OBJECT = 'expected {{"task": ..., "image": ..., "box": ...}}, got {got}'
ENTRY_MISSING = "missing {field!r}: the path of the sample's {what}, relative to the release root"
FILE_MISSING = "the {what} {path} does not exist{also}; download the release again or fix the path"
FILE_UNREADABLE = "cannot read the {what} {path}: {error}"
NO_DOMAIN = (
    "cannot tell desktop from web by the task path {path!r}: expected "
    "data/tasks/desktop/<app>/... or data/tasks/web/<site>/..."
)
NO_SCRIPT = (
    "the task file {path} has no gold script; it needs a 'Task: ...' line, an 'Output Script:' "
    "line and then one pyautogui call a line"
)
GOLD_UNREADABLE = "the task file {path}: {problem}"
BOXES_NOT_JSON = "the box file {path} is not JSON ({error}); download it again"
BOXES_NOT_OBJECT = "the box file {path} is not an object from element name to its box"
BOX_BAD = 'the box file {path}: entry {name!r} is not {{"top_left": [x, y], "bottom_right": [x, y]}}'
NOT_PNG = "the screenshot {path} is not a PNG file; download it again"

#: The text of a file that does not parse but is meant to be a split (an entry's keys).
SPLIT_TEXT_RE = re.compile(r'"task"\s*:\s*"[^"]*"\s*,\s*"image"\s*:')
_WEB_IMAGE = re.compile(r"^(?P<folder>(?:.*/)?web/[^/]+/)screen_(?P<k>[^/]+)\.png$")
_WEB_BOXES = re.compile(r"^(?P<folder>(?:.*/)?web/boxes/[^/]+/)screen_(?P<k>[^/]+)\.json$")


class ReleaseSplitError(TaskFileError):
    """A split file that cannot be read at all (missing, not JSON, not an object)."""


class ReleaseSampleError(TaskFileError):
    """One bad sample of a split: names the split file, the sample's key, the file at fault."""

    def __init__(self, split_path: str, key: str, entry_field: str | None, problem: str) -> None:
        #: The sample's key in its split file.
        self.key = key
        json_path = f"$[{json.dumps(key)}]" + (f".{entry_field}" if entry_field else "")
        super().__init__(split_path, json_path, problem)


@dataclass(frozen=True)
class ReleaseBox:
    """One element's box of a box file: its corners in screenshot pixels, and its label."""

    name: str
    top_left: tuple[float, float]
    bottom_right: tuple[float, float]
    label: str | None = None

    @property
    def corners(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """``(top_left, bottom_right)``, as the official scoring takes them."""
        return self.top_left, self.bottom_right

    @property
    def centre(self) -> tuple[float, float]:
        """The box's centre (where the gold clicks aim)."""
        return (
            (self.top_left[0] + self.bottom_right[0]) / 2,
            (self.top_left[1] + self.bottom_right[1]) / 2,
        )

    def to_box(self) -> Box:
        """The box as the paper scoring's :class:`~pytest_osworld.omniact.penalties.Box` (x, y, w, h)."""
        (left, top), (right, bottom) = self.top_left, self.bottom_right
        return Box(left, top, right - left, bottom - top)


@dataclass(frozen=True)
class ReleaseSample:
    """One sample of a split, read and checked."""

    split: str
    key: str
    #: ``desktop`` or ``web``.
    domain: str
    #: The application (desktop) or site (web) folder name.
    app: str
    instruction: str
    #: The task file's whole text (what the official scoring reads).
    task_text: str
    task_path: Path
    image: Path
    box_path: Path
    boxes: Mapping[str, ReleaseBox]
    #: The gold script prepared for the official scoring.
    official: OfficialGold = field(repr=False)
    #: The screenshot's (width, height), from its PNG header.
    image_size: tuple[int, int] = (0, 0)

    @property
    def nodename(self) -> str:
        """The test item's name: ``omniact/<split>/<key>``."""
        return f"{NODE_PREFIX}/{self.split}/{self.key}"

    @property
    def gold_script(self) -> str:
        """The gold script as written (its pyautogui lines, stripped, case kept), one call a line."""
        rows = self.task_text.strip().split("\n")[1:]
        return "\n".join(row.strip() for row in rows if row.lower().strip().startswith("pyautogui"))


@dataclass(frozen=True)
class ReleaseSplit:
    """A split file read: its samples and its bad samples, in the split's order."""

    name: str
    path: Path
    root: Path
    entries: tuple[ReleaseSample | ReleaseSampleError, ...]

    @property
    def keys(self) -> tuple[str, ...]:
        """Every key of the split, bad samples included, in the split's order."""
        return tuple(e.key for e in self.entries)

    @property
    def samples(self) -> tuple[ReleaseSample, ...]:
        """The samples that were read."""
        return tuple(e for e in self.entries if isinstance(e, ReleaseSample))

    @property
    def errors(self) -> tuple[ReleaseSampleError, ...]:
        """One error per bad sample."""
        return tuple(e for e in self.entries if isinstance(e, ReleaseSampleError))

    def __iter__(self) -> Iterator[ReleaseSample | ReleaseSampleError]:
        """The entries, in the split's order."""
        return iter(self.entries)


def looks_like_split(data: object) -> bool:
    """True if parsed JSON is meant to be a split file of the release.

    A split is an object from sample key to ``{"task": ..., "image": ..., "box": ...}``:
    every value an object, one at least with a ``task`` and an ``image`` or ``box``. OSWorld
    tasks (``instruction``, ``evaluator``), our OmniACT task files (``script``), manifests
    (lists) and the release's own box files (``top_left``, ``bottom_right``) are not.
    """
    if not isinstance(data, dict) or not data or not all(isinstance(v, dict) for v in data.values()):
        return False
    return any("task" in v and ("image" in v or "box" in v) for v in data.values())


def web_image_path(relative: str) -> str | None:
    """``.../web/<site>/screen_<k>.png`` -> ``.../web/<site>/screen<k>.png``; None for other paths."""
    match = _WEB_IMAGE.match(relative)
    return f"{match['folder']}screen{match['k']}.png" if match else None


def web_boxes_path(relative: str) -> str | None:
    """``.../web/boxes/<site>/screen_<k>.json`` -> ``.../screen<k>_boxes.json``; None for other paths."""
    match = _WEB_BOXES.match(relative)
    return f"{match['folder']}screen{match['k']}_boxes.json" if match else None


class _Problem(Exception):
    """A bad sample, before its key and split are attached."""

    def __init__(self, entry_field: str | None, message: str) -> None:
        self.entry_field = entry_field
        super().__init__(message)


def read_split(path: Path, root: Path | None = None) -> ReleaseSplit:
    """Read a split file of the release, every sample checked; raises only if the file is unreadable.

    ``root`` is the release's root, which the split's paths are relative to (default: the
    split file's folder).
    """
    root = path.parent if root is None else root
    try:
        blob = path.read_bytes()
    except OSError as exc:
        raise ReleaseSplitError(str(path), "$", SPLIT_UNREADABLE.format(error=exc.strerror or exc)) from None
    try:
        data = json.loads(blob)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReleaseSplitError(str(path), "$", SPLIT_NOT_JSON.format(error=exc)) from None
    if not isinstance(data, dict):
        raise ReleaseSplitError(str(path), "$", SPLIT_NOT_OBJECT.format(got=type(data).__name__))
    reader = _Reader(root)
    entries: list[ReleaseSample | ReleaseSampleError] = []
    for key, entry in data.items():
        try:
            entries.append(reader.sample(path.stem, key, entry))
        except _Problem as problem:
            entries.append(ReleaseSampleError(str(path), key, problem.entry_field, str(problem)))
    return ReleaseSplit(path.stem, path, root, tuple(entries))


class _Reader:
    """Reads a split's samples, each shared screenshot and box file once."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._sizes: dict[Path, tuple[int, int] | _Problem] = {}
        self._boxes: dict[Path, dict[str, ReleaseBox] | _Problem] = {}

    def sample(self, split: str, key: str, entry: object) -> ReleaseSample:
        """One sample, or :class:`_Problem`."""
        if not isinstance(entry, dict):
            raise _Problem(None, ENTRY_NOT_OBJECT.format(got=type(entry).__name__))
        names = {"task": "task file", "image": "screenshot", "box": "box file"}
        for name in ENTRY_FIELDS:
            if not isinstance(entry.get(name), str) or not entry[name]:
                raise _Problem(None, ENTRY_MISSING.format(field=name, what=names[name]))
        task_rel, image_rel, box_rel = (str(entry[name]) for name in ENTRY_FIELDS)
        domain, app = _domain_and_app(task_rel)
        task_path = self._existing("task", "task file", task_rel, None)
        try:
            task_text = task_path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise _Problem(
                "task", FILE_UNREADABLE.format(what="task file", path=task_path, error=exc)
            ) from None
        if not kept_lines(task_text, gold=True):
            raise _Problem("task", NO_SCRIPT.format(path=task_path))
        image = self._existing("image", "screenshot", image_rel, web_image_path(image_rel))
        box_path = self._existing("box", "box file", box_rel, web_boxes_path(box_rel))
        boxes = self._box_file(box_path)
        size = self._image_size(image)
        try:
            official = prepare_gold(task_text, {name: box.corners for name, box in boxes.items()})
        except GoldScriptError as exc:
            raise _Problem("task", GOLD_UNREADABLE.format(path=task_path, problem=exc)) from None
        return ReleaseSample(
            split=split,
            key=key,
            domain=domain,
            app=app,
            instruction=_instruction(task_text),
            task_text=task_text,
            task_path=task_path,
            image=image,
            box_path=box_path,
            boxes=boxes,
            official=official,
            image_size=size,
        )

    def _existing(self, entry_field: str, what: str, relative: str, rewritten: str | None) -> Path:
        """The file as written if it exists, else as rewritten (web paths), else :class:`_Problem`."""
        written = self.root / relative
        if written.is_file():
            return written
        if rewritten is not None and (self.root / rewritten).is_file():
            return self.root / rewritten
        also = f" (nor {self.root / rewritten})" if rewritten is not None else ""
        raise _Problem(entry_field, FILE_MISSING.format(what=what, path=written, also=also))

    def _image_size(self, image: Path) -> tuple[int, int]:
        if image not in self._sizes:
            try:
                with image.open("rb") as handle:
                    self._sizes[image] = png_size(handle.read(_PNG_HEADER))
            except OSError as exc:
                message = FILE_UNREADABLE.format(what="screenshot", path=image, error=exc.strerror or exc)
                self._sizes[image] = _Problem("image", message)
            except ValueError:
                self._sizes[image] = _Problem("image", NOT_PNG.format(path=image))
        found = self._sizes[image]
        if isinstance(found, _Problem):
            raise _Problem(found.entry_field, str(found))
        return found

    def _box_file(self, path: Path) -> dict[str, ReleaseBox]:
        if path not in self._boxes:
            try:
                self._boxes[path] = _parse_boxes(path)
            except _Problem as problem:
                self._boxes[path] = problem
        found = self._boxes[path]
        if isinstance(found, _Problem):
            raise _Problem(found.entry_field, str(found))
        return found


def _domain_and_app(task_rel: str) -> tuple[str, str]:
    """``data/tasks/desktop/<app>/...`` -> ``("desktop", "<app>")``, likewise for web."""
    parts = Path(task_rel).parts
    for index, part in enumerate(parts[:-2]):
        if part in DOMAINS:
            return part, parts[index + 1]
    raise _Problem("task", NO_DOMAIN.format(path=task_rel))


def _instruction(task_text: str) -> str:
    """The task's instruction: its first line without ``Task:``."""
    first = task_text.strip().split("\n", 1)[0].strip()
    return first[len("task:") :].strip() if first.lower().startswith("task:") else first


def _parse_boxes(path: Path) -> dict[str, ReleaseBox]:
    """A box file's boxes, in the file's order; :class:`_Problem` when it is not one."""
    try:
        data = json.loads(path.read_bytes())
    except OSError as exc:
        raise _Problem(
            "box", FILE_UNREADABLE.format(what="box file", path=path, error=exc.strerror)
        ) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _Problem("box", BOXES_NOT_JSON.format(path=path, error=exc)) from None
    if not isinstance(data, dict):
        raise _Problem("box", BOXES_NOT_OBJECT.format(path=path))
    boxes: dict[str, ReleaseBox] = {}
    for name, value in data.items():
        corners = _corners(value)
        if corners is None:
            raise _Problem("box", BOX_BAD.format(path=path, name=name))
        label = value.get("label")
        boxes[name] = ReleaseBox(name, corners[0], corners[1], label if isinstance(label, str) else None)
    return boxes


def _corners(value: Any) -> tuple[tuple[float, float], tuple[float, float]] | None:
    """The two corners of a box file's entry, or None when it is not one."""
    if not isinstance(value, dict):
        return None
    points = []
    for name in ("top_left", "bottom_right"):
        pair = value.get(name)
        if (
            not isinstance(pair, list)
            or len(pair) != 2
            or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in pair)
        ):
            return None
        points.append((float(pair[0]), float(pair[1])))
    return points[0], points[1]
