"""`ScriptedModel`: a deterministic model that replays scripted assistant turns.

It streams exactly the Bedrock Converse events a real provider would, so everything downstream of the model (the
stream parser, hooks, tools, sessions) runs for real in tests, demos and benchmarks, with no network.

```python
model = ScriptedModel([tool_call("get_weather", city="Paris"), text("It is sunny.")])
```

By default the turns are played in call order. With ``mode="conversation"`` the model reads its place in the script
from the conversation it is given, so a new agent per request, or a new process restoring a session, continues the
same script.
"""

import threading
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import anyio

from .._json import ensure_json_serializable
from ..types.content import ContentBlock, Message, Messages
from ..types.exceptions import StrandslikeError
from ..types.streaming import StreamEvent, Usage
from ..types.tools import ToolChoice, ToolSpec
from ._script_compiler import METRICS, Compiler, ReplyFunction, ScriptedTurn
from ._script_position import ScriptPosition
from .model import Model

if TYPE_CHECKING:
    from pydantic import BaseModel


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


ScriptMode: TypeAlias = Literal["sequence", "conversation"]


class ScriptExhaustedError(StrandslikeError, RuntimeError):
    """A `ScriptedModel` was called more times than it has turns."""

    code = "SCRIPT_EXHAUSTED"

    def __init__(self, turns: int, request_number: int, last_message: str, *, mode: ScriptMode = "sequence") -> None:
        self.turns = turns
        self.request_number = request_number
        used = (
            "the conversation already holds all of them"
            if mode == "conversation"
            else f"all were used, but request {request_number} was received"
        )
        super().__init__(
            f"ScriptedModel's script had {turns} turn{'' if turns == 1 else 's'} and {used} "
            f"(last message: {last_message}). "
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
    """A model that replays a fixed list of assistant turns deterministically.

    Each entry of ``turns`` is a `ScriptedTurn` (from `text`, `tool_call` or `turn`), a raw assistant `Message`
    dict, a reply function (called with the conversation when its turn comes, it returns one of those, e.g. a
    text that depends on the tool results), or an exception instance, which the model raises when it reaches that
    turn (to test error handling and retries). Every call is recorded in `requests`.

    Which turn a call plays depends on ``mode``:

    - ``"sequence"`` (the default): one turn per call, in order, counted by this model object.
    - ``"conversation"``: the turn after the last one the conversation already holds, read from the assistant
      messages it is given. A new `ScriptedModel` on a restored conversation (a new agent per request, a new
      process resuming a session) continues the same script where it stopped; giving the same conversation twice
      plays the same turn twice. Exception turns are refused in this mode: a failed call leaves no trace in the
      conversation, so the model could not tell it had raised already.

    All events are computed once, when the model is built, and the same dicts are yielded on every call, so
    consumers must treat stream events as read-only (the agent's parser does).

    Args:
        turns: The script, in call order.
        delay: Seconds to wait before each turn's first event, for turns without their own delay.
        chunk_size: Split text and tool input into deltas of at most this many characters, as a streaming
            provider would; None sends each block in one delta.
        model_id: Reported by `get_config`.
        mode: ``"sequence"`` or ``"conversation"`` (see above).

    Raises:
        ValueError: A raw message is not an assistant message, holds a block a model cannot stream, an exception
            turn is given with ``mode="conversation"``, ``mode`` is unknown, or ``chunk_size`` is below 1.
        TypeError: A turn has an unsupported type.
    """

    def __init__(
        self,
        turns: Sequence[ScriptedTurn | Message | Exception | ReplyFunction],
        *,
        delay: float = 0.0,
        chunk_size: int | None = None,
        model_id: str = "scripted",
        mode: ScriptMode = "sequence",
    ) -> None:
        if chunk_size is not None and chunk_size < 1:
            raise ValueError(f"chunk_size must be at least 1 or None, got {chunk_size!r}.")
        if mode not in ("sequence", "conversation"):
            raise ValueError(
                f"mode={mode!r} | a ScriptedModel plays its turns in 'sequence' (one per call) or from the "
                "'conversation' it is given."
            )
        compiler = Compiler(chunk_size)
        self._turns = [compiler.compile(index, entry) for index, entry in enumerate(turns)]
        self._chunk_size = chunk_size
        self._mode: ScriptMode = mode
        self._position: ScriptPosition | None = None
        if mode == "conversation":
            failing = [index for index, compiled in enumerate(self._turns) if compiled.error is not None]
            if failing:
                raise ValueError(
                    f"ScriptedModel turn {failing[0]} is an exception, which mode='conversation' cannot script: a "
                    "failed call leaves nothing in the conversation, so the model would raise it on every call. "
                    "Use the default mode='sequence' to script failures."
                )
            self._position = ScriptPosition([compiled.key for compiled in self._turns])
        self._delay = delay
        self._next = 0
        # Agents may share one model across threads (each `Agent.__call__` in a worker); the lock keeps the
        # request log and the turn counter in step.
        self._lock = threading.Lock()
        self._config: dict[str, Any] = {"model_id": model_id}
        self.requests: list[ScriptedRequest] = []

    @property
    def mode(self) -> ScriptMode:
        """How the next turn is chosen: ``"sequence"`` or ``"conversation"``."""
        return self._mode

    @property
    def calls(self) -> int:
        """The number of requests received so far (including one that found the script exhausted)."""
        return len(self.requests)

    @property
    def remaining(self) -> int:
        """The number of turns after the last one played (in conversation mode: after the last call's turn)."""
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
            ScriptExhaustedError: Every turn was already played (in conversation mode: the conversation holds
                every turn).
        """
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        request = ScriptedRequest(list(messages), tool_specs, system_prompt, kwargs)
        position = self._position
        with self._lock:
            self.requests.append(request)
            index = self._next if position is None else position.played(messages)
            if index < len(self._turns):
                self._next = index + 1
        if index >= len(self._turns):
            raise ScriptExhaustedError(len(self._turns), len(self.requests), _describe(messages), mode=self._mode)

        scripted = self._turns[index]
        if scripted.reply is not None:
            reply = scripted.reply
            scripted = Compiler(self._chunk_size, reply_turn=index).compile(index, reply(messages))
            if scripted.reply is not None:
                raise TypeError(
                    f"ScriptedModel turn {index}: the reply function {reply!r} returned another function; it must "
                    "return a turn, e.g. text('...'), tool_call('name', ...) or an assistant message dict."
                )
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
            yield {"metadata": {"usage": usage, "metrics": METRICS}}


__all__ = [
    "ReplyFunction",
    "ScriptExhaustedError",
    "ScriptMode",
    "ScriptedModel",
    "ScriptedRequest",
    "ScriptedTurn",
    "structured_output_call",
    "text",
    "tool_call",
    "turn",
]
