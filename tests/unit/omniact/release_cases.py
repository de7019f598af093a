"""Cases in OmniACT's release layout, for tests and the benchmark: seeded and deterministic.

:func:`write_release` writes a split file, task files, screenshots (small real PNGs) and
box files as the release lays them out, web samples with the release's path quirk (the
split names ``screen_<k>.png`` and ``screen_<k>.json``, the files are ``screen<k>.png`` and
``screen<k>_boxes.json``). :func:`generated_cases` makes samples whose predictions each
exercise one rule of the official scorer, and carries for each the official scores
expected *by construction* (from how the prediction was made, with the rule's formula),
not from the code under test.
"""

from __future__ import annotations

import json
import math
import random
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_osworld.providers.fake import tiny_png

Corners = tuple[tuple[int, int], tuple[int, int]]

#: The apps and sites the generated samples use.
DESKTOP_APPS = ("calculator", "libreoffice_calc", "gimp", "terminal")
WEB_SITES = ("booking", "espn", "github", "wikipedia")
#: The screenshots' size (the boxes lie in it).
SCREEN = (320, 200)
#: Texts typed by gold write lines (one with an apostrophe).
TEXTS = ("Dune", "Quarterly report", "it's done", "seattle weather", "=SUM(A1:A3)")
KEYS = ("enter", "tab", "escape", "backspace")
HOTKEYS = (("ctrl", "c"), ("ctrl", "v"), ("alt", "f4"), ("ctrl", "shift", "t"))


@dataclass
class Screen:
    """One screenshot and its box file."""

    domain: str
    app: str
    number: int
    boxes: dict[str, Corners]

    def centre(self, name: str) -> tuple[float, float]:
        (left, top), (right, bottom) = self.boxes[name]
        return (left + right) / 2, (top + bottom) / 2


@dataclass
class Case:
    """One sample: its gold script, a prediction, and the official scores it should get."""

    key: str
    screen: Screen
    task_number: int
    instruction: str
    gold: list[str]
    prediction: str
    #: Which rule the prediction exercises.
    rule: str = "exact"
    expected_sequence: float = 1.0
    expected_action: float = 1.0
    #: Extra lines written into the task file (between ``Output Script:`` and the gold).
    preamble: list[str] = field(default_factory=list)

    @property
    def weight(self) -> float:
        return len(self.gold) - 0.9


def paths(case: Case) -> dict[str, str]:
    """The split file's entry of a case (with the web quirk in the image and box paths)."""
    s = case.screen
    return {
        "task": f"data/tasks/{s.domain}/{s.app}/task_{s.number}.{case.task_number}.txt",
        "image": f"data/data/{s.domain}/{s.app}/screen_{s.number}.png",
        "box": f"data/metadata/{s.domain}/boxes/{s.app}/screen_{s.number}.json",
    }


def file_paths(case: Case) -> dict[str, str]:
    """Where the release really has a case's files (web: ``screen<k>.png``, ``screen<k>_boxes.json``)."""
    entry = paths(case)
    s = case.screen
    if s.domain == "web":
        entry["image"] = f"data/data/web/{s.app}/screen{s.number}.png"
        entry["box"] = f"data/metadata/web/boxes/{s.app}/screen{s.number}_boxes.json"
    return entry


def task_text(case: Case) -> str:
    """A task file's text: ``Task:``, ``Output Script:``, the gold lines."""
    return "\n".join([f"Task: {case.instruction}", "Output Script:", *case.preamble, *case.gold]) + "\n"


def write_release(root: Path, cases: Sequence[Case], split: str = "test") -> Path:
    """Write ``cases`` in the release layout under ``root``; returns the split file."""
    written: set[str] = set()
    image = tiny_png(*SCREEN, gray=0x80)
    for case in cases:
        where = file_paths(case)
        task = root / where["task"]
        task.parent.mkdir(parents=True, exist_ok=True)
        task.write_text(task_text(case), encoding="utf-8")
        if where["image"] not in written:
            written.add(where["image"])
            for kind in ("image", "box"):
                (root / where[kind]).parent.mkdir(parents=True, exist_ok=True)
            (root / where["image"]).write_bytes(image)
            boxes = {
                name: {"top_left": list(tl), "bottom_right": list(br), "label": name.split("_")[0]}
                for name, (tl, br) in case.screen.boxes.items()
            }
            (root / where["box"]).write_text(json.dumps(boxes), encoding="utf-8")
    split_path = root / f"{split}.json"
    split_path.write_text(json.dumps({case.key: paths(case) for case in cases}, indent=1), encoding="utf-8")
    return split_path


def write_predictions(path: Path, cases: Sequence[Case], *, as_list: bool = False) -> Path:
    """Write the cases' predictions: ``{key: text}``, or a list in the split's order."""
    data: object = [c.prediction for c in cases] if as_list else {c.key: c.prediction for c in cases}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def nltk_bleu(reference: str, candidate: str) -> float:
    """NLTK's character BLEU with weights (0.5, 0.5): the reference the official scorer uses."""
    from nltk.translate.bleu_score import sentence_bleu

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(sentence_bleu([reference], candidate, weights=(0.5, 0.5)))


def outside_penalty(corners: Corners, dx: float, dy: float) -> float:
    """The click penalty (before dividing) of a point ``dx``, ``dy`` px beyond a box's edges."""
    (left, top), (right, bottom) = corners
    diagonal = math.hypot(right - left, bottom - top)
    distance = math.hypot(dx, dy)
    return 1 - diagonal / (diagonal + distance)


# -- the generator --------------------------------------------------------------------------

#: A rule: (name, the gold kind it needs or None, how it changes the prediction).
#: The change gets (rng, case, line index) and returns the penalty of that line (before
#: dividing by the number of gold lines), or None when the sequence no longer matches.
Mutation = Callable[[random.Random, Case, list[str], int], float | None]


def _screen(rng: random.Random, domain: str, app: str, number: int) -> Screen:
    boxes: dict[str, Corners] = {}
    for index in range(rng.randint(3, 5)):
        left, top = rng.randint(10, 200), rng.randint(10, 120)
        right, bottom = left + rng.randint(8, 60), top + rng.randint(8, 40)
        boxes[f"element_{index}"] = ((left, top), (right, bottom))
    return Screen(domain, app, number, boxes)


def _gold_line(rng: random.Random, screen: Screen, kind: str) -> str:
    if kind in ("click", "rightClick", "doubleClick", "moveTo", "dragTo"):
        x, y = screen.centre(rng.choice(sorted(screen.boxes)))
        return f"pyautogui.{kind}({x},{y})"
    if kind == "write":
        return f'pyautogui.write("{rng.choice(TEXTS)}")'
    if kind == "press":
        return f'pyautogui.press("{rng.choice(KEYS)}")'
    if kind == "hotkey":
        return "pyautogui.hotkey(" + ",".join(f'"{k}"' for k in rng.choice(HOTKEYS)) + ")"
    return f"pyautogui.scroll({rng.choice((-5, -3, 3, 5))})"


def _box_of(case: Case, line: str) -> Corners:
    inside = line.split("(", 1)[1].split(")", 1)[0]
    x, y = (float(v) for v in inside.split(","))
    for corners in case.screen.boxes.values():
        (left, top), (right, bottom) = corners
        if (left + right) / 2 == x and (top + bottom) / 2 == y:
            return corners
    raise AssertionError(f"no box at the centre of {line}")


def _click_inside(rng: random.Random, case: Case, lines: list[str], i: int) -> float | None:
    (left, top), (right, bottom) = _box_of(case, case.gold[i])
    lines[i] = f"pyautogui.click({rng.randint(left, right)}, {rng.randint(top, bottom)})"
    return 0.0


def _click_outside(rng: random.Random, case: Case, lines: list[str], i: int) -> float | None:
    corners = _box_of(case, case.gold[i])
    (_, top), (right, bottom) = corners
    dx, y = rng.randint(1, 80), rng.randint(top, bottom)
    lines[i] = f"pyautogui.click({right + dx}, {y}, button='left')"  # extra arguments are not read
    return outside_penalty(corners, dx, 0)


def _click_corner(rng: random.Random, case: Case, lines: list[str], i: int) -> float | None:
    corners = _box_of(case, case.gold[i])
    (left, top), _ = corners
    dx, dy = rng.randint(1, 40), rng.randint(1, 40)
    lines[i] = f"pyautogui.click({left - dx}.0,{top - dy})"
    return outside_penalty(corners, dx, dy)


def _click_keywords(rng: random.Random, case: Case, lines: list[str], i: int) -> float | None:
    x, y = case.gold[i].split("(", 1)[1].rstrip(")").split(",")
    lines[i] = f"pyautogui.click(x={x}, y={y})"  # not two plain numbers: the full penalty (rule 9)
    return 1.0


def _pointer_far(rng: random.Random, case: Case, lines: list[str], i: int) -> float | None:
    kind = case.gold[i].split(".", 1)[1].split("(", 1)[0]
    lines[i] = f"pyautogui.{kind}({rng.randint(0, 300)}, {rng.randint(0, 190)})"  # no position penalty
    return 0.0


def _press_single_quote(rng: random.Random, case: Case, lines: list[str], i: int) -> float | None:
    key = case.gold[i].split('"')[1]
    lines[i] = f"pyautogui.press(' {key} ')"  # either quote; spaces stripped
    return 0.0


def _press_other(rng: random.Random, case: Case, lines: list[str], i: int) -> float | None:
    key = case.gold[i].split('"')[1]
    lines[i] = f'pyautogui.press("{"return" if key == "enter" else "space"}")'  # no aliases
    return 1.0


def _hotkey_spaces(rng: random.Random, case: Case, lines: list[str], i: int) -> float | None:
    lines[i] = case.gold[i].replace(",", ", ")  # '"v"' with its space keeps a quote: other keys
    return 1.0


def _hotkey_reordered(rng: random.Random, case: Case, lines: list[str], i: int) -> float | None:
    keys = case.gold[i].split("(", 1)[1].rstrip(")").split(",")
    lines[i] = "pyautogui.hotkey(" + ",".join(reversed(keys)) + ")"  # keys compared as a set
    return 0.0


def typed_penalty(gold_text: str, typed: str) -> float:
    """The write penalty (before dividing) of ``typed``, written between double quotes, against
    ``gold_text``: lowercased, and the candidate ends at its first apostrophe."""
    return 1 - nltk_bleu(gold_text.lower(), typed.lower().split("'")[0])


def _write_case(rng: random.Random, case: Case, lines: list[str], i: int) -> float | None:
    text = case.gold[i].split('"')[1]
    lines[i] = f'pyautogui.write("{text.upper()}")'  # everything is compared lowercased
    return typed_penalty(text, text.upper())


def _write_apostrophe(rng: random.Random, case: Case, lines: list[str], i: int) -> float | None:
    text = case.gold[i].split('"')[1]
    typed = text if "'" in text else text[:2] + "'" + text[2:]
    lines[i] = f'pyautogui.write("{typed}")'  # the candidate ends at the apostrophe
    return typed_penalty(text, typed)


def _write_no_bigram(rng: random.Random, case: Case, lines: list[str], i: int) -> float | None:
    lines[i] = "pyautogui.write('zqxj')"  # no character bigram in common with any text
    return 1 - nltk_bleu(case.gold[i].split('"')[1].lower(), "zqxj")


def _write_typo(rng: random.Random, case: Case, lines: list[str], i: int) -> float | None:
    text = case.gold[i].split('"')[1]
    typed = text[:-1] if len(text) > 2 else text + "s"
    lines[i] = f'pyautogui.write("{typed}", interval=0.1)'
    return typed_penalty(text, typed)


def _scroll_amount(rng: random.Random, case: Case, lines: list[str], i: int) -> float | None:
    lines[i] = f"pyautogui.scroll({rng.randint(-20, 20)}, x=5, y=5)"  # amounts are not scored
    return 0.0


def _wrong_name(rng: random.Random, case: Case, lines: list[str], i: int) -> float | None:
    lines[i] = lines[i].replace("pyautogui.", "pyautogui.x", 1)
    return None


def _space_before_parenthesis(rng: random.Random, case: Case, lines: list[str], i: int) -> float | None:
    lines[i] = lines[i].replace("(", " (", 1)  # the name is 'click ' then
    return None


def _indented(rng: random.Random, case: Case, lines: list[str], i: int) -> float | None:
    if i == 0:  # the text is stripped as a whole: its first line's indent goes
        lines[0] = "    " + lines[0]
        return _base_penalty(case.gold[0])
    lines[i] = "    " + lines[i]
    return None


def _upper_name(rng: random.Random, case: Case, lines: list[str], i: int) -> float | None:
    lines[i] = lines[i].upper()  # PYAUTOGUI.CLICK(...): lowercased, it is the gold's
    return (
        typed_penalty(case.gold[i].split('"')[1], lines[i].split('"')[1])
        if _kind(case.gold[i]) == "write"
        else 0.0
    )


def _base_penalty(line: str) -> float:
    """A gold line's penalty when copied as it is: only a write whose text has an apostrophe has one."""
    return typed_penalty(line.split('"')[1], line.split('"')[1]) if _kind(line) == "write" else 0.0


def _kind(line: str) -> str:
    return line.split(".", 1)[1].split("(", 1)[0]


MUTATIONS: dict[str, tuple[tuple[str, ...] | None, Mutation]] = {
    "click_inside": (("click",), _click_inside),
    "click_outside": (("click",), _click_outside),
    "click_corner": (("click",), _click_corner),
    "click_keywords": (("click",), _click_keywords),
    "pointer_far": (("rightClick", "doubleClick", "moveTo", "dragTo"), _pointer_far),
    "press_single_quote": (("press",), _press_single_quote),
    "press_other": (("press",), _press_other),
    "hotkey_spaces": (("hotkey",), _hotkey_spaces),
    "hotkey_reordered": (("hotkey",), _hotkey_reordered),
    "write_case": (("write",), _write_case),
    "write_apostrophe": (("write",), _write_apostrophe),
    "write_no_bigram": (("write",), _write_no_bigram),
    "write_typo": (("write",), _write_typo),
    "scroll_amount": (("scroll",), _scroll_amount),
    "wrong_name": (None, _wrong_name),
    "space_before_parenthesis": (None, _space_before_parenthesis),
    "indented": (None, _indented),
    "upper_name": (None, _upper_name),
}
GOLD_KINDS = (
    "click",
    "click",
    "write",
    "press",
    "hotkey",
    "rightClick",
    "doubleClick",
    "moveTo",
    "dragTo",
    "scroll",
)


def generated_cases(count: int, seed: int = 53, screens_per_app: int = 4) -> list[Case]:
    """``count`` samples over desktop and web, each prediction exercising one or two rules."""
    rng = random.Random(seed)
    screens = [
        _screen(rng, domain, app, number)
        for domain, apps in (("desktop", DESKTOP_APPS), ("web", WEB_SITES))
        for app in apps
        for number in range(1, screens_per_app + 1)
    ]
    tasks_per_screen: dict[int, int] = {}
    cases = []
    names = sorted(MUTATIONS)
    for index in range(count):
        screen_index = rng.randrange(len(screens))
        screen = screens[screen_index]
        tasks_per_screen[screen_index] = tasks_per_screen.get(screen_index, 0) + 1
        gold = [_gold_line(rng, screen, rng.choice(GOLD_KINDS)) for _ in range(rng.randint(1, 5))]
        case = Case(
            str(index), screen, tasks_per_screen[screen_index], f"Sample {index} of {screen.app}", gold, ""
        )
        _predict(rng, case, rng.sample(names, rng.choice((0, 1, 1, 1, 2))))
        cases.append(case)
    return cases


def _predict(rng: random.Random, case: Case, rules: list[str]) -> None:
    """Make the case's prediction from its gold by ``rules``, and its expected scores."""
    lines = list(case.gold)
    # an exact copy of a write line is penalised too when its text has an apostrophe
    penalties = [_base_penalty(g) for g in lines]
    matched, used, applied = True, set(), []
    for wanted in rules:
        # the rule asked for, else the first rule that fits the gold (rules of a gold kind first)
        specific = [name for name in sorted(MUTATIONS) if MUTATIONS[name][0] is not None]
        order = [wanted, *rng.sample(specific, len(specific)), *sorted(set(MUTATIONS) - set(specific))]
        for rule in order:
            kinds, mutate = MUTATIONS[rule]
            spots = [
                i
                for i, line in enumerate(case.gold)
                if i not in used and (kinds is None or _kind(line) in kinds)
            ]
            if spots:
                break
        else:
            continue
        i = rng.choice(spots)
        used.add(i)
        applied.append(rule)
        found = mutate(rng, case, lines, i)
        if found is None:
            matched = False
        else:
            penalties[i] = found
    extra = rng.random()
    if extra < 0.06:
        lines.append('pyautogui.press("tab")')  # one line too many
        matched, applied = False, [*applied, "extra_line"]
    elif extra < 0.1 and len(lines) > 1:
        lines.pop()
        matched, applied = False, [*applied, "missing_line"]
    elif extra < 0.2 and not lines[0].startswith(" "):  # an indented first line stays first
        lines = ["import pyautogui", "# not a pyautogui line: left out", *lines]
        applied = [*applied, "other_lines"]
    case.prediction = "\n".join(lines)
    case.rule = "+".join(applied) or "exact"
    n = len(case.gold)
    case.expected_sequence = 1.0 if matched else 0.0
    case.expected_action = max(1.0 - sum(p / n for p in penalties), 0.0) if matched else 0.0
