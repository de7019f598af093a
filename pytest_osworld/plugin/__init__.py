"""The pytest side of pytest-osworld: the ``pytest11`` entry point (:mod:`.entry`), settings,
collection and selection, fixtures, outcomes, the terminal, xdist, shards and interrupts."""
