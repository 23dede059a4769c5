"""Tool wire types (Bedrock Converse shapes), the tool base class and the context given to tools."""

import contextvars
import threading
import uuid
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, NotRequired, TypeAlias

from typing_extensions import TypedDict

from .interrupt import _Interruptible, name_uuid

if TYPE_CHECKING:
    from ..agent.agent import Agent

# The namespace of `strandslike.tools.journal`, for tools run without an agent.
_KEY_NAMESPACE = uuid.UUID("6f0d4a52-9a3e-5d4c-8f51-2b7c1e0a9d11")


class ToolUse(TypedDict):
    """A model's request to call a tool."""

    toolUseId: str
    name: str
    input: Any


class ToolResultContent(TypedDict, total=False):
    """One block of a tool result; exactly one key is set."""

    text: str
    json: Any
    image: dict[str, Any]
    document: dict[str, Any]


ToolResultStatus: TypeAlias = Literal["success", "error"]


class ToolResult(TypedDict):
    """The outcome of a tool call, sent back to the model."""

    toolUseId: str
    status: ToolResultStatus
    content: list[ToolResultContent]


class ToolSpec(TypedDict):
    """What the model is told about a tool."""

    name: str
    description: str
    inputSchema: dict[str, Any]
    outputSchema: NotRequired[dict[str, Any]]


ToolChoice: TypeAlias = dict[str, Any]

ToolGenerator: TypeAlias = AsyncGenerator[Any, None]


@dataclass
class ToolContext(_Interruptible):
    """What a tool declared with ``@tool(context=True)`` receives besides its input.

    Attributes:
        tool_use: The tool use being executed.
        agent: The agent running the tool.
        invocation_state: Per-invocation state shared by hooks and tools (a copy of the caller's dict plus
            framework keys such as ``agent``).
        cancel_signal: Set when the agent is asked to cancel; long-running tools may poll it.
        is_resumed: True when the call runs again because an interrupt was answered with ``restart``.
        resumed_metadata: The ``metadata`` of that restart.
        original_input: The input the model asked for, when the restart replaced it.
    """

    tool_use: ToolUse
    agent: "Agent"
    invocation_state: dict[str, Any]
    cancel_signal: threading.Event = field(default_factory=threading.Event)
    is_resumed: bool = field(default=False, kw_only=True)
    resumed_metadata: Any = field(default=None, kw_only=True)
    original_input: Any = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        restart = RESTART.get()
        if restart is not None and restart.tool_use_id == self.tool_use["toolUseId"]:
            self.is_resumed = True
            self.resumed_metadata = restart.metadata
            self.original_input = restart.original_input

    @property
    def idempotency_key(self) -> str:
        """The tool use's idempotency key: the same in every process, on every retry and after any crash.

        Pass it to an external API that deduplicates requests (a payment, an e-mail, a ticket) to make the
        tool's effect happen exactly once end to end; see `strandslike.tools.journal`.
        """
        journal = getattr(self.agent, "tool_journal", None)
        if journal is not None:
            key: str = journal.idempotency_key(self.tool_use["toolUseId"])
            return key
        return str(uuid.uuid5(_KEY_NAMESPACE, f"\x00{self.tool_use['toolUseId']}"))

    def _interrupt_id(self, name: str) -> str:
        return f"v1:tool_call:{self.tool_use['toolUseId']}:{name_uuid(name)}"

    def _bound_tool_use(self) -> ToolUse:
        return self.tool_use

    def _source(self) -> str:
        return f"tool {self.tool_use['name']}"


@dataclass(frozen=True)
class RestartInfo:
    """How a tool call is being restarted after an interrupt (see `Interrupt.restart`)."""

    tool_use_id: str
    metadata: Any
    original_input: Any


RESTART: contextvars.ContextVar[RestartInfo | None] = contextvars.ContextVar("strandslike_restart", default=None)
# The tool call being executed, as the model asked for it (before hooks rewrote it or a restart edited it).
MODEL_CALL: contextvars.ContextVar[ToolUse | None] = contextvars.ContextVar("strandslike_model_call", default=None)


class AgentTool(ABC):
    """Base class of tools: a name, a spec, and an async generator whose last value is the `ToolResult`."""

    _is_dynamic: bool = False
    # Whether replacing the spec always announces it (`strandslike.tools._generation`); registries otherwise compare
    # the spec objects on every call.
    _announces_spec_changes: ClassVar[bool] = False
    # (the spec object, its normalized and validated form): registries share the work of normalizing a tool's
    # spec (an agent per request would otherwise redo it on its first model call).
    _normalized_spec: "tuple[ToolSpec, ToolSpec] | None" = None

    def __init__(self) -> None:
        """Start as a tool that was not loaded at run time."""
        self._is_dynamic = False

    @property
    @abstractmethod
    def tool_name(self) -> str:
        """The name the model calls the tool by."""

    @property
    @abstractmethod
    def tool_spec(self) -> ToolSpec:
        """The spec sent to the model."""

    @property
    @abstractmethod
    def tool_type(self) -> str:
        """A short kind label, e.g. ``"function"``."""

    @property
    def supports_hot_reload(self) -> bool:
        """Whether the tool may be reloaded from its source while the agent runs."""
        return False

    @property
    def is_dynamic(self) -> bool:
        """Whether the tool was loaded at run time (from a file path, a module path or a tools directory)."""
        return self._is_dynamic

    def mark_dynamic(self) -> None:
        """Mark the tool as loaded at run time."""
        self._is_dynamic = True

    @property
    def idempotent(self) -> bool:
        """Whether running the tool twice for one tool use is safe (strandslike).

        When a process dies while the tool runs, a resumed session runs an idempotent tool again (with the same
        `ToolContext.idempotency_key`); any other tool is not run again and the model is told that its outcome is
        unknown. False unless the tool says otherwise (``@tool(idempotent=True)``).
        """
        return False

    @abstractmethod
    def stream(self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any) -> ToolGenerator:
        """Run the tool, yielding progress events; the last value yielded is the `ToolResult`.

        Args:
            tool_use: The tool use to execute.
            invocation_state: Per-invocation state (includes ``agent``).
            **kwargs: Reserved for future arguments.
        """

    def get_display_properties(self) -> dict[str, str]:
        """Return properties shown when the tool is listed."""
        return {"Name": self.tool_name, "Type": self.tool_type}


__all__ = [
    "AgentTool",
    "ToolChoice",
    "ToolContext",
    "ToolGenerator",
    "ToolResult",
    "ToolResultContent",
    "ToolResultStatus",
    "ToolSpec",
    "ToolUse",
]
