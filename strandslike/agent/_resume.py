"""What resume validation needs from an agent: its pending tool calls, its tools, its session; and replays."""

from typing import TYPE_CHECKING, Any

from .._schema import first_schema_error
from ..interrupt import InvalidToolInputError
from ..types.content import Message
from ..types.tools import ToolUse
from .agent_result import AgentResult

if TYPE_CHECKING:
    from .agent import Agent


class AgentResumeChecks:
    """`ResumeChecks` over an agent: finds the pending tool calls and validates edited tool input."""

    def __init__(self, agent: "Agent") -> None:
        self._agent = agent
        self.session_id: str | None = getattr(agent.session_manager, "session_id", None)

    def pending_call(self, tool_use_id: str) -> ToolUse | None:
        """Return the tool use of the paused batch with this id."""
        pending = self._agent._interrupt_state.pending_tool_execution
        if pending is None:
            return None
        for block in pending.assistant_message["content"]:
            if "toolUse" in block and block["toolUse"]["toolUseId"] == tool_use_id:
                return block["toolUse"]
        return None

    def validate_tool_input(self, interrupt_id: str, tool_use: ToolUse, tool_input: dict[str, Any]) -> None:
        """Check edited input against the tool's input JSON Schema.

        Raises:
            InvalidToolInputError: The tool is unknown or the input does not fit its schema.
        """
        tool = self._agent.tool_registry.registry.get(tool_use["name"])
        if tool is None:
            raise InvalidToolInputError(interrupt_id, tool_use["name"], "the agent has no such tool")
        # The tool's published schema is the contract, whatever produced it.
        schema = tool.tool_spec["inputSchema"].get("json", tool.tool_spec["inputSchema"])
        problem = first_schema_error(schema, tool_input)
        if problem is not None:
            raise InvalidToolInputError(interrupt_id, tool_use["name"], problem)


def replayed_result(agent: "Agent", prompt: Any) -> AgentResult | None:
    """Return a result for a resume that repeats answers already applied and completed, without running anything.

    Returns None when the resume is malformed or names no resolved interrupt (the caller then reports that the agent
    is not interrupted).

    Raises:
        UnknownInterruptError: The resume mixes resolved interrupts with ids the agent never raised.
        InterruptAlreadyAnsweredError: The resume names resolved interrupts but changes their answers.
    """
    if not agent._interrupt_state.replays_resolved(prompt):
        return None
    empty: Message = {"role": "assistant", "content": []}
    last = next((message for message in reversed(agent.messages) if message["role"] == "assistant"), empty)
    return AgentResult("end_turn", last, agent.event_loop_metrics, {}, replayed=True)
