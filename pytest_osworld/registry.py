"""Registries: the names a task file or the command line can use, resolved lazily.

A registry maps a name to an object, or to a ``"module:attr"`` string that is imported
only when the name is first used, so heavy libraries load only for the tasks that need
them. A miss raises :class:`~pytest_osworld.errors.UnknownNameError` with a "did you
mean" suggestion.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar, overload

from pytest_osworld.errors import UnknownNameError

T = TypeVar("T")


def load_entry_point(spec: str) -> object:
    """Import ``"package.module:attr"`` and return the attribute.

    Raises ``ImportError`` or ``AttributeError`` with the spec named when it cannot.
    """
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"entry point {spec!r} is not of the form 'package.module:attr'")
    module = importlib.import_module(module_name)
    obj: object = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise AttributeError(f"entry point {spec!r}: {module_name} has no {attr!r}") from None
    return obj


class Registry(Generic[T]):
    """Named entries of one kind (metric, getter, setup step, provider, agent)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, T | str] = {}

    @overload
    def register(self, name: str) -> Callable[[T], T]: ...

    @overload
    def register(self, name: str, target: T | str) -> None: ...

    def register(self, name: str, target: T | str | None = None) -> Callable[[T], T] | None:
        """Register ``target`` (an object or a lazy ``"module:attr"``) under ``name``.

        Without ``target`` it returns a decorator. Registering a name twice replaces the
        earlier entry, which is how a user's plugin overrides a built-in.
        """
        if target is None:

            def decorator(obj: T) -> T:
                self._entries[name] = obj
                return obj

            return decorator
        self._entries[name] = target
        return None

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def names(self) -> list[str]:
        """All registered names, sorted."""
        return sorted(self._entries)

    def suggest(self, name: str) -> str | None:
        """The closest registered name to ``name``, if any is close enough."""
        matches = difflib.get_close_matches(name, self._entries, n=1, cutoff=0.6)
        return matches[0] if matches else None

    def check(self, name: str) -> None:
        """Raise :class:`UnknownNameError` unless ``name`` is registered (imports nothing)."""
        if name not in self._entries:
            raise UnknownNameError(self.kind, name, self.suggest(name), self.names())

    def get(self, name: str) -> T:
        """The entry of ``name``, importing it on first use."""
        self.check(name)
        entry = self._entries[name]
        if isinstance(entry, str):
            loaded = load_entry_point(entry)
            self._entries[name] = loaded  # type: ignore[assignment]
            return loaded  # type: ignore[return-value]
        return entry
