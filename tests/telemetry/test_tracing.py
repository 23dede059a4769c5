"""OpenTelemetry spans (GenAI conventions) checked with the SDK's in-memory exporter."""

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from strandslike import Agent, ToolContext, tool
from strandslike.hooks import AfterModelCallEvent, BeforeNodeCallEvent, HookProvider, HookRegistry
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.multiagent import GraphBuilder, Status, Swarm
from strandslike.session import FileSessionManager
from strandslike.telemetry import disable_tracing, enable_tracing, tracing_enabled
from strandslike.telemetry.spans import current_tracer

SECRET = "the prompt nobody may see in a trace"


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    enable_tracing(provider)
    try:
        yield exporter
    finally:
        disable_tracing()


@tool(context=True)
def transfer(tool_context: ToolContext, to: str, amount: int) -> str:
    """Transfer money.

    Args:
        to: The account.
        amount: The amount.
    """
    if tool_context.interrupt("approve", reason={"to": to}) != "y":
        return "not sent"
    return f"sent {amount} to {to}"


@tool
def explode() -> str:
    """Fail."""
    raise RuntimeError("disk full")


def by_name(finished: tuple[ReadableSpan, ...] | list[ReadableSpan]) -> dict[str, list[ReadableSpan]]:
    named: dict[str, list[ReadableSpan]] = {}
    for span in finished:
        named.setdefault(span.name, []).append(span)
    return named


def parent_of(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def events(span: ReadableSpan) -> list[tuple[str, dict[str, Any]]]:
    return [(event.name, dict(event.attributes or {})) for event in span.events]


def test_tracing_is_off_by_default():
    assert not tracing_enabled()
    assert current_tracer() is None


def test_a_run_with_a_tool_call_an_interrupt_and_a_resume(spans: InMemorySpanExporter, tmp_path):
    model = ScriptedModel([tool_call("transfer", to="robin", amount=5, tool_use_id="t1"), text("done")])
    agent = Agent(
        name="payer",
        agent_id="payer-1",
        model=model,
        tools=[transfer],
        session_manager=FileSessionManager("sess-1", storage_dir=tmp_path),
    )

    paused = agent(SECRET)
    first = spans.get_finished_spans()
    [interrupt] = paused.interrupts
    agent([interrupt.resume("y")])
    agent.session_manager.close()
    second = spans.get_finished_spans()[len(first) :]

    # First invocation: the agent span holds one model call and one tool call, which raised the interrupt.
    named = by_name(first)
    assert sorted(named) == ["chat scripted", "execute_tool transfer", "invoke_agent payer"]
    [invoke] = named["invoke_agent payer"]
    [chat] = named["chat scripted"]
    [call] = named["execute_tool transfer"]
    assert invoke.parent is None
    assert parent_of(chat) == invoke.context.span_id
    assert parent_of(call) == invoke.context.span_id
    assert {span.context.trace_id for span in first} == {invoke.context.trace_id}
    assert dict(invoke.attributes) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "payer",
        "gen_ai.agent.id": "payer-1",
        "gen_ai.request.model": "scripted",
        "gen_ai.conversation.id": "sess-1",
        "gen_ai.response.finish_reasons": ("interrupt",),
        "gen_ai.usage.input_tokens": 1,
        "gen_ai.usage.output_tokens": chat.attributes["gen_ai.usage.output_tokens"],
        "strandslike.interrupt.open": 1,
    }
    assert chat.kind.name == "CLIENT"
    assert chat.attributes["gen_ai.operation.name"] == "chat"
    assert chat.attributes["gen_ai.request.model"] == "scripted"
    assert chat.attributes["gen_ai.response.finish_reasons"] == ("tool_use",)
    assert chat.attributes["gen_ai.usage.input_tokens"] == 1
    assert dict(call.attributes) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "transfer",
        "gen_ai.tool.call.id": "t1",
        "gen_ai.tool.type": "function",
        "strandslike.tool.status": "interrupted",
    }
    assert events(call) == [
        (
            "strandslike.interrupt.raised",
            {
                "strandslike.interrupt.id": interrupt.id,
                "strandslike.interrupt.name": "approve",
                "strandslike.interrupt.kind": "tool_call",
                "gen_ai.tool.call.id": "t1",
            },
        )
    ]
    assert call.status.status_code == StatusCode.UNSET

    # The resume: a new agent span with the answer as an event, the tool running, then the closing model call.
    named = by_name(second)
    assert sorted(named) == ["chat scripted", "execute_tool transfer", "invoke_agent payer"]
    [resumed] = named["invoke_agent payer"]
    assert resumed.context.trace_id != invoke.context.trace_id  # a new request, a new trace
    assert events(resumed) == [
        (
            "strandslike.interrupt.answered",
            {
                "strandslike.interrupt.id": interrupt.id,
                "strandslike.interrupt.name": "approve",
                "strandslike.interrupt.action": "resume",
            },
        )
    ]
    assert resumed.attributes["gen_ai.response.finish_reasons"] == ("end_turn",)
    [call] = named["execute_tool transfer"]
    assert "strandslike.tool.status" not in call.attributes  # success: no status
    assert events(call) == []
    assert all(parent_of(span) == resumed.context.span_id for span in second if span is not resumed)
    assert [span.name for span in second] == ["execute_tool transfer", "chat scripted", "invoke_agent payer"]

    # Nothing of the conversation is put in a span.
    for span in (*first, *second):
        values = [*span.attributes.values(), *(v for event in span.events for v in (event.attributes or {}).values())]
        assert not any(SECRET in str(value) for value in values)


def test_a_hook_interrupt_and_a_restart_are_events_of_the_tool_span_and_the_resume(spans: InMemorySpanExporter):
    def guard(event: Any) -> None:
        event.interrupt("approval", allow_edits=True)

    from strandslike.hooks import BeforeToolCallEvent

    def approve(event: BeforeToolCallEvent) -> None:
        guard(event)

    @tool
    def pay(amount: int) -> str:
        """Pay.

        Args:
            amount: How much.
        """
        return f"paid {amount}"

    agent = Agent(
        model=ScriptedModel([tool_call("pay", amount=5, tool_use_id="t1"), text("ok")]), tools=[pay], hooks=[approve]
    )
    [interrupt] = agent("go").interrupts
    agent([interrupt.restart(input={"amount": 4})])
    named = by_name(spans.get_finished_spans())
    first_call, second_call = named["execute_tool pay"]
    assert [name for name, _ in events(first_call)] == ["strandslike.interrupt.raised"]
    _, resumed = named["invoke_agent Strands Agents"]
    [(name, attributes)] = events(resumed)
    assert name == "strandslike.interrupt.answered"
    assert attributes["strandslike.interrupt.action"] == "restart"
    assert second_call.status.status_code == StatusCode.UNSET


def test_a_failing_tool_and_a_failing_model_call_are_errors(spans: InMemorySpanExporter):
    retried = {"done": False}

    def retry_once(event: AfterModelCallEvent) -> None:
        if event.exception is not None and not retried["done"]:
            retried["done"] = True
            event.retry = True

    model = ScriptedModel([RuntimeError("throttled"), tool_call("explode", tool_use_id="t1"), text("ok")])
    Agent(model=model, tools=[explode], hooks=[retry_once])("go")
    named = by_name(spans.get_finished_spans())
    failed_chat, *good_chats = named["chat scripted"]
    assert failed_chat.status.status_code == StatusCode.ERROR
    assert failed_chat.attributes["error.type"] == "RuntimeError"
    assert [event.name for event in failed_chat.events] == ["exception"]
    assert all(chat.status.status_code == StatusCode.UNSET for chat in good_chats)
    [call] = named["execute_tool explode"]
    assert call.status.status_code == StatusCode.ERROR
    assert "disk full" in (call.status.description or "")
    assert call.attributes["error.type"] == "tool_error"
    [invoke] = named["invoke_agent Strands Agents"]
    assert invoke.status.status_code == StatusCode.UNSET  # the agent itself finished its turn


def test_an_invocation_that_raises_ends_its_span_with_the_error(spans: InMemorySpanExporter):
    agent = Agent(model=ScriptedModel([RuntimeError("provider down")]))
    with pytest.raises(RuntimeError):
        agent("go")
    named = by_name(spans.get_finished_spans())
    [invoke] = named["invoke_agent Strands Agents"]
    assert invoke.status.status_code == StatusCode.ERROR
    assert invoke.attributes["error.type"] == "RuntimeError"
    [chat] = named["chat scripted"]
    assert parent_of(chat) == invoke.context.span_id


class Gate(HookProvider):
    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeNodeCallEvent, self.gate)

    def gate(self, event: BeforeNodeCallEvent) -> None:
        if event.node_id == "writer" and event.interrupt("go-ahead") != "yes":
            event.cancel_node = "stopped"


def test_a_graph_nests_its_nodes_and_their_agents(spans: InMemorySpanExporter):
    research = Agent(name="research", model=ScriptedModel([text("found it")]))
    writer = Agent(name="writer", model=ScriptedModel([text("written")]))
    builder = GraphBuilder()
    builder.add_node(research, "research")
    builder.add_node(writer, "writer")
    builder.add_edge("research", "writer")
    builder.set_graph_id("report")
    builder.set_hook_providers([Gate()])
    graph = builder.build()

    paused = graph("write the report")
    assert paused.status == Status.INTERRUPTED
    first = spans.get_finished_spans()
    done = graph([paused.interrupts[0].resume("yes")])
    assert done.status == Status.COMPLETED
    second = spans.get_finished_spans()[len(first) :]

    named = by_name(first)
    [root] = named["invoke_graph report"]
    assert root.parent is None
    assert root.attributes["gen_ai.operation.name"] == "invoke_graph"
    assert root.attributes["strandslike.status"] == "interrupted"
    [node] = named["execute_node research"]
    assert parent_of(node) == root.context.span_id
    assert node.attributes["strandslike.node.status"] == "completed"
    assert node.attributes["strandslike.node.type"] == "agent"
    [agent_span] = named["invoke_agent research"]
    assert parent_of(agent_span) == node.context.span_id
    [chat] = named["chat scripted"]
    assert parent_of(chat) == agent_span.context.span_id
    [gated] = named["execute_node writer"]
    assert parent_of(gated) == root.context.span_id
    assert gated.attributes["strandslike.node.status"] == "interrupted"
    assert [event.name for event in gated.events] == ["strandslike.interrupt.raised"]

    named = by_name(second)
    [root] = named["invoke_graph report"]
    assert root.attributes["strandslike.status"] == "completed"
    assert [event.name for event in root.events] == ["strandslike.interrupt.answered"]
    [node] = named["execute_node writer"]
    assert parent_of(node) == root.context.span_id
    [agent_span] = named["invoke_agent writer"]
    assert parent_of(agent_span) == node.context.span_id
    assert "execute_node research" not in named  # a completed node does not run again


def test_parallel_graph_nodes_each_get_their_own_subtree(spans: InMemorySpanExporter):
    builder = GraphBuilder()
    for name in ("a", "b", "c"):
        builder.add_node(Agent(name=name, model=ScriptedModel([text(name)], delay=0.01)), name)
    graph = builder.build()
    graph("go")
    named = by_name(spans.get_finished_spans())
    for name in ("a", "b", "c"):
        [node] = named[f"execute_node {name}"]
        [agent_span] = named[f"invoke_agent {name}"]
        assert parent_of(agent_span) == node.context.span_id


def test_a_failed_node_is_an_error_span(spans: InMemorySpanExporter):
    builder = GraphBuilder()
    builder.add_node(Agent(name="broken", model=ScriptedModel([RuntimeError("boom")])), "broken")
    result = builder.build()("go")
    assert result.status == Status.FAILED
    [node] = by_name(spans.get_finished_spans())["execute_node broken"]
    assert node.status.status_code == StatusCode.ERROR
    assert node.attributes["strandslike.node.status"] == "failed"
    assert "boom" in (node.status.description or "")


def test_a_swarm_has_its_own_root_and_node_spans(spans: InMemorySpanExporter):
    first = Agent(
        name="first",
        model=ScriptedModel([tool_call("handoff_to_agent", agent_name="second", message="yours"), text("-")]),
    )
    second = Agent(name="second", model=ScriptedModel([text("done")]))
    Swarm([first, second])("go")
    named = by_name(spans.get_finished_spans())
    [root] = [span for name, found in named.items() if name.startswith("invoke_swarm ") for span in found]
    assert root.attributes["gen_ai.operation.name"] == "invoke_swarm"
    nodes = [span for span in named["execute_node first"] + named["execute_node second"]]
    assert all(parent_of(node) == root.context.span_id for node in nodes)
    [handoff] = named["execute_tool handoff_to_agent"]
    [first_agent] = named["invoke_agent first"]
    assert parent_of(handoff) == first_agent.context.span_id


def test_disable_tracing_stops_recording(spans: InMemorySpanExporter):
    disable_tracing()
    Agent(model=ScriptedModel([text("hi")]))("go")
    assert spans.get_finished_spans() == ()


def run_python(program: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {key: value for key, value in os.environ.items() if not key.startswith("STRANDSLIKE_")}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(program)], capture_output=True, text=True, env={**environ, **env}
    )


def test_the_environment_variable_uses_the_global_tracer_provider_even_one_set_later():
    done = run_python(
        """
        from strandslike import Agent
        from strandslike.models import ScriptedModel, text
        from strandslike.telemetry import tracing_enabled
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        assert tracing_enabled()
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)  # after strandslike was imported
        Agent(model=ScriptedModel([text("hi")]))("go")
        print(sorted(span.name for span in exporter.get_finished_spans()))
        """,
        STRANDSLIKE_TRACING="1",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['chat scripted', 'invoke_agent Strands Agents']"


@pytest.mark.parametrize(("value", "enabled"), [("0", False), ("off", False), ("", False), ("TRUE", True)])
def test_the_environment_variable_values(value: str, enabled: bool):
    done = run_python(
        "from strandslike.telemetry import tracing_enabled; print(tracing_enabled())", STRANDSLIKE_TRACING=value
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(enabled)


def test_a_garbled_environment_variable_is_a_clear_error():
    done = run_python("import strandslike", STRANDSLIKE_TRACING="maybe")
    assert done.returncode == 1
    assert "TracingConfigError: STRANDSLIKE_TRACING='maybe' | expected one of 1, true, yes, on" in done.stderr


def test_without_opentelemetry_enable_tracing_names_the_extra():
    done = run_python(
        """
        import sys
        sys.modules["opentelemetry"] = None  # as if the otel extra were not installed
        from strandslike.telemetry import enable_tracing
        from strandslike.types.exceptions import MissingExtraError
        try:
            enable_tracing()
        except MissingExtraError as exc:
            assert isinstance(exc, ImportError)
            print(exc)
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "Tracing needs the 'opentelemetry' package, which is not installed. Install the 'otel' extra: "
        "pip install 'strandslike[otel]'"
    )


def test_a_real_provider_names_itself_in_the_spans(spans: InMemorySpanExporter):
    from fake_llm import FakeLLM, Reply

    from strandslike.models.openai import OpenAIModel

    with FakeLLM([Reply("Hello there.", usage=(12, 3))]) as fake:
        model = OpenAIModel(client_args={"api_key": "sk-fake", "base_url": f"{fake.url}/v1"}, model_id="gpt-fake")
        Agent(name="greeter", model=model)("hi")
    named = by_name(spans.get_finished_spans())
    [chat] = named["chat gpt-fake"]
    assert chat.attributes["gen_ai.provider.name"] == "openai"
    assert chat.attributes["gen_ai.request.model"] == "gpt-fake"
    assert (chat.attributes["gen_ai.usage.input_tokens"], chat.attributes["gen_ai.usage.output_tokens"]) == (12, 3)
    [invoke] = named["invoke_agent greeter"]
    assert invoke.attributes["gen_ai.provider.name"] == "openai"


def test_a_model_id_changed_between_calls_names_the_next_chat_span(spans: InMemorySpanExporter):
    # The model id is read per model call: a changed id names the next chat span (a cache must not reuse the old one).
    model = ScriptedModel([text("one"), text("two"), text("three")])
    agent = Agent(model=model)
    agent("first")
    model.update_config(model_id="renamed")
    agent("second")
    model.update_config(model_id="scripted")
    agent("third")
    chats = [span for span in spans.get_finished_spans() if span.name.startswith("chat")]
    assert [span.name for span in chats] == ["chat scripted", "chat renamed", "chat scripted"]
    assert [span.attributes["gen_ai.request.model"] for span in chats] == ["scripted", "renamed", "scripted"]


def test_spans_a_tool_makes_itself_nest_under_its_execute_tool_span(spans: InMemorySpanExporter):
    # The tracer passes the parent context to the SDK explicitly; the span it starts must still be the current one
    # while the tool runs, so an instrumented library's spans become its children.
    from opentelemetry import trace

    inner = TracerProvider()
    inner.add_span_processor(SimpleSpanProcessor(spans))

    @tool
    def query(sql: str) -> str:
        """Run a query.

        Args:
            sql: The query.
        """
        with inner.get_tracer("db").start_as_current_span("db.query"):
            assert trace.get_current_span().is_recording()
        return "1 row"

    model = ScriptedModel([tool_call("query", sql="select 1", tool_use_id="q1"), text("done")])
    Agent(name="reader", model=model, tools=[query])("go")
    named = by_name(spans.get_finished_spans())
    [invoke], [db], [execute] = named["invoke_agent reader"], named["db.query"], named["execute_tool query"]
    assert parent_of(db) == execute.context.span_id
    assert parent_of(execute) == invoke.context.span_id
    assert [parent_of(chat) for chat in named["chat scripted"]] == [invoke.context.span_id] * 2
    assert {span.context.trace_id for span in spans.get_finished_spans()} == {invoke.context.trace_id}


def test_sampled_out_spans_record_nothing_and_change_nothing():
    # A sampler that drops every chat span: the run is unchanged, no chat span is exported, and the spans it keeps
    # still nest under the invocation (a dropped chat span is current while it runs, then gone).
    from opentelemetry.sdk.trace.sampling import ALWAYS_ON, Decision, Sampler, SamplingResult

    class NoChat(Sampler):
        def should_sample(self, parent_context: Any, trace_id: int, name: str, *args: Any, **kwargs: Any) -> Any:
            if name.startswith("chat"):
                return SamplingResult(Decision.DROP)
            return ALWAYS_ON.should_sample(parent_context, trace_id, name, *args, **kwargs)

        def get_description(self) -> str:
            return "NoChat"

    exporter = InMemorySpanExporter()
    provider = TracerProvider(sampler=NoChat())
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    enable_tracing(provider)
    try:
        model = ScriptedModel([tool_call("transfer", to="robin", amount=5, tool_use_id="t1"), text("done")])
        agent = Agent(name="payer", model=model, tools=[transfer])
        paused = agent("pay robin")
        [interrupt] = paused.interrupts
        result = agent([{"interruptResponse": {"interruptId": interrupt.id, "response": "y"}}])
    finally:
        disable_tracing()
    assert result.stop_reason == "end_turn"
    assert agent.messages[-2]["content"][0]["toolResult"]["content"][0]["text"] == "sent 5 to robin"
    named = by_name(exporter.get_finished_spans())
    assert sorted(named) == ["execute_tool transfer", "invoke_agent payer"]
    invokes = named["invoke_agent payer"]
    assert [invoke.attributes["gen_ai.response.finish_reasons"] for invoke in invokes] == [
        ("interrupt",),
        ("end_turn",),
    ]
    paused_call, resumed_call = named["execute_tool transfer"]
    assert [parent_of(paused_call), parent_of(resumed_call)] == [invoke.context.span_id for invoke in invokes]
    assert paused_call.attributes["strandslike.tool.status"] == "interrupted"
    assert [name for name, _ in events(paused_call)] == ["strandslike.interrupt.raised"]
