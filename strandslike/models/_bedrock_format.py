"""Converse-shaped messages as Bedrock accepts them: Bedrock rejects any field it does not know.

Messages in strandslike already have the Converse shape, so formatting means keeping exactly the fields each
block type allows (and dropping blocks a model cannot take back), as `strands.models.bedrock` does.
"""

import json
import logging
from collections.abc import Iterable
from typing import Any, cast

from ..types.content import ContentBlock, Messages
from ..types.streaming import StreamEvent

logger = logging.getLogger(__name__)

# Models that take a status on tool results, and models that misread JSON tool results (Strands' lists).
MODELS_INCLUDE_STATUS = ("anthropic.claude",)
MODELS_CONVERT_JSON_TO_TEXT = ("amazon.nova",)


def _media(kind: str, block: dict[str, Any]) -> dict[str, Any] | None:
    source = block.get("source", {})
    if "bytes" in source:
        formatted_source: dict[str, Any] = {"bytes": source["bytes"]}
    elif "location" in source and source["location"].get("type") == "s3":
        location = source["location"]
        formatted_source = {
            "s3Location": {
                "uri": location["uri"],
                **({"bucketOwner": location["bucketOwner"]} if "bucketOwner" in location else {}),
            }
        }
    elif "s3Location" in source:
        formatted_source = {"s3Location": source["s3Location"]}
    else:
        logger.warning("content_type=<%s> | source type not supported by Bedrock, skipping the block", kind)
        return None
    result: dict[str, Any] = {"format": block["format"], "source": formatted_source}
    if kind == "document":
        result["name"] = block.get("name", "document")
        if block.get("citations") is not None:
            result["citations"] = {"enabled": block["citations"]["enabled"]}
        if "context" in block:
            result["context"] = block["context"]
    return {kind: result}


def format_content(content: ContentBlock, model_id: str, include_status: bool) -> dict[str, Any] | None:
    """Return ``content`` with only the fields Bedrock accepts, or None to drop the block.

    Raises:
        TypeError: The block type is unknown to Bedrock.
    """
    block = cast(dict[str, Any], content)
    if "text" in block:
        return {"text": block["text"]}
    if "toolUse" in block:
        tool_use = block["toolUse"]
        tool_input = tool_use.get("input")
        return {
            "toolUse": {
                "input": tool_input if isinstance(tool_input, dict) else {},
                "name": tool_use["name"],
                "toolUseId": tool_use["toolUseId"],
            }
        }
    if "toolResult" in block:
        result = block["toolResult"]
        json_as_text = any(name in model_id for name in MODELS_CONVERT_JSON_TO_TEXT)
        parts: list[dict[str, Any]] = []
        for part in result.get("content") or [{"text": ""}]:
            if "json" in part:
                parts.append({"text": json.dumps(part["json"])} if json_as_text else {"json": part["json"]})
            else:
                formatted = format_content(cast(ContentBlock, part), model_id, include_status)
                if formatted is not None:
                    parts.append(formatted)
        formatted_result: dict[str, Any] = {"content": parts, "toolUseId": result["toolUseId"]}
        if "status" in result and include_status:
            formatted_result["status"] = result["status"]
        return {"toolResult": formatted_result}
    if "image" in block or "document" in block or "video" in block or "audio" in block:
        kind = next(key for key in ("image", "document", "video", "audio") if key in block)
        return _media(kind, block[kind])
    if "reasoningContent" in block:
        reasoning = block["reasoningContent"]
        formatted_reasoning: dict[str, Any] = {}
        if "reasoningText" in reasoning:
            text = reasoning["reasoningText"]
            formatted_reasoning["reasoningText"] = {"text": text.get("text", "")}
            if text.get("signature"):
                formatted_reasoning["reasoningText"]["signature"] = text["signature"]
        if "redactedContent" in reasoning:
            formatted_reasoning["redactedContent"] = reasoning["redactedContent"]
        return {"reasoningContent": formatted_reasoning}
    if "cachePoint" in block:
        point = block["cachePoint"]
        return {"cachePoint": {"type": point["type"], **({"ttl": point["ttl"]} if point.get("ttl") else {})}}
    if "guardContent" in block:
        text = block["guardContent"]["text"]
        return {
            "guardContent": {
                "text": {"text": text["text"], **({"qualifiers": text["qualifiers"]} if "qualifiers" in text else {})}
            }
        }
    if "citationsContent" in block:
        citations = block["citationsContent"]
        return {
            "citationsContent": {
                "citations": citations.get("citations", []),
                "content": [{"text": part["text"]} for part in citations.get("content", []) if "text" in part],
            }
        }
    if "SDK_UNKNOWN_MEMBER" in block:
        return None
    raise TypeError(f"content_type=<{next(iter(block), None)}> | unsupported type")


def format_messages(messages: Messages, model_id: str, include_status: bool) -> list[dict[str, Any]]:
    """Format every message for the Converse API, dropping messages left without content."""
    formatted = []
    for message in messages:
        content = [
            block
            for block in (format_content(part, model_id, include_status) for part in message["content"])
            if block is not None
        ]
        if content:
            formatted.append({"content": content, "role": message["role"]})
    return formatted


def has_tool_content(messages: Messages) -> bool:
    """Whether any message holds a tool use or result (Bedrock then needs a tool configuration)."""
    return any("toolUse" in block or "toolResult" in block for message in messages for block in message["content"])


def non_streaming_events(response: dict[str, Any]) -> Iterable[StreamEvent]:
    """Turn a ``converse`` (non-streaming) response into the events ``converse_stream`` would have sent."""
    message = response["output"]["message"]
    yield {"messageStart": {"role": message["role"]}}
    for block in message["content"]:
        if "toolUse" in block:
            tool_use = block["toolUse"]
            yield {
                "contentBlockStart": {
                    "start": {"toolUse": {"toolUseId": tool_use["toolUseId"], "name": tool_use["name"]}}
                }
            }
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(tool_use["input"])}}}}
        elif "text" in block:
            yield {"contentBlockDelta": {"delta": {"text": block["text"]}}}
        elif "reasoningContent" in block:
            reasoning = block["reasoningContent"]
            text = reasoning.get("reasoningText", {})
            if "text" in text:
                yield {"contentBlockDelta": {"delta": {"reasoningContent": {"text": text["text"]}}}}
            if text.get("signature"):
                yield {"contentBlockDelta": {"delta": {"reasoningContent": {"signature": text["signature"]}}}}
            if "redactedContent" in reasoning:
                yield {
                    "contentBlockDelta": {
                        "delta": {"reasoningContent": {"redactedContent": reasoning["redactedContent"]}}
                    }
                }
        yield {"contentBlockStop": {}}
    yield {"messageStop": {"stopReason": response["stopReason"]}}
    metadata: dict[str, Any] = {"usage": response.get("usage", {}), "metrics": response.get("metrics", {})}
    yield {"metadata": metadata}
