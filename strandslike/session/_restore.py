"""Rebuilding a live agent from what a session stored: state, interrupt state, conversation and tool attempts."""

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..agent.state import AgentState
from ..tools.journal import ToolAttempt, unknown_outcome_result
from ..types.content import ContentBlock, Messages
from ..types.exceptions import SessionCorruptError
from ..types.session import SessionAgent, SessionMessage

if TYPE_CHECKING:
    from ..agent.agent import Agent

logger = logging.getLogger(__name__)

Recorded = Callable[[str], ToolAttempt | None]


def restore_agent(
    agent: "Agent", stored: SessionAgent, session_messages: list[SessionMessage], where: str, recorded: Recorded
) -> None:
    """Give ``agent`` the stored state, interrupt state, model state and conversation.

    Args:
        agent: The agent being built.
        stored: Its latest snapshot.
        session_messages: Every stored message, in order.
        where: Where the agent is stored, for errors.
        recorded: Finds the tool attempt a crashed process left for a tool use (repairs unanswered tool uses).

    Raises:
        SessionCorruptError: The conversation manager's state cannot be restored.
    """
    agent.state = AgentState(stored.state)
    stored.initialize_internal_state(agent)
    prepend: Messages = []
    offset = 0
    manager = agent.conversation_manager
    if manager is not None and stored.conversation_manager_state.get("__name__"):
        try:
            prepend = manager.restore_from_session(stored.conversation_manager_state) or []
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            detail = f"holds a conversation manager state that cannot be restored ({exc})"
            raise SessionCorruptError(where, detail) from None
        offset = manager.removed_message_count
    messages = prepend + [session_message.to_message() for session_message in session_messages[offset:]]
    agent.messages = repair_tool_use(messages, recorded)


def unanswered_tool_uses(session_messages: list[SessionMessage]) -> dict[str, int]:
    """Return the tool uses the stored conversation has no result for, each with the index of its message.

    Only these can have an attempt worth handing to the tool journal: a tool use that has its result is settled,
    and a model may reuse its id later for another call.
    """
    asked: dict[str, int] = {}
    for position, session_message in enumerate(session_messages):
        message = session_message.to_message()
        if message.get("role") != "assistant":
            continue
        uses = [block["toolUse"] for block in message["content"] if isinstance(block.get("toolUse"), dict)]
        if not uses:
            continue
        answered: set[Any] = set()
        if position + 1 < len(session_messages):
            following = session_messages[position + 1].to_message()
            if following.get("role") == "user":
                answered = {
                    block["toolResult"].get("toolUseId")
                    for block in following["content"]
                    if isinstance(block.get("toolResult"), dict)
                }
        for tool_use in uses:
            if isinstance(tool_use.get("toolUseId"), str) and tool_use["toolUseId"] not in answered:
                asked[tool_use["toolUseId"]] = session_message.message_id
    return asked


def _repair_result(tool_use_id: str, recorded: Recorded) -> ContentBlock:
    attempt = recorded(tool_use_id)
    if attempt is not None and attempt.outcome == "done" and attempt.result is not None:
        return {"toolResult": {**attempt.result, "toolUseId": tool_use_id}}
    if attempt is not None and attempt.outcome == "started":
        return {"toolResult": unknown_outcome_result(attempt)}
    return {"toolResult": {"toolUseId": tool_use_id, "status": "error", "content": [{"text": "Tool was interrupted."}]}}


def _interrupted_note(block: ContentBlock) -> ContentBlock:
    if "toolUse" not in block:
        return block
    tool_use = block["toolUse"]
    return {"text": f"[Call of tool {tool_use['name']} ({tool_use['toolUseId']}) was interrupted before it returned.]"}


def _no_attempt(tool_use_id: str) -> ToolAttempt | None:
    return None


def repair_tool_use(messages: Messages, recorded: Recorded = _no_attempt) -> Messages:
    """Return ``messages`` with every tool use paired with exactly one result, as Strands' restore does.

    A tool use whose result is missing (a crash or timeout mid-tool) gets an error result in the user message that
    follows it: its recorded result if the tool finished before the crash, the unknown-outcome result if it
    started and never finished, else ``"Tool was interrupted."``. When an assistant message follows, the tool use
    becomes a text note instead, so no message is inserted and stored indices stay aligned; results that answer
    no tool use are dropped. A trailing assistant tool use is left as it is: either the agent waits on an
    interrupt for it, or the next prompt repairs it in the same user message.
    """
    work = list(messages)
    repaired: Messages = []
    index = 0
    while index < len(work):
        message = work[index]
        index += 1
        if message["role"] == "user" and any("toolResult" in block for block in message["content"]):
            previous = repaired[-1] if repaired else None
            if previous is None or not any("toolUse" in block for block in previous["content"]):
                logger.warning("message_index=<%d> | dropping tool results that answer no tool use", index - 1)
                kept = [block for block in message["content"] if "toolResult" not in block]
                if kept:
                    repaired.append({**message, "content": kept})
                continue
        repaired.append(message)
        uses = [block["toolUse"]["toolUseId"] for block in message["content"] if "toolUse" in block]
        if message["role"] != "assistant" or not uses or index >= len(work):
            continue  # no tool use, or a trailing one: waiting on an interrupt or repaired with the next prompt
        following = work[index]
        results = {
            block["toolResult"]["toolUseId"]: block
            for block in following["content"]
            if following["role"] == "user" and "toolResult" in block
        }
        if len(results) == len(uses) and all(use in results for use in uses):
            continue
        missing = [use for use in uses if use not in results]
        logger.warning(
            "message_index=<%d>, tool_use_ids=<%s> | repaired tool uses that never got a result (a crash or "
            "timeout mid-tool): the model sees their recorded result, an unknown outcome, or an interruption",
            index - 1,
            ", ".join(missing),
        )
        if following["role"] == "user":
            content: list[ContentBlock] = [results.get(use) or _repair_result(use, recorded) for use in uses]
            extra = [block for block in following["content"] if "toolResult" not in block]
            work[index] = {**following, "content": content + extra}
        else:
            # No user message follows to carry results, and inserting one would shift the stored indices the
            # conversation manager counts with: turn the unanswered tool uses into a note instead.
            repaired[-1] = {**message, "content": [_interrupted_note(block) for block in message["content"]]}
    return repaired
