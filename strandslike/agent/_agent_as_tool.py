"""An agent used as another agent's tool (``agent.as_tool()``), with its interrupts relayed to the caller.

The inner agent's interrupts reach the outer caller under ids namespaced by the tool call
(``v1:agent_as_tool:<tool use id>:<inner id>``, Strands' format). Unless the tool preserves the inner agent's
context, the inner agent's interrupted turn (messages, state, interrupt state) is kept in the outer agent's
interrupt state, which sessions persist: a brand-new process with a fresh inner agent resumes it. (Strands' own
version of that restore is broken, harness-sdk#3076; this one is tested across processes.)
"""

import copy
import json
import logging
import threading
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ..hooks.events import AfterToolsEvent, BeforeToolsEvent
from ..hooks.registry import HookOrder, HookRegistry
from ..interrupt._errors import InterruptError
from ..interrupt._interrupt import Interrupt
from ..interrupt._state import _InterruptState, call_fingerprint
from ..types._events import ToolInterruptEvent, ToolStreamEvent
from ..types.content import ContentBlock
from ..types.events import ToolResultEvent
from ..types.exceptions import SessionException
from ..types.interrupt import InterruptResponseContent
from ..types.tools import AgentTool, ToolGenerator, ToolResult, ToolResultContent, ToolSpec, ToolUse
from .agent_result import AgentResult
from .state import AgentState

if TYPE_CHECKING:
    from .agent import Agent

logger = logging.getLogger(__name__)

DELEGATION_DESCRIPTION_SUFFIX = (
    " Calling this tool will return its response directly to the user as the final answer."
    " It should be the only tool called in the turn."
)
_INTERRUPTED_TURNS_KEY = "sub_agent_interrupted_turns"
_DELEGATION_MIXED = (
    "This tool call was not executed. A delegation tool must be the only tool called in a turn. Retry with a "
    "single delegation tool call or use only non-delegation tools."
)


class AgentAsToolStreamEvent(ToolStreamEvent):
    """An event of the inner agent, streamed while it runs as a tool; ``agent_as_tool`` is the tool."""

    def __init__(self, tool_use: ToolUse, tool_stream_data: Any, agent_as_tool: "_AgentAsTool") -> None:
        """Wrap one event of the inner agent."""
        super().__init__(tool_use, tool_stream_data)
        self._agent_as_tool = agent_as_tool

    @property
    def agent_as_tool(self) -> "_AgentAsTool":
        """The tool that produced the event."""
        return self._agent_as_tool


class _AgentAsTool(AgentTool):
    """Exposes an agent as a tool taking one ``input`` string (see `Agent.as_tool`)."""

    def __init__(
        self,
        agent: "Agent",
        *,
        name: str,
        description: str | None = None,
        preserve_context: bool = False,
        delegate: bool = False,
    ) -> None:
        super().__init__()
        self._agent = agent
        self._tool_name = name
        self._delegate = delegate
        self._description = (
            description or agent.description or f"Use the {name} agent as a tool by providing a natural language input"
        )
        if delegate:
            self._description += DELEGATION_DESCRIPTION_SUFFIX
        self._preserve_context = preserve_context
        self._initial_messages: Any = []
        self._initial_state: dict[str, Any] = {}
        # A thread lock, not an anyio one: blocking calls may run the agent in different event loops.
        self._lock = threading.Lock()
        if not preserve_context:
            if getattr(agent, "session_manager", None) is not None:
                raise ValueError(
                    "preserve_context=False cannot be used with an agent that has a session manager. "
                    "The session manager persists conversation history externally, which conflicts with "
                    "resetting the agent's state between invocations."
                )
            self._initial_messages = copy.deepcopy(agent.messages)
            self._initial_state = agent.state.get()

    @property
    def agent(self) -> "Agent":
        """The wrapped agent."""
        return self._agent

    @property
    def delegate(self) -> bool:
        """Whether the tool's result ends the caller's turn as its final answer."""
        return self._delegate

    @property
    def tool_name(self) -> str:
        """The tool name."""
        return self._tool_name

    @property
    def tool_spec(self) -> ToolSpec:
        """One required string parameter, ``input``."""
        return {
            "name": self._tool_name,
            "description": self._description,
            "inputSchema": {
                "json": {
                    "type": "object",
                    "properties": {
                        "input": {"type": "string", "description": "The input to send to the agent tool."},
                    },
                    "required": ["input"],
                }
            },
        }

    @property
    def tool_type(self) -> str:
        """Always ``"agent"``."""
        return "agent"

    def get_display_properties(self) -> dict[str, str]:
        """Return the base properties plus the agent's name."""
        return {**super().get_display_properties(), "Agent": getattr(self._agent, "name", "unknown")}

    async def stream(self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any) -> ToolGenerator:
        """Run the inner agent on the tool input (or resume it), relaying its events, result and interrupts.

        Args:
            tool_use: The tool use; its ``input`` is ``{"input": "<prompt>"}`` (a bare string is accepted too).
            invocation_state: The caller's invocation state; its ``agent`` is the outer agent.
            **kwargs: Reserved for future arguments.

        Yields:
            `AgentAsToolStreamEvent` s, then a `ToolResultEvent`, or a `ToolInterruptEvent` when the inner agent
            is interrupted.
        """
        tool_input = tool_use["input"]
        prompt: Any = tool_input.get("input", "") if isinstance(tool_input, dict) else str(tool_input)
        tool_use_id = tool_use["toolUseId"]
        parent = invocation_state.get("agent")
        prefix = f"v1:agent_as_tool:{quote(tool_use_id, safe='')}:"
        if not self._lock.acquire(blocking=False):
            yield ToolResultEvent(_error(tool_use_id, f"Agent '{self._tool_name}' is already processing a request"))
            return
        try:
            resumed = self._resume_from_interrupt(parent, tool_use, prefix) if parent is not None else None
            if isinstance(resumed, ToolResultEvent):
                yield resumed
                return
            if resumed is not None:
                prompt = resumed
            elif not self._preserve_context:
                self._reset()
            result: AgentResult | None = None
            async for event in self._agent.stream_async(prompt):
                if "result" in event:
                    result = event["result"]
                else:
                    yield AgentAsToolStreamEvent(tool_use, event, self)
            if result is None:
                yield ToolResultEvent(_error(tool_use_id, "Agent did not produce a result"))
            elif result.stop_reason == "interrupt" and result.interrupts:
                yield self._relay(parent, tool_use, prefix, list(result.interrupts))
            elif result.stop_reason == "cancelled":
                yield ToolResultEvent(_error(tool_use_id, f"Agent '{self._tool_name}' cancelled"))
            else:
                yield ToolResultEvent(self._result(tool_use_id, result))
        except InterruptError:
            raise  # an answer the inner agent refused: the caller stays interrupted and resumable
        except Exception as exc:
            logger.warning(
                "tool_name=<%s>, tool_use_id=<%s> | agent invocation failed: %s", self._tool_name, tool_use_id, exc
            )
            yield ToolResultEvent(_error(tool_use_id, f"Agent error: {exc}"))
        finally:
            self._lock.release()

    def _result(self, tool_use_id: str, result: AgentResult) -> ToolResult:
        if result.structured_output:
            dump = getattr(result.structured_output, "model_dump", None)
            value = dump(mode="json") if callable(dump) else result.structured_output
            return {"toolUseId": tool_use_id, "status": "success", "content": [{"json": value}]}
        if not self._delegate:
            return {"toolUseId": tool_use_id, "status": "success", "content": [{"text": str(result)}]}
        content: list[ToolResultContent] = []
        for block in result.message.get("content", []):
            if "text" in block:
                content.append({"text": block["text"]})
            elif "json" in block:
                content.append({"json": block["json"]})  # type: ignore[typeddict-item]
            elif "citationsContent" in block:
                cited = [item["text"] for item in block["citationsContent"].get("content", []) if "text" in item]
                if cited:
                    content.append({"text": "\n".join(cited)})
        if not content:
            content = [{"text": str(result).rstrip("\n")}]
        return {"toolUseId": tool_use_id, "status": "success", "content": content}

    def _reset(self) -> None:
        """Put the inner agent back as it was when the tool was made (fresh conversation, state and interrupts)."""
        self._agent.messages = copy.deepcopy(self._initial_messages)
        self._agent.state = AgentState(copy.deepcopy(self._initial_state))
        self._agent._interrupt_state = _InterruptState()

    def _relay(self, parent: Any, tool_use: ToolUse, prefix: str, interrupts: list[Interrupt]) -> ToolInterruptEvent:
        """Report the inner agent's interrupts to the caller, keeping its interrupted turn for the resume."""
        if parent is None:
            return ToolInterruptEvent(tool_use, interrupts)
        self._store_interrupted_turn(parent, tool_use["toolUseId"])
        fingerprint = call_fingerprint(tool_use["name"], tool_use["input"])
        relayed = []
        for inner in interrupts:
            outer = Interrupt(
                f"{prefix}{inner.id}",
                inner.name,
                inner.reason,
                message=inner.message,
                response_schema=inner.response_schema,
                expires_at=inner.expires_at,
                tool_use_id=tool_use["toolUseId"],  # the call the caller sees, so clients can show it
                metadata=inner.metadata,
                kind=inner.kind,
                rich=inner.rich,
            )
            outer.fingerprint = fingerprint
            outer.source = f"agent tool {self._tool_name} ({inner.source or inner.name})"
            outer.session_id = getattr(getattr(parent, "session_manager", None), "session_id", None)
            relayed.append(outer)
        return ToolInterruptEvent(tool_use, relayed)

    def _store_interrupted_turn(self, parent: Any, tool_use_id: str) -> None:
        """Keep the inner agent's interrupted turn in the caller's interrupt state, which sessions persist."""
        if self._preserve_context:
            if getattr(self._agent, "session_manager", None) is None:
                logger.warning(
                    "tool_name=<%s>, tool_use_id=<%s> | interrupted sub-agent has preserve_context=True and no "
                    "session manager, so its interrupt cannot be resumed after a restart",
                    self._tool_name,
                    tool_use_id,
                )
            return
        agent = self._agent
        turn = {
            "messages": copy.deepcopy(agent.messages),
            "state": agent.state.get(),
            "interrupt_state": agent._interrupt_state.to_dict(),
            "model_state": copy.deepcopy(agent._model_state),
        }
        state: _InterruptState = parent._interrupt_state
        turns = dict(state.context.get(_INTERRUPTED_TURNS_KEY) or {})
        turns[tool_use_id] = json.loads(json.dumps(turn, default=str))  # detached, and as a session reads it back
        state.set_context(_INTERRUPTED_TURNS_KEY, turns)

    def _resume_from_interrupt(
        self, parent: Any, tool_use: ToolUse, prefix: str
    ) -> list[InterruptResponseContent] | ToolResultEvent | None:
        """Restore the inner agent's interrupted turn and map the caller's answers back to the inner interrupt ids.

        Returns the answers to resume the inner agent with; an error result when the turn cannot be resumed; or
        None when this call is not a resume (or restarts the call from the start, with its possibly edited input).
        """
        state: _InterruptState | None = getattr(parent, "_interrupt_state", None)
        if state is None or not state.activated:
            return None
        mine = [interrupt for key, interrupt in state.interrupts.items() if key.startswith(prefix)]
        if not mine or any(interrupt.action == "restart" for interrupt in mine):
            return None
        tool_use_id = tool_use["toolUseId"]
        turn = (state.context.get(_INTERRUPTED_TURNS_KEY) or {}).get(tool_use_id)
        if turn is not None:
            try:
                self._load_turn(turn)
            except (KeyError, TypeError, ValueError, SessionException) as error:
                logger.error(
                    "tool_name=<%s>, tool_use_id=<%s> | failed to restore interrupted sub-agent turn: %s",
                    self._tool_name,
                    tool_use_id,
                    error,
                )
        if not self._agent._interrupt_state.activated:
            return ToolResultEvent(
                _error(
                    tool_use_id,
                    f"Agent '{self._tool_name}' did NOT run and the human's response was NOT applied: its "
                    "interrupted turn is not available. Do not report the requested action as completed; tell "
                    "the user it failed and ask them to respond again.",
                )
            )
        return [
            {"interruptResponse": {"interruptId": interrupt.id[len(prefix) :], "response": interrupt.response}}
            for interrupt in mine
            if interrupt.answered
        ]

    def _load_turn(self, turn: dict[str, Any]) -> None:
        agent = self._agent
        interrupt_state = _InterruptState.from_dict(turn["interrupt_state"])
        messages = copy.deepcopy(turn["messages"])
        state = AgentState(turn["state"])
        agent.messages, agent.state, agent._interrupt_state = messages, state, interrupt_state
        agent._model_state = copy.deepcopy(turn.get("model_state") or {})


def _error(tool_use_id: str, text: str) -> ToolResult:
    return {"toolUseId": tool_use_id, "status": "error", "content": [{"text": text}]}


class _Delegation:
    """Strands' delegation rules for ``as_tool(delegate=True)``: alone in its turn, and its answer ends the turn."""

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeToolsEvent, self._before_tools)
        registry.add_callback(AfterToolsEvent, self._after_tools, order=HookOrder.SDK_LAST)

    @staticmethod
    def _delegates(agent: Any, names: list[str]) -> list[str]:
        registry = agent.tool_registry.registry
        return [name for name in names if isinstance(registry.get(name), _AgentAsTool) and registry[name].delegate]

    def _before_tools(self, event: BeforeToolsEvent) -> None:
        names = [block["toolUse"]["name"] for block in event.message["content"] if "toolUse" in block]
        if len(names) > 1 and self._delegates(event.agent, names):
            event.cancel = _DELEGATION_MIXED

    def _after_tools(self, event: AfterToolsEvent) -> None:
        if event.end_turn:
            return
        if not event.agent.messages:
            return
        uses = [block["toolUse"] for block in event.agent.messages[-1]["content"] if "toolUse" in block]
        if len(uses) != 1 or not self._delegates(event.agent, [uses[0]["name"]]):
            return
        if any(
            getattr(t, "tool_type", None) == "structured_output" for t in event.agent.tool_registry.registry.values()
        ):
            return  # the caller still has to produce its structured output
        results = [block["toolResult"] for block in event.message["content"] if "toolResult" in block]
        result = next((r for r in results if r["toolUseId"] == uses[0]["toolUseId"]), None)
        if result is None or result.get("status") == "error":
            return
        content: list[ContentBlock] = [
            {"text": json.dumps(item["json"])} if "json" in item else item  # type: ignore[misc]
            for item in result.get("content", [])
        ]
        if content and not all(block.get("text", None) == "" for block in content):
            event.end_turn = content


__all__ = ["DELEGATION_DESCRIPTION_SUFFIX", "AgentAsToolStreamEvent"]
