"""Message inspection, trim points, tool-result truncation and a JSON codec, for the conversation managers."""

import base64
from typing import Any

from ...types.content import ContentBlock, Message, Messages
from ...types.tools import ToolResultContent

# Strands' truncation keeps this many characters at each end of a long tool-result text.
_PRESERVE_CHARS = 200
_TRUNCATION_MARKER = "... [truncated:"
_BYTES_KEY = "__bytes_encoded__"


def has_tool_use(message: Message) -> bool:
    """Return whether ``message`` holds a ``toolUse`` block."""
    return any("toolUse" in block for block in message["content"])


def has_tool_result(message: Message) -> bool:
    """Return whether ``message`` holds a ``toolResult`` block."""
    return any("toolResult" in block for block in message["content"])


def is_tool_pair(use: Message, result: Message) -> bool:
    """Return whether ``result`` answers at least one tool use of ``use`` (matched by ``toolUseId``)."""
    use_ids = {block["toolUse"].get("toolUseId") for block in use["content"] if "toolUse" in block}
    return any("toolResult" in block and block["toolResult"].get("toolUseId") in use_ids for block in result["content"])


def find_trim_point(messages: Messages, start: int) -> int | None:
    """Return the first index at or after ``start`` where the kept history may begin, or None if there is none.

    The kept history preferably begins with a user message that holds no ``toolResult`` (most providers require
    a user message first, and a result needs its tool use before it). Failing that, it may begin with a tool use
    whose results follow at once, a complete pair providers accept (Strands' fallback, so tool-heavy
    conversations stay trimmable).

    Args:
        messages: The history.
        start: The smallest acceptable index.
    """
    for index in range(start, len(messages)):
        message = messages[index]
        if message["role"] == "user" and not has_tool_result(message):
            return index
    for index in range(start, len(messages) - 1):
        following = messages[index + 1]
        if has_tool_use(messages[index]) and following["role"] == "user" and has_tool_result(following):
            return index
    return None


def truncate_tool_results(message: Message) -> bool:
    """Shorten the tool results of ``message`` in place, as Strands does; return whether anything changed.

    A text longer than 400 characters keeps its first and last 200 around a notice of how many characters were
    removed; an image becomes a ``[image: <format>, <n> bytes]`` placeholder. Texts already truncated stay as
    they are; the status of each result is kept.

    Args:
        message: A message that may hold ``toolResult`` blocks.
    """
    changed = False
    content: list[ContentBlock] = []
    for block in message["content"]:
        if "toolResult" in block:
            result = block["toolResult"]
            items = [_truncated_item(item) for item in result["content"]]
            if any(new is not None for new in items):
                changed = True
                new_items = [old if new is None else new for old, new in zip(result["content"], items, strict=True)]
                block = {"toolResult": {**result, "content": new_items}}
        content.append(block)
    if changed:
        message["content"] = content
    return changed


def _truncated_item(item: ToolResultContent) -> ToolResultContent | None:
    if "image" in item:
        image = item["image"]
        data = image.get("source", {}).get("bytes") or b""
        return {"text": f"[image: {image.get('format', 'unknown')}, {len(data)} bytes]"}
    text = item.get("text")
    if text is None or _TRUNCATION_MARKER in text or len(text) <= 2 * _PRESERVE_CHARS:
        return None
    removed = len(text) - 2 * _PRESERVE_CHARS
    return {
        "text": f"{text[:_PRESERVE_CHARS]}...\n\n... [truncated: {removed} chars removed] ...\n\n"
        f"...{text[-_PRESERVE_CHARS:]}"
    }


def encode_bytes(value: Any) -> Any:
    """Return a JSON-ready copy of ``value``: bytes become ``{"__bytes_encoded__": true, "data": <base64>}``.

    This is the encoding Strands' sessions use, so a session that encodes or decodes again is unaffected.
    """
    if isinstance(value, bytes | bytearray):
        return {_BYTES_KEY: True, "data": base64.b64encode(value).decode()}
    if isinstance(value, dict):
        return {key: encode_bytes(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [encode_bytes(item) for item in value]
    return value


def decode_bytes(value: Any) -> Any:
    """Return a copy of ``value`` with what `encode_bytes` encoded turned back into bytes."""
    if isinstance(value, dict):
        if value.get(_BYTES_KEY) is True and isinstance(value.get("data"), str):
            return base64.b64decode(value["data"])
        return {key: decode_bytes(item) for key, item in value.items()}
    if isinstance(value, list):
        return [decode_bytes(item) for item in value]
    return value
