"""How interventions are wired in: only overridden methods, their hook order, errors and ``on_error``."""

import logging
from typing import Any

import pytest

from strandslike import Agent, InterventionHandler, tool
from strandslike.hooks import (
    AfterModelCallEvent,
    AfterToolCallEvent,
    BeforeInvocationEvent,
    BeforeModelCallEvent,
    BeforeToolCallEvent,
    HookOrder,
)
from strandslike.interventions import (
    Deny,
    InterventionConfigError,
    InterventionTypeError,
    Proceed,
)
from strandslike.models import ScriptedModel, text, tool_call

RUNS: list[str] = []


@tool
def act() -> str:
    """Do something."""
    RUNS.append("act")
    return "done"


@pytest.fixture(autouse=True)
def _clear() -> None:
    RUNS.clear()


class OnlyTools(InterventionHandler):
    name = "only-tools"

    def before_tool_call(self, event: Any, **kwargs: Any) -> Proceed:
        return Proceed()


class Everything(InterventionHandler):
    name = "everything"

    def before_invocation(self, event: Any, **kwargs: Any) -> Proceed:
        return Proceed()

    def before_tool_call(self, event: Any, **kwargs: Any) -> Proceed:
        return Proceed()

    def after_tool_call(self, event: Any, **kwargs: Any) -> Proceed:
        return Proceed()

    def before_model_call(self, event: Any, **kwargs: Any) -> Proceed:
        return Proceed()

    def after_model_call(self, event: Any, **kwargs: Any) -> Proceed:
        return Proceed()


def callbacks(agent: Agent, event_type: type) -> list[Any]:
    return list(agent.hooks._callbacks(event_type))


def test_only_overridden_lifecycle_methods_get_a_hook():
    baseline = Agent()  # the agent's own hooks (retry strategy, conversation manager)
    agent = Agent(interventions=[OnlyTools()])
    assert len(callbacks(agent, BeforeToolCallEvent)) == len(callbacks(baseline, BeforeToolCallEvent)) + 1
    for event_type in (BeforeInvocationEvent, AfterToolCallEvent, BeforeModelCallEvent, AfterModelCallEvent):
        assert len(callbacks(agent, event_type)) == len(callbacks(baseline, event_type))


def test_interventions_run_after_before_hooks_and_before_after_hooks():
    order: list[str] = []

    def before_hook(event: BeforeToolCallEvent) -> None:
        order.append("before hook")

    def after_hook(event: AfterToolCallEvent) -> None:
        order.append("after hook")

    class Watch(InterventionHandler):
        name = "watch"

        def before_tool_call(self, event: Any, **kwargs: Any) -> Proceed:
            order.append("before intervention")
            return Proceed()

        def after_tool_call(self, event: Any, **kwargs: Any) -> Proceed:
            order.append("after intervention")
            return Proceed()

    agent = Agent(
        model=ScriptedModel([tool_call("act"), text("ok")]),
        tools=[act],
        hooks=[before_hook, after_hook],
        interventions=[Watch()],
    )
    agent("go")
    # INTERVENTION_INPUT (90) runs after DEFAULT (0); INTERVENTION_OUTPUT (-90) runs before it.
    assert order == ["before hook", "before intervention", "after intervention", "after hook"]
    assert (HookOrder.INTERVENTION_OUTPUT, HookOrder.INTERVENTION_INPUT) == (-90, 90)


async def test_async_handlers_are_awaited():
    class AsyncDeny(InterventionHandler):
        name = "async-deny"

        async def before_tool_call(self, event: Any, **kwargs: Any) -> Deny:
            return Deny(reason="async says no")

    model = ScriptedModel([tool_call("act"), text("ok")])
    agent = Agent(model=model, tools=[act], interventions=[AsyncDeny()])
    await agent.invoke_async("go")
    assert RUNS == []
    assert model.requests[1].messages[-1]["content"][0]["toolResult"]["content"] == [{"text": "DENIED: async says no"}]


class Broken(InterventionHandler):
    name = "broken"

    def __init__(self, mode: str) -> None:
        self.mode = mode

    @property
    def on_error(self) -> Any:
        return self.mode

    def before_tool_call(self, event: Any, **kwargs: Any) -> Proceed:
        raise ConnectionError("policy service down")


def test_on_error_throw_reraises_the_original_error():
    agent = Agent(model=ScriptedModel([tool_call("act"), text("ok")]), tools=[act], interventions=[Broken("throw")])
    with pytest.raises(ConnectionError, match="policy service down") as caught:
        agent("go")
    assert any("intervention handler 'broken'" in note for note in caught.value.__notes__)
    assert RUNS == []


def test_on_error_proceed_skips_the_handler(caplog):
    agent = Agent(model=ScriptedModel([tool_call("act"), text("ok")]), tools=[act], interventions=[Broken("proceed")])
    with caplog.at_level(logging.WARNING):
        agent("go")
    assert RUNS == ["act"]
    assert "on_error=<proceed> | handler error skipped (fail-open)" in caplog.text


def test_on_error_deny_refuses_the_call(caplog):
    model = ScriptedModel([tool_call("act"), text("ok")])
    agent = Agent(model=model, tools=[act], interventions=[Broken("deny")])
    with caplog.at_level(logging.WARNING):
        agent("go")
    assert RUNS == []
    denial = model.requests[1].messages[-1]["content"][0]["toolResult"]["content"][0]["text"]
    assert denial == "DENIED: Handler threw: policy service down"


def test_an_error_inside_a_transform_follows_on_error():
    from strandslike.interventions import Transform

    class BadTransform(InterventionHandler):
        name = "bad-transform"
        on_error = "deny"  # type: ignore[assignment]

        def before_tool_call(self, event: Any, **kwargs: Any) -> Transform:
            return Transform(apply=lambda e: 1 / 0)  # type: ignore[arg-type, return-value]

    agent = Agent(model=ScriptedModel([tool_call("act"), text("ok")]), tools=[act], interventions=[BadTransform()])
    agent("go")
    assert RUNS == []


@pytest.mark.parametrize("returned", [None, "deny", 42])
def test_a_handler_returning_no_action_is_a_type_error_whatever_on_error_says(returned):
    class Sloppy(InterventionHandler):
        name = "sloppy"
        on_error = "proceed"  # type: ignore[assignment]

        def before_tool_call(self, event: Any, **kwargs: Any) -> Any:
            return returned

    agent = Agent(model=ScriptedModel([tool_call("act"), text("ok")]), tools=[act], interventions=[Sloppy()])
    with pytest.raises(TypeError, match=r"sloppy\.before_tool_call"):
        agent("go")
    assert RUNS == []


def test_duplicate_handler_names_are_refused():
    with pytest.raises(InterventionConfigError, match="Duplicate intervention handler name: 'only-tools'"):
        Agent(interventions=[OnlyTools(), OnlyTools()])
    assert issubclass(InterventionConfigError, ValueError)


def test_an_unknown_on_error_is_refused_at_construction():
    with pytest.raises(InterventionConfigError, match="on_error='fail'"):
        Agent(interventions=[Broken("fail")])


@pytest.mark.parametrize(
    ("interventions", "message"),
    [
        ([OnlyTools], "pass an instance: OnlyTools"),
        ([lambda event: None], "takes InterventionHandler instances"),
        (OnlyTools(), "takes a list of handlers"),
        (7, "takes a list of handlers"),
    ],
)
def test_things_that_are_not_handlers_are_refused(interventions, message):
    with pytest.raises(InterventionTypeError, match=message):
        Agent(interventions=interventions)


def test_a_handler_without_a_name_cannot_be_built():
    class Nameless(InterventionHandler):
        def before_tool_call(self, event: Any, **kwargs: Any) -> Proceed:
            return Proceed()

    with pytest.raises(TypeError, match="abstract"):
        Nameless()  # type: ignore[abstract]


def test_all_lifecycle_methods_can_be_overridden_at_once():
    agent = Agent(model=ScriptedModel([tool_call("act"), text("ok")]), tools=[act], interventions=[Everything()])
    assert agent("go").stop_reason == "end_turn"
    assert RUNS == ["act"]
