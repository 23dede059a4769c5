"""`ConversationManager`: the interface an agent uses to keep its conversation within bounds."""

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from ...hooks.registry import HookProvider, HookRegistry
from ...types.content import Message

if TYPE_CHECKING:
    from ..agent import Agent


class ConversationManager(ABC, HookProvider):
    """Base class of the strategies that keep an agent's conversation history within bounds.

    The agent calls `apply_management` after each invocation pass and `reduce_context` when the model reports
    that the conversation overflows its context window. A manager is also a hook provider: the agent registers it
    like any other, so a manager may act between model calls (see `register_hooks`).

    Sessions persist `get_state` and, on restore, call `restore_from_session`, prepend the messages it returns
    and then read the stored messages from index `removed_message_count` on.

    Attributes:
        removed_message_count: How many messages at the head of the stored conversation the live history no
            longer takes from the session: the messages this manager removed, plus any it now carries in its
            own state and gives back from `restore_from_session`. Sessions skip this many stored messages.
    """

    removed_message_count: int = 0

    def __init__(self) -> None:
        self.removed_message_count = 0

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        """Register this manager's hook callbacks; the base class registers none.

        Subclasses that override it call ``super().register_hooks(registry, **kwargs)`` first.

        Args:
            registry: The agent's hook registry.
            **kwargs: Reserved for future use.
        """

    @abstractmethod
    def apply_management(self, agent: "Agent", **kwargs: Any) -> None:
        """Bring the agent's history within this manager's bounds, changing ``agent.messages`` in place.

        Called by the agent after each invocation pass. It never raises because the history cannot be
        reduced: the run it follows already succeeded.

        Args:
            agent: The agent whose history to manage.
            **kwargs: Reserved for future use.
        """

    @abstractmethod
    def reduce_context(self, agent: "Agent", e: Exception | None = None, **kwargs: Any) -> None:
        """Make the agent's history smaller, changing ``agent.messages`` in place.

        Called when the model reports that the conversation overflows its context window.

        Args:
            agent: The agent whose history to reduce.
            e: The overflow error that prompted the call, if any; it becomes the cause of the error raised
                when nothing can be reduced.
            **kwargs: Reserved for future use.

        Raises:
            ContextWindowOverflowException: Nothing can be removed or shortened.
        """

    def get_state(self) -> dict[str, Any]:
        """Return this manager's state as a JSON-serializable dict, for sessions to persist.

        Returns:
            ``{"__name__": <class name>, "removed_message_count": <int>}``; subclasses add their own keys.
        """
        return {"__name__": type(self).__name__, "removed_message_count": self.removed_message_count}

    def restore_from_session(self, state: dict[str, Any]) -> list[Message] | None:
        """Restore the state `get_state` returned, possibly in an earlier process.

        Nothing changes unless the whole state is valid.

        Args:
            state: A state previously returned by `get_state` of a manager of the same class.

        Returns:
            Messages to put before the stored messages the session restores, or None (the base class).

        Raises:
            ValueError: ``state`` was saved by another manager class or is malformed.
        """
        _check_state_name(state, self)
        self.removed_message_count = _state_count(state, "removed_message_count")
        return None


def _check_state_name(state: Any, manager: ConversationManager) -> None:
    """Raise ValueError unless ``state`` is a dict saved by a manager of ``manager``'s class.

    Args:
        state: The state to restore.
        manager: The manager restoring it.
    """
    expected = type(manager).__name__
    if not isinstance(state, dict):
        raise ValueError(
            f"Invalid conversation manager state: expected the dict {expected}.get_state() returned, "
            f"got {type(state).__name__}."
        )
    found = state.get("__name__")
    if found != expected:
        raise ValueError(
            f"Invalid conversation manager state: it was saved by {found!r}, but this agent's conversation "
            f"manager is {expected!r}. Restore the session with a {found} (it may be configured differently), "
            "or start a new session."
        )


def _state_count(state: dict[str, Any], key: str, default: int | None = None) -> int:
    """Return the non-negative integer ``state[key]``, or ``default`` when the key is absent and a default is given.

    Args:
        state: The state to read.
        key: The key to read.
        default: The value of a missing key; None makes the key required.

    Raises:
        ValueError: The key is missing and required, or its value is not a non-negative integer.
    """
    if key not in state and default is not None:
        return default
    value = state.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"Invalid conversation manager state: {key!r} must be a non-negative integer, got {value!r}.")
    return value
