"""Repository-local policy only: the plugin works without this file."""

pytest_plugins = ["pytester"]
