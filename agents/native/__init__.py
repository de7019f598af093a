"""Agents that speak their vendors' native computer-use protocols (docs/agents.md)."""
