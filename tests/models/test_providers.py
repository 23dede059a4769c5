"""Each real provider, end to end through its SDK against the loopback fake (`fake_llm`): the same scenarios for all.

The providers are interchangeable: every test here is parametrized over OpenAI, Anthropic and Bedrock.
"""

import pytest
from fake_llm import PROTOCOLS, Failure, Reply, make_model
from helpers import answer
from pydantic import BaseModel

from strandslike import Agent, ModelRetryStrategy, tool
from strandslike.agent.conversation_manager import SlidingWindowConversationManager
from strandslike.hooks import AfterModelCallEvent, BeforeToolCallEvent, HookProvider, HookRegistry
from strandslike.types.exceptions import (
    ContextWindowOverflowException,
    MaxTokensReachedException,
    ModelThrottledException,
)

pytestmark = pytest.mark.parametrize("protocol", PROTOCOLS)


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def fail(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(reason)


class Approval(HookProvider):
    """Interrupts every call of ``delete`` until a human answers ``approve``."""

    def register_hooks(self, registry: HookRegistry, **kwargs) -> None:
        registry.add_callback(BeforeToolCallEvent, self.check)

    def check(self, event: BeforeToolCallEvent) -> None:
        if event.tool_use["name"] != "delete":
            return
        if event.interrupt("approval", reason={"path": event.tool_use["input"]["path"]}) != "approve":
            event.cancel_tool = "the user refused"


deleted: list[str] = []


@tool
def delete(path: str) -> str:
    """Delete a file."""
    deleted.append(path)
    return f"deleted {path}"


class FakeClock:
    def __init__(self) -> None:
        self.sleeps: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)


def agent_for(protocol, fake, **kwargs) -> Agent:
    kwargs.setdefault("callback_handler", None)
    return Agent(model=make_model(protocol, fake), **kwargs)


def user_texts(protocol, body) -> list[str]:
    """The plain user texts of a recorded request, whatever the protocol."""
    texts = []
    for message in body["messages"]:
        if message["role"] != "user":
            continue
        content = message["content"]
        if isinstance(content, str):
            texts.append(content)
            continue
        texts += [part["text"] for part in content if "text" in part and part.get("type", "text") == "text"]
    return texts


async def test_text_turn_streams_text_and_reports_usage(protocol, fake):
    fake.add(Reply("Hello there, human.", usage=(12, 5)))
    agent = agent_for(protocol, fake, system_prompt="Be brief.")
    result = await agent.invoke_async("hi")
    assert result.stop_reason == "end_turn"
    assert str(result) == "Hello there, human.\n"
    assert result.metrics.accumulated_usage == {"inputTokens": 12, "outputTokens": 5, "totalTokens": 17}
    _, _, body = fake.requests[0]
    assert user_texts(protocol, body) == ["hi"]
    if protocol == "openai":
        assert body["messages"][0] == {"role": "system", "content": "Be brief."}
        assert body["model"] == "gpt-fake"
        assert body["stream"] is True
    elif protocol == "anthropic":
        # The agent passes system_prompt_content too (as Strands' does), which the provider sends as text blocks.
        assert body["system"] == [{"type": "text", "text": "Be brief."}]
        assert body["max_tokens"] == 1024
    else:
        assert body["system"] == [{"text": "Be brief."}]


async def test_text_is_streamed_to_callbacks_as_it_arrives(protocol, fake):
    fake.add(Reply("one two three"))
    agent = agent_for(protocol, fake)
    chunks = [event["data"] async for event in agent.stream_async("count") if "data" in event]
    assert chunks == ["one ", "two ", "three"]


async def test_two_parallel_tool_calls_run_and_their_results_go_back(protocol, fake):
    fake.add(
        Reply("Adding.", tools=[("call_1", "add", {"a": 1, "b": 2}), ("call_2", "add", {"a": 30, "b": 4})]),
        Reply("3 and 34."),
    )
    agent = agent_for(protocol, fake, tools=[add])
    result = await agent.invoke_async("add")
    assert str(result) == "3 and 34.\n"
    tool_uses = [block["toolUse"] for block in agent.messages[1]["content"] if "toolUse" in block]
    assert [(use["toolUseId"], use["input"]) for use in tool_uses] == [
        ("call_1", {"a": 1, "b": 2}),
        ("call_2", {"a": 30, "b": 4}),
    ]
    results = [block["toolResult"] for block in agent.messages[2]["content"]]
    assert [(r["toolUseId"], r["content"]) for r in results] == [
        ("call_1", [{"text": "3"}]),
        ("call_2", [{"text": "34"}]),
    ]
    assert result.metrics.tool_metrics["add"].call_count == 2
    # The second request carries the calls and their results in the provider's own shape.
    _, _, body = fake.requests[1]
    if protocol == "openai":
        assistant = body["messages"][1]
        assert [call["id"] for call in assistant["tool_calls"]] == ["call_1", "call_2"]
        assert [m for m in body["messages"] if m["role"] == "tool"] == [
            {"role": "tool", "tool_call_id": "call_1", "content": "3"},
            {"role": "tool", "tool_call_id": "call_2", "content": "34"},
        ]
        assert [t["function"]["name"] for t in body["tools"]] == ["add"]
    elif protocol == "anthropic":
        blocks = body["messages"][2]["content"]
        assert [(b["type"], b["tool_use_id"], b["is_error"]) for b in blocks] == [
            ("tool_result", "call_1", False),
            ("tool_result", "call_2", False),
        ]
        assert body["tools"][0]["input_schema"]["properties"].keys() == {"a", "b"}
    else:
        blocks = body["messages"][2]["content"]
        assert [b["toolResult"]["toolUseId"] for b in blocks] == ["call_1", "call_2"]
        assert body["toolConfig"]["tools"][0]["toolSpec"]["name"] == "add"


async def test_tool_error_and_json_results_round_trip(protocol, fake):
    fake.add(Reply(tools=[("c1", "fail", {"reason": "disk full"})]), Reply("Sorry."))
    agent = agent_for(protocol, fake, tools=[fail])
    await agent.invoke_async("go")
    _, _, body = fake.requests[1]
    if protocol == "openai":
        tool_message = next(m for m in body["messages"] if m["role"] == "tool")
        assert "disk full" in tool_message["content"]
        assert tool_message["content"].startswith("Error")
    elif protocol == "anthropic":
        block = body["messages"][2]["content"][0]
        assert block["is_error"] is True
        assert "disk full" in block["content"][0]["text"]
    else:
        block = body["messages"][2]["content"][0]["toolResult"]
        assert block["status"] == "error"
        assert "disk full" in block["content"][0]["text"]


async def test_approval_interrupt_is_resumed_across_a_provider_turn(protocol, fake):
    deleted.clear()
    fake.add(Reply("I will delete it.", tools=[("d1", "delete", {"path": "/tmp/x"})]), Reply("Deleted /tmp/x."))
    agent = agent_for(protocol, fake, tools=[delete], hooks=[Approval()])
    paused = await agent.invoke_async("delete /tmp/x")
    assert paused.stop_reason == "interrupt"
    assert [(i.name, i.reason) for i in paused.interrupts] == [("approval", {"path": "/tmp/x"})]
    assert deleted == []
    assert len(fake.requests) == 1
    resumed = await agent.invoke_async([answer(paused.interrupts[0], "approve")])
    assert resumed.stop_reason == "end_turn"
    assert str(resumed) == "Deleted /tmp/x.\n"
    assert deleted == ["/tmp/x"]
    assert len(fake.requests) == 2  # the resume ran the tool without asking the model again first


async def test_refused_approval_tells_the_model(protocol, fake):
    deleted.clear()
    fake.add(Reply(tools=[("d1", "delete", {"path": "/etc"})]), Reply("Understood."))
    agent = agent_for(protocol, fake, tools=[delete], hooks=[Approval()])
    paused = await agent.invoke_async("delete /etc")
    await agent.invoke_async([answer(paused.interrupts[0], "deny")])
    assert deleted == []
    result = agent.messages[2]["content"][0]["toolResult"]
    assert result["status"] == "error"
    assert result["content"] == [{"text": "the user refused"}]


async def test_throttling_without_retries_raises_model_throttled(protocol, fake):
    fake.add(Failure("throttle"))
    agent = agent_for(protocol, fake, retry_strategy=None)
    with pytest.raises(ModelThrottledException):
        await agent.invoke_async("hi")
    assert len(fake.requests) == 1


async def test_throttling_is_retried_on_a_bounded_backoff_schedule(protocol, fake):
    clock = FakeClock()
    seen: list[str] = []
    fake.add(Failure("throttle"), Failure("throttle"), Reply("finally"))
    strategy = ModelRetryStrategy(sleep=clock.sleep, rng=lambda: 0.5)
    agent = agent_for(protocol, fake, retry_strategy=strategy)
    agent.add_hook(lambda event: seen.append(type(event.exception).__name__), AfterModelCallEvent)
    result = await agent.invoke_async("hi")
    assert str(result) == "finally\n"
    assert clock.sleeps == [4 * 0.875, 8 * 0.875]  # jitter 0.25 * rng 0.5 takes 12.5% off
    assert seen == ["ModelThrottledException", "ModelThrottledException", "NoneType"]
    assert result.metrics.model_retry_count == 2
    assert len(fake.requests) == 3


async def test_throttling_gives_up_after_max_attempts(protocol, fake):
    clock = FakeClock()
    fake.add(*[Failure("throttle")] * 3)
    agent = agent_for(protocol, fake, retry_strategy=ModelRetryStrategy(max_attempts=3, sleep=clock.sleep, jitter=0))
    with pytest.raises(ModelThrottledException):
        await agent.invoke_async("hi")
    assert clock.sleeps == [4, 8]
    assert len(fake.requests) == 3


async def test_context_overflow_reduces_the_history_and_retries(protocol, fake):
    fake.add(Reply("first answer"), Failure("overflow"), Reply("second answer"))
    agent = agent_for(
        protocol,
        fake,
        conversation_manager=SlidingWindowConversationManager(window_size=2, should_truncate_results=False),
    )
    await agent.invoke_async("first question")
    result = await agent.invoke_async("second question")
    assert str(result) == "second answer\n"
    _, _, retried = fake.requests[2]
    assert user_texts(protocol, retried) == ["second question"]  # the oldest turn was dropped before the retry


async def test_context_overflow_that_cannot_be_reduced_is_raised(protocol, fake):
    fake.add(Failure("overflow"))
    agent = agent_for(protocol, fake)
    with pytest.raises(ContextWindowOverflowException):
        await agent.invoke_async("a prompt too long for the model")


@pytest.mark.parametrize("kind", ["auth", "bad_request"])
async def test_auth_and_bad_request_errors_keep_the_provider_message_and_are_not_retried(protocol, fake, kind):
    message = {"auth": "key sk-fake is not valid", "bad_request": "messages are malformed"}[kind]
    fake.add(Failure(kind, message))
    clock = FakeClock()
    agent = agent_for(protocol, fake, retry_strategy=ModelRetryStrategy(sleep=clock.sleep))
    with pytest.raises(Exception, match=message) as caught:
        await agent.invoke_async("hi")
    assert not isinstance(caught.value, ModelThrottledException | ContextWindowOverflowException)
    assert type(caught.value).__module__.split(".")[0] in {"openai", "anthropic", "botocore"}
    assert clock.sleeps == []
    assert len(fake.requests) == 1


async def test_max_tokens_stop_raises_after_keeping_the_partial_answer(protocol, fake):
    fake.add(Reply("This answer was cut", stop="max_tokens"))
    agent = agent_for(protocol, fake)
    with pytest.raises(MaxTokensReachedException):
        await agent.invoke_async("write a novel")
    assert agent.messages[-1]["content"] == [{"text": "This answer was cut"}]


async def test_content_filtering_is_reported_as_the_stop_reason(protocol, fake):
    fake.add(Reply("", stop="content_filtered"))
    result = await agent_for(protocol, fake).invoke_async("something bad")
    assert result.stop_reason == "content_filtered"


class City(BaseModel):
    name: str
    population: int


async def test_structured_output_through_the_provider(protocol, fake):
    fake.add(Reply("Paris is big."), Reply(tools=[("s1", "City", {"name": "Paris", "population": 2100000})]))
    agent = agent_for(protocol, fake)
    result = await agent.invoke_async("Tell me about Paris", structured_output_model=City)
    assert result.structured_output == City(name="Paris", population=2100000)
    _, _, forced = fake.requests[1]
    if protocol == "openai":
        assert forced["tool_choice"] == {"type": "function", "function": {"name": "City"}}
    elif protocol == "anthropic":
        assert forced["tool_choice"] == {"type": "tool", "name": "City"}
    else:
        assert forced["toolConfig"]["toolChoice"] == {"tool": {"name": "City"}}


async def test_model_level_structured_output(protocol, fake):
    if protocol == "openai":  # OpenAI answers in JSON under its native response format
        fake.add(Reply('{"name": "Lyon", "population": 500000}'))
    else:
        fake.add(Reply(tools=[("s1", "City", {"name": "Lyon", "population": 500000})]))
    agent = agent_for(protocol, fake)
    city = await agent.structured_output_async(City, "Lyon?")
    assert city == City(name="Lyon", population=500000)
    assert agent.messages == []  # the prompt is not kept
    _, _, body = fake.requests[0]
    if protocol == "openai":
        assert body["response_format"]["json_schema"]["name"] == "City"
