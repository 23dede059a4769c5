"""Issue 12, item 11: the smaller names Strands users import, redactContent, trace_attributes, lazy imports."""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from strandslike import Agent, AgentBase, tool
from strandslike.handlers import CompositeCallbackHandler, PrintingCallbackHandler, null_callback_handler
from strandslike.models import Model, ScriptedModel, text
from strandslike.multiagent import GraphBuilder, Swarm
from strandslike.session import FileSessionManager
from strandslike.types.event_loop import Metrics, StopReason, Usage


def test_printing_callback_handler_prints_text_reasoning_and_tools(capsys: pytest.CaptureFixture[str]) -> None:
    handler = PrintingCallbackHandler()
    handler(reasoningText="thinking... ")
    handler(data="Hello")
    handler(data=" world", complete=True)
    handler(event={"contentBlockStart": {"start": {"toolUse": {"name": "search", "toolUseId": "t"}}}})
    handler(event={"contentBlockStart": {"start": {}}})
    assert capsys.readouterr().out == "thinking... Hello world\n\n\n\nTool #1: search\n"
    assert handler.tool_count == 1
    quiet = PrintingCallbackHandler(verbose_tool_use=False)
    quiet(event={"contentBlockStart": {"start": {"toolUse": {"name": "search"}}}})
    assert capsys.readouterr().out == ""
    assert quiet.tool_count == 1


async def test_handlers_receive_an_agents_events(capsys: pytest.CaptureFixture[str]) -> None:
    seen: list[dict[str, Any]] = []
    handler = CompositeCallbackHandler(PrintingCallbackHandler(), lambda **event: seen.append(event))
    agent = Agent(model=ScriptedModel([text("Hi there")]), callback_handler=handler)
    result = await agent.invoke_async("hello")
    assert "Hi there" in capsys.readouterr().out
    assert any(event.get("data") == "Hi there" for event in seen)
    assert seen[-1] == {"result": result}
    assert null_callback_handler(data="ignored") is None
    assert (
        Agent(model=ScriptedModel([]), callback_handler=null_callback_handler).callback_handler is null_callback_handler
    )


def test_event_loop_types() -> None:
    usage: Usage = {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3}
    metrics: Metrics = {"latencyMs": 5}
    reason: StopReason = "end_turn"
    assert (usage["totalTokens"], metrics["latencyMs"], reason) == (3, 5, "end_turn")


def test_agent_base_protocol() -> None:
    assert isinstance(Agent(), AgentBase)
    assert not isinstance(object(), AgentBase)

    class Remote:
        async def invoke_async(self, prompt: Any = None, **kwargs: Any) -> Any: ...
        def __call__(self, prompt: Any = None, **kwargs: Any) -> Any: ...
        def stream_async(self, prompt: Any = None, **kwargs: Any) -> Any: ...

    assert isinstance(Remote(), AgentBase)


def test_get_all_tools_config() -> None:
    @tool
    def lookup(key: str) -> str:
        """Look up a key.

        Args:
            key: The key.
        """
        return key

    config = Agent(tools=[lookup]).tool_registry.get_all_tools_config()
    assert config == {"lookup": lookup.tool_spec}


def test_trace_attributes_are_accepted_and_filtered_as_in_strands() -> None:
    attributes = {"user": "u1", "n": 3, "ok": True, "tags": ["a", "b"], "bad": {"no": 1}, "mixed": [1, {}]}
    expected = {"user": "u1", "n": 3, "ok": True, "tags": ["a", "b"]}
    assert Agent(trace_attributes=attributes).trace_attributes == expected
    assert Agent().trace_attributes == {}
    node = Agent(name="n1", model=ScriptedModel([]))
    builder = GraphBuilder()
    builder.add_node(node, "n1")
    graph = builder.build()
    assert graph.trace_attributes == {}
    assert Swarm([Agent(name="s1")], trace_attributes=attributes).trace_attributes == expected


class GuardedModel(Model):
    """A model whose guardrail redacts the user's input and its own answer (Bedrock's redactContent events)."""

    def __init__(self, user: str | None, assistant: str | None) -> None:
        self.redact = {}
        if user is not None:
            self.redact["redactUserContentMessage"] = user
        if assistant is not None:
            self.redact["redactAssistantContentMessage"] = assistant

    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {}

    async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any):
        yield {"messageStart": {"role": "assistant"}}
        yield {"contentBlockDelta": {"delta": {"text": "secret answer"}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "guardrail_intervened"}}
        yield {"redactContent": self.redact}


async def test_redact_content_redacts_the_user_message_and_the_answer(tmp_path: Path) -> None:
    model = GuardedModel("[User input redacted.]", "[Assistant output redacted.]")
    agent = Agent(model=model, session_manager=FileSessionManager("guarded", storage_dir=tmp_path))
    result = await agent.invoke_async("my credit card is 1234")
    assert result.stop_reason == "guardrail_intervened"
    assert agent.messages == [
        {"role": "user", "content": [{"text": "[User input redacted.]"}]},
        {"role": "assistant", "content": [{"text": "[Assistant output redacted.]"}]},
    ]
    # The redaction is persisted: a restored agent never sees the original input.
    restored = Agent(model=ScriptedModel([]), session_manager=FileSessionManager("guarded", storage_dir=tmp_path))
    assert restored.messages == agent.messages


async def test_redacting_a_tool_result_keeps_its_block() -> None:
    agent = Agent(model=GuardedModel("[redacted]", None))
    agent.messages = [
        {"role": "user", "content": [{"text": "q"}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t", "name": "x", "input": {}}}]},
    ]
    await agent.invoke_async(None)  # runs the dangling tool use (unknown tool: an error result), then the model
    user = agent.messages[2]
    assert user["content"] == [
        {"toolResult": {"toolUseId": "t", "status": "error", "content": [{"text": "[redacted]"}]}},
    ]


def test_importing_the_agent_loads_no_more_than_it_needs() -> None:
    code = (
        "import sys, json; import strandslike; from strandslike import Agent; "
        "print(json.dumps(sorted(m for m in sys.modules)))"
    )
    loaded = set(
        json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    )
    for heavy in (
        "pydantic",
        "anyio",
        "docstring_parser",
        "jsonschema",
        "strandslike.tools.decorator",
        "strandslike.models.scripted",
        "strandslike.interrupt._interrupt_tool",
        "strandslike.agent._agent_as_tool",
        "strandslike.session",
        "strandslike.multiagent",
    ):
        assert heavy not in loaded, heavy
    assert "strandslike.agent.agent" in loaded
