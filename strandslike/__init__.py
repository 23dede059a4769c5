"""strandslike: hook-based AI agents with human-in-the-loop interrupts, in the style of Strands Agents."""

from .agent import Agent, AgentResult
from .interrupt import Interrupt, InterruptException
from .tools.decorator import tool
from .types.tools import ToolContext

__all__ = ["Agent", "AgentResult", "Interrupt", "InterruptException", "ToolContext", "tool"]
