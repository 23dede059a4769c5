"""Parse a model's Bedrock Converse event stream into one assistant message (Strands' ``process_stream``).

This runs once per model call for every agent cycle, so it is written for the hot path: one key lookup per
chunk to find its kind, no copies of the chunks, and no callback payloads at all when nobody listens.
"""

import json
import threading
from collections.abc import AsyncIterable, Callable
from dataclasses import dataclass
from typing import Any, cast

from .._log import get_logger
from ..types.content import ContentBlock, Message, Role
from ..types.streaming import Metrics, StopReason, StreamEvent, Usage

logger = get_logger(__name__)  # logging is imported on first use

_CANCELLED_TEXT = "Cancelled by user"


@dataclass(slots=True)
class StreamResult:
    """What one model call produced.

    Attributes:
        message: The assistant message, ``{"role": ..., "content": [...]}``.
        stop_reason: Why the model stopped; ``end_turn`` is reported as ``tool_use`` when the message calls tools.
        usage: Token usage from the stream's ``metadata`` event (zeros if the model sent none).
        metrics: Latency from the stream's ``metadata`` event (zero if the model sent none).
        redact_user_message: The text a guardrail put in place of the user's input (``redactContent`` event's
            ``redactUserContentMessage``); the agent redacts its latest message with it.
    """

    message: Message
    stop_reason: StopReason
    usage: Usage
    metrics: Metrics
    redact_user_message: str | None = None


def _parse_tool_input(raw: str, tool_use_id: str, name: str) -> Any:
    # Models stream tool input as JSON text; an empty stream means a tool with no parameters.
    if not raw or raw.isspace():
        return {}
    try:
        return json.loads(raw)
    except ValueError:
        # Strands keeps going with an empty input so the tool reports a validation error the model can fix,
        # instead of failing the whole invocation.
        logger.warning(
            "tool_use_id=<%s>, tool_name=<%s>, input=<%.200s> | tool input is not valid JSON; using {} instead",
            tool_use_id,
            name,
            raw,
        )
        return {}


async def process_stream(
    chunks: AsyncIterable[StreamEvent],
    emit: Callable[[dict[str, Any]], None] | None = None,
    cancel_signal: threading.Event | None = None,
) -> StreamResult:
    """Consume a model stream and assemble the assistant message, stop reason, usage and metrics.

    Args:
        chunks: Bedrock Converse stream events, as `Model.stream` yields them. They are read, never modified.
        emit: Called with Strands-shaped callback events: ``{"event": chunk}`` for every chunk, plus
            ``{"data", "delta"}`` for text, ``{"current_tool_use", "delta"}`` for tool input and
            ``{"reasoningText", "delta", "reasoning"}`` for reasoning. None builds no events at all.
        cancel_signal: Checked before each chunk; once set, the stream is closed and the result is a
            ``cancelled`` message with the partial content discarded.

    Returns:
        The parsed `StreamResult`.
    """
    role: Role = "assistant"
    content: list[ContentBlock] = []
    stop_reason: str = "end_turn"
    usage: Usage | None = None
    metrics: Metrics | None = None
    redacted_message: str | None = None
    redact_user: str | None = None
    has_tool_use = False

    # State of the block being streamed. Text is gathered in a list and joined once at contentBlockStop, which
    # stays linear however many deltas arrive.
    text_parts: list[str] = []
    in_tool = False
    tool_id = ""
    tool_name = ""
    tool_input = ""
    tool_extra: dict[str, Any] | None = None
    reasoning_parts: list[str] = []
    signature: str | None = None
    redacted = b""
    citations: list[Any] = []

    cancelled = cancel_signal.is_set if cancel_signal is not None else None
    iterator = chunks.__aiter__()
    finished = False
    try:
        async for chunk in iterator:
            if cancelled is not None and cancelled():
                return StreamResult(
                    message={"role": "assistant", "content": [{"text": _CANCELLED_TEXT}]},
                    stop_reason="cancelled",
                    usage=usage or {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0},
                    metrics=metrics or {"latencyMs": 0},
                )
            if emit is not None:
                emit({"event": chunk})

            # Deltas dominate a stream, so they are tested first.
            if "contentBlockDelta" in chunk:
                delta = chunk["contentBlockDelta"]["delta"]
                if "text" in delta:
                    text = delta["text"]
                    text_parts.append(text)
                    if emit is not None:
                        emit({"data": text, "delta": delta})
                elif "toolUse" in delta:
                    tool_delta = delta["toolUse"]
                    in_tool = True
                    # Some providers send the id and name with the first input fragment instead of at block start.
                    if "toolUseId" in tool_delta:
                        tool_id = tool_delta["toolUseId"]
                    if "name" in tool_delta:
                        tool_name = tool_delta["name"]
                    tool_input += tool_delta.get("input", "")
                    if emit is not None:
                        emit(
                            {
                                "current_tool_use": {"toolUseId": tool_id, "name": tool_name, "input": tool_input},
                                "delta": delta,
                            }
                        )
                elif "reasoningContent" in delta:
                    reasoning = delta["reasoningContent"]
                    if "text" in reasoning:
                        reasoning_parts.append(reasoning["text"])
                        if emit is not None:
                            emit({"reasoningText": reasoning["text"], "delta": delta, "reasoning": True})
                    elif "signature" in reasoning:
                        signature = (signature or "") + reasoning["signature"]
                        if emit is not None:
                            emit({"reasoning_signature": reasoning["signature"], "delta": delta, "reasoning": True})
                    elif "redactedContent" in reasoning:
                        redacted += reasoning["redactedContent"]
                        if emit is not None:
                            emit(
                                {
                                    "reasoningRedactedContent": reasoning["redactedContent"],
                                    "delta": delta,
                                    "reasoning": True,
                                }
                            )
                elif "citation" in delta:
                    citations.append(delta["citation"])
                    if emit is not None:
                        emit({"citation": delta["citation"], "delta": delta})

            elif "contentBlockStop" in chunk:
                if in_tool:
                    if tool_id and tool_name:
                        block: dict[str, Any] = {
                            "toolUseId": tool_id,
                            "name": tool_name,
                            "input": _parse_tool_input(tool_input, tool_id, tool_name),
                        }
                        if tool_extra:
                            block.update(tool_extra)
                        content.append({"toolUse": cast(Any, block)})
                        has_tool_use = True
                    else:
                        logger.warning(
                            "tool_use_id=<%s>, tool_name=<%s> | tool use block lacks an id or a name; skipping it",
                            tool_id or None,
                            tool_name or None,
                        )
                    in_tool = False
                    tool_id = tool_name = tool_input = ""
                    tool_extra = None
                elif text_parts:
                    text = "".join(text_parts)
                    text_parts = []
                    if citations:
                        content.append({"citationsContent": {"citations": citations, "content": [{"text": text}]}})
                        citations = []
                    elif text:
                        content.append({"text": text})
                elif reasoning_parts:
                    reasoning_text: dict[str, str] = {"text": "".join(reasoning_parts)}
                    if signature is not None:
                        reasoning_text["signature"] = signature
                    content.append({"reasoningContent": {"reasoningText": cast(Any, reasoning_text)}})
                    reasoning_parts = []
                    signature = None
                elif redacted:
                    content.append({"reasoningContent": {"redactedContent": redacted}})
                    redacted = b""

            elif "contentBlockStart" in chunk:
                start = chunk["contentBlockStart"].get("start")
                if start and "toolUse" in start:
                    tool_start = start["toolUse"]
                    in_tool = True
                    tool_id = tool_start.get("toolUseId", "")
                    tool_name = tool_start.get("name", "")
                    tool_input = ""
                    # Keep provider extras such as Gemini's ``reasoningSignature``: they must be sent back verbatim.
                    if len(tool_start) > 2:
                        tool_extra = {k: v for k, v in tool_start.items() if k not in ("toolUseId", "name")}

            elif "messageStart" in chunk:
                role = chunk["messageStart"].get("role", "assistant")

            elif "messageStop" in chunk:
                stop_reason = chunk["messageStop"].get("stopReason", "end_turn")

            elif "metadata" in chunk:
                metadata = chunk["metadata"]
                usage = metadata.get("usage")
                metrics = metadata.get("metrics")

            elif "redactContent" in chunk:
                # The assistant side is rewritten here; the user's message is the agent's (it is in its history).
                redaction = chunk["redactContent"]
                assistant_redaction = redaction.get("redactAssistantContentMessage")
                if assistant_redaction is not None:
                    redacted_message = assistant_redaction
                user_redaction = redaction.get("redactUserContentMessage")
                if user_redaction:
                    redact_user = str(user_redaction)
        finished = True
    finally:
        if not finished:
            # Cancelled or failed mid-stream: let the provider release its connection now, not at garbage collection.
            aclose = getattr(iterator, "aclose", None)
            if aclose is not None:
                await aclose()

    if redacted_message is not None:
        content = [{"text": redacted_message}]
    elif has_tool_use and stop_reason == "end_turn":
        # Some providers say end_turn even when they ask for tools; the agent must still run them.
        stop_reason = "tool_use"
    return StreamResult(
        message={"role": role, "content": content},
        stop_reason=cast(StopReason, stop_reason),
        # Copied once per call (not per chunk) so a caller that accumulates into these dicts cannot change a
        # provider's, or a ScriptedModel's precomputed, metadata.
        usage=Usage(**usage) if usage else {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0},
        metrics=Metrics(**metrics) if metrics else {"latencyMs": 0},
        redact_user_message=redact_user,
    )
