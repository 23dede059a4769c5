"""Script entries compiled into the Converse events a `ScriptedModel` streams, computed once per turn."""

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

from .._json import ensure_json_serializable
from ..types.content import ContentBlock, Message, Messages
from ..types.streaming import StreamEvent, Usage
from ._script_position import TurnKey

# Shared, never-mutated event dicts: the stream parser only reads events, so one instance serves every call.
_MESSAGE_START: StreamEvent = {"messageStart": {"role": "assistant"}}
_TEXT_START: StreamEvent = {"contentBlockStart": {"start": {}}}
_BLOCK_STOP: StreamEvent = {"contentBlockStop": {}}
METRICS: dict[str, Any] = {"latencyMs": 0}


@dataclass(frozen=True, slots=True)
class ScriptedTurn:
    """One scripted assistant turn.

    Build turns with `text`, `tool_call` and `turn` rather than by hand.

    Attributes:
        content: The assistant's content blocks. A ``toolUse`` block with an empty ``toolUseId`` gets
            ``tooluse_<n>`` when the `ScriptedModel` is built.
        stop_reason: The stop reason the model reports for this turn.
        usage: Token usage to report, or None for a deterministic estimate.
        delay: Seconds to wait before the first event; 0 uses the model's delay.
    """

    content: list[ContentBlock]
    stop_reason: str = "end_turn"
    usage: Usage | None = None
    delay: float = 0.0


ReplyFunction: TypeAlias = Callable[[Messages], "ScriptedTurn | Message"]
"""A scripted turn computed when the model reaches it, from the conversation (e.g. to answer from tool results)."""


@dataclass(frozen=True, slots=True)
class CompiledTurn:
    """A turn turned into the events it streams, computed once when the model is built."""

    events: tuple[StreamEvent, ...] = ()
    metadata: StreamEvent | None = None  # None: estimated per call from the request
    output_tokens: int = 0
    delay: float = 0.0
    error: Exception | None = None
    key: TurnKey | None = None  # how the turn reads in the conversation; None for errors and reply functions
    reply: ReplyFunction | None = None


def _pieces(value: str, size: int | None) -> list[str]:
    if not size or len(value) <= size:
        return [value]
    return [value[i : i + size] for i in range(0, len(value), size)]


class Compiler:
    """Turns script entries into event lists, numbering tool uses across the whole script.

    A reply function's turn is compiled when it is played; its tool uses without an id get ``tooluse_<turn>_<n>``
    (turn and n 1-based), so they never clash with the script's own numbering.
    """

    def __init__(self, chunk_size: int | None, reply_turn: int | None = None) -> None:
        self.chunk_size = chunk_size
        self.tool_uses = 0
        self.reply_turn = reply_turn
        self.key: list[tuple[str | None, ...]] = []

    def compile(self, index: int, entry: Any) -> CompiledTurn:
        if isinstance(entry, Exception):
            return CompiledTurn(error=entry)
        if isinstance(entry, type) and issubclass(entry, BaseException):
            raise TypeError(
                f"ScriptedModel turn {index} is the exception class {entry.__name__}; pass an instance, e.g. "
                f"{entry.__name__}('...'), for the model to raise it at that turn."
            )
        if callable(entry) and not isinstance(entry, dict | ScriptedTurn):
            return CompiledTurn(reply=entry)
        if isinstance(entry, ScriptedTurn):
            scripted = entry
        elif isinstance(entry, dict) and "content" in entry:
            if entry.get("role") != "assistant":
                raise ValueError(
                    f"ScriptedModel turn {index} is a {entry.get('role')!r} message; scripted turns are what the "
                    "model says, so raw messages must have role 'assistant'."
                )
            has_tool = any("toolUse" in block for block in entry["content"])
            scripted = ScriptedTurn(list(entry["content"]), "tool_use" if has_tool else "end_turn")
        else:
            raise TypeError(
                f"ScriptedModel turn {index} is {entry!r}; use text('...'), tool_call('name', ...), turn(...), "
                "an assistant message dict, a function of the conversation returning one of those, or an "
                "exception instance to raise."
            )

        events: list[StreamEvent] = [_MESSAGE_START]
        chars = 0
        self.key = []
        for block in scripted.content:
            chars += self._block_events(index, block, events)
        events.append({"messageStop": {"stopReason": scripted.stop_reason}})
        metadata: StreamEvent | None = None
        if scripted.usage is not None:
            metadata = {"metadata": {"usage": scripted.usage, "metrics": METRICS}}
        return CompiledTurn(tuple(events), metadata, chars // 4, scripted.delay, key=tuple(self.key))

    def _block_events(self, index: int, block: ContentBlock, events: list[StreamEvent]) -> int:
        """Append the events that stream ``block``; return its character count for the usage estimate."""
        size = self.chunk_size
        if "text" in block:
            if block["text"]:
                self.key.append(("text", block["text"]))
            events.append(_TEXT_START)
            events.extend({"contentBlockDelta": {"delta": {"text": piece}}} for piece in _pieces(block["text"], size))
            events.append(_BLOCK_STOP)
            return len(block["text"])
        if "toolUse" in block:
            tool_use = block["toolUse"]
            self.tool_uses += 1
            tool_use_id = tool_use.get("toolUseId") or (
                f"tooluse_{self.tool_uses}"
                if self.reply_turn is None
                else f"tooluse_{self.reply_turn + 1}_{self.tool_uses}"
            )
            self.key.append(("toolUse", tool_use_id, tool_use["name"]))
            ensure_json_serializable(tool_use.get("input", {}), f"the input of tool use {tool_use_id!r}")
            encoded = json.dumps(tool_use.get("input", {}))
            events.append(
                {"contentBlockStart": {"start": {"toolUse": {"toolUseId": tool_use_id, "name": tool_use["name"]}}}}
            )
            events.extend(
                {"contentBlockDelta": {"delta": {"toolUse": {"input": piece}}}} for piece in _pieces(encoded, size)
            )
            events.append(_BLOCK_STOP)
            return len(encoded)
        if "reasoningContent" in block:
            reasoning = block["reasoningContent"]
            events.append(_TEXT_START)
            chars = 0
            if "reasoningText" in reasoning:
                reasoning_text = reasoning["reasoningText"]
                value = reasoning_text.get("text", "")
                self.key.append(("reasoning", value))
                chars = len(value)
                events.extend(
                    {"contentBlockDelta": {"delta": {"reasoningContent": {"text": piece}}}}
                    for piece in _pieces(value, size)
                )
                if "signature" in reasoning_text:
                    events.append(
                        {
                            "contentBlockDelta": {
                                "delta": {"reasoningContent": {"signature": reasoning_text["signature"]}}
                            }
                        }
                    )
            elif "redactedContent" in reasoning:
                self.key.append(("reasoning", None))
                events.append(
                    {
                        "contentBlockDelta": {
                            "delta": {"reasoningContent": {"redactedContent": reasoning["redactedContent"]}}
                        }
                    }
                )
            events.append(_BLOCK_STOP)
            return chars
        if "citationsContent" in block:
            citations = block["citationsContent"]
            value = "".join(part.get("text", "") for part in citations.get("content", []))
            self.key.append(("text", value))
            events.append(_TEXT_START)
            events.extend({"contentBlockDelta": {"delta": {"text": piece}}} for piece in _pieces(value, size))
            events.extend({"contentBlockDelta": {"delta": {"citation": c}}} for c in citations.get("citations", []))
            events.append(_BLOCK_STOP)
            return len(value)
        raise ValueError(
            f"ScriptedModel turn {index} has a {next(iter(block), 'empty')!r} block, which a model cannot stream; "
            "assistant turns may hold text, toolUse, reasoningContent and citationsContent blocks."
        )
