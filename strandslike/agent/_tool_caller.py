"""Direct tool calls: ``agent.tool.name(**input)``."""

import json
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._event_loop import append_message
from .._sync import run_sync
from ..tools.executors._executor import run_tool
from ..types.content import Message
from ..types.exceptions import ConcurrencyException
from ..types.tools import ToolResult, ToolUse

if TYPE_CHECKING:
    from .agent import Agent


class ToolCaller:
    """Exposes the agent's tools as methods; each call runs the tool's hooks like a model-requested call."""

    def __init__(self, agent: "Agent") -> None:
        self._agent = agent

    def __getattr__(self, name: str) -> Callable[..., ToolResult]:
        registry = self._agent.tool_registry.registry
        tool_name = name if name in registry else name.replace("_", "-")
        if tool_name not in registry:
            raise AttributeError(f"Tool '{name}' not found. Available tools: {sorted(registry)}")

        def call(*, record_direct_tool_call: bool | None = None, **tool_input: Any) -> ToolResult:
            record = self._agent.record_direct_tool_call if record_direct_tool_call is None else record_direct_tool_call
            return run_sync(self.call_async, tool_name, tool_input, record)

        return call

    async def call_async(self, name: str, tool_input: dict[str, Any], record: bool = True) -> ToolResult:
        """Run tool ``name`` with ``tool_input``; optionally record the call in the history."""
        agent = self._agent
        if not agent._invocation_lock.acquire(blocking=False):
            raise ConcurrencyException(
                "Agent is already processing a request. Concurrent invocations are not supported."
            )
        try:
            if agent._interrupt_state.activated:
                raise RuntimeError("cannot call a tool directly while the agent is interrupted; resume it first")
            tool_use: ToolUse = {
                "toolUseId": f"tooluse_{name}_{uuid.uuid4().hex[:12]}",
                "name": name,
                "input": tool_input,
            }
            outcome = await run_tool(agent, tool_use, {"agent": agent, "request_state": {}}, None)
            if isinstance(outcome, list):
                agent._interrupt_state.deactivate()
                raise RuntimeError("cannot raise interrupt in direct tool call")
            if record:
                await self._record(tool_use, outcome)
            return outcome
        finally:
            agent._invocation_lock.release()

    async def _record(self, tool_use: ToolUse, result: ToolResult) -> None:
        agent = self._agent
        note: Message = {
            "role": "user",
            "content": [
                {
                    "text": f"agent.tool.{tool_use['name']} direct tool call.\n"
                    f"Input parameters: {json.dumps(tool_use['input'], default=str)}\n"
                }
            ],
        }
        for message in (
            note,
            {"role": "assistant", "content": [{"toolUse": tool_use}]},
            {"role": "user", "content": [{"toolResult": result}]},
            {"role": "assistant", "content": [{"text": f"agent.tool.{tool_use['name']} was called."}]},
        ):
            await append_message(agent, message, None)  # type: ignore[arg-type]
