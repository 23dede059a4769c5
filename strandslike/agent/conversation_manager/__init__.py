"""Conversation managers: strategies that keep an agent's conversation history within bounds.

- `ConversationManager`: the interface the agent calls after each invocation pass and on context overflow.
- `NullConversationManager`: keeps the whole history.
- `SlidingWindowConversationManager`: keeps the latest messages (and optionally the first few), never splitting
  a tool use from its result.
"""

from .conversation_manager import ConversationManager
from .null_conversation_manager import NullConversationManager
from .sliding_window_conversation_manager import SlidingWindowConversationManager

__all__ = ["ConversationManager", "NullConversationManager", "SlidingWindowConversationManager"]
