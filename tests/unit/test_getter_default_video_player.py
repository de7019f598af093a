"""``default_video_player`` reads the desktop as OSWorld's getter does (issue #17, level 2)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from pytest_osworld.errors import GetterError
from pytest_osworld.evaluators.getters.apps import (
    VIDEO_TYPES,
    VIDEO_TYPES_COUNTED_ONCE,
    get_default_video_player,
)
from pytest_osworld.guest_client.api import CommandResult


class _MimeGuest:
    """Answers ``xdg-mime query default video/X`` from a table; counts the questions."""

    def __init__(self, defaults: dict[str, str]) -> None:
        self.defaults = defaults
        self.asked: list[str] = []

    def execute(self, command: list[str], **_: Any) -> CommandResult:
        assert command[:3] == ["xdg-mime", "query", "default"]
        subtype = command[3].removeprefix("video/")
        self.asked.append(subtype)
        return CommandResult(0, self.defaults.get(subtype, "") + "\n", "")


def _player(defaults: dict[str, str]) -> str:
    return get_default_video_player(SimpleNamespace(guest=_MimeGuest(defaults)), {})  # type: ignore[arg-type]


def test_the_common_types_do_not_outvote_the_rest() -> None:
    # The 9 types our getter once asked about say Chromium; every other one says VLC.
    common = {"mp4", "x-matroska", "webm", "x-msvideo", "quicktime", "mpeg", "ogg", "x-flv", "3gpp"}
    defaults = {t: ("chromium.desktop" if t in common else "vlc.desktop") for t in VIDEO_TYPES}
    assert _player(defaults) == "vlc.desktop"


def test_asks_each_of_osworld_types_once() -> None:
    guest = _MimeGuest({t: "vlc.desktop" for t in VIDEO_TYPES})
    assert get_default_video_player(SimpleNamespace(guest=guest), {}) == "vlc.desktop"  # type: ignore[arg-type]
    assert guest.asked == list(VIDEO_TYPES)
    assert len(VIDEO_TYPES) == 43 and set(VIDEO_TYPES) >= VIDEO_TYPES_COUNTED_ONCE


def test_weights_decide_before_the_first_seen_tie_break() -> None:
    doubled = [t for t in VIDEO_TYPES if t not in VIDEO_TYPES_COUNTED_ONCE]
    # "first" answers 20 doubled types and the once-counted one (weight 41) and is seen first;
    # "second" answers 21 doubled types (weight 42). A plain count would be a 21-21 tie that
    # the first seen wins; OSWorld's list counts 41 against 42.
    defaults = {t: "first.desktop" for t in doubled[:20]}
    defaults.update({t: "first.desktop" for t in VIDEO_TYPES_COUNTED_ONCE})
    defaults.update({t: "second.desktop" for t in doubled[20:41]})
    assert _player(defaults) == "second.desktop"


def test_an_exact_tie_goes_to_the_first_seen() -> None:
    doubled = [t for t in VIDEO_TYPES if t not in VIDEO_TYPES_COUNTED_ONCE]
    defaults = {t: "second.desktop" for t in doubled[10:20]}
    defaults.update({t: "first.desktop" for t in doubled[:10]})
    assert _player(defaults) == "first.desktop"


def test_no_answer_at_all_is_a_getter_error() -> None:
    with pytest.raises(GetterError, match="no default video player"):
        _player({})
