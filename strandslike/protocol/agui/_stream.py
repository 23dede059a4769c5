"""Agent and orchestrator stream events → AG-UI text, tool call, tool result and step events.

Text and tool calls come from the model's own stream (the raw ``{"event": chunk}`` events): a text block opens a
text message (ended with the model's message), a tool-use block becomes ``TOOL_CALL_START``/``ARGS``/``END`` with
the tool-use id as ``toolCallId``. A resumed run does not call the model for the paused batch, so tool calls are
never re-announced; their results are reported against the original ids. Results are reported from the results
message once the batch completes (``TOOL_CALL_RESULT``, one per call): that is the content the model reads, after
every hook (a cancelled call's reason, the note that edited input ran), and the same as in ``MESSAGES_SNAPSHOT``.
A batch paused by interrupts reports its results in the run that completes it. Each node of an orchestration is a
step, and its messages carry the node as ``name``.
"""

from dataclasses import dataclass, field
from typing import Any

from ag_ui.core import (
    BaseEvent,
    StepFinishedEvent,
    StepStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

from ...agent.agent import Agent
from ...types.tools import ToolResult
from ._messages import message_id, message_offset, result_text, tool_message_id
from ._target import Scope, Target


@dataclass
class _Turn:
    """The model turn an agent is streaming."""

    message_id: str
    text_open: bool = False
    texts: int = 0  # text blocks seen in this turn
    block_has_text: bool = False
    tool_id: str = ""
    tool_name: str = ""
    tool_open: bool = False
    tool_pending: list[str] = field(default_factory=list)  # args that arrived before the call's id and name


class StreamTranslator:
    """Translate the events of one run; call `close` before the run's final events."""

    def __init__(self, target: Target) -> None:
        """Prepare to translate a run of ``target``; build it before the run starts.

        Events reach the translator after the agent produced them, possibly after the agent went on, so message
        ids cannot be read from the live conversation: each agent's next message index is taken now and advanced
        by the ``{"message": ...}`` events, which arrive in the order the messages were added.
        """
        self._target = target
        self._turns: dict[str, _Turn] = {}
        self._steps: list[str] = []
        self._next_index = {
            scope.prefix: message_offset(agent) + len(agent.messages) for scope, agent in target.agents()
        }

    def translate(self, event: dict[str, Any], scope: Scope | None = None) -> list[BaseEvent]:
        """Return the AG-UI events for one stream event of ``scope`` (the target itself by default)."""
        scope = scope or self._target.root
        kind = event.get("type")
        if isinstance(kind, str) and kind.startswith("multiagent_"):
            return self._multiagent(kind, event, scope)
        if not isinstance(scope.runnable, Agent):
            return []
        if "event" in event:
            return self._chunk(event["event"], scope)
        if "message" in event:
            return self._message(event["message"], scope)
        return []

    def close(self) -> list[BaseEvent]:
        """End whatever is still open (a turn cut short, a step whose node never reported back)."""
        events: list[BaseEvent] = []
        for turn in self._turns.values():
            events.extend(_end_turn(turn))
        self._turns.clear()
        events.extend(StepFinishedEvent(step_name=step) for step in reversed(self._steps))
        self._steps.clear()
        return events

    # -- orchestrators --------------------------------------------------------------------------------------------

    def _multiagent(self, kind: str, event: dict[str, Any], scope: Scope) -> list[BaseEvent]:
        node_id = event.get("node_id")
        if not isinstance(node_id, str):
            return []
        step = f"{scope.prefix}{node_id}"
        if kind == "multiagent_node_start" and step not in self._steps:
            self._steps.append(step)
            return [StepStartedEvent(step_name=step)]
        if kind == "multiagent_node_stop" and step in self._steps:
            self._steps.remove(step)
            child = scope.child(node_id)
            closing = (
                _end_turn(self._turns.pop(child.prefix)) if child is not None and child.prefix in self._turns else []
            )
            return [*closing, StepFinishedEvent(step_name=step)]
        if kind == "multiagent_node_stream" and isinstance(event.get("event"), dict):
            child = scope.child(node_id)
            return self.translate(event["event"], child) if child is not None else []
        return []

    # -- one agent's model stream ---------------------------------------------------------------------------------

    def _new_turn(self, scope: Scope) -> _Turn:
        turn = self._turns[scope.prefix] = _Turn(message_id(scope.prefix, self._next_index.get(scope.prefix, 0)))
        return turn

    def _chunk(self, chunk: dict[str, Any], scope: Scope) -> list[BaseEvent]:
        turn = self._turns.get(scope.prefix)
        if "messageStart" in chunk:
            self._new_turn(scope)
            return _end_turn(turn) if turn is not None else []
        if turn is None:
            if not any(key in chunk for key in ("contentBlockStart", "contentBlockDelta")):
                return []  # metadata after the message ended, or a stream without messageStart
            turn = self._new_turn(scope)
        events: list[BaseEvent] = []
        if "contentBlockDelta" in chunk:
            delta = chunk["contentBlockDelta"].get("delta", {})
            if "text" in delta:
                events.extend(_text(turn, scope, delta["text"]))
            elif "toolUse" in delta:
                events.extend(_tool_delta(turn, delta["toolUse"]))
        elif "contentBlockStart" in chunk:
            start = chunk["contentBlockStart"].get("start") or {}
            turn.block_has_text = False
            if "toolUse" in start:
                turn.tool_id = start["toolUse"].get("toolUseId", "")
                turn.tool_name = start["toolUse"].get("name", "")
                turn.tool_pending = []
                events.extend(_tool_start(turn))
        elif "contentBlockStop" in chunk:
            turn.block_has_text = False
            if turn.tool_open:
                turn.tool_open = False
                events.append(ToolCallEndEvent(tool_call_id=turn.tool_id))
            turn.tool_id = turn.tool_name = ""
        elif "messageStop" in chunk:
            events.extend(_end_turn(self._turns.pop(scope.prefix)))
        return events

    # -- results and messages -------------------------------------------------------------------------------------

    def _result(self, result: ToolResult, scope: Scope) -> BaseEvent:
        return ToolCallResultEvent(
            message_id=tool_message_id(scope.prefix, result["toolUseId"]),
            tool_call_id=result["toolUseId"],
            content=result_text(result),
            role="tool",
        )

    def _message(self, message: dict[str, Any], scope: Scope) -> list[BaseEvent]:
        self._next_index[scope.prefix] = self._next_index.get(scope.prefix, 0) + 1
        if message.get("role") == "assistant":
            turn = self._turns.pop(scope.prefix, None)
            return _end_turn(turn) if turn is not None else []
        return [
            self._result(block["toolResult"], scope) for block in message.get("content", []) if "toolResult" in block
        ]


def _text(turn: _Turn, scope: Scope, text: str) -> list[BaseEvent]:
    events: list[BaseEvent] = []
    if not turn.text_open:
        turn.text_open = True
        events.append(TextMessageStartEvent(message_id=turn.message_id, role="assistant", name=scope.name))
    if not turn.block_has_text:
        turn.block_has_text = True
        turn.texts += 1
        if turn.texts > 1:  # the snapshot joins a message's text blocks with a newline; stream the same
            text = "\n" + text
    events.append(TextMessageContentEvent(message_id=turn.message_id, delta=text))
    return events


def _tool_start(turn: _Turn) -> list[BaseEvent]:
    # Some providers send the id and name with the first input fragment instead of at block start.
    if turn.tool_open or not (turn.tool_id and turn.tool_name):
        return []
    turn.tool_open = True
    events: list[BaseEvent] = [
        ToolCallStartEvent(tool_call_id=turn.tool_id, tool_call_name=turn.tool_name, parent_message_id=turn.message_id)
    ]
    events.extend(ToolCallArgsEvent(tool_call_id=turn.tool_id, delta=piece) for piece in turn.tool_pending)
    turn.tool_pending = []
    return events


def _tool_delta(turn: _Turn, delta: dict[str, Any]) -> list[BaseEvent]:
    turn.tool_id = delta.get("toolUseId", turn.tool_id)
    turn.tool_name = delta.get("name", turn.tool_name)
    piece = delta.get("input", "")
    if not turn.tool_open:
        if piece:
            turn.tool_pending.append(piece)
        return _tool_start(turn)
    return [ToolCallArgsEvent(tool_call_id=turn.tool_id, delta=piece)] if piece else []


def _end_turn(turn: _Turn) -> list[BaseEvent]:
    events: list[BaseEvent] = []
    if turn.tool_open:
        turn.tool_open = False
        events.append(ToolCallEndEvent(tool_call_id=turn.tool_id))
    if turn.text_open:
        turn.text_open = False
        events.append(TextMessageEndEvent(message_id=turn.message_id))
    return events
