"""What a model sees and says: the agent contract (:mod:`.contract`), actions in both action
spaces, the observation (accessibility tree, Set-of-Marks) and the parsing of answers.

The contract's names are importable from here, as ``module:attr`` agents have always imported
them (``from pytest_osworld.agent import Action, AgentConfig, AgentStep, Observation``).
"""

from pytest_osworld.agent.actions import Action, ActionParseError
from pytest_osworld.agent.contract import (
    AGENTS,
    Agent,
    AgentConfig,
    AgentFactory,
    AgentStep,
    DesktopAgent,
    Observation,
    Usage,
)

__all__ = [
    "AGENTS",
    "Action",
    "ActionParseError",
    "Agent",
    "AgentConfig",
    "AgentFactory",
    "AgentStep",
    "DesktopAgent",
    "Observation",
    "Usage",
]
