"""Run the tools of a batch one after another."""

from typing import TYPE_CHECKING, Any

from ...interrupt import Interrupt
from ...types.tools import ToolResult, ToolUse
from ._executor import Emit, ToolExecutor, error_result, run_tool

if TYPE_CHECKING:
    from ...agent.agent import Agent


class SequentialToolExecutor(ToolExecutor):
    """Run tools in the model's order; stop at the first interrupted tool (later tools run on resume)."""

    async def execute(
        self,
        agent: "Agent",
        tool_uses: list[ToolUse],
        results: dict[str, ToolResult],
        invocation_state: dict[str, Any],
        emit: Emit | None,
    ) -> list[Interrupt]:
        """Run ``tool_uses`` one at a time."""
        for tool_use in tool_uses:
            if agent._cancel_signal.is_set():
                results[tool_use["toolUseId"]] = error_result(tool_use["toolUseId"], "Tool execution cancelled")
                continue
            outcome = await run_tool(agent, tool_use, invocation_state, emit)
            if isinstance(outcome, list):
                return outcome
            results[tool_use["toolUseId"]] = outcome
        return []
