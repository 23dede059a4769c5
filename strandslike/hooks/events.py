"""Typed lifecycle events dispatched to hook callbacks.

Each event is a dataclass. After construction only the fields named in ``_WRITABLE`` can be rebound (assigning
any other attribute raises `AttributeError`); nested objects such as ``tool_use["input"]`` stay mutable, which
is how hooks change data. Events named ``After...`` run their callbacks in reverse registration order within
each ``order`` group (Strands 1.62).
"""

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from ..types.content import ContentBlock, Message, Messages
from ..types.interrupt import _Interruptible, name_uuid
from ..types.streaming import StopReason
from ..types.tools import AgentTool, ToolResult, ToolUse
from ._fast_init import fast_init

if TYPE_CHECKING:
    from ..agent.agent import Agent
    from ..agent.agent_result import AgentResult
    from ..types.agent import AgentInput


@dataclass
class BaseHookEvent:
    """Base of every hook event."""

    _WRITABLE: ClassVar[frozenset[str]] = frozenset()
    _REVERSE: ClassVar[bool] = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "_sealed", True)

    @property
    def should_reverse_callbacks(self) -> bool:
        """Whether callbacks of equal ``order`` run in reverse registration order (After* events)."""
        return self._REVERSE

    def _can_write(self, name: str) -> bool:
        """Return whether ``name`` may be assigned after construction (subclasses may override, as in Strands)."""
        return name in self._WRITABLE

    def __setattr__(self, name: str, value: Any) -> None:
        if "_sealed" in self.__dict__ and not self._can_write(name):
            raise AttributeError(f"Property {name} is not writable")
        object.__setattr__(self, name, value)


@dataclass
class HookEvent(BaseHookEvent):
    """Base of events fired by an agent.

    Attributes:
        agent: The agent that fired the event.
    """

    agent: "Agent"


@dataclass
class AgentInitializedEvent(HookEvent):
    """Fired at the end of ``Agent.__init__``; callbacks must be synchronous."""


@dataclass
class BeforeInvocationEvent(HookEvent):
    """Fired at the start of each invocation pass.

    Attributes:
        invocation_state: Per-invocation state shared by hooks and tools.
        messages: The messages this pass appends; writable, to replace them.
        cancel: Set to True or a message to end the pass without calling the model.
    """

    invocation_state: dict[str, Any] = field(default_factory=dict)
    messages: Messages | None = None
    cancel: bool | str = False

    _WRITABLE: ClassVar[frozenset[str]] = frozenset({"messages", "cancel"})


@dataclass
class AfterInvocationEvent(HookEvent):
    """Fired at the end of each invocation pass, also when it failed.

    Attributes:
        invocation_state: Per-invocation state shared by hooks and tools.
        result: The pass's result, or None if it failed or was cancelled.
        resume: Set to an agent input to run another pass with it (it may answer interrupts).
    """

    invocation_state: dict[str, Any] = field(default_factory=dict)
    result: "AgentResult | None" = None
    resume: "AgentInput" = None

    _WRITABLE: ClassVar[frozenset[str]] = frozenset({"resume"})
    _REVERSE: ClassVar[bool] = True


@dataclass
class MessageAddedEvent(HookEvent):
    """Fired after the framework appends a message to ``agent.messages``.

    Attributes:
        message: The message that was appended.
    """

    message: Message


@dataclass
class BeforeModelCallEvent(HookEvent, _Interruptible):
    """Fired before each model call; interruptible (on resume the model call is made).

    Attributes:
        invocation_state: Per-invocation state shared by hooks and tools.
        projected_input_tokens: Estimated input tokens of the call, when known.
        cancel: Set to True or a message to skip the model call and end the turn with that text.
    """

    invocation_state: dict[str, Any] = field(default_factory=dict)
    projected_input_tokens: int | None = None
    cancel: bool | str = False

    _WRITABLE: ClassVar[frozenset[str]] = frozenset({"cancel"})

    def _interrupt_id(self, name: str) -> str:
        return f"v1:before_model_call:{name_uuid(name)}"

    def _cancelled(self, name: str) -> None:
        self.cancel = f"Model call cancelled by user ({name})"


@dataclass
class AfterModelCallEvent(HookEvent):
    """Fired after each model call, successful or not.

    Attributes:
        invocation_state: Per-invocation state shared by hooks and tools.
        stop_response: The message and stop reason, when the call succeeded.
        exception: The exception, when the call failed.
        retry: Set to True to discard this response and call the model again.
    """

    @dataclass
    class ModelStopResponse:
        """The outcome of a successful model call."""

        message: Message
        stop_reason: StopReason

    invocation_state: dict[str, Any] = field(default_factory=dict)
    stop_response: ModelStopResponse | None = None
    exception: Exception | None = None
    retry: bool = False

    _WRITABLE: ClassVar[frozenset[str]] = frozenset({"retry"})
    _REVERSE: ClassVar[bool] = True


ModelStopResponse = AfterModelCallEvent.ModelStopResponse


@dataclass
class BeforeToolsEvent(HookEvent, _Interruptible):
    """Fired once per tool batch, before any tool runs; interruptible.

    Attributes:
        message: The assistant message holding the batch's tool uses.
        invocation_state: Per-invocation state shared by hooks and tools.
        cancel: Set to True or a message to give every tool of the batch an error result instead of running it.
    """

    message: Message
    invocation_state: dict[str, Any] = field(default_factory=dict)
    cancel: bool | str = False

    _WRITABLE: ClassVar[frozenset[str]] = frozenset({"cancel"})

    def _interrupt_id(self, name: str) -> str:
        return f"v1:before_tools:{name_uuid(name)}"

    def _cancelled(self, name: str) -> None:
        self.cancel = f"Tool calls cancelled by user ({name})"


@dataclass
class AfterToolsEvent(HookEvent):
    """Fired once per tool batch after its results were collected, also when tools were interrupted.

    Attributes:
        message: The user message of tool results (only the results that exist).
        invocation_state: Per-invocation state shared by hooks and tools.
        end_turn: Set to True, a text or content blocks to end the turn after this batch without a model call.
    """

    message: Message
    invocation_state: dict[str, Any] = field(default_factory=dict)
    end_turn: bool | str | list[ContentBlock] = False

    _WRITABLE: ClassVar[frozenset[str]] = frozenset({"end_turn"})
    _REVERSE: ClassVar[bool] = True


@dataclass
class BeforeToolCallEvent(HookEvent, _Interruptible):
    """Fired before each tool call; interruptible.

    Attributes:
        selected_tool: The tool that will run (None if the name is unknown); writable.
        tool_use: The tool use; writable (changing only its name re-resolves the tool).
        invocation_state: Per-invocation state shared by hooks and tools.
        cancel_tool: Set to True or a message to give the call an error result instead of running it.
    """

    selected_tool: AgentTool | None
    tool_use: ToolUse
    invocation_state: dict[str, Any]
    cancel_tool: bool | str = False

    _WRITABLE: ClassVar[frozenset[str]] = frozenset({"selected_tool", "tool_use", "cancel_tool"})

    def _interrupt_id(self, name: str) -> str:
        return f"v1:before_tool_call:{self.tool_use['toolUseId']}:{name_uuid(name)}"

    def _bound_tool_use(self) -> ToolUse:
        return self.tool_use

    def _cancelled(self, name: str) -> None:
        self.cancel_tool = f"Tool call cancelled by user ({name})"


@dataclass
class AfterToolCallEvent(HookEvent):
    """Fired after each tool call or cancellation; not for a tool that was interrupted.

    Attributes:
        selected_tool: The tool that ran (None when cancelled or unknown).
        tool_use: The tool use.
        invocation_state: Per-invocation state shared by hooks and tools.
        result: The result; writable, to replace it.
        exception: The exception the tool raised, if any.
        cancel_message: The cancellation message when the call was cancelled.
        duration: Seconds the tool ran, when it ran.
        retry: Set to True to run the tool again and discard this result.
    """

    selected_tool: AgentTool | None
    tool_use: ToolUse
    invocation_state: dict[str, Any]
    result: ToolResult
    exception: Exception | None = None
    cancel_message: str | None = None
    duration: float | None = None
    retry: bool = False

    _WRITABLE: ClassVar[frozenset[str]] = frozenset({"result", "retry"})
    _REVERSE: ClassVar[bool] = True


@dataclass
class MultiAgentInitializedEvent(BaseHookEvent):
    """Fired at the end of a Graph's or Swarm's construction.

    Attributes:
        source: The orchestrator.
        invocation_state: Per-invocation state, if any.
    """

    source: Any
    invocation_state: dict[str, Any] | None = None


@dataclass
class BeforeMultiAgentInvocationEvent(BaseHookEvent):
    """Fired at the start of an orchestrator invocation.

    Attributes:
        source: The orchestrator.
        invocation_state: Per-invocation state shared by hooks and nodes.
    """

    source: Any
    invocation_state: dict[str, Any] | None = None


@dataclass
class AfterMultiAgentInvocationEvent(BaseHookEvent):
    """Fired at the end of an orchestrator invocation, also when it failed.

    Attributes:
        source: The orchestrator.
        invocation_state: Per-invocation state shared by hooks and nodes.
    """

    source: Any
    invocation_state: dict[str, Any] | None = None

    _REVERSE: ClassVar[bool] = True


@dataclass
class BeforeNodeCallEvent(BaseHookEvent, _Interruptible):
    """Fired before each node runs; interruptible.

    Attributes:
        source: The orchestrator.
        node_id: The node about to run.
        invocation_state: Per-invocation state shared by hooks and nodes.
        cancel_node: Set to True or a message to mark the node failed instead of running it.
    """

    source: Any
    node_id: str
    invocation_state: dict[str, Any] | None = None
    cancel_node: bool | str = False

    _WRITABLE: ClassVar[frozenset[str]] = frozenset({"cancel_node"})

    def _interrupt_id(self, name: str) -> str:
        return f"v1:before_node_call:{name_uuid(self.node_id)}:{name_uuid(name)}"

    def _source(self) -> str:
        return f"{super()._source()} before node {self.node_id}"

    def _cancelled(self, name: str) -> None:
        self.cancel_node = f"Node cancelled by user ({name})"


@dataclass
class AfterNodeCallEvent(BaseHookEvent):
    """Fired after each node completes or fails; not for a node that was interrupted.

    Attributes:
        source: The orchestrator.
        node_id: The node that ran.
        invocation_state: Per-invocation state shared by hooks and nodes.
    """

    source: Any
    node_id: str
    invocation_state: dict[str, Any] | None = None

    _REVERSE: ClassVar[bool] = True


# The events the loop builds on every cycle get a constructor that stores the fields directly (the dataclass one
# assigns each field through the sealing `__setattr__`): building an event costs a fraction of the callbacks it
# feeds. Subclasses declared with @dataclass get their own, ordinary, constructor.
for _event_class in (
    AgentInitializedEvent,
    BeforeInvocationEvent,
    AfterInvocationEvent,
    MessageAddedEvent,
    BeforeModelCallEvent,
    AfterModelCallEvent,
    BeforeToolsEvent,
    AfterToolsEvent,
    BeforeToolCallEvent,
    AfterToolCallEvent,
    MultiAgentInitializedEvent,
    BeforeMultiAgentInvocationEvent,
    AfterMultiAgentInvocationEvent,
    BeforeNodeCallEvent,
    AfterNodeCallEvent,
):
    fast_init(_event_class)
del _event_class
