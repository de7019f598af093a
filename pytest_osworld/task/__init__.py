"""A task and what it brings: the task model, reference solutions, OSWorld's catalog, the asset
cache, safe host paths from task names, and the context setup steps and getters receive."""
