"""Build the OmniACT sample suite (``tasks/omniact``) from our own desktop's apps.

Run from the repository (it starts the local desktop, about two minutes):

    .venv/bin/python tasks/tools/make_omniact_samples.py [--only SCENE ...] [--check DIR]
    .venv/bin/python tasks/tools/make_omniact_samples.py --release [DIR]

``--release`` starts no desktop: it writes the stored samples (``tasks/omniact/*.json``, their
screenshots and boxes) again in OmniACT's release layout, into DIR (default
``tasks/omniact_release``: ``test.json`` and its ``data/`` tree), and checks that each one
reads back and scores 1 with its gold and 0 with an empty answer under both scorings
(:mod:`pytest_osworld.omniact.release_write`).

For each scene it restores a fresh desktop, starts one app (LibreOffice Calc, Writer and
Impress, Chromium on a local page, GIMP, Thunderbird, a terminal, VLC), waits for its
window (bounded), takes a screenshot and reads the target elements' boxes from the
accessibility stack: the same AT-SPI extents the guest writes as ``cp:screencoord`` and
``cp:size``, read here with a pruned pyatspi walk inside the desktop (only showing
elements; big tables are not enumerated). Screenshots are downscaled from 1920x1080 to
960x540 (factor 0.5) and quantised to 256 colours to keep the repository small; boxes
are scaled by the same factor, and each gold click aims at its box's centre, rounded.
One PNG per scene is shared by that scene's tasks. ``--check DIR`` also writes each
screenshot with its boxes drawn, to eyeball that the tree matched the pixels.

LibreOffice's gtk3 accessibility reports toolbar and document positions without the
menu bar's height, so LibreOffice tasks only target menu-bar menus (whose extents are
right) and otherwise use the keyboard.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image, ImageDraw

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tasks" / "omniact"
RELEASE_OUT = ROOT / "tasks" / "omniact_release"
SCALE = 0.5
WINDOW_WAIT_S = 90.0

#: The local page Chromium shows.
ORDER_FORM = b"""<!doctype html>
<html><head><meta charset="utf-8"><title>Order form</title></head>
<body style="font-family: sans-serif; margin: 40px; font-size: 18px">
<h1>Order a book</h1>
<form>
<p><label for="title">Title</label> <input id="title" name="title" size="40"></p>
<p><label for="qty">Quantity</label> <input id="qty" name="qty" type="number" value="1"></p>
<p><label><input type="checkbox" id="gift"> Gift wrap</label></p>
<p><button type="button">Place order</button> <button type="reset">Clear</button></p>
</form>
<p><a href="#help">Help</a> | <a href="#contact">Contact us</a></p>
</body></html>
"""

#: Runs inside the desktop: finds showing elements by (role, name) and prints their extents.
FIND_ELEMENTS = r"""
import json, sys
import pyatspi
wanted = json.loads(sys.argv[1])
keys = {r + "|" + n for r, n in wanted}
found = {}
def walk(node, depth):
    if depth > 45 or len(found) == len(keys):
        return
    try:
        role = node.getRoleName().replace(" ", "-")
        name = node.name or ""
        count = node.childCount
        showing = node.getState().contains(pyatspi.STATE_SHOWING)
    except Exception:
        return
    if depth > 1 and not showing:
        return
    key = role + "|" + name
    if key in keys and key not in found:
        try:
            e = node.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
            if e.width > 0 and e.height > 0:
                found[key] = [e.x, e.y, e.width, e.height]
        except Exception:
            pass
    if count > 400:
        return
    for i in range(count):
        try:
            child = node.getChildAtIndex(i)
        except Exception:
            continue
        if child is not None:
            walk(child, depth + 1)
desktop = pyatspi.Registry.getDesktop(0)
for i in range(desktop.childCount):
    app = desktop.getChildAtIndex(i)
    if app is not None:
        walk(app, 0)
print(json.dumps(found))
"""


@dataclass(frozen=True)
class Target:
    """An element to find: AT-SPI role (dashes for spaces) and exact name."""

    role: str
    name: str


@dataclass(frozen=True)
class Step:
    """One line of a gold script: ``call`` is pyautogui's function; ``target`` for pointer calls."""

    call: str
    target: Target | None = None
    args: tuple[str, ...] = ()
    box: str | None = None


@dataclass(frozen=True)
class Spec:
    """One task of a scene."""

    id: str
    instruction: str
    steps: tuple[Step, ...]
    domain: str = "desktop"


@dataclass
class Scene:
    """One app on screen: how to start it, the window to wait for, its tasks."""

    name: str
    app: str
    command: list[str]
    window: str
    tasks: list[Spec]
    prepare: dict[str, bytes] = field(default_factory=dict)
    #: Keys pressed once the window is up (to dismiss a start dialog).
    dismiss: tuple[str, ...] = ()
    settle_s: float = 4.0
    #: The site folder of a web scene in the release layout (``data/data/web/<site>/``).
    site: str = ""


def click(role: str, name: str, box: str, call: str = "click") -> Step:
    """A pointer step on the element ``role``/``name``, its box named ``box``."""
    return Step(call, Target(role, name), box=box)


def write(text: str) -> Step:
    """Type ``text``."""
    return Step("write", args=(repr(text),))


def press(key: str) -> Step:
    """Press one key."""
    return Step("press", args=(repr(key),))


def hotkey(*keys: str) -> Step:
    """Press a key combination."""
    return Step("hotkey", args=tuple(repr(k) for k in keys))


SCENES = [
    Scene(
        "calc",
        "LibreOffice Calc",
        ["libreoffice", "--calc"],
        "LibreOffice Calc",
        [
            Spec("calc-open-data-menu", "Open the Data menu", (click("menu", "Data", "data_menu"),)),
            Spec(
                "calc-type-revenue",
                "Type Revenue into the selected cell and confirm it",
                (write("Revenue"), press("enter")),
            ),
            Spec(
                "calc-copy-all",
                "Select every cell of the sheet and copy them",
                (hotkey("ctrl", "a"), hotkey("ctrl", "c")),
            ),
            Spec("calc-open-format-menu", "Open the Format menu", (click("menu", "Format", "format_menu"),)),
        ],
    ),
    Scene(
        "writer",
        "LibreOffice Writer",
        ["libreoffice", "--writer"],
        "LibreOffice Writer",
        [
            Spec(
                "writer-open-insert-menu", "Open the Insert menu", (click("menu", "Insert", "insert_menu"),)
            ),
            Spec(
                "writer-greeting",
                "Type 'Dear Ms. Smith,' and start a new paragraph",
                (write("Dear Ms. Smith,"), press("enter")),
            ),
            Spec(
                "writer-bold-summary-save",
                "Switch bold on, type Summary, then save the document",
                (hotkey("ctrl", "b"), write("Summary"), hotkey("ctrl", "s")),
            ),
            Spec("writer-open-tools-menu", "Open the Tools menu", (click("menu", "Tools", "tools_menu"),)),
        ],
    ),
    Scene(
        "impress",
        "LibreOffice Impress",
        ["libreoffice", "--impress"],
        "LibreOffice Impress",
        [
            Spec("impress-open-slide-menu", "Open the Slide menu", (click("menu", "Slide", "slide_menu"),)),
            Spec("impress-start-show", "Start the slide show from the first slide", (press("f5"),)),
        ],
        dismiss=("escape",),
    ),
    Scene(
        "chrome",
        "Chromium",
        ["google-chrome", "--window-size=1920,1080", "--window-position=0,0", "file:///home/user/order.html"],
        "Order form",
        [
            Spec(
                "web-order-book",
                "Order the book Dune",
                (
                    click("entry", "Title", "title_field"),
                    write("Dune"),
                    click("push-button", "Place order", "order_button"),
                ),
                domain="web",
            ),
            Spec(
                "web-gift-wrap",
                "Ask for gift wrapping",
                (click("check-box", "Gift wrap", "gift_wrap"),),
                domain="web",
            ),
            Spec(
                "web-open-help", "Open the help section", (click("link", "Help", "help_link"),), domain="web"
            ),
            Spec(
                "web-quantity-twelve",
                "Order twelve copies",
                (click("spin-button", "Quantity", "quantity"), hotkey("ctrl", "a"), write("12")),
                domain="web",
            ),
        ],
        prepare={"/home/user/order.html": ORDER_FORM},
        settle_s=6.0,
        site="order_form",
    ),
    Scene(
        "gimp",
        "GIMP",
        ["gimp"],
        "GNU Image Manipulation Program",
        [
            Spec(
                "gimp-open-filters-menu", "Open the Filters menu", (click("menu", "Filters", "filters_menu"),)
            ),
            Spec("gimp-new-image", "Create a new image", (hotkey("ctrl", "n"),)),
        ],
        settle_s=8.0,
    ),
    Scene(
        "thunderbird",
        "Thunderbird",
        ["thunderbird"],
        "Thunderbird",
        [
            Spec(
                "thunderbird-add-account",
                "Set up the mail account of John Doe, john.doe@example.com, replacing the name filled in",
                (
                    click("entry", "Full name*", "full_name"),
                    hotkey("ctrl", "a"),
                    write("John Doe"),
                    click("entry", "Email address*", "email"),
                    write("john.doe@example.com"),
                    click("push-button", "Continue", "continue_button"),
                ),
            ),
            Spec(
                "thunderbird-release-notes",
                "Show Thunderbird's release notes",
                (click("link", "Release notes", "release_notes"),),
            ),
            Spec("thunderbird-quit", "Quit Thunderbird", (hotkey("ctrl", "q"),)),
        ],
        settle_s=8.0,
    ),
    Scene(
        "terminal",
        "Terminal",
        ["gnome-terminal"],
        "Terminal",
        [
            Spec(
                "terminal-list-home",
                "List every file in the home folder, hidden ones too, in the terminal",
                (click("terminal", "Terminal", "terminal"), write("ls -a ~"), press("enter")),
            ),
            Spec("terminal-new-tab", "Open a new terminal tab", (hotkey("ctrl", "shift", "t"),)),
            Spec(
                "terminal-open-search-menu",
                "Open the terminal's Search menu",
                (click("menu", "Search", "search_menu"),),
            ),
        ],
    ),
    Scene(
        "vlc",
        "VLC",
        ["vlc"],
        "VLC media player",
        [
            # VLC's Qt tree did not show up to this script's lookup in time (it does to
            # the guest's tree later): keyboard tasks only.
            Spec("vlc-open-file", "Open a media file", (hotkey("ctrl", "o"),)),
            Spec("vlc-quit", "Quit VLC", (hotkey("ctrl", "q"),)),
        ],
        settle_s=10.0,
    ),
]


def wait_for_window(guest: object, title: str) -> None:
    """Poll ``wmctrl -l`` until a window title contains ``title`` (bounded)."""
    deadline = time.monotonic() + WINDOW_WAIT_S
    while time.monotonic() < deadline:
        listing = guest.execute(["wmctrl", "-l"], timeout=10).output  # type: ignore[attr-defined]
        if title in listing:
            return
        time.sleep(1.0)
    raise RuntimeError(f"no window titled {title!r} within {WINDOW_WAIT_S:.0f} s")


def find_boxes(guest: object, targets: list[Target]) -> dict[Target, tuple[int, int, int, int]]:
    """The screen boxes of ``targets``, read from AT-SPI inside the desktop."""
    wanted = json.dumps([[t.role, t.name] for t in targets])
    found: dict[str, list[int]] = {}
    # Qt apps (VLC) fill their tree in only after the first query: a few bounded retries.
    for _attempt in range(4):
        result = guest.execute(["python3", "-c", FIND_ELEMENTS, wanted], timeout=120)  # type: ignore[attr-defined]
        if result.returncode != 0:
            raise RuntimeError(f"element lookup failed: {result.error[-500:]}")
        found = json.loads(result.output.strip().splitlines()[-1])
        if len(found) == len({(t.role, t.name) for t in targets}):
            break
        time.sleep(3.0)
    boxes = {}
    for target in targets:
        key = f"{target.role}|{target.name}"
        if key not in found:
            raise RuntimeError(f"element {target.role} {target.name!r} not found (found {sorted(found)})")
        x, y, w, h = found[key]
        boxes[target] = (int(x), int(y), int(w), int(h))
    return boxes


def scaled(box: tuple[int, int, int, int]) -> list[int]:
    """A screen box in the downscaled image's pixels (rounded outwards)."""
    x, y, w, h = box
    left, top = int(x * SCALE), int(y * SCALE)
    right, bottom = -int(-(x + w) * SCALE // 1), -int(-(y + h) * SCALE // 1)
    return [left, top, max(right - left, 1), max(bottom - top, 1)]


def script_for(
    spec: Spec, boxes: dict[Target, tuple[int, int, int, int]]
) -> tuple[str, dict[str, list[int]]]:
    """The gold script and its boxes (image pixels)."""
    lines = ["import pyautogui"]
    task_boxes: dict[str, list[int]] = {}
    for step in spec.steps:
        if step.target is not None:
            box = scaled(boxes[step.target])
            cx, cy = box[0] + box[2] // 2, box[1] + box[3] // 2
            lines.append(f"pyautogui.{step.call}({cx}, {cy})  # box: {step.box}")
            task_boxes[str(step.box)] = box
        else:
            lines.append(f"pyautogui.{step.call}({', '.join(step.args)})")
    return "\n".join(lines), task_boxes


def small_png(png: bytes) -> bytes:
    """The screenshot downscaled by :data:`SCALE` and quantised to 256 colours."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    size = (round(image.width * SCALE), round(image.height * SCALE))
    image = image.resize(size, Image.Resampling.LANCZOS).quantize(256, dither=Image.Dither.NONE)
    out = io.BytesIO()
    image.save(out, "PNG", optimize=True)
    return out.getvalue()


def build_scene(provider: object, scene: Scene, check_dir: Path | None) -> None:
    """Capture one scene and write its PNG and task files."""
    env = provider.restore("init_state")  # type: ignore[attr-defined]
    guest = env.guest
    for path, data in scene.prepare.items():
        guest.upload_file(path, data)
    guest.launch(scene.command)
    wait_for_window(guest, scene.window)
    time.sleep(scene.settle_s)
    for key in scene.dismiss:
        guest.run_python(f"import pyautogui; pyautogui.press({key!r})")
        time.sleep(2.0)
    guest.run_python("import pyautogui; pyautogui.moveTo(1900, 1060)")
    time.sleep(0.5)
    targets = [s.target for spec in scene.tasks for s in spec.steps if s.target is not None]
    boxes = find_boxes(guest, targets) if targets else {}
    png = small_png(guest.screenshot())
    OUT.mkdir(parents=True, exist_ok=True)
    image_name = f"{scene.name}.png"
    (OUT / image_name).write_bytes(png)
    for spec in scene.tasks:
        script, task_boxes = script_for(spec, boxes)
        task = {
            "id": spec.id,
            "instruction": spec.instruction,
            "image": image_name,
            "script": script,
            "boxes": task_boxes,
            "domain": spec.domain,
            "app": scene.app,
            "source": "tasks/tools/make_omniact_samples.py",
        }
        (OUT / f"{spec.id}.json").write_text(json.dumps(task, indent=2) + "\n")
    if check_dir is not None:
        check_dir.mkdir(parents=True, exist_ok=True)
        image = Image.open(io.BytesIO(png)).convert("RGB")
        draw = ImageDraw.Draw(image)
        for target, box in boxes.items():
            x, y, w, h = scaled(box)
            draw.rectangle([x, y, x + w, y + h], outline="red")
            draw.text((x, max(y - 10, 0)), target.name, fill="red")
        image.save(check_dir / image_name)
    print(f"{scene.name}: {len(scene.tasks)} tasks, {len(png) // 1024} KiB", flush=True)


def write_release(out: Path) -> int:
    """The stored samples written again in OmniACT's release layout (no desktop)."""
    from pytest_osworld.omniact.release_write import ReleaseEntry, ReleaseWriteError, write_release_layout
    from pytest_osworld.omniact.task import load_omniact_task
    from pytest_osworld.task.model import normalise_app

    folders = {spec.id: scene.site or normalise_app(scene.app) for scene in SCENES for spec in scene.tasks}
    tasks = [load_omniact_task(path) for path in sorted(OUT.glob("*.json"))]
    entries = [ReleaseEntry(t, folders.get(t.id) or normalise_app(t.app or "app")) for t in tasks]
    try:
        split = write_release_layout(entries, out)
    except ReleaseWriteError as exc:
        print(f"release layout: FAILED:\n{exc}", file=sys.stderr)
        return 1
    print(f"release layout: {len(entries)} samples in {split}", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Start the desktop, build the chosen scenes, stop the desktop (or, with ``--release``,
    write the stored samples in the release layout)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--only", nargs="*", default=None, help="scene names to rebuild")
    parser.add_argument("--check", type=Path, default=None, help="write screenshots with boxes drawn here")
    parser.add_argument(
        "--release",
        type=Path,
        nargs="?",
        const=RELEASE_OUT,
        default=None,
        metavar="DIR",
        help=f"write the stored samples in OmniACT's release layout into DIR (default {RELEASE_OUT})",
    )
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    if args.release is not None:
        return write_release(args.release)
    from pytest_osworld.providers.base import ProviderConfig
    from pytest_osworld.providers.local import LocalProvider

    provider = LocalProvider(ProviderConfig(worker_id="omniact-samples", work_dir="/tmp/omniact-samples"))
    provider.start()
    failed = []
    try:
        for scene in SCENES:
            if args.only and scene.name not in args.only:
                continue
            try:
                build_scene(provider, scene, args.check)
            except Exception as exc:  # report every scene, then fail
                failed.append(scene.name)
                print(f"{scene.name}: FAILED: {exc}", file=sys.stderr, flush=True)
    finally:
        provider.stop()
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
