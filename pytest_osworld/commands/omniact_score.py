"""``pytest-osworld omniact-score``: OmniACT's rescoring of a predictions file, as a subcommand.

The scoring, its arguments and its output are :mod:`pytest_osworld.omniact.rescore`'s; this
module only registers them as a :class:`~pytest_osworld.commands.cli.Command`.
"""

from __future__ import annotations

from pytest_osworld.commands.cli import Command
from pytest_osworld.omniact import rescore

#: The ``omniact-score`` subcommand (registered in :data:`pytest_osworld.commands.cli.COMMANDS`).
COMMAND = Command(
    help=rescore.HELP,
    add_arguments=rescore.add_arguments,
    run=rescore.run,
    description=rescore.DESCRIPTION,
)
