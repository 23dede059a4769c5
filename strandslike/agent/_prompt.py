"""Turning an invocation's input into the messages it appends."""

from typing import Any

from ..types.content import ContentBlock, Message, Messages


def is_interrupt_responses(prompt: Any) -> bool:
    """Return whether ``prompt`` is a non-empty list made only of ``interruptResponse`` blocks."""
    return (
        isinstance(prompt, list)
        and bool(prompt)
        and all(isinstance(block, dict) and "interruptResponse" in block for block in prompt)
    )


def dangling_tool_uses(messages: Messages) -> list[str]:
    """Return the ids of the tool uses of a trailing assistant message (they have no results yet)."""
    if not messages or messages[-1]["role"] != "assistant":
        return []
    return [block["toolUse"]["toolUseId"] for block in messages[-1]["content"] if "toolUse" in block]


def prompt_to_messages(prompt: Any, history: Messages) -> Messages:
    """Return the messages a new (non-resume) prompt appends.

    A trailing assistant tool use left without results (a crash, a timeout, an abandoned run) gets an error
    result ``"Tool was interrupted."`` in front of the new user content, so the history stays valid.

    Raises:
        TypeError: The prompt is not a string, a list of content blocks, a list of messages or None.
    """
    repairs: list[ContentBlock] = [
        {"toolResult": {"toolUseId": tool_use_id, "status": "error", "content": [{"text": "Tool was interrupted."}]}}
        for tool_use_id in dangling_tool_uses(history)
    ]
    messages: Messages
    if prompt is None:
        messages = []
    elif isinstance(prompt, str):
        messages = [{"role": "user", "content": [{"text": prompt}]}]
    elif isinstance(prompt, list) and all(isinstance(item, dict) for item in prompt):
        if prompt and all("role" in item for item in prompt):
            messages = [dict(item) for item in prompt]  # type: ignore[misc]
        elif all("role" not in item for item in prompt):
            messages = [{"role": "user", "content": list(prompt)}] if prompt else []
        else:
            raise TypeError("A list prompt must hold either only messages or only content blocks, not a mix of both.")
    else:
        raise TypeError(
            f"prompt_type={type(prompt)} | the prompt must be a string, a list of content blocks, a list of "
            "messages, a list of interruptResponse blocks, or None"
        )
    if repairs:
        if messages and messages[0]["role"] == "user":
            first: Message = {**messages[0], "content": repairs + list(messages[0]["content"])}
            messages = [first, *messages[1:]]
        else:
            messages = [{"role": "user", "content": repairs}, *messages]
    return messages
