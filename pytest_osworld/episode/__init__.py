"""The episode: the step loop (observe, ask the agent, act, stop) and where a task's time goes.
The pytest plugin and the interactive front doors (:mod:`pytest_osworld.env`) share it."""
