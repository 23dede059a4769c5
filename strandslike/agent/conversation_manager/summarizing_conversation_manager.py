"""`SummarizingConversationManager`: replaces the oldest messages with a summary when the context overflows."""

import copy
import logging
from typing import TYPE_CHECKING, Any

from ...hooks.events import BeforeModelCallEvent
from ...hooks.registry import HookRegistry
from ...types.content import Message, Messages
from ...types.exceptions import ContextWindowOverflowException
from ._messages import decode_bytes, encode_bytes, is_tool_pair
from ._summary import DEFAULT_SUMMARIZATION_PROMPT, adjust_split_point_for_tool_pairs, summarize_with_model
from .conversation_manager import ConversationManager, _check_state_name, _state_count

if TYPE_CHECKING:
    from ..agent import Agent

logger = logging.getLogger(__name__)

_DEFAULT_COMPRESSION_THRESHOLD = 0.7


class SummarizingConversationManager(ConversationManager):
    """Summarize the oldest messages instead of dropping them, when the conversation overflows the context.

    On `reduce_context` the oldest ``summary_ratio`` of the messages (never the last
    ``preserve_recent_messages``, and never splitting a tool use from its results) are replaced by one user message
    holding a summary. The summary is written by the agent's own model (called directly, outside the agent loop)
    or, when given, by ``summarization_agent``. `apply_management` changes nothing: summaries cost a model call,
    so they are made only when the context overflows (or, with ``proactive_compression``, when it nears the limit).

    The summary (and the pinned messages) are part of the manager's state, which sessions persist: a restored
    agent continues with the summary followed by the messages after it.

    Attributes:
        summary_ratio: The share of the messages summarized at a time (kept between 0.1 and 0.8).
        preserve_recent_messages: How many of the latest messages are never summarized.
        summarization_agent: The agent that writes summaries instead of the agent's model.
        summarization_system_prompt: The system prompt of the summarizing model call.
        pin_first: How many messages at the start of the conversation are never summarized.
        removed_message_count: Stored messages the live history no longer takes from the session.
    """

    def __init__(
        self,
        summary_ratio: float = 0.3,
        preserve_recent_messages: int = 10,
        summarization_agent: "Agent | None" = None,
        summarization_system_prompt: str | None = None,
        *,
        pin_first: int | None = None,
        proactive_compression: bool | dict[str, float] | None = None,
    ) -> None:
        """Configure the summaries.

        Args:
            summary_ratio: The share of the messages to summarize, clamped to 0.1 to 0.8 (Strands' default 0.3).
            preserve_recent_messages: How many of the latest messages are never summarized (default 10).
            summarization_agent: An agent to write summaries (it may use tools); default: the agent's own model.
            summarization_system_prompt: The system prompt of summaries written by the agent's model (default:
                Strands' prompt asking for a structured bullet-point summary).
            pin_first: How many messages at the start of the conversation are never summarized.
            proactive_compression: Also summarize before a model call whose projected input fills the model's
                context window past a threshold: True for 70 %, or ``{"compression_threshold": 0.8}``.

        Raises:
            ValueError: Both ``summarization_agent`` and ``summarization_system_prompt`` are given (an agent has its
                own system prompt), or ``compression_threshold`` is not in (0, 1].
        """
        if summarization_agent is not None and summarization_system_prompt is not None:
            raise ValueError(
                "Cannot provide both summarization_agent and summarization_system_prompt. "
                "Agents come with their own system prompt."
            )
        super().__init__()
        self.summary_ratio = max(0.1, min(0.8, summary_ratio))
        self.preserve_recent_messages = preserve_recent_messages
        self.summarization_agent = summarization_agent
        self.summarization_system_prompt = summarization_system_prompt
        self.pin_first = max(0, pin_first) if pin_first is not None else None
        self._compression_threshold = _threshold(proactive_compression)
        self._summary_message: Message | None = None
        # The pinned messages the manager carries once a summary replaced the messages after them.
        self._pinned: list[Message] = []

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        """Summarize before model calls that near the context window, when ``proactive_compression`` is on.

        Args:
            registry: The agent's hook registry.
            **kwargs: Reserved for future use.
        """
        super().register_hooks(registry, **kwargs)
        if self._compression_threshold is not None:
            registry.add_callback(BeforeModelCallEvent, self._on_before_model_call)

    def _on_before_model_call(self, event: BeforeModelCallEvent) -> None:
        threshold = self._compression_threshold
        tokens = event.projected_input_tokens
        estimate = getattr(event.agent.model, "estimate_utilization", None)
        if threshold is None or tokens is None or not callable(estimate):
            return
        if estimate(tokens) >= threshold:
            self.reduce_context(event.agent)  # best effort: failures are logged, the model call proceeds

    def apply_management(self, agent: "Agent", **kwargs: Any) -> None:
        """Do nothing: summaries are made only when the context overflows (see `reduce_context`).

        Args:
            agent: The agent.
            **kwargs: Reserved for future use.
        """

    def reduce_context(self, agent: "Agent", e: Exception | None = None, **kwargs: Any) -> None:
        """Replace the oldest messages with a summary, changing ``agent.messages`` in place.

        Args:
            agent: The agent whose history to reduce.
            e: The overflow that prompted the call. With it, a failure to summarize is raised (the next model call
                would overflow again); without it (proactive compression) it is logged and the history kept.
            **kwargs: Reserved for future use.

        Raises:
            ContextWindowOverflowException: There are too few messages to summarize (``e`` given).
            Exception: Whatever the summarizing model or agent raised (``e`` given).
        """
        try:
            self._summarize_oldest(agent)
        except Exception as error:
            if e is not None:
                logger.error("Summarization failed: %s", error)
                raise error from e
            logger.warning("Proactive summarization failed, continuing: %s", error)

    def get_state(self) -> dict[str, Any]:
        """Return the state sessions persist: Strands' keys (``summary_message``) plus the pinned messages.

        Returns:
            ``{"__name__": "SummarizingConversationManager", "removed_message_count": int,
            "summary_message": Message | None, "pinned_messages": [Message, ...]}`` with bytes encoded as
            ``{"__bytes_encoded__": true, "data": <base64>}``.
        """
        state = super().get_state()
        state["summary_message"] = encode_bytes(self._summary_message)
        state["pinned_messages"] = encode_bytes(self._pinned)
        return state

    def restore_from_session(self, state: dict[str, Any]) -> list[Message] | None:
        """Restore the summary and pinned messages; return them, to put before the stored messages restored.

        A state saved by Strands (no ``pinned_messages``) restores its summary alone. Nothing changes unless the
        whole state is valid.

        Raises:
            ValueError: ``state`` was saved by another manager class or is malformed.
        """
        _check_state_name(state, self)
        removed = _state_count(state, "removed_message_count")
        summary = state.get("summary_message")
        if summary is not None and not _is_message(summary):
            raise ValueError("Invalid conversation manager state: 'summary_message' must be a message or null.")
        pinned = state.get("pinned_messages", [])
        if not isinstance(pinned, list) or not all(_is_message(item) for item in pinned):
            raise ValueError("Invalid conversation manager state: 'pinned_messages' must be a list of messages.")
        super().restore_from_session(state)
        self.removed_message_count = removed
        self._summary_message = decode_bytes(summary) if summary is not None else None
        self._pinned = decode_bytes(pinned)
        head = [*self._pinned, *([self._summary_message] if self._summary_message is not None else [])]
        return head or None

    # -- summarizing ----------------------------------------------------------------------------------------------

    def _summarize_oldest(self, agent: "Agent") -> None:
        messages = agent.messages
        count = max(1, int(len(messages) * self.summary_ratio))
        count = min(count, len(messages) - self.preserve_recent_messages)
        if count <= 0:
            raise ContextWindowOverflowException("Cannot summarize: insufficient messages for summarization")
        count = adjust_split_point_for_tool_pairs(messages, count)
        if count <= 0:
            raise ContextWindowOverflowException("Cannot summarize: insufficient messages for summarization")
        pinned = self._pinned_count(messages)
        if count <= pinned:
            raise ContextWindowOverflowException("Cannot summarize: all messages in summarize range are pinned")
        to_summarize = messages[pinned:count]
        summary = self._generate_summary(to_summarize, agent)
        # Only now, with the summary written, does anything change.
        head = messages[:pinned]
        if len(head) > len(self._pinned):  # pinned messages newly carried by the manager leave the session's log
            self.removed_message_count += len(head) - len(self._pinned)
        self._pinned = list(head)
        previous = self._summary_message
        self.removed_message_count += len(to_summarize) - (1 if any(m is previous for m in to_summarize) else 0)
        self._summary_message = summary
        messages[:] = [*head, summary, *messages[count:]]
        logger.debug(
            "summarized=<%d>, pinned=<%d>, kept=<%d> | summarized the history", len(to_summarize), pinned, len(messages)
        )

    def _pinned_count(self, messages: Messages) -> int:
        """How many messages at the head are pinned: the carried ones, else ``pin_first`` (and a tool use's results)."""
        count = min(max(self.pin_first or 0, len(self._pinned)), len(messages))
        if 0 < count < len(messages) and is_tool_pair(messages[count - 1], messages[count]):
            count += 1
        return count

    def _generate_summary(self, messages: Messages, agent: "Agent") -> Message:
        if self.summarization_agent is not None:
            return _summarize_with_agent(self.summarization_agent, messages)
        from ..._sync import run_sync

        return run_sync(summarize_with_model, list(messages), agent.model, self.summarization_system_prompt)


def _summarize_with_agent(helper: "Agent", messages: Messages) -> Message:
    """Ask the summarization agent, restoring its conversation, system prompt and tools afterwards."""
    from ...tools.decorator import tool
    from ...tools.registry import ToolRegistry
    from ._summary import as_user_summary

    original = (helper.system_prompt_content, helper.messages, helper.tool_registry)
    try:
        if not helper.tool_names:
            # Some providers refuse tool uses and results in the history when no tool is configured.
            registry = ToolRegistry()
            registry.register_tool(tool(_noop_tool))
            helper.tool_registry = registry
        helper.messages = copy.deepcopy(list(messages))
        result = helper("Please summarize this conversation.")
        return as_user_summary(result.message)
    finally:
        helper.system_prompt, helper.messages, helper.tool_registry = original


def _noop_tool() -> str:
    """No-op tool to satisfy tool spec requirement when tool messages are present."""
    return "You MUST NOT use this tool. Respond DIRECTLY to the user."


def _is_message(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("role") in ("user", "assistant")
        and isinstance(value.get("content"), list)
    )


def _threshold(proactive_compression: bool | dict[str, float] | None) -> float | None:
    if proactive_compression is True:
        threshold: float | None = _DEFAULT_COMPRESSION_THRESHOLD
    elif isinstance(proactive_compression, dict):
        threshold = proactive_compression.get("compression_threshold", _DEFAULT_COMPRESSION_THRESHOLD)
    else:
        threshold = None
    if threshold is not None and not 0 < threshold <= 1:
        raise ValueError(f"compression_threshold must be between 0 (exclusive) and 1 (inclusive), got {threshold}")
    return threshold


__all__ = ["DEFAULT_SUMMARIZATION_PROMPT", "SummarizingConversationManager"]
