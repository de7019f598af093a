"""The interactive front doors onto the episode engine: OSWorld's ``DesktopEnv`` and a
Gymnasium env (``pytest_osworld/Desktop-v0``, registered when Gymnasium is installed).

See docs/env.md.
"""

from __future__ import annotations

from pytest_osworld.env.desktop_env import DesktopEnv
from pytest_osworld.env.engine import DesktopCrashed, EngineConfig, EnvError, EpisodeEngine

try:
    import gymnasium  # noqa: F401  (optional: the ``env`` extra)
except ImportError:  # pragma: no cover - without Gymnasium only DesktopEnv is offered
    pass
else:
    from pytest_osworld.env.gym_env import register

    register()

__all__ = ["DesktopCrashed", "DesktopEnv", "EngineConfig", "EnvError", "EpisodeEngine"]
