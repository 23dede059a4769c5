"""`NullConversationManager`: keeps the whole conversation."""

from typing import TYPE_CHECKING, Any

from ...types.exceptions import ContextWindowOverflowException
from .conversation_manager import ConversationManager

if TYPE_CHECKING:
    from ..agent import Agent


class NullConversationManager(ConversationManager):
    """A manager that never changes the conversation.

    Use it when the history is managed elsewhere or must be kept whole; a context-window overflow then ends the
    run with `ContextWindowOverflowException`.
    """

    def apply_management(self, agent: "Agent", **kwargs: Any) -> None:
        """Leave the history as it is.

        Args:
            agent: The agent whose history stays unchanged.
            **kwargs: Reserved for future use.
        """

    def reduce_context(self, agent: "Agent", e: Exception | None = None, **kwargs: Any) -> None:
        """Refuse to reduce the history.

        Args:
            agent: The agent whose history stays unchanged.
            e: The overflow error that prompted the call, if any.
            **kwargs: Reserved for future use.

        Raises:
            ContextWindowOverflowException: Always: ``e`` itself when it is one (as Strands re-raises it),
                otherwise a new one caused by ``e``.
        """
        if isinstance(e, ContextWindowOverflowException):
            raise e
        raise ContextWindowOverflowException(
            "The conversation cannot be reduced: NullConversationManager never removes messages. "
            "Use SlidingWindowConversationManager to trim the history instead."
        ) from e
