"""Running one tool call: its hooks, the tool itself, retries and interrupts.

Executors decide only how the calls of a batch are scheduled (concurrently or one after another); every call
goes through `run_tool`, so both executors share the same hook and interrupt semantics.
"""

import copy
import json
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from ...hooks.events import AfterToolCallEvent, BeforeToolCallEvent
from ...interrupt import Interrupt, InterruptError, InterruptException
from ...telemetry.spans import current_tracer
from ...types._events import ToolInterruptEvent, ToolStreamEvent
from ...types.events import ToolResultEvent
from ...types.tools import MODEL_CALL, RESTART, AgentTool, RestartInfo, ToolResult, ToolUse
from .._result_check import storable_result
from ._recovery import recovered_result

if TYPE_CHECKING:
    from ...agent.agent import Agent

logger = logging.getLogger(__name__)

Emit = Callable[[dict[str, Any]], None]

_NOTHING: Any = object()


def error_result(tool_use_id: str, text: str) -> ToolResult:
    """Return an error `ToolResult` carrying ``text``."""
    return {"toolUseId": tool_use_id, "status": "error", "content": [{"text": text}]}


class ToolExecutor(ABC):
    """Schedules the tool calls of one batch.

    `execute` fills ``results`` (by tool-use id) with the result of every call that completed and returns the
    interrupts raised by the calls that did not.
    """

    @abstractmethod
    async def execute(
        self,
        agent: "Agent",
        tool_uses: list[ToolUse],
        results: dict[str, ToolResult],
        invocation_state: dict[str, Any],
        emit: Emit | None,
    ) -> list[Interrupt]:
        """Run ``tool_uses``; put each completed result in ``results`` and return the raised interrupts."""


async def run_tool(
    agent: "Agent", tool_use: ToolUse, invocation_state: dict[str, Any], emit: Emit | None
) -> ToolResult | list[Interrupt]:
    """Run one tool call through its hooks; return its result, or the interrupts that paused it.

    When an `AfterToolCallEvent` hook asks for a retry, the whole attempt runs again, hooks included.
    """
    # Interrupts raised for this call are bound to the call as it stands in the model's message (the same object the
    # paused batch keeps and resume validation reads), whatever new dicts hooks put in its place.
    token = MODEL_CALL.set(tool_use)
    tracer = current_tracer()
    scope = tracer.start_tool(tool_use, agent) if tracer is not None else None
    try:
        outcome = await _run_attempts(agent, tool_use, invocation_state, emit)
    except BaseException as exc:
        if scope is not None:
            scope.end(error=exc)
        raise
    finally:
        MODEL_CALL.reset(token)
    if tracer is not None and scope is not None:
        tracer.end_tool(scope, outcome)
    return outcome


async def _run_attempts(
    agent: "Agent", tool_use: ToolUse, invocation_state: dict[str, Any], emit: Emit | None
) -> ToolResult | list[Interrupt]:
    while True:
        outcome = await _attempt(agent, tool_use, invocation_state, emit)
        if outcome is not None:
            return outcome


async def _attempt(
    agent: "Agent", tool_use: ToolUse, invocation_state: dict[str, Any], emit: Emit | None
) -> ToolResult | list[Interrupt] | None:
    """Run one attempt; None means an `AfterToolCallEvent` hook asked for a retry."""
    state = agent._interrupt_state
    bound = state.bound_to(tool_use["toolUseId"]) if state.activated else []
    if bound:
        settled = await _settle_without_running(agent, tool_use, invocation_state, emit, bound)
        if settled is not None:
            return settled
        restart = next((interrupt for interrupt in bound if interrupt.action == "restart"), None)
        if restart is not None:
            original = None
            if restart.edited_input is not None:
                original = tool_use["input"]
                tool_use = {**tool_use, "input": copy.deepcopy(restart.edited_input)}
            token = RESTART.set(RestartInfo(tool_use["toolUseId"], restart.restart_metadata, original))
            try:
                outcome = await _run_hooks_and_tool(agent, tool_use, invocation_state, emit)
            finally:
                RESTART.reset(token)
            if isinstance(outcome, dict) and restart.edited_input is not None:
                note = (
                    f"(The user edited this call's input before it ran; it ran with: {json.dumps(tool_use['input'])})"
                )
                outcome = {**outcome, "content": [{"text": note}, *outcome["content"]]}
            _record_outcome(state, bound, outcome)
            return outcome
    outcome = await _run_hooks_and_tool(agent, tool_use, invocation_state, emit)
    if bound:
        _record_outcome(state, bound, outcome)
    return outcome


async def _settle_without_running(
    agent: "Agent", tool_use: ToolUse, invocation_state: dict[str, Any], emit: Emit | None, bound: list[Interrupt]
) -> ToolResult | None:
    """Apply a ``respond`` (the answer is the result) or ``cancel`` (a cancelled result); the tool does not run."""
    tool_use_id = tool_use["toolUseId"]
    for interrupt in bound:
        cancel_message = None
        if interrupt.action == "respond":
            result = _as_result(tool_use_id, interrupt.response)
        elif interrupt.action == "cancel":
            cancel_message = "Tool call cancelled by user"
            result = error_result(tool_use_id, cancel_message)
            if emit is not None:
                emit({"tool_cancel_event": {"tool_use": tool_use, "message": cancel_message}})
        else:
            continue
        selected = agent.tool_registry.registry.get(tool_use["name"])
        after = AfterToolCallEvent(agent, selected, tool_use, invocation_state, result, cancel_message=cancel_message)
        await agent.hooks.invoke_callbacks_async(after)
        final = _finish(after.result, tool_use_id)
        if emit is not None:
            emit({"tool_result": final})
        _record_outcome(agent._interrupt_state, bound, final)
        return final
    return None


def _record_outcome(state: Any, bound: list[Interrupt], outcome: ToolResult | list[Interrupt] | None) -> None:
    if not isinstance(outcome, dict):
        return
    for interrupt in bound:
        state.record(interrupt, "outcome", action=interrupt.action or "resume", result=outcome)


def _as_result(tool_use_id: str, output: Any) -> ToolResult:
    if isinstance(output, dict) and "status" in output and "content" in output:
        return {**output, "toolUseId": tool_use_id}  # type: ignore[typeddict-item]
    if isinstance(output, str):
        return {"toolUseId": tool_use_id, "status": "success", "content": [{"text": output}]}
    return {"toolUseId": tool_use_id, "status": "success", "content": [{"json": output}]}


async def _run_hooks_and_tool(
    agent: "Agent", tool_use: ToolUse, invocation_state: dict[str, Any], emit: Emit | None
) -> ToolResult | list[Interrupt] | None:
    hooks = agent.hooks
    requested_name = tool_use["name"]
    selected: AgentTool | None = agent.tool_registry.registry.get(requested_name)
    cancel: bool | str = False
    if hooks._callbacks(BeforeToolCallEvent):  # events nobody listens to are not built
        before = BeforeToolCallEvent(agent, selected, tool_use, invocation_state)
        _, interrupts = await hooks.invoke_callbacks_async(before)
        if interrupts:
            if emit is not None:
                emit({"tool_interrupt_event": {"tool_use": tool_use, "interrupts": interrupts}})
            return interrupts
        tool_use = before.tool_use
        if tool_use["name"] != requested_name and before.selected_tool is selected:
            # Only the name changed (in place or by a new dict): resolve the tool again under the new name.
            before.selected_tool = agent.tool_registry.registry.get(tool_use["name"])
        selected = before.selected_tool
        cancel = before.cancel_tool
    tool_use_id = tool_use["toolUseId"]
    has_after = bool(hooks._callbacks(AfterToolCallEvent))

    if cancel:
        message = cancel if isinstance(cancel, str) else "tool cancelled by user"
        if emit is not None:
            emit({"tool_cancel_event": {"tool_use": tool_use, "message": message}})
        result = error_result(tool_use_id, message)
        if has_after:
            after = AfterToolCallEvent(agent, None, tool_use, invocation_state, result, cancel_message=message)
            await hooks.invoke_callbacks_async(after)
            result = after.result
        final = _finish(result, tool_use_id)
        if emit is not None:
            emit({"tool_result": final})
        return final

    started = time.perf_counter()
    recovered = None if selected is None else recovered_result(agent, selected, tool_use)
    called: ToolResult | list[Interrupt]
    if recovered is not None:
        (called, unknown), exception = recovered, None
    else:
        called, exception = await _journaled_call(agent, selected, tool_use, invocation_state, emit)
        unknown = False
    if isinstance(called, list):
        return called
    duration = time.perf_counter() - started
    if has_after:
        after = AfterToolCallEvent(
            agent, selected, tool_use, invocation_state, called, exception=exception, duration=duration
        )
        await hooks.invoke_callbacks_async(after)
        # A retry never re-runs a tool whose earlier run has an unknown outcome: that is exactly the double run
        # the journal exists to prevent (an idempotent tool or the "rerun" policy already ran it again above).
        if after.retry and not agent._cancel_signal.is_set() and not unknown:
            logger.info("tool_name=<%s>, tool_use_id=<%s> | a hook asked to retry the tool call", *_names(tool_use))
            return None
        called = after.result
    final = _finish(called, tool_use_id)
    agent.event_loop_metrics.add_tool_call(tool_use["name"], final["status"] == "success", duration)
    if emit is not None:
        emit({"tool_result": final})
    return final


async def _journaled_call(
    agent: "Agent", selected: AgentTool | None, tool_use: ToolUse, invocation_state: dict[str, Any], emit: Emit | None
) -> tuple[ToolResult | list[Interrupt], Exception | None]:
    """Run the tool's body between its intent record (durable first, with a session) and its outcome record."""
    if selected is None:
        return await _call(selected, tool_use, invocation_state, emit)
    journal = agent.tool_journal
    attempt = await journal.start(tool_use)
    try:
        called, exception = await _call(selected, tool_use, invocation_state, emit)
    except InterruptError:
        journal.finish(attempt, None)  # paused on a refused answer: the body runs again once it is corrected
        raise
    # The journal keeps what the body returned, made storable the way `_finish` makes every result storable.
    journal.finish(attempt, storable_result(called, tool_use["toolUseId"]) if isinstance(called, dict) else None)
    return called, exception


async def _call(
    selected: AgentTool | None, tool_use: ToolUse, invocation_state: dict[str, Any], emit: Emit | None
) -> tuple[ToolResult | list[Interrupt], Exception | None]:
    tool_use_id = tool_use["toolUseId"]
    if selected is None:
        return error_result(tool_use_id, f"Unknown tool: {tool_use['name']}"), None
    # Strands' reading of a tool's stream: typed events (results, interrupts, stream events) are taken as they are;
    # any other value is progress, and the last such value is the result of a tool that yields no result event.
    last = _NOTHING
    try:
        async with aclosing(selected.stream(tool_use, invocation_state)) as events:
            async for value in events:
                if isinstance(value, ToolResultEvent):
                    if value.exception is not None:
                        _log_failure(tool_use, value.exception)
                    return value.tool_result, value.exception
                if isinstance(value, ToolInterruptEvent):
                    return _interrupted(invocation_state, tool_use, value.interrupts, emit), None
                if isinstance(value, ToolStreamEvent):
                    if emit is not None:
                        emit({"tool_stream_event": value["tool_stream_event"]})
                    continue
                if emit is not None:
                    emit({"tool_stream_event": {"tool_use": tool_use, "data": value}})
                last = value
    except InterruptError:
        raise  # a stored answer was refused when the tool read it: the run stays interrupted and resumable
    except InterruptException as interrupt:
        return _interrupted(invocation_state, tool_use, [interrupt.interrupt], emit), None
    except Exception as exc:
        _log_failure(tool_use, exc)
        return error_result(tool_use_id, f"Error: {exc}"), exc
    if last is _NOTHING:
        return error_result(tool_use_id, f"Tool '{tool_use['name']}' did not return a result"), None
    return last, None


def _log_failure(tool_use: ToolUse, exc: Exception) -> None:
    logger.warning(
        "tool_name=<%s>, tool_use_id=<%s> | the tool raised %s: %s; the model gets an error result",
        tool_use["name"],
        tool_use["toolUseId"],
        type(exc).__name__,
        exc,
        exc_info=exc,
    )


def _names(tool_use: ToolUse) -> tuple[str, str]:
    return tool_use["name"], tool_use["toolUseId"]


def _interrupted(
    invocation_state: dict[str, Any], tool_use: ToolUse, interrupts: list[Interrupt], emit: Emit | None
) -> list[Interrupt]:
    """Register interrupts a tool reported itself (an agent used as a tool relays its own) and report them."""
    agent = invocation_state.get("agent")
    state = getattr(agent, "_interrupt_state", None)
    if state is not None:
        for interrupt in interrupts:
            state.adopt(interrupt)
    if emit is not None:
        emit({"tool_interrupt_event": {"tool_use": tool_use, "interrupts": interrupts}})
    return list(interrupts)


def _finish(result: ToolResult, tool_use_id: str) -> ToolResult:
    result = storable_result(result, tool_use_id)  # a result no session could store must not wedge the session
    if result.get("toolUseId") != tool_use_id:
        result = {**result, "toolUseId": tool_use_id}
    return result
