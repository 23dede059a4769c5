"""Run the tools of a batch concurrently in an anyio task group."""

from typing import TYPE_CHECKING, Any

from ...interrupt import Interrupt
from ...types.tools import ToolResult, ToolUse
from ._executor import Emit, ToolExecutor, run_tool

if TYPE_CHECKING:
    from ...agent.agent import Agent


class ConcurrentToolExecutor(ToolExecutor):
    """Run every tool of a batch at once; each may complete or interrupt independently (the default).

    Results are reported in the model's tool-use order, whatever order the tools finish in.
    """

    async def execute(
        self,
        agent: "Agent",
        tool_uses: list[ToolUse],
        results: dict[str, ToolResult],
        invocation_state: dict[str, Any],
        emit: Emit | None,
    ) -> list[Interrupt]:
        """Run ``tool_uses`` concurrently."""
        outcomes: list[ToolResult | list[Interrupt] | None] = [None] * len(tool_uses)

        async def run(index: int, tool_use: ToolUse) -> None:
            outcomes[index] = await run_tool(agent, tool_use, invocation_state, emit)

        if len(tool_uses) == 1:  # no task group for the common single-call batch
            await run(0, tool_uses[0])
        else:
            import anyio  # imported on first use, not with strandslike

            try:
                async with anyio.create_task_group() as group:
                    for index, tool_use in enumerate(tool_uses):
                        group.start_soon(run, index, tool_use)
            except BaseExceptionGroup as group_error:
                _record(tool_uses, outcomes, results)
                if len(group_error.exceptions) == 1:
                    raise group_error.exceptions[0] from None
                raise
        return _record(tool_uses, outcomes, results)


def _record(
    tool_uses: list[ToolUse], outcomes: list[ToolResult | list[Interrupt] | None], results: dict[str, ToolResult]
) -> list[Interrupt]:
    interrupts: list[Interrupt] = []
    for tool_use, outcome in zip(tool_uses, outcomes, strict=True):
        if isinstance(outcome, list):
            interrupts.extend(outcome)
        elif outcome is not None:
            results[tool_use["toolUseId"]] = outcome
    return interrupts
