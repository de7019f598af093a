"""The ``pytest-osworld`` command: subcommands from a registry.

``pytest-osworld merge RESULTS... --out DIR`` combines results folders (the shards of one
run) into one; ``pytest-osworld prove PATHS`` checks that tasks prove themselves (their
reference solution scores 1, doing nothing 0); ``pytest-osworld omniact-score SPLIT
PREDICTIONS`` scores OmniACT predictions offline, as OmniACT's released scorer does. Each
subcommand is a :class:`Command` registered by name in :data:`COMMANDS`, lazily
(``"module:attr"``), so a subcommand's
imports load only when the command line is parsed; another package adds its own with
``COMMANDS.register``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pytest_osworld.registry import Registry

PROG = "pytest-osworld"


@dataclass(frozen=True)
class Command:
    """One subcommand: its one-line help, its arguments, and what runs it (returns the exit code)."""

    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
    #: The longer text of ``pytest-osworld NAME --help`` (the help line when empty).
    description: str = ""


#: Every subcommand of ``pytest-osworld``, by name.
COMMANDS: Registry[Command] = Registry("command")
COMMANDS.register("merge", "pytest_osworld.commands.merge:COMMAND")
COMMANDS.register("omniact-score", "pytest_osworld.commands.omniact_score:COMMAND")
COMMANDS.register("prove", "pytest_osworld.commands.prove:COMMAND")


def add_commands(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], names: Sequence[str]
) -> None:
    """Add the subcommands ``names`` of :data:`COMMANDS` to an argparse parser."""
    for name in names:
        command = COMMANDS.get(name)
        sub = subparsers.add_parser(name, help=command.help, description=command.description or command.help)
        command.add_arguments(sub)
        sub.set_defaults(osworld_command=command)


def parser() -> argparse.ArgumentParser:
    """The command line's parser, one subparser per registered command."""
    top = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_commands(commands, COMMANDS.names())
    return top


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``pytest-osworld``; return the subcommand's exit code (2 for a usage error)."""
    args = parser().parse_args(argv)
    command: Command = args.osworld_command
    return command.run(args)


if __name__ == "__main__":  # pragma: no cover - the console script calls main()
    sys.exit(main())
