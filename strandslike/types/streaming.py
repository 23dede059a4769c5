"""Bedrock Converse stream events, as a model's ``stream()`` yields them."""

from typing import Any, Literal, TypeAlias

from typing_extensions import TypedDict

StopReason: TypeAlias = Literal[
    "cancelled",
    "content_filtered",
    "end_turn",
    "guardrail_intervened",
    "interrupt",
    "max_tokens",
    "stop_sequence",
    "tool_use",
]


class Usage(TypedDict, total=False):
    """Token usage of a model call."""

    inputTokens: int
    outputTokens: int
    totalTokens: int
    cacheReadInputTokens: int
    cacheWriteInputTokens: int


class Metrics(TypedDict, total=False):
    """Latency of a model call."""

    latencyMs: int
    timeToFirstByteMs: int


class StreamEvent(TypedDict, total=False):
    """One event of a model stream; exactly one key is set."""

    messageStart: dict[str, Any]
    contentBlockStart: dict[str, Any]
    contentBlockDelta: dict[str, Any]
    contentBlockStop: dict[str, Any]
    messageStop: dict[str, Any]
    metadata: dict[str, Any]
    redactContent: dict[str, Any]


__all__ = ["Metrics", "StopReason", "StreamEvent", "Usage"]
