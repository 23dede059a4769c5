"""The ``classifier`` of `HumanInTheLoop`: custom callables, and the built-in LLM classifier on any `Model`."""

import logging
from types import SimpleNamespace
from typing import Any

import pytest

from strandslike import Agent, tool
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.vended_interventions.hitl import ClassifierResult, HumanInTheLoop, LLMClassifierConfig

RUNS: list[str] = []


@pytest.fixture(autouse=True)
def _clear() -> None:
    RUNS.clear()


@tool
def deploy(env: str) -> str:
    """Deploy.

    Args:
        env: Where.
    """
    RUNS.append(env)
    return "deployed"


def deploy_model(*extra: Any) -> ScriptedModel:
    return ScriptedModel([tool_call("deploy", env="prod"), *extra, text("done")])


@pytest.mark.parametrize("asynchronous", [False, True])
def test_a_custom_classifier_decides_whether_to_ask(asynchronous):
    seen: list[str] = []

    def decide(event: Any, **kwargs: Any) -> ClassifierResult:
        seen.append(event.tool_use["input"]["env"])
        return ClassifierResult(requires_human_in_the_loop=event.tool_use["input"]["env"] == "prod", reason="prod!")

    async def decide_async(event: Any, **kwargs: Any) -> ClassifierResult:
        return decide(event)

    agent = Agent(
        model=deploy_model(),
        tools=[deploy],
        interventions=[HumanInTheLoop(classifier=decide_async if asynchronous else decide)],
    )
    paused = agent("ship")
    assert paused.stop_reason == "interrupt"
    assert "prod!" in paused.interrupts[0].reason
    assert paused.interrupts[0].metadata["risk"] == "prod!"
    agent([paused.interrupts[0].resume("y")])
    assert RUNS == ["prod"]
    assert len(seen) == 1  # not consulted again on resume


def test_a_safe_call_runs_and_the_decision_is_audited():
    agent = Agent(
        model=deploy_model(),
        tools=[deploy],
        interventions=[HumanInTheLoop(classifier=lambda event: ClassifierResult(False, "read-only"))],
    )
    assert agent("ship").stop_reason == "end_turn"
    assert RUNS == ["prod"]
    (decision,) = [entry for entry in agent.interrupt_audit if entry["event"] == "decision"]
    assert (decision["decision"], decision["decided_by"], decision["reason"]) == ("allowed", "classifier", "read-only")


def test_the_classifier_reason_is_part_of_the_inline_prompt():
    prompts: list[str] = []
    handler = HumanInTheLoop(
        classifier=lambda event: ClassifierResult(True, "external communication"),
        ask=lambda prompt: prompts.append(prompt) or "no",
    )
    Agent(model=deploy_model(), tools=[deploy], interventions=[handler])("ship")
    assert prompts[0].startswith('Approve "deploy" — external communication?')


def test_allowed_tools_bypass_the_classifier():
    called: list[Any] = []
    handler = HumanInTheLoop(allowed_tools=["deploy"], classifier=lambda event: called.append(event))
    Agent(model=deploy_model(), tools=[deploy], interventions=[handler])("ship")
    assert (called, RUNS) == ([], ["prod"])


def test_a_wildcard_with_a_classifier_warns(caplog):
    with caplog.at_level(logging.WARNING):
        HumanInTheLoop(allowed_tools=["*"], classifier=lambda event: ClassifierResult(True))
    assert "classifier has no effect" in caplog.text


def broken(event: Any) -> Any:
    raise RuntimeError("model down")


@pytest.mark.parametrize(
    ("classifier", "logged"),
    [
        (broken, "classifier failed"),
        (lambda event: SimpleNamespace(requires_human_in_the_loop=False), "malformed result"),
        (lambda event: ClassifierResult(requires_human_in_the_loop="no"), "non-boolean decision"),  # type: ignore[arg-type]
        (lambda event: ClassifierResult(requires_human_in_the_loop=None), "non-boolean decision"),  # type: ignore[arg-type]
    ],
)
def test_a_failing_classifier_fails_closed(classifier, logged, caplog):
    agent = Agent(model=deploy_model(), tools=[deploy], interventions=[HumanInTheLoop(classifier=classifier)])
    with caplog.at_level(logging.WARNING):
        result = agent("ship")
    assert result.stop_reason == "interrupt"
    assert RUNS == []
    assert logged in caplog.text


# -- the built-in LLM classifier, on a ScriptedModel ----------------------------------------------------------------


def test_the_builtin_classifier_reads_the_risk_decision_tool_call_from_the_agents_model():
    model = deploy_model(tool_call("_RiskDecision", requires_approval=True, reason="production deploy"))
    agent = Agent(model=model, tools=[deploy], interventions=[HumanInTheLoop(classifier=True)])
    paused = agent("ship")
    assert paused.stop_reason == "interrupt"
    assert "production deploy" in paused.interrupts[0].reason
    classifier_request = model.requests[1]
    assert classifier_request.system_prompt is not None
    assert "approve" in classifier_request.system_prompt
    assert [spec["name"] for spec in classifier_request.tool_specs] == ["_RiskDecision"]
    assert "Tool: deploy" in classifier_request.messages[0]["content"][0]["text"]
    agent([paused.interrupts[0].resume("y")])
    assert RUNS == ["prod"]
    assert model.remaining == 0  # the classifier was not asked again on resume


def test_a_configured_model_and_prompt_are_used_and_a_text_answer_is_asked_again_as_structured_output():
    from strandslike.models import structured_output_call
    from strandslike.vended_interventions.hitl.classifier import _RiskDecision

    risk_model = ScriptedModel(
        [text("Staging only, it seems."), structured_output_call(_RiskDecision, requires_approval=False, reason="ok")]
    )
    handler = HumanInTheLoop(classifier=LLMClassifierConfig(model=risk_model, system_prompt="Only prod is risky."))
    agent = Agent(model=deploy_model(), tools=[deploy], interventions=[handler])
    assert agent("ship").stop_reason == "end_turn"
    assert RUNS == ["prod"]
    assert risk_model.requests[0].system_prompt == "Only prod is risky."
    assert risk_model.calls == 2  # the text answer was followed by the forced structured-output call


def test_the_agents_aux_model_is_preferred_when_it_has_one():
    aux = ScriptedModel([tool_call("_RiskDecision", requires_approval=False, reason="fine")])
    agent = Agent(model=deploy_model(), tools=[deploy], interventions=[HumanInTheLoop(classifier=True)])
    agent.aux_model = aux  # type: ignore[attr-defined]
    agent("ship")
    assert (aux.calls, RUNS) == (1, ["prod"])


@pytest.mark.parametrize(
    "answer",
    [
        text("I think it is fine."),
        tool_call("_RiskDecision", requires_approval="maybe", reason="?"),
        tool_call("something_else", x=1),
    ],
)
def test_no_usable_decision_from_the_model_means_asking_a_human(answer, caplog):
    model = deploy_model(answer)
    agent = Agent(model=model, tools=[deploy], interventions=[HumanInTheLoop(classifier=True)])
    with caplog.at_level(logging.WARNING):
        result = agent("ship")
    assert result.stop_reason == "interrupt"
    assert "classifier failed" in caplog.text


def test_the_builtin_classifier_needs_a_model():
    import anyio

    from strandslike.vended_interventions.hitl.classifier import _create_llm_risk_classifier

    event = SimpleNamespace(tool_use={"name": "x", "input": {}}, agent=SimpleNamespace(model=None))
    with pytest.raises(ValueError, match="no model"):
        anyio.run(_create_llm_risk_classifier(), event)
