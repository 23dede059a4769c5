"""What the executor does with a tool use whose body an earlier process started (found in the tool journal).

- The body finished (``done``) and only the bookkeeping after it was lost: its recorded result is used; the
  tool does not run again.
- The body started and never ended (``started``: the process died in it): the tool is not run again, and the
  model receives an error result saying the outcome is unknown (`unknown_outcome_result`), unless the tool is
  idempotent (``@tool(idempotent=True)``) or the agent was built with ``unfinished_tool_policy="rerun"``; then it
  runs again, with the same idempotency key.
- The body was paused by an interrupt (``interrupted``): it runs again, as after any interrupt.

Each case is written to the interrupt audit trail (``tool_result_recovered``, ``tool_outcome_unknown``,
``tool_rerun``) with the tool, the tool-use id, the idempotency key and the approval bound to the call, if any.
"""

import logging
from typing import TYPE_CHECKING

from ...types.tools import AgentTool, ToolResult, ToolUse
from ..journal import unknown_outcome_result

if TYPE_CHECKING:
    from ...agent.agent import Agent

logger = logging.getLogger(__name__)


def recovered_result(agent: "Agent", selected: AgentTool, tool_use: ToolUse) -> tuple[ToolResult, bool] | None:
    """Return (the result to use, whether its outcome is unknown) for a tool use started by an earlier process.

    Returns None when the body must run: no earlier attempt, an interrupted one, or a re-run allowed by the tool
    or the agent's policy. The restored attempt is settled either way.
    """
    tool_use_id = tool_use["toolUseId"]
    journal = agent.tool_journal
    attempt = journal.restored(tool_use_id)
    if attempt is None:
        return None
    journal.settle(tool_use_id)
    state = agent._interrupt_state
    if attempt.outcome == "done" and attempt.result is not None:
        state.record_tool("tool_result_recovered", tool_use_id, attempt.name, attempt.idempotency_key)
        return {**attempt.result, "toolUseId": tool_use_id}, False
    if attempt.outcome != "started":
        return None
    policy = getattr(agent, "unfinished_tool_policy", "report")
    if selected.idempotent or policy == "rerun":
        state.record_tool("tool_rerun", tool_use_id, attempt.name, attempt.idempotency_key)
        logger.warning(
            "tool_use_id=<%s>, tool=<%s>, idempotency_key=<%s> | the process running this tool died; running it "
            "again because %s",
            tool_use_id,
            attempt.name,
            attempt.idempotency_key,
            "the tool is idempotent" if selected.idempotent else 'the agent\'s unfinished_tool_policy is "rerun"',
        )
        return None
    state.record_tool("tool_outcome_unknown", tool_use_id, attempt.name, attempt.idempotency_key)
    logger.warning(
        "tool_use_id=<%s>, tool=<%s>, idempotency_key=<%s> | the process running this tool died; it was not run "
        "again and the model is told its outcome is unknown",
        tool_use_id,
        attempt.name,
        attempt.idempotency_key,
    )
    return unknown_outcome_result(attempt), True
