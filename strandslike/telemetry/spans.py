"""OpenTelemetry spans for agents, model calls, tool calls and orchestrator nodes (the ``otel`` extra).

This module is the seam between strandslike's components and OpenTelemetry: the agent, the event loop, the tool
executor and the orchestrators ask `current_tracer()` for the tracer and, when it returns None (tracing is off,
the default), do nothing else, so a disabled tracer costs one function call per model call and per tool call.
OpenTelemetry itself is imported only when tracing is switched on.

Spans follow the OpenTelemetry GenAI semantic conventions:

- ``invoke_agent {agent.name}`` for an agent invocation (``gen_ai.operation.name`` ``invoke_agent``,
  ``gen_ai.agent.name``, ``gen_ai.agent.id``, ``gen_ai.request.model``, ``gen_ai.conversation.id`` = the session
  id; at the end ``gen_ai.response.finish_reasons`` and the invocation's ``gen_ai.usage.input_tokens`` /
  ``output_tokens``);
- ``chat {model id}`` for each model call (kind CLIENT; ``gen_ai.request.model``, ``gen_ai.provider.name`` for the
  shipped providers (``openai``, ``anthropic``, ``aws.bedrock``) or a custom model's ``provider_name`` attribute,
  usage, finish reasons);
- ``execute_tool {tool name}`` for each tool call (``gen_ai.tool.name``, ``gen_ai.tool.call.id``,
  ``gen_ai.tool.type``), hooks and retries included;
- ``invoke_graph {id}`` / ``invoke_swarm {id}`` for an orchestration (the operation names Strands uses) and
  ``execute_node {node id}`` for each node it runs (``strandslike.node.id``, ``strandslike.node.status``), with
  the node's agent span inside.

Each span is the current span while it runs, so spans of nested agents, of nodes, and of instrumented libraries a
tool or a model provider calls (HTTP clients, databases) become its children. Interrupts are span events:
``strandslike.interrupt.raised`` on the span where the hook or tool raised it, ``strandslike.interrupt.answered``
on the invocation that received the answer (ids, names, kinds and actions; never reasons or answers). A failed
span has status ERROR and ``error.type``. No span carries message content: the history is never serialized,
so tracing costs the same on the first turn and the thousandth.
"""

import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ..types.exceptions import MissingExtraError, StrandslikeError

if TYPE_CHECKING:
    from ..agent.agent import Agent
    from ..interrupt import Interrupt
    from ..types.tools import ToolResult, ToolUse

R = TypeVar("R")

ENV_VAR = "STRANDSLIKE_TRACING"
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("", "0", "false", "no", "off")
_INSTRUMENTATION = "strandslike"


class SpanScope:
    """A started span that is the current span until `end` is called (in the same task).

    Attributes:
        span: The OpenTelemetry span.
        start_usage: For an agent span, the agent's token counts when it started.
    """

    __slots__ = ("_detach", "_token", "span", "start_usage")

    def __init__(self, span: Any, token: Any, detach: Any) -> None:
        self.span = span
        self._token = token
        self._detach = detach
        self.start_usage: tuple[int, int] | None = None

    def end(
        self, attributes: dict[str, Any] | None = None, error: BaseException | None = None, failure: str | None = None
    ) -> None:
        """Stop being the current span, record ``attributes``, mark it failed, and end it.

        Args:
            attributes: Attributes to set before the span ends.
            error: The exception that ended the operation (status ERROR, ``error.type``, an exception event).
            failure: A failure without an exception (status ERROR with this description).
        """
        self._detach(self._token)
        span = self.span
        if attributes:
            span.set_attributes(attributes)
        if error is not None:
            _record_error(span, error)
        elif failure is not None:
            span.set_status(_error_status(failure))
        span.end()


class SpanTracer:
    """Starts strandslike's spans on an OpenTelemetry tracer.

    Args:
        tracer: An ``opentelemetry.trace.Tracer``.
    """

    def __init__(self, tracer: Any) -> None:
        from opentelemetry import context, trace

        self.tracer = tracer
        self._attach = context.attach
        self._detach = context.detach
        self._get_current = context.get_current
        self._in_context = trace.set_span_in_context
        self._current_span = trace.get_current_span
        self._client = trace.SpanKind.CLIENT
        self._internal = trace.SpanKind.INTERNAL

    def _start(self, name: str, attributes: dict[str, Any], kind: Any) -> SpanScope:
        # The current context is read once and passed on: left to itself, the SDK reads it for the parent, again
        # in the sampler, and once more to make the new span current.
        parent = self._get_current()
        span = self.tracer.start_span(name, context=parent, kind=kind, attributes=attributes)
        return SpanScope(span, self._attach(self._in_context(span, parent)), self._detach)

    # -- agents and model calls ----------------------------------------------------------------------------------

    def start_agent(self, agent: "Agent") -> SpanScope:
        """Start the ``invoke_agent`` span of one invocation of ``agent``."""
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": agent.name,
            "gen_ai.agent.id": agent.agent_id,
        }
        if agent.description:
            attributes["gen_ai.agent.description"] = agent.description
        model_id = _model_id(agent.model)
        if model_id is not None:
            attributes["gen_ai.request.model"] = model_id
        provider = _provider_name(agent.model)
        if provider is not None:
            attributes["gen_ai.provider.name"] = provider
        session_id = getattr(agent.session_manager, "session_id", None)
        if isinstance(session_id, str):
            attributes["gen_ai.conversation.id"] = session_id
        _add_custom(attributes, agent)
        scope = self._start(f"invoke_agent {agent.name}", attributes, self._internal)
        usage = agent.event_loop_metrics.accumulated_usage
        scope.start_usage = (usage.get("inputTokens", 0), usage.get("outputTokens", 0))
        return scope

    async def trace_agent(self, agent: "Agent", run: Callable[..., Awaitable[R]], *args: Any) -> R:
        """Run ``run(*args)`` (one invocation of ``agent``) inside its ``invoke_agent`` span."""
        scope = self.start_agent(agent)
        try:
            result = await run(*args)
        except BaseException as exc:
            self.end_agent(scope, agent, None, exc)
            raise
        self.end_agent(scope, agent, result, None)
        return result

    def end_agent(self, scope: SpanScope, agent: "Agent", result: Any, error: BaseException | None) -> None:
        """End an invocation's span with its stop reason and the tokens it used."""
        attributes: dict[str, Any] = {}
        if result is not None:
            attributes["gen_ai.response.finish_reasons"] = [str(result.stop_reason)]
            if result.replayed:
                attributes["strandslike.replayed"] = True
            if result.interrupts:
                attributes["strandslike.interrupt.open"] = len(result.interrupts)
        start = scope.start_usage
        if start is not None:
            usage = agent.event_loop_metrics.accumulated_usage
            attributes["gen_ai.usage.input_tokens"] = usage.get("inputTokens", 0) - start[0]
            attributes["gen_ai.usage.output_tokens"] = usage.get("outputTokens", 0) - start[1]
        scope.end(attributes, error)

    def start_chat(self, agent: "Agent") -> SpanScope:
        """Start the ``chat`` span of one model call."""
        model_id = _model_id(agent.model)
        attributes: dict[str, Any] = {"gen_ai.operation.name": "chat"}
        provider = _provider_name(agent.model)
        if provider is not None:
            attributes["gen_ai.provider.name"] = provider
        _add_custom(attributes, agent)
        if model_id is not None:
            attributes["gen_ai.request.model"] = model_id
            return self._start(f"chat {model_id}", attributes, self._client)
        return self._start("chat", attributes, self._client)

    def end_chat(self, scope: SpanScope, stop_reason: str, usage: Any) -> None:
        """End a model call's span with its finish reason and token usage.

        The finish reasons go in as a list; the SDK stores a tuple either way, but CPython answers
        ``isinstance(list, Sequence)`` from the ABC cache and ``isinstance(tuple, Sequence)`` by a Python call to
        ``ABCMeta.__subclasscheck__`` every time (``tuple`` is registered on ``Sequence`` directly, and a direct
        registration is never cached).
        """
        if not scope.span.is_recording():  # sampled out: nothing to record
            scope.end()
            return
        scope.end(
            {
                "gen_ai.response.finish_reasons": [stop_reason],
                "gen_ai.usage.input_tokens": usage.get("inputTokens", 0),
                "gen_ai.usage.output_tokens": usage.get("outputTokens", 0),
            }
        )

    # -- tools --------------------------------------------------------------------------------------------------

    def start_tool(self, tool_use: "ToolUse", agent: Any = None) -> SpanScope:
        """Start the ``execute_tool`` span of one tool call (its hooks and retries included)."""
        name = tool_use["name"]
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": tool_use["toolUseId"],
            "gen_ai.tool.type": "function",
        }
        _add_custom(attributes, agent)
        return self._start(f"execute_tool {name}", attributes, self._internal)

    def end_tool(self, scope: SpanScope, outcome: "ToolResult | list[Interrupt] | Any") -> None:
        """End a tool call's span: an error result sets status ERROR; an interrupted call says so.

        A call that succeeded gets no status attribute (an unset status is success), which keeps the common case
        cheap.
        """
        if isinstance(outcome, list):
            scope.end({"strandslike.tool.status": "interrupted"})
        elif isinstance(outcome, dict) and outcome.get("status") == "error":
            attributes = {"strandslike.tool.status": "error", "error.type": "tool_error"}
            scope.end(attributes, failure=_result_text(outcome) or "the tool returned an error result")
        else:
            scope.end()

    # -- orchestrators ------------------------------------------------------------------------------------------

    def start_orchestrator(self, kind: str, orchestrator_id: str, orchestrator: Any = None) -> SpanScope:
        """Start the span of a Graph or Swarm invocation (``kind`` is ``graph`` or ``swarm``)."""
        operation = f"invoke_{kind}"
        attributes: dict[str, Any] = {"gen_ai.operation.name": operation, "gen_ai.agent.name": orchestrator_id}
        _add_custom(attributes, orchestrator)
        return self._start(f"{operation} {orchestrator_id}", attributes, self._internal)

    def start_node(self, node_id: str, node_type: str) -> SpanScope:
        """Start the span of one node run (``node_type`` is ``agent`` or ``multiagent``)."""
        attributes = {"strandslike.node.id": node_id, "strandslike.node.type": node_type}
        return self._start(f"execute_node {node_id}", attributes, self._internal)

    def end_orchestration(self, scope: SpanScope, result: Any, error: BaseException | None) -> None:
        """End an orchestration's span with its status (``completed``, ``failed``, ``interrupted``)."""
        self._end_with_status(scope, "strandslike.status", result, error)

    def end_node(self, scope: SpanScope, result: Any, error: BaseException | None = None) -> None:
        """End a node's span with its status; a failed node (error, timeout, cancel) sets status ERROR."""
        self._end_with_status(scope, "strandslike.node.status", result, error)

    def _end_with_status(self, scope: SpanScope, key: str, result: Any, error: BaseException | None) -> None:
        status = getattr(getattr(result, "status", None), "value", None)
        attributes = {key: status} if status is not None else {}
        if error is None and status == "failed":
            detail = getattr(result, "result", None)
            failure = f"{type(detail).__name__}: {detail}" if isinstance(detail, BaseException) else "failed"
            scope.end(attributes, failure=failure[:500])
            return
        scope.end(attributes, error)

    # -- interrupts -----------------------------------------------------------------------------------------------

    def interrupt_raised(self, interrupt: "Interrupt") -> None:
        """Add a ``strandslike.interrupt.raised`` event to the current span."""
        attributes = {"strandslike.interrupt.id": interrupt.id, "strandslike.interrupt.name": interrupt.name}
        if interrupt.kind is not None:
            attributes["strandslike.interrupt.kind"] = interrupt.kind
        if interrupt.tool_use_id is not None:
            attributes["gen_ai.tool.call.id"] = interrupt.tool_use_id
        self._current_span().add_event("strandslike.interrupt.raised", attributes)

    def interrupt_answered(self, interrupt: "Interrupt", action: str) -> None:
        """Add a ``strandslike.interrupt.answered`` event to the current span."""
        attributes = {
            "strandslike.interrupt.id": interrupt.id,
            "strandslike.interrupt.name": interrupt.name,
            "strandslike.interrupt.action": action,
        }
        self._current_span().add_event("strandslike.interrupt.answered", attributes)


_active: SpanTracer | None = None


def current_tracer() -> SpanTracer | None:
    """Return the tracer strandslike's components record spans with, or None while tracing is off."""
    return _active


def enable_tracing(tracer_provider: Any = None) -> None:
    """Record OpenTelemetry spans for agents, model calls, tool calls and orchestrations.

    Spans go to the global tracer provider (``opentelemetry.trace.set_tracer_provider``), including one set after
    this call; pass ``tracer_provider`` to use another. Setting the environment variable
    ``STRANDSLIKE_TRACING=1`` before strandslike is imported does the same as calling this with no argument.

    Args:
        tracer_provider: An ``opentelemetry.trace.TracerProvider``; None for the global one.

    Raises:
        MissingExtraError: OpenTelemetry is not installed (``pip install 'strandslike[otel]'``).
    """
    global _active
    try:
        from opentelemetry import trace
    except ModuleNotFoundError as exc:
        raise MissingExtraError("Tracing", "otel", exc.name) from exc
    from .._version import __version__

    _active = SpanTracer(trace.get_tracer(_INSTRUMENTATION, __version__, tracer_provider=tracer_provider))


def disable_tracing() -> None:
    """Stop recording spans; spans already started end normally."""
    global _active
    _active = None


def tracing_enabled() -> bool:
    """Return whether strandslike records spans."""
    return _active is not None


class TracingConfigError(StrandslikeError, ValueError):
    """``STRANDSLIKE_TRACING`` holds a value that is neither on nor off."""

    code = "INVALID_TRACING_CONFIG"

    def __init__(self, value: str) -> None:
        super().__init__(
            f"{ENV_VAR}={value!r} | expected one of {', '.join(_TRUE)} to record spans, or one of "
            f"{', '.join(repr(v) for v in _FALSE)} (or unset) for no tracing."
        )


def configure_from_environment(environ: Any = os.environ) -> None:
    """Enable tracing if ``STRANDSLIKE_TRACING`` says so (called when strandslike is imported).

    Raises:
        TracingConfigError: The variable holds an unknown value.
        MissingExtraError: It asks for tracing and OpenTelemetry is not installed.
    """
    value = environ.get(ENV_VAR, "").strip()
    if value.lower() in _TRUE:
        enable_tracing()
    elif value.lower() not in _FALSE:
        raise TracingConfigError(value)


def _add_custom(attributes: dict[str, Any], owner: Any) -> None:
    """Add the owner's ``trace_attributes`` (Agent, Graph, Swarm) to a span's attributes, as Strands does."""
    custom = getattr(owner, "trace_attributes", None)
    if custom:
        attributes.update(custom)


def _model_id(model: Any) -> str | None:
    get_config = getattr(model, "get_config", None)
    if get_config is None:
        return None
    try:
        config = get_config()
    except Exception:  # a provider's config is its own business; tracing must not break the call
        return None
    model_id = config.get("model_id") if isinstance(config, dict) else None
    return str(model_id) if model_id is not None else None


# GenAI's names for the providers strandslike ships, by the module of the model class.
_PROVIDERS = {
    "strandslike.models.openai": "openai",
    "strandslike.models.anthropic": "anthropic",
    "strandslike.models.bedrock": "aws.bedrock",
}


def _provider_name(model: Any) -> str | None:
    """Return ``gen_ai.provider.name`` for ``model``: a shipped provider's, or a custom model's ``provider_name``."""
    name = _PROVIDERS.get(type(model).__module__)
    if name is None:
        name = getattr(model, "provider_name", None)
    return name if isinstance(name, str) else None


def _error_status(description: str) -> Any:
    from opentelemetry.trace import Status, StatusCode

    return Status(StatusCode.ERROR, description)


def _record_error(span: Any, error: BaseException) -> None:
    span.set_attribute("error.type", type(error).__qualname__)
    span.set_status(_error_status(f"{type(error).__name__}: {error}"[:500]))
    if isinstance(error, Exception):
        span.record_exception(error)


def _result_text(result: Any) -> str:
    parts = [part.get("text", "") for part in result.get("content") or () if isinstance(part, dict)]
    return " ".join(part for part in parts if part)[:500]


__all__ = [
    "ENV_VAR",
    "SpanScope",
    "SpanTracer",
    "TracingConfigError",
    "configure_from_environment",
    "current_tracer",
    "disable_tracing",
    "enable_tracing",
    "tracing_enabled",
]
