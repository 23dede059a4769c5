"""`ScriptedModel`: a deterministic model that replays scripted assistant turns.

It streams exactly the Bedrock Converse events a real provider would, so everything downstream of the model (the
stream parser, hooks, tools, sessions) runs for real in tests, demos and benchmarks, with no network.

```python
model = ScriptedModel([tool_call("get_weather", city="Paris"), text("It is sunny.")])
```
"""

import json
import threading
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from .._json import ensure_json_serializable
from ..types.content import ContentBlock, Message, Messages
from ..types.exceptions import StrandslikeError
from ..types.streaming import StreamEvent, Usage
from ..types.tools import ToolChoice, ToolSpec
from .model import Model

if TYPE_CHECKING:
    from pydantic import BaseModel

# Shared, never-mutated event dicts: the stream parser only reads events, so one instance serves every call.
_MESSAGE_START: StreamEvent = {"messageStart": {"role": "assistant"}}
_TEXT_START: StreamEvent = {"contentBlockStart": {"start": {}}}
_BLOCK_STOP: StreamEvent = {"contentBlockStop": {}}
_METRICS: dict[str, Any] = {"latencyMs": 0}


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


@dataclass(frozen=True, slots=True)
class ScriptedRequest:
    """What the agent sent to a `ScriptedModel` in one call.

    Attributes:
        messages: A shallow copy of the conversation as sent (the message dicts are the caller's own).
        tool_specs: The tool specs sent, or None when the agent has no tools.
        system_prompt: The system prompt sent.
        kwargs: Every other keyword the agent passed (``tool_choice`` when given, ``invocation_state``, ...).
    """

    messages: list[Message]
    tool_specs: list[ToolSpec] | None
    system_prompt: str | None
    kwargs: dict[str, Any] = field(default_factory=dict)


class ScriptExhaustedError(StrandslikeError, RuntimeError):
    """A `ScriptedModel` was called more times than it has turns."""

    code = "SCRIPT_EXHAUSTED"

    def __init__(self, turns: int, request_number: int, last_message: str) -> None:
        self.turns = turns
        self.request_number = request_number
        super().__init__(
            f"ScriptedModel's script had {turns} turn{'' if turns == 1 else 's'} and all were used, but request "
            f"{request_number} was received (last message: {last_message}). "
            "Add a turn for it to ScriptedModel([...]), e.g. text('...') or tool_call('name', ...)."
        )


def text(content: str, *, stop_reason: str = "end_turn", usage: Usage | None = None, delay: float = 0) -> ScriptedTurn:
    """Script a turn in which the model answers with text.

    Args:
        content: The text of the answer.
        stop_reason: The stop reason to report, e.g. ``"max_tokens"`` to test truncation.
        usage: Token usage to report, or None for a deterministic estimate.
        delay: Seconds to wait before answering; 0 uses the model's delay.

    Returns:
        A one-block `ScriptedTurn`.
    """
    return ScriptedTurn([{"text": content}], stop_reason, usage, delay)


def tool_call(name: str, /, *, tool_use_id: str | None = None, delay: float = 0, **input: Any) -> ScriptedTurn:
    """Script a turn in which the model calls one tool.

    The keyword arguments form the tool's input: ``tool_call("search", query="x")``. For input keys that clash
    with this function's own parameters (``input``, ``tool_use_id``, ``delay``), pass the whole input as a dict:
    ``tool_call("run", input={"delay": 5})``.

    Args:
        name: The tool to call.
        tool_use_id: The tool use id; None assigns ``tooluse_<n>``, where n is the 1-based position of this tool
            use among all tool uses of the script.
        delay: Seconds to wait before answering; 0 uses the model's delay.
        **input: The tool input, or ``input=<dict>`` holding all of it.

    Returns:
        A one-block `ScriptedTurn` with stop reason ``tool_use``.

    Raises:
        TypeError: ``input=<dict>`` was combined with other input keywords, or the input is not JSON-serializable.
    """
    tool_input: dict[str, Any] = input
    if isinstance(input.get("input"), dict):
        if len(input) > 1:
            raise TypeError(
                f"tool_call({name!r}) got input={input['input']!r} and other input keywords {sorted(input)[:5]}; "
                "pass the whole input one way: tool_call(name, input={...}) or tool_call(name, key=value, ...)."
            )
        tool_input = input["input"]
    ensure_json_serializable(tool_input, f"the input of tool_call({name!r})")
    return ScriptedTurn(
        [{"toolUse": {"toolUseId": tool_use_id or "", "name": name, "input": tool_input}}], "tool_use", None, delay
    )


def structured_output_call(
    output_model: "type[BaseModel] | str", /, *, tool_use_id: str | None = None, delay: float = 0, **fields: Any
) -> ScriptedTurn:
    """Script a turn in which the model hands over structured output by calling the structured output tool.

    ``structured_output_call(Person, name="Ada", age=36)`` calls the tool named after ``Person`` with those
    fields, as a real model does for ``agent(prompt, structured_output_model=Person)`` and for
    `Model.structured_output`. Give fields that do not validate to script a validation failure.

    Args:
        output_model: The pydantic model (or the tool name) the structured output is for.
        tool_use_id: The tool use id; None numbers it like `tool_call` does.
        delay: Seconds to wait before answering; 0 uses the model's delay.
        **fields: The tool input, or ``input=<dict>`` holding all of it.

    Returns:
        A one-block `ScriptedTurn` with stop reason ``tool_use``.
    """
    if isinstance(output_model, str):
        name = output_model
    else:
        from ..tools.structured_output.structured_output_utils import convert_pydantic_to_tool_spec

        name = convert_pydantic_to_tool_spec(output_model)["name"]
    return tool_call(name, tool_use_id=tool_use_id, delay=delay, **fields)


def turn(
    *blocks: ScriptedTurn | ContentBlock,
    stop_reason: str | None = None,
    usage: Usage | None = None,
    delay: float = 0,
) -> ScriptedTurn:
    """Combine several blocks into one assistant turn.

    ```python
    turn(text("checking"), tool_call("a", x=1), tool_call("b", y=2))
    ```

    Args:
        *blocks: Turns from `text`/`tool_call` (their content is concatenated) or raw content blocks such as
            ``{"reasoningContent": {"reasoningText": {"text": "..."}}}``.
        stop_reason: The stop reason to report; None means ``tool_use`` if any block calls a tool, else the last
            helper turn's stop reason, else ``end_turn``.
        usage: Token usage to report, or None for a deterministic estimate.
        delay: Seconds to wait before answering; 0 uses the longest delay among the helper turns.

    Returns:
        The combined `ScriptedTurn`.
    """
    content: list[ContentBlock] = []
    inferred = "end_turn"
    part_delay = 0.0
    for block in blocks:
        if isinstance(block, ScriptedTurn):
            content.extend(block.content)
            inferred = block.stop_reason
            part_delay = max(part_delay, block.delay)
        else:
            content.append(block)
    if stop_reason is None:
        stop_reason = "tool_use" if any("toolUse" in block for block in content) else inferred
    return ScriptedTurn(content, stop_reason, usage, delay or part_delay)


@dataclass(frozen=True, slots=True)
class _CompiledTurn:
    """A turn turned into the events it streams, computed once when the model is built."""

    events: tuple[StreamEvent, ...] = ()
    metadata: StreamEvent | None = None  # None: estimated per call from the request
    output_tokens: int = 0
    delay: float = 0.0
    error: Exception | None = None


def _pieces(value: str, size: int | None) -> list[str]:
    if not size or len(value) <= size:
        return [value]
    return [value[i : i + size] for i in range(0, len(value), size)]


class _Compiler:
    """Turns script entries into event lists, numbering tool uses across the whole script."""

    def __init__(self, chunk_size: int | None) -> None:
        self.chunk_size = chunk_size
        self.tool_uses = 0

    def compile(self, index: int, entry: ScriptedTurn | Message | Exception) -> _CompiledTurn:
        if isinstance(entry, Exception):
            return _CompiledTurn(error=entry)
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
                "an assistant message dict, or an exception instance to raise."
            )

        events: list[StreamEvent] = [_MESSAGE_START]
        chars = 0
        for block in scripted.content:
            chars += self._block_events(index, block, events)
        events.append({"messageStop": {"stopReason": scripted.stop_reason}})
        metadata: StreamEvent | None = None
        if scripted.usage is not None:
            metadata = {"metadata": {"usage": scripted.usage, "metrics": _METRICS}}
        return _CompiledTurn(tuple(events), metadata, chars // 4, scripted.delay)

    def _block_events(self, index: int, block: ContentBlock, events: list[StreamEvent]) -> int:
        """Append the events that stream ``block``; return its character count for the usage estimate."""
        size = self.chunk_size
        if "text" in block:
            events.append(_TEXT_START)
            events.extend({"contentBlockDelta": {"delta": {"text": piece}}} for piece in _pieces(block["text"], size))
            events.append(_BLOCK_STOP)
            return len(block["text"])
        if "toolUse" in block:
            tool_use = block["toolUse"]
            self.tool_uses += 1
            tool_use_id = tool_use.get("toolUseId") or f"tooluse_{self.tool_uses}"
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
            events.append(_TEXT_START)
            events.extend({"contentBlockDelta": {"delta": {"text": piece}}} for piece in _pieces(value, size))
            events.extend({"contentBlockDelta": {"delta": {"citation": c}}} for c in citations.get("citations", []))
            events.append(_BLOCK_STOP)
            return len(value)
        raise ValueError(
            f"ScriptedModel turn {index} has a {next(iter(block), 'empty')!r} block, which a model cannot stream; "
            "assistant turns may hold text, toolUse, reasoningContent and citationsContent blocks."
        )


def _describe(messages: Messages) -> str:
    """Summarise the last user message briefly, for error messages."""
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        parts: list[str] = []
        for block in message.get("content", []):
            if "text" in block:
                value = block["text"]
                parts.append(repr(value if len(value) <= 80 else value[:77] + "..."))
            elif "toolResult" in block:
                result = block["toolResult"]
                parts.append(f"toolResult(toolUseId={result.get('toolUseId')!r}, status={result.get('status')!r})")
            else:
                parts.append(f"<{next(iter(block), 'empty')}>")
        return "user: " + (", ".join(parts) or "<no content>")
    return "no user message"


class ScriptedModel(Model):
    """A model that replays a fixed list of assistant turns, one per call, deterministically.

    Each entry of ``turns`` is a `ScriptedTurn` (from `text`, `tool_call` or `turn`), a raw assistant `Message`
    dict, or an exception instance, which the model raises when it reaches that turn (to test error handling
    and retries). Every call is recorded in `requests`.

    All events are computed once, when the model is built, and the same dicts are yielded on every call, so
    consumers must treat stream events as read-only (the agent's parser does).

    Args:
        turns: The script, in call order.
        delay: Seconds to wait before each turn's first event, for turns without their own delay.
        chunk_size: Split text and tool input into deltas of at most this many characters, as a streaming
            provider would; None sends each block in one delta.
        model_id: Reported by `get_config`.

    Raises:
        ValueError: A raw message is not an assistant message, holds a block a model cannot stream, or
            ``chunk_size`` is below 1.
        TypeError: A turn has an unsupported type.
    """

    def __init__(
        self,
        turns: Sequence[ScriptedTurn | Message | Exception],
        *,
        delay: float = 0.0,
        chunk_size: int | None = None,
        model_id: str = "scripted",
    ) -> None:
        if chunk_size is not None and chunk_size < 1:
            raise ValueError(f"chunk_size must be at least 1 or None, got {chunk_size!r}.")
        compiler = _Compiler(chunk_size)
        self._turns = [compiler.compile(index, entry) for index, entry in enumerate(turns)]
        self._delay = delay
        self._next = 0
        # Agents may share one model across threads (each `Agent.__call__` in a worker); the lock keeps the
        # request log and the turn counter in step.
        self._lock = threading.Lock()
        self._config: dict[str, Any] = {"model_id": model_id}
        self.requests: list[ScriptedRequest] = []

    @property
    def calls(self) -> int:
        """The number of requests received so far (including one that found the script exhausted)."""
        return len(self.requests)

    @property
    def remaining(self) -> int:
        """The number of turns not yet played."""
        return len(self._turns) - self._next

    def update_config(self, **model_config: Any) -> None:
        """Merge ``model_config`` into the configuration.

        Args:
            **model_config: Settings to store; they do not change the script.
        """
        self._config.update(model_config)

    def get_config(self) -> dict[str, Any]:
        """Return a copy of the configuration (``model_id`` plus anything set by `update_config`)."""
        return dict(self._config)

    async def stream(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        *,
        tool_choice: ToolChoice | None = None,
        **kwargs: Any,
    ) -> AsyncGenerator[StreamEvent, None]:
        """Record the request and stream the next scripted turn.

        Args:
            messages: The conversation; only a shallow copy of the list is kept.
            tool_specs: The tool specs, recorded as given.
            system_prompt: The system prompt, recorded as given.
            tool_choice: Recorded in the request's ``kwargs`` when not None.
            **kwargs: Recorded in the request's ``kwargs``.

        Yields:
            The turn's Bedrock Converse events, ending with ``messageStop`` and ``metadata``.

        Raises:
            ScriptExhaustedError: Every turn was already played.
        """
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        request = ScriptedRequest(list(messages), tool_specs, system_prompt, kwargs)
        with self._lock:
            self.requests.append(request)
            index = self._next
            if index < len(self._turns):
                self._next = index + 1
        if index >= len(self._turns):
            raise ScriptExhaustedError(len(self._turns), len(self.requests), _describe(messages))

        scripted = self._turns[index]
        delay = scripted.delay or self._delay
        if delay > 0:
            await anyio.sleep(delay)
        if scripted.error is not None:
            raise scripted.error
        for event in scripted.events:
            yield event
        if scripted.metadata is not None:
            yield scripted.metadata
        else:
            # A constant-time estimate: walking the history to count characters would make long runs quadratic.
            input_tokens = len(messages)
            usage: Usage = {
                "inputTokens": input_tokens,
                "outputTokens": scripted.output_tokens,
                "totalTokens": input_tokens + scripted.output_tokens,
            }
            yield {"metadata": {"usage": usage, "metrics": _METRICS}}


__all__ = [
    "ScriptExhaustedError",
    "ScriptedModel",
    "ScriptedRequest",
    "ScriptedTurn",
    "structured_output_call",
    "text",
    "tool_call",
    "turn",
]
