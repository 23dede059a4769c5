"""Bedrock Converse stream events, as a model's ``stream()`` yields them."""

from typing import Any, Literal, TypeAlias

from typing_extensions import TypedDict

StopReason: TypeAlias = Literal[
    "cancelled",
    "checkpoint",
    "content_filtered",
    "end_turn",
    "guardrail_intervened",
    "interrupt",
    "limit_output_tokens",
    "limit_total_tokens",
    "limit_turns",
    "max_tokens",
    "stop_sequence",
    "tool_use",
]
"""Why a model call or a run stopped (Strands 1.62's values; strandslike's loop produces a subset of them)."""


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
