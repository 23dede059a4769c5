"""`ToolProvider`: a collection of tools whose lifetime the agent manages (Strands 1.62's interface).

A provider in ``Agent(tools=[...])`` is asked for its tools once, when the agent is built (``load_tools`` is
awaited), and registered as a consumer under the agent's tool registry; ``agent.cleanup()`` (or the agent being
garbage collected) removes that consumer, so a provider holding a connection, such as an MCP client, can close it
when its last agent is done.
"""

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..types.tools import AgentTool


class ToolProvider(ABC):
    """Interface for providing tools with lifecycle management (Strands' ``strands.tools.ToolProvider``)."""

    @abstractmethod
    async def load_tools(self, **kwargs: Any) -> Sequence["AgentTool"]:
        """Load and return the tools in this provider.

        Args:
            **kwargs: Additional arguments for future compatibility.
        """

    @abstractmethod
    def add_consumer(self, consumer_id: Any, **kwargs: Any) -> None:
        """Add a consumer (an agent's tool registry) to this provider.

        Args:
            consumer_id: Unique identifier for the consumer.
            **kwargs: Additional arguments for future compatibility.
        """

    @abstractmethod
    def remove_consumer(self, consumer_id: Any, **kwargs: Any) -> None:
        """Remove a consumer; must be idempotent. The provider may release its resources when none remain.

        Args:
            consumer_id: Unique identifier for the consumer.
            **kwargs: Additional arguments for future compatibility.
        """


__all__ = ["ToolProvider"]
