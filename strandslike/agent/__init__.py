"""The agent façade, its result and state, the agent protocol, the conversation managers and the retry strategy.

Names are imported on first use.
"""

import typing

from .. import _lazy

if typing.TYPE_CHECKING:
    from ._retry import ModelRetryStrategy
    from .agent import Agent
    from .agent_result import AgentResult
    from .base import AgentBase
    from .conversation_manager import (
        ConversationManager,
        NullConversationManager,
        SlidingWindowConversationManager,
        SummarizingConversationManager,
    )
    from .state import AgentState

__getattr__, __dir__ = _lazy.lazy_exports(
    __name__,
    {
        "Agent": ".agent",
        "AgentBase": ".base",
        "AgentResult": ".agent_result",
        "AgentState": ".state",
        "ConversationManager": ".conversation_manager",
        "ModelRetryStrategy": "._retry",
        "NullConversationManager": ".conversation_manager",
        "SlidingWindowConversationManager": ".conversation_manager",
        "SummarizingConversationManager": ".conversation_manager",
    },
)

__all__ = [
    "Agent",
    "AgentBase",
    "AgentResult",
    "AgentState",
    "ConversationManager",
    "ModelRetryStrategy",
    "NullConversationManager",
    "SlidingWindowConversationManager",
    "SummarizingConversationManager",
]
