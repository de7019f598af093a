"""Host paths built from names that come from task files or from the environment.

Task files name the files getters and setup steps write (``dest``, ``stdout``, ...), and
the environment names archive members. :func:`contained_path` is the one check they all
go through: a name that is not a string, is empty, holds a NUL byte, is absolute, climbs
out with ``..`` (also through a symlink already in the folder), or has a part longer than
the filesystem allows is refused with a typed error that says what was wrong, where, and
what to write instead. Nothing is created or written here.
"""

from __future__ import annotations

import os
from pathlib import Path

from pytest_osworld.errors import OSWorldError

#: The longest single path part, in bytes, that Linux filesystems accept (NAME_MAX).
MAX_NAME_BYTES = 255

#: ``{what} {name!r} {problem}; give a relative file name inside {folder}`` explains a refusal.
UNSAFE_NAME = "{what} {name!r} {problem}; give a relative file name inside {folder}"


def contained_path(
    base: Path,
    name: object,
    *,
    what: str,
    error: type[OSWorldError],
) -> Path:
    """``base / name`` resolved, when it is a file name strictly inside ``base``.

    ``what`` names the field in messages (``"vm_file dest"``); ``error`` is the typed
    error raised for a refusal (``GetterError`` in getters, ``EnvironmentFailure`` in
    setup steps).
    """

    def refuse(problem: str) -> OSWorldError:
        text = name if isinstance(name, str) else type(name).__name__
        return error(UNSAFE_NAME.format(what=what, name=text, problem=problem, folder=base))

    if not isinstance(name, str):
        raise refuse("is not a string")
    if not name.strip():
        raise refuse("is empty")
    if "\x00" in name:
        raise refuse("contains a NUL byte")
    if os.path.isabs(name):
        raise refuse("is an absolute path")
    for part in name.split("/"):
        if len(part.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES:
            raise refuse(f"has a part longer than {MAX_NAME_BYTES} bytes (the filesystem's limit)")
    root = base.resolve()
    target = (root / name).resolve()
    if target == root or not target.is_relative_to(root):
        raise refuse("escapes the folder")
    return target


__all__ = ["MAX_NAME_BYTES", "UNSAFE_NAME", "contained_path"]
