"""The agent façade, its result, and the model retry strategy."""

from ._retry import ModelRetryStrategy
from .agent import Agent
from .agent_result import AgentResult
from .state import AgentState

__all__ = ["Agent", "AgentResult", "AgentState", "ModelRetryStrategy"]
