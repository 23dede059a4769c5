"""`SlidingWindowConversationManager`: keeps the latest messages, never splitting a tool use from its result."""

import copy
from typing import TYPE_CHECKING, Any

from ..._log import get_logger
from ...hooks.events import BeforeModelCallEvent
from ...hooks.registry import HookRegistry
from ...types.content import Message, Messages
from ...types.exceptions import ContextWindowOverflowException
from ._messages import (
    decode_bytes,
    encode_bytes,
    find_trim_point,
    has_tool_result,
    is_tool_pair,
    truncate_tool_results,
)
from .conversation_manager import ConversationManager, _check_state_name, _state_count

if TYPE_CHECKING:
    from ..agent import Agent

logger = get_logger(__name__)  # logging is imported on first use


class SlidingWindowConversationManager(ConversationManager):
    """Keep at most ``window_size`` messages, dropping the oldest ones.

    The kept history begins where a model accepts it: at a user message that is not a tool result or, when there
    is none, at a tool use whose results follow at once. So trimming never leaves a tool result without its tool
    use, nor a tool use without its results.

    On a context-window overflow, `reduce_context` first shortens the oldest tool result that can still be
    shortened (``should_truncate_results``) and drops messages only when none can.

    With ``pin_first``, the first messages of the conversation are never removed. The first time messages are
    removed, the manager takes the pinned ones into its own state (`get_state`), so a session restores them
    (`restore_from_session` returns them to prepend) and counts them in `removed_message_count` with the removed
    messages: the session then reads only the stored messages after them.

    Attributes:
        window_size: The most messages to keep, pinned ones included; 0 keeps only the pinned messages.
        should_truncate_results: Whether an overflow first shortens tool results before dropping messages.
        per_turn: Also apply the window before every model call (True) or every N model calls (an int).
        pin_first: How many messages at the start of the conversation are never removed.
        removed_message_count: Messages removed so far, plus the pinned messages once the manager carries them
            (see above); sessions skip this many stored messages on restore.
    """

    def __init__(
        self,
        window_size: int = 40,
        should_truncate_results: bool = True,
        *,
        per_turn: bool | int = False,
        pin_first: int | None = None,
    ) -> None:
        """Configure the window.

        Args:
            window_size: The most messages to keep, pinned ones included. 0 removes every message that is not
                pinned at each reduction (Strands' meaning).
            should_truncate_results: On a context-window overflow, shorten the oldest tool result that can still
                be shortened before dropping messages.
            per_turn: When to apply the window besides after each invocation: False (never), True (before every
                model call) or N (before every Nth model call). Read when the agent registers the manager.
            pin_first: How many messages at the start of the conversation are never removed; a tool use among
                them keeps its results too. Must be smaller than a non-zero ``window_size``.

        Raises:
            ValueError: An argument is out of range.
        """
        _check_arguments(window_size, per_turn, pin_first)
        super().__init__()
        self.window_size = window_size
        self.should_truncate_results = should_truncate_results
        self.per_turn = per_turn
        self.pin_first = pin_first
        self._model_call_count = 0
        # The pinned messages the manager carries (the same dicts as the head of `agent.messages`), and their
        # JSON form, encoded once when they change rather than at every `get_state` (sessions call it often).
        self._pinned: list[Message] = []
        self._pinned_state: list[Any] = []

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        """Apply the window before model calls when ``per_turn`` asks for it.

        Args:
            registry: The agent's hook registry.
            **kwargs: Reserved for future use.
        """
        super().register_hooks(registry, **kwargs)
        # Strands registers the callback whatever per_turn is; without it, an agent that does not ask for
        # per-turn management builds no BeforeModelCallEvent per model call.
        if self.per_turn is not False:
            registry.add_callback(BeforeModelCallEvent, self._on_before_model_call)

    def _on_before_model_call(self, event: BeforeModelCallEvent) -> None:
        if self.per_turn is False:
            return
        self._model_call_count += 1
        if self.per_turn is True or self._model_call_count % self.per_turn == 0:
            logger.debug(
                "model_call_count=<%d>, per_turn=<%s> | applying the window before the model call",
                self._model_call_count,
                self.per_turn,
            )
            self.apply_management(event.agent)

    def apply_management(self, agent: "Agent", **kwargs: Any) -> None:
        """Drop the oldest messages if the history holds more than ``window_size``.

        When no valid place to cut exists, the history is left as it is and a warning is logged.

        Args:
            agent: The agent whose ``messages`` to trim in place.
            **kwargs: Reserved for future use.
        """
        messages = agent.messages
        if len(messages) <= self.window_size:
            return
        if not self._trim(messages):
            logger.warning(
                "window_size=<%d>, message_count=<%d> | no valid place to cut the history, leaving it as it is",
                self.window_size,
                len(messages),
            )

    def reduce_context(self, agent: "Agent", e: Exception | None = None, **kwargs: Any) -> None:
        """Shorten the history after a context-window overflow.

        With ``e`` given and ``should_truncate_results`` set, the oldest tool result that can still be shortened
        is truncated (its first and last 200 characters kept, images replaced by a placeholder) and nothing is
        removed. Otherwise the history is cut to ``window_size`` messages, or by at least its oldest turn when
        it is already within the window.

        Args:
            agent: The agent whose ``messages`` to reduce in place.
            e: The overflow error that prompted the call, if any.
            **kwargs: Reserved for future use.

        Raises:
            ContextWindowOverflowException: Nothing can be shortened or removed; ``e`` is its cause.
        """
        messages = agent.messages
        if e is not None and self.should_truncate_results and self._truncate_oldest_result(messages):
            return
        if not self._trim(messages):
            raise ContextWindowOverflowException(
                f"Unable to trim conversation context! None of the {len(messages)} messages can be removed "
                f"without splitting a tool use from its result (pinned messages: {self._pinned_count(messages)})."
            ) from e

    def get_state(self) -> dict[str, Any]:
        """Return the state sessions persist.

        Returns:
            ``{"__name__": "SlidingWindowConversationManager", "removed_message_count": int,
            "model_call_count": int, "pinned_messages": [Message, ...]}``, where bytes in the pinned messages are
            encoded as ``{"__bytes_encoded__": true, "data": <base64>}``. ``pinned_messages`` stays empty until
            the first messages are removed.
        """
        state = super().get_state()
        state["model_call_count"] = self._model_call_count
        state["pinned_messages"] = copy.deepcopy(self._pinned_state)
        return state

    def restore_from_session(self, state: dict[str, Any]) -> list[Message] | None:
        """Restore the counters and the pinned messages; nothing changes unless the whole state is valid.

        A state without ``model_call_count`` or ``pinned_messages`` (saved by Strands) restores them as 0 and none.

        Args:
            state: A state `get_state` returned.

        Returns:
            The pinned messages, to put before the stored messages the session restores; None if there are none.

        Raises:
            ValueError: ``state`` was saved by another manager class or is malformed.
        """
        _check_state_name(state, self)
        model_call_count = _state_count(state, "model_call_count", default=0)
        pinned = _state_messages(state, "pinned_messages")
        removed = _state_count(state, "removed_message_count")
        if len(pinned) > removed:
            raise ValueError(
                f"Invalid conversation manager state: {len(pinned)} pinned messages but removed_message_count is "
                f"{removed}; it counts the pinned messages too, so it cannot be smaller."
            )
        super().restore_from_session(state)
        self._model_call_count = model_call_count
        self._pinned = pinned
        self._pinned_state = encode_bytes(pinned)
        return list(pinned) or None

    def _pinned_count(self, messages: Messages) -> int:
        """How many messages at the head of ``messages`` are pinned, a pinned tool use's results included."""
        count = min(max(self.pin_first or 0, len(self._pinned)), len(messages))
        if 0 < count < len(messages) and is_tool_pair(messages[count - 1], messages[count]):
            count += 1
        return count

    def _trim(self, messages: Messages) -> bool:
        """Remove the oldest unpinned messages down to the window; return False if no valid cut exists."""
        pinned = self._pinned_count(messages)
        if self.window_size == 0:
            cut: int | None = len(messages)
        elif len(messages) <= self.window_size:
            # An overflow within the window: drop at least the oldest turn, as Strands does.
            cut = find_trim_point(messages, pinned + 2)
        else:
            cut = find_trim_point(messages, len(messages) - self.window_size + pinned)
        if cut is None or cut <= pinned:
            return False
        self._carry_pinned(messages[:pinned])
        self.removed_message_count += cut - pinned
        del messages[pinned:cut]
        logger.debug("removed=<%d>, pinned=<%d>, kept=<%d> | trimmed the history", cut - pinned, pinned, len(messages))
        return True

    def _carry_pinned(self, head: Messages) -> None:
        """Take the pinned messages into the manager's state, counting those new to it as out of the session's log."""
        if len(head) > len(self._pinned):
            self.removed_message_count += len(head) - len(self._pinned)
        if len(head) != len(self._pinned) or any(new is not old for new, old in zip(head, self._pinned, strict=True)):
            self._pinned = list(head)
            self._pinned_state = encode_bytes(self._pinned)

    def _truncate_oldest_result(self, messages: Messages) -> bool:
        """Shorten the oldest unpinned tool result that can still be shortened; return whether one was."""
        for index in range(self._pinned_count(messages), len(messages)):
            if has_tool_result(messages[index]) and truncate_tool_results(messages[index]):
                logger.debug("message_index=<%d> | truncated tool results", index)
                return True
        return False


def _check_arguments(window_size: int, per_turn: bool | int, pin_first: int | None) -> None:
    if isinstance(window_size, bool) or not isinstance(window_size, int) or window_size < 0:
        raise ValueError(
            f"window_size must be a non-negative integer (the most messages to keep; 0 keeps only pinned "
            f"messages), got {window_size!r}"
        )
    if not isinstance(per_turn, bool) and (not isinstance(per_turn, int) or per_turn <= 0):
        raise ValueError(f"per_turn must be True, False or a positive number of model calls, got {per_turn!r}")
    if pin_first is None:
        return
    if isinstance(pin_first, bool) or not isinstance(pin_first, int) or pin_first < 0:
        raise ValueError(f"pin_first must be None or a non-negative integer, got {pin_first!r}")
    if window_size and pin_first >= window_size:
        raise ValueError(
            f"pin_first={pin_first} leaves no room in window_size={window_size}: the window counts pinned messages. "
            "Pin fewer messages than window_size, or widen the window."
        )


def _state_messages(state: dict[str, Any], key: str) -> list[Message]:
    """Return the messages stored under ``state[key]`` (bytes decoded), or none when the key is absent."""
    value = state.get(key, [])
    if not isinstance(value, list) or not all(
        isinstance(item, dict) and item.get("role") in ("user", "assistant") and isinstance(item.get("content"), list)
        for item in value
    ):
        raise ValueError(
            f"Invalid conversation manager state: {key!r} must be a list of messages "
            '({"role": "user" | "assistant", "content": [...]}).'
        )
    messages: list[Message] = decode_bytes(value)
    return messages
