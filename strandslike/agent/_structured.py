"""Structured output for the agent: the per-invocation context, and `Agent.structured_output_async`."""

from typing import TYPE_CHECKING, Any, TypeVar

from .._log import get_logger
from ..hooks.events import AfterInvocationEvent, BeforeInvocationEvent
from ..types.agent import AgentInput
from ..types.exceptions import ConcurrencyException, ModelNotConfiguredError
from ._prompt import prompt_to_messages

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ..tools.structured_output import StructuredOutputContext
    from .agent import Agent

# pydantic and the structured output machinery are imported when structured output is first asked for.
logger = get_logger(__name__)  # logging is imported on first use

T = TypeVar("T", bound="BaseModel")


def _check_output_model(output_model: Any) -> None:
    from pydantic import BaseModel

    if not (isinstance(output_model, type) and issubclass(output_model, BaseModel)):
        raise TypeError(
            f"structured_output_model must be a pydantic BaseModel subclass, got {output_model!r}. "
            "Define `class Answer(BaseModel): ...` and pass the class itself."
        )


def start_structured_output(
    agent: "Agent", output_model: "type[BaseModel] | None", prompt: str | None
) -> "StructuredOutputContext | None":
    """Return the structured output context of an invocation (registering its tool), or None when there is none.

    The model is the invocation's, else the one of the paused run being resumed, else the agent's default.
    """
    resuming = agent._interrupt_state.activated
    pending = agent._pending_structured_output if resuming else None
    if output_model is None and pending is not None:
        output_model, prompt = pending[0], prompt or pending[1]
    output_model = output_model or agent.structured_output_model
    if output_model is None:
        if not resuming or not agent._interrupt_state.context:
            return None
        from ..tools.structured_output._structured_output_context import CONTEXT_KEY

        if CONTEXT_KEY in agent._interrupt_state.context:
            logger.warning(
                "tool_name=<%s> | the resumed run was producing structured output, but no structured_output_model "
                "was given; it ends without one",
                agent._interrupt_state.context[CONTEXT_KEY].get("tool_name"),
            )
        return None
    _check_output_model(output_model)
    from ..tools.structured_output._structured_output_context import CONTEXT_KEY, StructuredOutputContext

    context = StructuredOutputContext(output_model, prompt or agent.structured_output_prompt)
    if resuming:
        context.load_state(agent._interrupt_state.context.get(CONTEXT_KEY))
    context.register_tool(agent.tool_registry)
    return context


def finish_structured_output(agent: "Agent", context: "StructuredOutputContext | None") -> None:
    """Unregister the invocation's tool; remember its model while the run is paused, for the resume."""
    if context is None:
        agent._pending_structured_output = None
        return
    context.cleanup(agent.tool_registry)
    model = context.structured_output_model
    if agent._interrupt_state.activated and model is not None:
        agent._pending_structured_output = (model, context.structured_output_prompt)
    else:
        agent._pending_structured_output = None


async def structured_output_async(agent: "Agent", output_model: type[T], prompt: AgentInput = None) -> T:
    """Implement `Agent.structured_output_async` (see there)."""
    _check_output_model(output_model)
    if agent._interrupt_state.activated:
        raise RuntimeError("cannot call structured output during interrupt")
    model = agent.model
    if model is None:
        raise ModelNotConfiguredError()
    if not agent._invocation_lock.acquire(blocking=False):
        raise ConcurrencyException("Agent is already processing a request. Concurrent invocations are not supported.")
    try:
        hooks = agent.hooks
        if hooks._callbacks(BeforeInvocationEvent):
            await hooks.invoke_callbacks_async(BeforeInvocationEvent(agent, {}))
        try:
            if not agent.messages and not prompt:
                raise ValueError("No conversation history or prompt provided")
            messages = [*agent.messages, *prompt_to_messages(prompt, agent.messages)]
            handler = agent.callback_handler
            output: Any = None
            async for event in model.structured_output(output_model, messages, system_prompt=agent.system_prompt):
                if "output" in event:
                    output = event["output"]
                elif handler is not None:
                    handler(**event)
            if not isinstance(output, output_model):
                raise ValueError(
                    f"{type(model).__name__}.structured_output ended without an {output_model.__name__} instance "
                    f"(last output: {output!r})."
                )
            return output
        finally:
            if hooks._callbacks(AfterInvocationEvent):
                await hooks.invoke_callbacks_async(AfterInvocationEvent(agent, {}, None))
    finally:
        agent._invocation_lock.release()
