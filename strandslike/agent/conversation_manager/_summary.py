"""What summarizing the history needs: a safe split point, a summary from the model, and its user message."""

from typing import Any

from ...types.content import ContentBlock, Message, Messages
from ...types.exceptions import ContextWindowOverflowException

# Strands' prompt, so summaries read the same with either framework.
DEFAULT_SUMMARIZATION_PROMPT = """You are a conversation summarizer. Provide a concise summary of the conversation \
history.

Format Requirements:
- You MUST create a structured and concise summary in bullet-point format.
- You MUST NOT respond conversationally.
- You MUST NOT address the user directly.
- You MUST NOT comment on tool availability.

Assumptions:
- You MUST NOT assume tool executions failed unless otherwise stated.

Task:
Your task is to create a structured summary document:
- It MUST contain bullet points with key topics and questions covered
- It MUST contain bullet points for all significant tools executed and their results
- It MUST contain bullet points for any code or technical information shared
- It MUST contain a section of key insights gained
- It MUST format the summary in the third person

Example format:

## Conversation Summary
* Topic 1: Key information
* Topic 2: Key information

## Tools Executed
* Tool X: Result Y"""


def _has(message: Message, key: str) -> bool:
    return any(key in block for block in message["content"])


def adjust_split_point_for_tool_pairs(messages: Messages, split_point: int) -> int:
    """Move a split point forward until the kept part starts neither with a tool result nor a lone tool use.

    Raises:
        ContextWindowOverflowException: The split point is past the end, or no valid one exists.
    """
    if split_point > len(messages):
        raise ContextWindowOverflowException("Split point exceeds message array length")
    if split_point == len(messages):
        return split_point
    while split_point < len(messages):
        message = messages[split_point]
        lone_use = (
            _has(message, "toolUse")
            and split_point + 1 < len(messages)
            and not _has(messages[split_point + 1], "toolResult")
        )
        if _has(message, "toolResult") or lone_use:
            split_point += 1
        else:
            return split_point
    raise ContextWindowOverflowException("Unable to trim conversation context!")


async def summarize_with_model(messages: Messages, model: Any, system_prompt: str | None = None) -> Message:
    """Ask ``model`` directly (outside the agent loop) to summarize ``messages``; return the summary message.

    Raises:
        RuntimeError: The model gave no message, or one without text.
    """
    from ...models._streaming import process_stream

    request: Messages = [*messages, {"role": "user", "content": [{"text": "Please summarize this conversation."}]}]
    prompt = system_prompt if system_prompt is not None else DEFAULT_SUMMARIZATION_PROMPT
    streamed = await process_stream(model.stream(request, tool_specs=None, system_prompt=prompt))
    if not streamed.message.get("content"):
        raise RuntimeError("Failed to generate summary: no response from model")
    return as_user_summary(streamed.message)


def as_user_summary(message: Message) -> Message:
    """Turn the summarizer's reply into the user message kept in the history: its text only (no reasoning, tools).

    Raises:
        RuntimeError: The reply has no text.
    """
    blocks: list[ContentBlock] = []
    for block in message["content"]:
        if "text" in block:
            blocks.append({"text": block["text"]})
        elif "citationsContent" in block:
            cited = block["citationsContent"].get("content", [])
            blocks.extend({"text": item["text"]} for item in cited if item.get("text"))
    if not blocks:
        raise RuntimeError("Failed to generate summary: model response contained no text")
    return {"role": "user", "content": blocks}
