"""The one-shot framing an OmniACT task adds to its instruction for model agents.

OSWorld's prompts (``pytest_osworld.agents.prompts``) ask for the next step of an episode;
an OmniACT task shows one screenshot and takes one answer. The instruction handed to
``Agent.act`` therefore says so, and asks for the whole script in one code block, in the
screenshot's own pixel coordinates. The plain task text stays available to agents in
``Observation.extra["instruction"]``.
"""

from __future__ import annotations

ONE_SHOT = (
    "{instruction}\n\n"
    "This task is scored from this one screenshot: you will not see the screen again and "
    "get no second step. Answer with a single ```python``` code block holding the complete "
    "pyautogui script that performs the whole task from the screen shown (every click, "
    "typed text and key press, in order), one pyautogui call per line (the script is scored "
    "line by line), using pixel coordinates of this {width}x{height} screenshot, then DONE."
)


def one_shot_instruction(instruction: str, image_size: tuple[int, int]) -> str:
    """``instruction`` with the one-shot rules of an OmniACT answer appended."""
    width, height = image_size
    return ONE_SHOT.format(instruction=instruction.strip(), width=width, height=height)
