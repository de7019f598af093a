"""``pytest-osworld merge``: the report's merge of results folders as a subcommand.

The merge itself, its arguments and its output are :mod:`pytest_osworld.report.merge`'s;
this module only registers them as a :class:`~pytest_osworld.commands.cli.Command`.
"""

from __future__ import annotations

from pytest_osworld.commands.cli import Command
from pytest_osworld.report import merge

#: The ``merge`` subcommand (registered in :data:`pytest_osworld.commands.cli.COMMANDS`).
COMMAND = Command(
    help=merge.HELP,
    add_arguments=merge.add_arguments,
    run=merge.run,
    description=merge.DESCRIPTION,
)
