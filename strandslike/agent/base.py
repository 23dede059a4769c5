"""`AgentBase`: the protocol every agent satisfies (Strands' ``strands.agent.base``)."""

from collections.abc import AsyncIterator
from typing import Any, Protocol, runtime_checkable

from ..types.agent import AgentInput
from .agent_result import AgentResult


@runtime_checkable
class AgentBase(Protocol):
    """What an agent offers: ``invoke_async``, the blocking ``__call__`` and ``stream_async``.

    `Agent` satisfies it, and so may other agents (remote ones, test doubles): orchestrators and
    ``Agent(tools=[...])`` accept any object that does.
    """

    async def invoke_async(self, prompt: AgentInput = None, **kwargs: Any) -> AgentResult:
        """Run the agent on ``prompt`` and return the result."""
        ...

    def __call__(self, prompt: AgentInput = None, **kwargs: Any) -> AgentResult:
        """Run the agent on ``prompt``, blocking, and return the result."""
        ...

    def stream_async(self, prompt: AgentInput = None, **kwargs: Any) -> AsyncIterator[Any]:
        """Run the agent and yield its events; the last one carries the result."""
        ...


__all__ = ["AgentBase"]
