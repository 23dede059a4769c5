"""Turning an invocation's input into the messages it appends, after checking that they are valid and storable."""

import logging
from typing import TYPE_CHECKING, Any

from .._json import json_problem
from ..tools.journal import ToolJournal, unknown_outcome_result
from ..types.content import ContentBlock, Message, Messages
from ..types.exceptions import InvalidPromptError, safe_repr
from ..types.tools import ToolResult

if TYPE_CHECKING:
    from ..interrupt._state import _InterruptState

# Strands' content block keys (`strands.types.content.ContentBlock`); a block of a prompt needs one of them.
CONTENT_BLOCK_KEYS = frozenset(ContentBlock.__annotations__) | {"audio"}
_ROLES = ("user", "assistant")
_SHAPES = "a string, a list of content blocks, a list of messages, a list of interruptResponse blocks, or None"

logger = logging.getLogger(__name__)


def is_interrupt_responses(prompt: Any) -> bool:
    """Return whether ``prompt`` is a list holding any ``interruptResponse`` block: a resume, well-formed or not.

    A list that mixes interrupt responses with other content is a resume too (a malformed one): it is never sent to
    the model as content.
    """
    return isinstance(prompt, list) and any(
        isinstance(block, dict) and "interruptResponse" in block for block in prompt
    )


def dangling_tool_uses(messages: Messages) -> list[str]:
    """Return the ids of the tool uses of a trailing assistant message (they have no results yet)."""
    if not messages or messages[-1]["role"] != "assistant":
        return []
    return [block["toolUse"]["toolUseId"] for block in messages[-1]["content"] if "toolUse" in block]


def initial_messages(messages: Messages | None) -> Messages:
    """Return a copy of the conversation an agent is built with, after `check_messages`."""
    if not messages:
        return []
    checked = list(messages)
    check_messages(checked, "messages=")
    return checked


def _repair(tool_use_id: str, journal: ToolJournal | None, audit: "_InterruptState | None") -> ToolResult:
    attempt = journal.restored(tool_use_id) if journal is not None else None
    if attempt is not None and journal is not None:
        journal.settle(tool_use_id)
        if attempt.outcome == "done" and attempt.result is not None:
            return {**attempt.result, "toolUseId": tool_use_id}
        if attempt.outcome == "started":
            if audit is not None:
                audit.record_tool("tool_outcome_unknown", tool_use_id, attempt.name, attempt.idempotency_key)
            return unknown_outcome_result(attempt)
    return {"toolUseId": tool_use_id, "status": "error", "content": [{"text": "Tool was interrupted."}]}


def prompt_to_messages(
    prompt: Any,
    history: Messages,
    journal: ToolJournal | None = None,
    audit: "_InterruptState | None" = None,
) -> Messages:
    """Return the messages a new (non-resume) prompt appends; check them before anything is appended.

    A trailing assistant tool use left without results (a crash, a timeout, an abandoned run) gets a result in
    front of the new user content, so the history stays valid: its recorded result if the tool finished before a
    crash, an unknown-outcome error if a crash came while it ran (recorded in ``audit``), else Strands' error
    ``"Tool was interrupted."``.

    Raises:
        InvalidPromptError: The prompt is not a string, a list of content blocks, a list of messages or None, or it
            holds something no session could store (a lone surrogate, a non-string key, nesting past 100 levels...).
    """
    messages = _messages(prompt)
    check_messages(messages, "The prompt")
    repairs: list[ContentBlock] = [
        {"toolResult": _repair(tool_use_id, journal, audit)} for tool_use_id in dangling_tool_uses(history)
    ]
    if repairs:
        logger.warning(
            "tool_use_ids=<%s> | the last tool calls never got a result (a crash, a timeout or an abandoned run); "
            "they are answered before the new prompt (with their recorded result, or as unknown or interrupted)",
            ", ".join(dangling_tool_uses(history)),
        )
        if messages and messages[0]["role"] == "user":
            first: Message = {**messages[0], "content": repairs + list(messages[0]["content"])}
            messages = [first, *messages[1:]]
        else:
            messages = [{"role": "user", "content": repairs}, *messages]
    return messages


def _messages(prompt: Any) -> Messages:
    if prompt is None:
        return []
    if isinstance(prompt, str):
        return [{"role": "user", "content": [{"text": prompt}]}]
    if isinstance(prompt, list) and all(isinstance(item, dict) for item in prompt):
        if prompt and all("role" in item for item in prompt):
            return [dict(item) for item in prompt]  # type: ignore[misc]
        if all("role" not in item for item in prompt):
            for index, block in enumerate(prompt):
                if not any(key in CONTENT_BLOCK_KEYS for key in block):
                    raise InvalidPromptError(
                        f"prompt[{index}]={safe_repr(block)} | a content block needs one of the keys "
                        f"{', '.join(sorted(CONTENT_BLOCK_KEYS))}. Nothing was appended and nothing ran."
                    )
            return [{"role": "user", "content": list(prompt)}] if prompt else []
        raise InvalidPromptError(
            "A list prompt must hold either only messages or only content blocks, not a mix of both. "
            "Nothing was appended and nothing ran."
        )
    raise InvalidPromptError(
        f"prompt_type={type(prompt)} | the prompt must be {_SHAPES}. Nothing was appended and nothing ran."
    )


def check_messages(messages: Any, what: str) -> None:
    """Raise `InvalidPromptError` unless ``messages`` are well-formed messages that every store can write.

    A message is an object with ``role`` ``"user"`` or ``"assistant"`` and a list of content blocks (objects);
    everything in it must pass the stores' strict JSON check (`strandslike._json`), bytes included as stores
    encode them. A session restore refuses a message that breaks these rules, so one must never be appended.

    Args:
        messages: The messages to check.
        what: What they are, for the message (``"The prompt"``, ``"messages="``).
    """
    if not isinstance(messages, list):
        raise InvalidPromptError(f"{what} must be a list of messages, got {type(messages).__name__}.")
    for index, message in enumerate(messages):
        problem = _message_problem(message)
        if problem is not None:
            raise InvalidPromptError(
                f"{what}: message {index} {problem}. A message is an object with role 'user' or 'assistant' and a "
                "list of content blocks. Nothing was appended and nothing ran."
            )
    problem = json_problem(messages, allow_bytes=True)
    if problem is not None:
        raise InvalidPromptError(
            f"{what} cannot be stored: {problem.replace('the value', 'the messages', 1)}. Use valid Unicode text, "
            "objects with string keys, finite numbers and at most 100 levels of nesting. "
            "Nothing was appended and nothing ran."
        )


def _message_problem(message: Any) -> str | None:
    if not isinstance(message, dict):
        return f"is of type {type(message).__name__}, not an object"
    role = message.get("role")
    if not isinstance(role, str) or role not in _ROLES:
        return f"has role {safe_repr(role)}"
    content = message.get("content")
    if not isinstance(content, list):
        return f"has content of type {type(content).__name__}, not a list"
    for position, block in enumerate(content):
        if not isinstance(block, dict):
            return f"has content block {position} of type {type(block).__name__}, not an object"
    return None
