"""Conversation managers: strategies that keep an agent's conversation history within bounds.

- `ConversationManager`: the interface the agent calls after each invocation pass and on context overflow.
- `NullConversationManager`: keeps the whole history.
- `SlidingWindowConversationManager`: keeps the latest messages (and optionally the first few), never splitting
  a tool use from its result.
- `SummarizingConversationManager`: replaces the oldest messages with a summary written by the model (or an agent)
  when the context overflows.
"""

import typing

from ... import _lazy

if typing.TYPE_CHECKING:
    from .conversation_manager import ConversationManager
    from .null_conversation_manager import NullConversationManager
    from .sliding_window_conversation_manager import SlidingWindowConversationManager
    from .summarizing_conversation_manager import SummarizingConversationManager

__getattr__, __dir__ = _lazy.lazy_exports(
    __name__,
    {
        "ConversationManager": ".conversation_manager",
        "NullConversationManager": ".null_conversation_manager",
        "SlidingWindowConversationManager": ".sliding_window_conversation_manager",
        "SummarizingConversationManager": ".summarizing_conversation_manager",
    },
)

__all__ = [
    "ConversationManager",
    "NullConversationManager",
    "SlidingWindowConversationManager",
    "SummarizingConversationManager",
]
