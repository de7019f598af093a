"""System prompts of the model-driven agents, written for pytest-osworld.

They follow the structure the OSWorld paper describes for its baseline agents (appendix
C.2): who the model is, what it observes, how an action must be written, the special
codes WAIT, FAIL and DONE, the computer's password, and "think, then answer". There is
one prompt per observation type and action space; Set-of-Marks exists for pyautogui
only. Each prompt is assembled from the parts below so the rules stay identical across
variants; :func:`system_prompt` fills in the password, the screen size and the task.
"""

from __future__ import annotations

import difflib

from pytest_osworld.agent.computer13 import ACTION_TYPES
from pytest_osworld.errors import UnknownNameError

OBSERVATION_TYPES = ("screenshot", "a11y_tree", "screenshot_a11y_tree", "som")
ACTION_SPACES = ("pyautogui", "computer_13")

_ROLE = (
    "You operate an Ubuntu desktop computer on behalf of a user, one step at a time, "
    "through code that is run for you. After each step you receive a new observation "
    "of the screen and decide on the next step, until the user's task is complete."
)

_OBSERVATIONS: dict[str, str] = {
    "screenshot": (
        "Each observation is a screenshot of the whole screen. The screen is {width} "
        "pixels wide and {height} pixels high; the top-left corner is (0, 0)."
    ),
    "a11y_tree": (
        "Each observation is the screen's accessibility tree, reduced to the elements "
        "you can act on, as a tab-separated table whose first line names the columns, one "
        "element per row: its tag, name, text, the "
        "position of its top-left corner (x, y) and its size (width, height), in pixels "
        "of a {width}x{height} screen. Click an element at its centre: x + width/2, "
        "y + height/2."
    ),
    "screenshot_a11y_tree": (
        "Each observation is a screenshot of the whole screen ({width}x{height} pixels, "
        "top-left (0, 0)) together with the screen's accessibility tree, reduced to the "
        "elements you can act on, as a tab-separated table whose first line names the "
        "columns, one element per row: its tag, name, text, "
        "the top-left position (x, y) and the size (width, height) in screen pixels. "
        "Prefer the table's coordinates, aiming at an element's centre."
    ),
    "som": (
        "Each observation is a screenshot ({width}x{height} pixels) on which the elements "
        "you can act on are outlined by red boxes, each with a number, and a table giving "
        "every number's tag, name and text. In your code, the variable tag_N holds the "
        "(x, y) centre of box N; for example pyautogui.click(tag_3) clicks box 3. Use "
        "plain coordinates only for places without a box."
    ),
}

_PYAUTOGUI_RULES = (
    "Write each step as Python code using the pyautogui module, which is already "
    "imported, in one fenced code block:\n"
    "```python\n"
    "pyautogui.click(960, 540)\n"
    "```\n"
    "Rules for the code:\n"
    "- Every block stands alone: variables from earlier steps do not exist any more.\n"
    "- Never call pyautogui.screenshot(), pyautogui.locateOnScreen() or "
    "pyautogui.locateCenterOnScreen(): the code cannot see the screen; take coordinates "
    "from your observation.\n"
    "- Write coordinates as plain numbers in the pyautogui calls.\n"
    "- Put time.sleep(0.5) between actions that need the screen to catch up (time is "
    "imported).\n"
    "- Answer with code blocks only for actions; keep any reasoning outside them."
)

_COMPUTER13_RULES_HEAD = (
    "Write each step as one JSON action object, or a JSON list of them, in a fenced "
    "code block:\n"
    "```json\n"
    '{{"action_type": "CLICK", "parameters": {{"x": 960, "y": 540, "button": "left"}}}}\n'
    "```\n"
    "The action types and their parameters (optional ones in brackets) are:\n"
)

_COMPUTER13_RULES_TAIL = (
    "Coordinates are screen pixels: x from 0 to {width}, y from 0 to {height}. "
    "button is one of left, right or middle. Key names are pyautogui's (enter, tab, "
    "esc, backspace, ctrl, alt, shift, up, down, f1, a, ...). TYPING types a string; "
    "HOTKEY presses its keys together; SCROLL scrolls by dy clicks vertically "
    "(positive is up) and dx horizontally."
)

_SPECIAL = (
    "Besides actions, three special codes may be answered, each alone in its own block:\n"
    "- ```WAIT``` when the screen needs time before the next step;\n"
    "- ```FAIL``` when the task cannot be done on this computer; do not give up "
    "lightly, answer FAIL only when you are sure;\n"
    "- ```DONE``` when the task is complete."
)

_PASSWORD = "My computer's password is '{password}'; use it whenever sudo or a dialog asks."

_REFLECT = (
    "Before each answer, look carefully at the observation and think about what the "
    "last step changed and what should happen next; then give the step."
)

_TASK = "The task you are asked to complete is:\n{instruction}"


def _computer13_rules() -> str:
    lines = []
    for action_type, (required, optional) in ACTION_TYPES.items():
        names = [*required, *(f"[{name}]" for name in optional)]
        lines.append(f"- {action_type}: {', '.join(names) if names else 'no parameters'}")
    return _COMPUTER13_RULES_HEAD + "\n".join(lines).replace("{", "{{") + "\n" + (_COMPUTER13_RULES_TAIL)


_RULES: dict[str, str] = {
    "pyautogui": _PYAUTOGUI_RULES,
    "computer_13": _computer13_rules(),
}


def _template(observation_type: str, action_space: str) -> str:
    return "\n\n".join(
        (
            _ROLE,
            _OBSERVATIONS[observation_type],
            _RULES[action_space],
            _SPECIAL,
            _PASSWORD,
            _REFLECT,
        )
    )


#: The templates by (observation type, action space); ``som`` exists with pyautogui only.
PROMPTS: dict[tuple[str, str], str] = {
    (obs, space): _template(obs, space)
    for obs in OBSERVATION_TYPES
    for space in ACTION_SPACES
    if not (obs == "som" and space != "pyautogui")
}


def system_prompt(
    observation_type: str,
    action_space: str,
    *,
    password: str,
    screen_size: tuple[int, int],
    instruction: str | None = None,
) -> str:
    """The system prompt for an observation type and action space, filled in.

    With ``instruction``, the task is appended. An unsupported combination raises
    :class:`~pytest_osworld.errors.UnknownNameError` listing the supported ones.
    """
    key = (observation_type, action_space)
    if key not in PROMPTS:
        known = [f"{o}+{a}" for o, a in PROMPTS]
        name = "+".join(key)
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.8)
        raise UnknownNameError("observation type + action space", name, close[0] if close else None, known)
    text = PROMPTS[key].format(
        password=password,
        width=screen_size[0],
        height=screen_size[1],
    )
    if instruction is not None:
        text += "\n\n" + _TASK.format(instruction=instruction)
    return text
