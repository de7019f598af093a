"""The console scripts: ``pytest-osworld`` and its subcommands (``prove``, ``merge``),
``pytest-osworld-fetch`` (the asset cache from Hugging Face) and ``pytest-osworld-image``."""
