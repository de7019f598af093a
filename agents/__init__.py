"""Built-in agents, packaged as ``pytest_osworld.agents``."""
