"""`ModelRetryStrategy` with `ScriptedModel`: schedule, bounds, hooks, metrics, and opting out."""

import pytest

from strandslike import Agent, ModelRetryStrategy
from strandslike.agent._retry import InvalidRetryStrategyError
from strandslike.hooks import AfterModelCallEvent
from strandslike.models import ScriptedModel, text
from strandslike.types.exceptions import ModelThrottledException


class FakeClock:
    def __init__(self) -> None:
        self.sleeps: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)


def throttled(n: int) -> list[ModelThrottledException]:
    return [ModelThrottledException(f"slow down {i}") for i in range(n)]


async def test_default_strategy_is_on_and_follows_strands_schedule_without_jitter():
    clock = FakeClock()
    strategy = ModelRetryStrategy(sleep=clock.sleep, jitter=0)
    agent = Agent(model=ScriptedModel([*throttled(5), text("ok")]), retry_strategy=strategy)
    result = await agent.invoke_async("hi")
    assert str(result) == "ok\n"
    assert clock.sleeps == [4, 8, 16, 32, 64]
    assert result.metrics.model_retry_count == 5
    assert result.metrics.get_summary()["model_retry_count"] == 5


def test_an_agent_retries_by_default():
    agent = Agent(model=ScriptedModel([]))
    assert isinstance(agent.retry_strategy, ModelRetryStrategy)
    assert agent.retry_strategy.max_attempts == 6


async def test_sixth_failure_is_raised_and_the_count_starts_again_next_invocation():
    clock = FakeClock()
    model = ScriptedModel([*throttled(6), *throttled(1), text("ok")])
    agent = Agent(model=model, retry_strategy=ModelRetryStrategy(sleep=clock.sleep, jitter=0))
    with pytest.raises(ModelThrottledException, match="slow down 5"):
        await agent.invoke_async("hi")
    assert len(clock.sleeps) == 5
    result = await agent.invoke_async("again")
    assert str(result) == "ok\n"
    assert clock.sleeps[5:] == [4]


async def test_delays_are_capped_and_jitter_only_shortens_them():
    clock = FakeClock()
    values = iter([0.0, 0.999, 0.5, 0.0])
    strategy = ModelRetryStrategy(initial_delay=10, max_delay=25, sleep=clock.sleep, rng=lambda: next(values))
    agent = Agent(model=ScriptedModel([*throttled(4), text("ok")]), retry_strategy=strategy)
    await agent.invoke_async("hi")
    assert clock.sleeps[0] == 10
    assert 20 * 0.75 <= clock.sleeps[1] < 20
    assert clock.sleeps[2] == 25 * 0.875
    assert clock.sleeps[3] == 25  # capped at max_delay
    assert all(delay <= 25 for delay in clock.sleeps)


async def test_retry_strategy_none_turns_retries_off():
    agent = Agent(model=ScriptedModel([*throttled(1), text("never")]), retry_strategy=None)
    with pytest.raises(ModelThrottledException):
        await agent.invoke_async("hi")
    assert agent.model.calls == 1


async def test_other_errors_are_not_retried():
    clock = FakeClock()
    agent = Agent(
        model=ScriptedModel([ValueError("bad request"), text("x")]),
        retry_strategy=ModelRetryStrategy(sleep=clock.sleep),
    )
    with pytest.raises(ValueError, match="bad request"):
        await agent.invoke_async("hi")
    assert clock.sleeps == []


async def test_each_retry_is_visible_to_hooks_and_streamed():
    clock = FakeClock()
    seen: list[object] = []
    agent = Agent(
        model=ScriptedModel([*throttled(2), text("ok")]),
        retry_strategy=ModelRetryStrategy(sleep=clock.sleep, jitter=0),
        callback_handler=None,
    )
    agent.add_hook(lambda event: seen.append(event.exception), AfterModelCallEvent)
    events = [event async for event in agent.stream_async("hi")]
    assert [str(e) if e else None for e in seen] == ["slow down 0", "slow down 1", None]
    assert [e["event_loop_throttled_delay"] for e in events if "event_loop_throttled_delay" in e] == [4, 8]


async def test_a_subclass_can_retry_more_errors():
    class RetryTimeouts(ModelRetryStrategy):
        def is_retryable(self, exception: Exception) -> bool:
            return isinstance(exception, TimeoutError) or super().is_retryable(exception)

    clock = FakeClock()
    agent = Agent(
        model=ScriptedModel([TimeoutError("slow"), text("ok")]),
        retry_strategy=RetryTimeouts(sleep=clock.sleep, jitter=0),
    )
    assert str(await agent.invoke_async("hi")) == "ok\n"
    assert clock.sleeps == [4]


def test_a_retry_strategy_of_the_wrong_type_is_refused():
    with pytest.raises(ValueError, match="retry_strategy must be an instance of ModelRetryStrategy"):
        Agent(model=ScriptedModel([]), retry_strategy=object())


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_attempts": 0},
        {"max_attempts": 2.5},
        {"initial_delay": -1},
        {"max_delay": 1, "initial_delay": 5},
        {"jitter": 1.5},
        {"max_attempts": True},
    ],
)
def test_out_of_range_settings_are_refused(kwargs):
    with pytest.raises(InvalidRetryStrategyError):
        ModelRetryStrategy(**kwargs)
