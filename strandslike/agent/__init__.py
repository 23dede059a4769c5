"""The agent façade and its result."""

from .agent import Agent
from .agent_result import AgentResult
from .state import AgentState

__all__ = ["Agent", "AgentResult", "AgentState"]
