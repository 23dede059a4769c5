"""Issue 12, item 10: concurrent_invocation_mode and idempotency_token, as Strands 1.62 defines them."""

from typing import Any

import anyio
import pytest

from strandslike import Agent
from strandslike.agent import AgentResult
from strandslike.models import Model, ScriptedModel, text
from strandslike.types.agent import ConcurrentInvocationMode
from strandslike.types.exceptions import ConcurrencyException, IdempotencyAbortedError


class GatedModel(Model):
    """A model whose every reply waits until the test opens the gate."""

    def __init__(self, *replies: Any) -> None:
        self.replies = list(replies)
        self.calls = 0
        self.entered = anyio.Event()
        self.gate = anyio.Event()

    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {}

    async def stream(self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any):
        self.calls += 1
        self.entered.set()
        await self.gate.wait()
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        yield {"messageStart": {"role": "assistant"}}
        yield {"contentBlockDelta": {"delta": {"text": reply}}}
        yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "end_turn"}}


def test_the_mode_defaults_to_throw_and_is_validated() -> None:
    assert Agent().concurrent_invocation_mode is ConcurrentInvocationMode.THROW
    assert ConcurrentInvocationMode.THROW == "throw"
    agent = Agent(concurrent_invocation_mode="unsafe_reentrant")
    assert agent.concurrent_invocation_mode is ConcurrentInvocationMode.UNSAFE_REENTRANT
    with pytest.raises(ValueError, match="concurrent_invocation_mode='parallel'"):
        Agent(concurrent_invocation_mode="parallel")


async def run_pair(agent: Agent, model: GatedModel, first: dict[str, Any], second: dict[str, Any]) -> list[Any]:
    """Start ``first``; once it is inside the model, start ``second``; then open the gate. Return both outcomes."""
    outcomes: list[Any] = [None, None]

    async def call(index: int, kwargs: dict[str, Any]) -> None:
        try:
            outcomes[index] = await agent.invoke_async("hello", **kwargs)
        except Exception as exc:
            outcomes[index] = exc

    async with anyio.create_task_group() as group:
        group.start_soon(call, 0, first)
        await model.entered.wait()
        group.start_soon(call, 1, second)
        await anyio.wait_all_tasks_blocked()
        model.gate.set()
    return outcomes


async def test_throw_refuses_a_second_invocation() -> None:
    model = GatedModel("one")
    first, second = await run_pair(Agent(model=model), model, {}, {})
    assert isinstance(first, AgentResult)
    assert isinstance(second, ConcurrencyException)
    assert "already processing a request" in str(second)
    assert model.calls == 1


async def test_a_duplicate_token_waits_for_the_running_invocation_and_shares_its_result() -> None:
    model = GatedModel("one")
    seen: list[dict[str, Any]] = []
    agent = Agent(model=model, callback_handler=lambda **event: seen.append(event))
    first, second = await run_pair(agent, model, {"idempotency_token": "req-1"}, {"idempotency_token": "req-1"})
    assert second is first
    assert str(first) == "one\n"
    assert model.calls == 1
    assert len(agent.messages) == 2  # the duplicate appended nothing
    assert [event["result"] for event in seen if "result" in event] == [first, first]


async def test_tokens_are_compared_with_equality() -> None:
    model = GatedModel("one")
    agent = Agent(model=model)
    first, second = await run_pair(agent, model, {"idempotency_token": ("user", 1)}, {"idempotency_token": ("user", 1)})
    assert second is first


async def test_a_different_token_is_refused() -> None:
    model = GatedModel("one")
    first, second = await run_pair(Agent(model=model), model, {"idempotency_token": "a"}, {"idempotency_token": "b"})
    assert isinstance(first, AgentResult)
    assert isinstance(second, ConcurrencyException)


async def test_a_duplicate_gets_the_primary_invocations_error() -> None:
    model = GatedModel(RuntimeError("model down"))
    first, second = await run_pair(Agent(model=model), model, {"idempotency_token": "t"}, {"idempotency_token": "t"})
    assert isinstance(first, RuntimeError)
    assert second is first


async def test_a_duplicate_of_a_cancelled_invocation_is_told_it_was_aborted() -> None:
    model = GatedModel("never")
    agent = Agent(model=model)
    outcome: list[Any] = []

    async def duplicate() -> None:
        try:
            await agent.invoke_async("hello", idempotency_token="t")
        except IdempotencyAbortedError as exc:
            outcome.append(exc)

    async with anyio.create_task_group() as outer:
        async with anyio.create_task_group() as primary:
            primary.start_soon(lambda: agent.invoke_async("hello", idempotency_token="t"))
            await model.entered.wait()
            outer.start_soon(duplicate)
            await anyio.wait_all_tasks_blocked()
            primary.cancel_scope.cancel()
    assert len(outcome) == 1
    assert "aborted before producing a result" in str(outcome[0])


async def test_a_token_is_free_again_once_its_invocation_ended() -> None:
    model = ScriptedModel([text("one"), text("two")])
    agent = Agent(model=model)
    first = await agent.invoke_async("a", idempotency_token="t")
    second = await agent.invoke_async("b", idempotency_token="t")
    assert (str(first), str(second)) == ("one\n", "two\n")


async def test_unsafe_reentrant_lets_invocations_overlap_and_ignores_tokens() -> None:
    model = GatedModel("one", "two")
    agent = Agent(model=model, concurrent_invocation_mode=ConcurrentInvocationMode.UNSAFE_REENTRANT)
    first, second = await run_pair(agent, model, {"idempotency_token": "t"}, {"idempotency_token": "t"})
    assert isinstance(first, AgentResult)
    assert isinstance(second, AgentResult)
    assert first is not second
    assert model.calls == 2


def test_blocking_calls_take_the_token_too() -> None:
    agent = Agent(model=ScriptedModel([text("one")]))
    assert str(agent("hello", idempotency_token="t")) == "one\n"
