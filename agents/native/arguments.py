"""Reading a tool call's arguments: each wrong one is a step error that names it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_osworld.agent.actions import ActionParseError


def _missing(action: str, name: str) -> ActionParseError:
    return ActionParseError(f"action {action!r} needs the argument {name!r}")


def pair(
    args: Mapping[str, Any], name: str, action: str, required: bool = True
) -> tuple[float, float] | None:
    """The ``[x, y]`` argument ``name``; None when optional and absent."""
    value = args.get(name)
    if value is None:
        if required:
            raise _missing(action, name)
        return None
    if (
        not isinstance(value, list | tuple)
        or len(value) != 2
        or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
    ):
        raise ActionParseError(f"action {action!r}: {name!r} must be [x, y] numbers, got {value!r}")
    return float(value[0]), float(value[1])


def number(args: Mapping[str, Any], name: str, action: str, default: float | None = None) -> float:
    """The numeric argument ``name`` (``default`` when absent, if given)."""
    value = args.get(name)
    if value is None:
        if default is None:
            raise _missing(action, name)
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        try:
            return float(str(value))
        except ValueError:
            raise ActionParseError(f"action {action!r}: {name!r} must be a number, got {value!r}") from None
    return float(value)


def text(args: Mapping[str, Any], name: str, action: str, default: str | None = None) -> str:
    """The string argument ``name`` (``default`` when absent, if given)."""
    value = args.get(name)
    if value is None:
        if default is None:
            raise _missing(action, name)
        return default
    if not isinstance(value, str):
        raise ActionParseError(f"action {action!r}: {name!r} must be a string, got {value!r}")
    return value


def choice(args: Mapping[str, Any], name: str, action: str, choices: tuple[str, ...]) -> str:
    """The argument ``name``, one of ``choices``."""
    value = text(args, name, action)
    if value not in choices:
        raise ActionParseError(
            f"action {action!r}: {name!r} must be one of {', '.join(choices)}, got {value!r}"
        )
    return value
