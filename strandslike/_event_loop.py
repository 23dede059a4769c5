"""The event loop: model turn, tool batch, repeat, until the model ends its turn or the run is interrupted.

Plain async functions over an `Agent`; the agent is a façade that prepares the invocation and calls `run_cycles`.
Events whose class has no callbacks are not even constructed, so a cycle without hooks costs little, and no
step walks or copies the conversation history, so a cycle's cost does not grow with it.
"""

import logging
from typing import TYPE_CHECKING, Any

from .agent.agent_result import AgentResult
from .hooks.events import (
    AfterModelCallEvent,
    AfterToolsEvent,
    BeforeModelCallEvent,
    BeforeToolsEvent,
    MessageAddedEvent,
    ModelStopResponse,
)
from .interrupt import Interrupt
from .interrupt._state import PendingToolExecution, _InterruptState
from .models._streaming import process_stream
from .telemetry.spans import current_tracer
from .tools.executors._executor import Emit, error_result
from .types.content import ContentBlock, Message
from .types.exceptions import ContextWindowOverflowException, MaxTokensReachedException, ModelNotConfiguredError
from .types.streaming import StopReason
from .types.tools import ToolResult, ToolUse

if TYPE_CHECKING:
    from pydantic import BaseModel

    from .agent.agent import Agent
    from .tools.structured_output import StructuredOutputContext

logger = logging.getLogger(__name__)


async def append_message(agent: "Agent", message: Message, emit: Emit | None) -> None:
    """Append ``message`` to the history and fire `MessageAddedEvent`."""
    agent.messages.append(message)
    if emit is not None:
        emit({"message": message})
    if agent.hooks._callbacks(MessageAddedEvent):
        await agent.hooks.invoke_callbacks_async(MessageAddedEvent(agent, message))


async def run_cycles(
    agent: "Agent",
    invocation_state: dict[str, Any],
    emit: Emit | None,
    structured: "StructuredOutputContext | None" = None,
) -> AgentResult:
    """Run cycles until the model ends its turn, a hook ends it, or interrupts pause the run.

    With ``structured`` enabled, the run ends only once the model has produced a valid instance of the output model
    (see `strandslike.tools.structured_output`).
    """
    state = agent._interrupt_state
    metrics = agent.event_loop_metrics
    if structured is not None and not structured.is_enabled:
        structured = None
    while True:
        metrics.cycle_count += 1
        if emit is not None:
            emit({"start_event_loop": True})
        pending = state.pending_tool_execution if state.activated else None
        if pending is not None:  # resuming a paused batch: the model is not called again
            message: Message = pending.assistant_message
            stop_reason: StopReason = "tool_use"
        else:
            turn = await _model_turn(agent, invocation_state, emit, structured)
            if isinstance(turn, list):
                last = agent.messages[-1] if agent.messages else {"role": "user", "content": []}
                return _paused(agent, last, invocation_state, turn, emit, structured)
            message, stop_reason = turn
        tool_uses = [block["toolUse"] for block in message["content"] if "toolUse" in block]
        if stop_reason != "tool_use" or not tool_uses:
            if structured is not None and stop_reason == "end_turn":
                output = await _structured_from_text(agent, structured, message, emit)
                if output is None:
                    continue  # the model was asked (again) for the structured output
                return _result(agent, stop_reason, message, invocation_state, structured_output=output)
            return _result(agent, stop_reason, message, invocation_state)
        outcome = await _tool_batch(agent, message, tool_uses, invocation_state, emit)
        if isinstance(outcome, list):
            return _paused(agent, message, invocation_state, outcome, emit, structured)
        output = None
        if structured is not None and structured.calls_tool(tool_uses):
            output = structured.extract_result(tool_uses, agent.messages[-1] if agent.messages else None)
            if output is None and outcome is None:
                structured.count_failure()  # the tool result already told the model what to fix
        if outcome is not None:
            return _result(agent, "end_turn", outcome, invocation_state, structured_output=output)
        if output is not None:
            return _result(agent, stop_reason, message, invocation_state, structured_output=output)


async def _structured_from_text(
    agent: "Agent", structured: "StructuredOutputContext", message: Message, emit: Emit | None
) -> "BaseModel | None":
    """Handle a turn that ended without the structured output tool: ask for it, or accept JSON text when forced.

    Returns the output, or None when the model was sent a message asking for (a corrected) structured output.
    """
    if not structured.force_attempted:
        structured.set_forced_mode()
        prompt: Message = {"role": "user", "content": [{"text": structured.structured_output_prompt}]}
        await append_message(agent, prompt, emit)
        return None
    outcome = structured.result_from_text(message)
    if not isinstance(outcome, str):
        return outcome
    structured.count_failure(outcome)
    retry: Message = {"role": "user", "content": [{"text": f"{outcome}\n\n{structured.structured_output_prompt}"}]}
    await append_message(agent, retry, emit)
    return None


def _paused(
    agent: "Agent",
    message: Message,
    invocation_state: dict[str, Any],
    interrupts: list[Interrupt],
    emit: Emit | None,
    structured: "StructuredOutputContext | None",
) -> AgentResult:
    if structured is not None:  # a resume, maybe in another process, finishes the same structured output
        from .tools.structured_output._structured_output_context import CONTEXT_KEY  # pydantic: only when used

        agent._interrupt_state.set_context(CONTEXT_KEY, structured.to_state())
    if emit is not None:
        emit({"interrupt_event": {"interrupts": interrupts}})
    return _result(agent, "interrupt", message, invocation_state, interrupts)


def _result(
    agent: "Agent",
    stop_reason: StopReason,
    message: Message,
    invocation_state: dict[str, Any],
    interrupts: list[Interrupt] | None = None,
    structured_output: "BaseModel | None" = None,
) -> AgentResult:
    return AgentResult(
        stop_reason=stop_reason,
        message=message,
        metrics=agent.event_loop_metrics,
        state=invocation_state.get("request_state", {}),
        interrupts=interrupts,
        structured_output=structured_output,
    )


async def _model_turn(
    agent: "Agent", invocation_state: dict[str, Any], emit: Emit | None, structured: "StructuredOutputContext | None"
) -> tuple[Message, StopReason] | list[Interrupt]:
    """Call the model and append its message (retrying whole attempts when a hook asks); or return interrupts.

    A context-window overflow makes the conversation manager reduce the history, and the call is made again; it
    stops when the manager cannot reduce any further (it raises `ContextWindowOverflowException`).
    """
    while True:
        try:
            outcome = await _model_attempt(agent, invocation_state, emit, structured)
        except ContextWindowOverflowException as exc:
            await _reduce_context(agent, exc)
            continue
        if outcome is not None:
            break
    if isinstance(outcome, list):
        return outcome
    message, stop_reason = outcome
    await append_message(agent, message, emit)
    if stop_reason == "max_tokens":
        raise MaxTokensReachedException(
            "Agent has reached an unrecoverable state due to max_tokens limit. "
            "For more information see: https://strandsagents.com/latest/user-guide/concepts/agents/agent-loop/"
            "#maxtokensreachedexception"
        )
    return message, stop_reason


async def _reduce_context(agent: "Agent", exc: ContextWindowOverflowException) -> None:
    """Let the conversation manager shrink the history after an overflow, and persist the change (Strands)."""
    agent.conversation_manager.reduce_context(agent, e=exc)
    session_manager = agent.session_manager
    if session_manager is not None:
        import anyio.to_thread  # imported on first use, not with strandslike

        await anyio.to_thread.run_sync(session_manager.sync_agent, agent)


async def _model_attempt(
    agent: "Agent", invocation_state: dict[str, Any], emit: Emit | None, structured: "StructuredOutputContext | None"
) -> tuple[Message, StopReason] | list[Interrupt] | None:
    """Run one model call with its hooks; None means a hook asked for a retry."""
    hooks = agent.hooks
    state = agent._interrupt_state
    if hooks._callbacks(BeforeModelCallEvent):
        before = BeforeModelCallEvent(agent, invocation_state)
        _, interrupts = await hooks.invoke_callbacks_async(before)
        if interrupts:
            state.activate()
            return interrupts
        if state.activated:
            state.settle("v1:before_model_call:", "model call cancelled" if before.cancel else "model call made")
        state.deactivate()  # the interrupted model call may proceed: its answers are spent
        if before.cancel:
            text = before.cancel if isinstance(before.cancel, str) else "model call denied by hook"
            denied: Message = {"role": "assistant", "content": [{"text": text}]}
            after = AfterModelCallEvent(agent, invocation_state, ModelStopResponse(denied, "end_turn"))
            await hooks.invoke_callbacks_async(after)
            return denied, "end_turn"
    model = agent.model
    if model is None:
        raise ModelNotConfiguredError()
    has_after = bool(hooks._callbacks(AfterModelCallEvent))
    tool_specs: list[Any] | None = agent.tool_registry.get_all_tool_specs() or None
    tool_choice = None
    if structured is not None:
        tool_specs, tool_choice = structured.request(tool_specs)
    tracer = current_tracer()
    scope = tracer.start_chat(agent) if tracer is not None else None
    try:
        chunks = model.stream(
            agent.messages,
            tool_specs,
            agent.system_prompt,
            tool_choice=tool_choice,
            system_prompt_content=agent._system_prompt_content,
            invocation_state=invocation_state,
            cancel_signal=agent._cancel_signal,
            model_state=agent._model_state,
        )
        streamed = await process_stream(chunks, emit, agent._cancel_signal)
        if streamed.redact_user_message is not None:  # a guardrail asked to redact the user's input
            from .agent._redact import redact_latest_user_message

            redact_latest_user_message(agent, streamed.redact_user_message)
    except BaseException as exc:
        if scope is not None:
            scope.end(error=exc)
        if not has_after or not isinstance(exc, Exception):
            raise
        failed = AfterModelCallEvent(agent, invocation_state, exception=exc)
        await hooks.invoke_callbacks_async(failed)  # outside the try: a hook error is never dispatched twice
        if failed.retry:
            logger.warning("error=<%s: %s> | the model call failed; a hook asked to retry it", type(exc).__name__, exc)
            _count_retry(agent, emit)
            return None
        raise
    if tracer is not None and scope is not None:
        tracer.end_chat(scope, streamed.stop_reason, streamed.usage)
    if has_after:
        after = AfterModelCallEvent(agent, invocation_state, ModelStopResponse(streamed.message, streamed.stop_reason))
        await hooks.invoke_callbacks_async(after)
        if after.retry:
            logger.info("stop_reason=<%s> | a hook asked to retry the model call", streamed.stop_reason)
            agent.event_loop_metrics.add_usage(streamed.usage, streamed.metrics)  # the discarded answer was paid for
            _count_retry(agent, emit)
            return None
    agent.event_loop_metrics.add_usage(streamed.usage, streamed.metrics)
    return streamed.message, streamed.stop_reason


def _count_retry(agent: "Agent", emit: Emit | None) -> None:
    agent.event_loop_metrics.model_retry_count += 1
    if emit is not None:
        delay = getattr(agent.retry_strategy, "last_delay", None)
        if delay is not None:  # Strands' event for a throttling backoff
            emit({"event_loop_throttled_delay": delay})


async def _tool_batch(
    agent: "Agent", message: Message, tool_uses: list[ToolUse], invocation_state: dict[str, Any], emit: Emit | None
) -> list[Interrupt] | Message | None:
    """Run one tool batch and append its results.

    Returns the interrupts that paused it, the final assistant message if a hook ended the turn, or None.
    """
    hooks = agent.hooks
    state = agent._interrupt_state
    pending = state.pending_tool_execution if state.activated else None
    results: dict[str, ToolResult] = {}
    if pending is not None:
        results.update((result["toolUseId"], result) for result in pending.completed_tool_results)
    to_run = [tool_use for tool_use in tool_uses if tool_use["toolUseId"] not in results]

    if hooks._callbacks(BeforeToolsEvent):
        before = BeforeToolsEvent(agent, message, invocation_state)
        _, raised = await hooks.invoke_callbacks_async(before)
        if raised:  # nothing ran; as in Strands, AfterToolsEvent does not fire for this stop
            _pause(state, message, tool_uses, results)
            return raised
        if state.activated:
            state.settle(
                "v1:before_tools:", f"tool batch cancelled: {before.cancel}" if before.cancel else "tool batch ran"
            )
        if before.cancel:
            text = before.cancel if isinstance(before.cancel, str) else "Tool cancelled by hook"
            for tool_use in to_run:
                results[tool_use["toolUseId"]] = error_result(tool_use["toolUseId"], text)
            to_run = []

    interrupts: list[Interrupt] = []
    try:
        if to_run:
            interrupts = await agent.tool_executor.execute(agent, to_run, results, invocation_state, emit)
    except BaseException:
        if pending is not None:  # keep what completed, so a retried resume does not run it again
            pending.completed_tool_results = _in_order(tool_uses, results)
        raise
    result_message: Message = {"role": "user", "content": [{"toolResult": r} for r in _in_order(tool_uses, results)]}
    after = AfterToolsEvent(agent, result_message, invocation_state) if hooks._callbacks(AfterToolsEvent) else None
    if interrupts:
        if after is not None:
            await hooks.invoke_callbacks_async(after)
        _pause(state, message, tool_uses, results)
        return interrupts

    state.deactivate()
    try:
        if after is not None:
            await hooks.invoke_callbacks_async(after)
    finally:
        # Append the results even if an AfterToolsEvent hook raised, so completed tools never run twice
        # (harness-sdk#4338).
        await append_message(agent, result_message, emit)
    if after is None or not after.end_turn:
        return None
    end_turn = after.end_turn
    content: list[ContentBlock]
    if isinstance(end_turn, str):
        content = [{"text": end_turn}]
    elif isinstance(end_turn, list):
        content = end_turn
    else:
        content = [{"text": "Turn ended early by hook after tool execution"}]
    final: Message = {"role": "assistant", "content": content}
    await append_message(agent, final, emit)
    return final


def _in_order(tool_uses: list[ToolUse], results: dict[str, ToolResult]) -> list[ToolResult]:
    return [results[tool_use["toolUseId"]] for tool_use in tool_uses if tool_use["toolUseId"] in results]


def _pause(
    state: "_InterruptState", message: Message, tool_uses: list[ToolUse], results: dict[str, ToolResult]
) -> None:
    state.pending_tool_execution = PendingToolExecution(message, _in_order(tool_uses, results))
    state.activate()
