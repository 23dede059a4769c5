"""`HumanInTheLoop` behaves as Strands 1.62's: interrupt mode, inline ``ask``, ``allowed_tools``, trust, stdio."""

import builtins
from typing import Any

import pytest

from strandslike import Agent, tool
from strandslike.models import ScriptedModel, text, tool_call, turn
from strandslike.vended_interventions import HumanInTheLoop as VendedHumanInTheLoop
from strandslike.vended_interventions.hitl import HumanInTheLoop

RUNS: list[str] = []


@pytest.fixture(autouse=True)
def _clear() -> None:
    RUNS.clear()


@tool
def read_file(path: str) -> str:
    """Read a file.

    Args:
        path: The file.
    """
    RUNS.append(f"read {path}")
    return "content"


@tool
def delete_file(path: str) -> str:
    """Delete a file.

    Args:
        path: The file.
    """
    RUNS.append(f"delete {path}")
    return "deleted"


TOOLS = [read_file, delete_file]


def calls(*names: str) -> ScriptedModel:
    """One turn per tool call (each with path "x"), then a final text."""
    return ScriptedModel([*(tool_call(name, path="x") for name in names), text("done")])


def answer(result: Any, response: Any) -> list[Any]:
    return [{"interruptResponse": {"interruptId": result.interrupts[0].id, "response": response}}]


def test_the_vended_package_exports_the_same_class():
    assert VendedHumanInTheLoop is HumanInTheLoop
    assert HumanInTheLoop.name == "strands:human-in-the-loop"


def test_by_default_every_tool_call_pauses_on_an_interrupt():
    agent = Agent(model=calls("read_file"), tools=TOOLS, interventions=[HumanInTheLoop()])
    result = agent("read it")
    assert result.stop_reason == "interrupt"
    (interrupt,) = result.interrupts
    assert interrupt.name == "strands:human-in-the-loop"
    assert interrupt.reason == 'Approve "read_file"?\n  Input: {"path": "x"}'
    assert RUNS == []
    assert agent.pending_interrupts == [interrupt]


@pytest.mark.parametrize(
    ("response", "runs"), [("yes", ["read x"]), ("Y ", ["read x"]), (True, ["read x"]), ("no", [])]
)
def test_the_answer_to_the_interrupt_decides(response, runs):
    model = calls("read_file")
    agent = Agent(model=model, tools=TOOLS, interventions=[HumanInTheLoop()])
    result = agent(answer(agent("read it"), response))
    assert result.stop_reason == "end_turn"
    assert RUNS == runs
    if not runs:
        denial = model.requests[1].messages[-1]["content"][0]["toolResult"]["content"][0]["text"]
        assert denial.startswith('CONFIRMATION_FAILED: Approve "read_file"?')


@pytest.mark.parametrize(("reply", "runs"), [("yes", ["delete x"]), ("no", []), (None, [])])
def test_an_inline_ask_decides_without_pausing(reply, runs):
    prompts: list[str] = []

    def ask(prompt: str) -> Any:
        prompts.append(prompt)
        return reply

    model = calls("delete_file")
    agent = Agent(model=model, tools=TOOLS, interventions=[HumanInTheLoop(ask=ask)])
    assert agent("go").stop_reason == "end_turn"
    assert RUNS == runs
    assert "delete_file" in prompts[0]
    assert '"x"' in prompts[0]
    if reply is None:
        denial = model.requests[1].messages[-1]["content"][0]["toolResult"]["content"][0]["text"]
        assert denial == 'DENIED: Tool "delete_file" denied: approval callback returned no response.'


def test_an_async_ask_is_awaited():
    async def ask(prompt: str) -> str:
        return "y"

    agent = Agent(model=calls("delete_file"), tools=TOOLS, interventions=[HumanInTheLoop(ask=ask)])
    agent("go")
    assert RUNS == ["delete x"]


def test_an_ask_that_raises_aborts_the_run():
    def ask(prompt: str) -> str:
        raise RuntimeError("slack is down")

    agent = Agent(model=calls("delete_file"), tools=TOOLS, interventions=[HumanInTheLoop(ask=ask)])
    with pytest.raises(RuntimeError, match="slack is down"):
        agent("go")
    assert RUNS == []


def test_allowed_tools_run_freely_and_the_others_ask():
    agent = Agent(
        model=ScriptedModel([turn(tool_call("read_file", path="r"), tool_call("delete_file", path="d")), text("done")]),
        tools=TOOLS,
        interventions=[HumanInTheLoop(allowed_tools=["read_file"], ask=lambda prompt: "no")],
    )
    agent("go")
    assert RUNS == ["read r"]


def test_a_wildcard_allows_everything_but_negated_tools():
    agent = Agent(
        model=ScriptedModel([turn(tool_call("read_file", path="r"), tool_call("delete_file", path="d")), text("done")]),
        tools=TOOLS,
        interventions=[HumanInTheLoop(allowed_tools=["*", "!delete_file"], ask=lambda prompt: "no")],
    )
    agent("go")
    assert RUNS == ["read r"]


def test_a_bare_string_for_allowed_tools_is_refused():
    with pytest.raises(ValueError, match="must be a list"):
        HumanInTheLoop(allowed_tools="read_file")  # type: ignore[arg-type]


def test_a_custom_evaluate_decides_approval():
    agent = Agent(
        model=calls("delete_file"),
        tools=TOOLS,
        interventions=[HumanInTheLoop(evaluate=lambda response: response == "👍")],
    )
    paused = agent("go")
    assert paused.interrupts[0].response_schema is None  # a custom evaluate may accept anything
    agent(answer(paused, "👍"))
    assert RUNS == ["delete x"]


@pytest.mark.parametrize("reply", ["t", "trust", "T", "TRUST"])
def test_a_trust_answer_approves_and_is_remembered(reply):
    asked: list[str] = []

    def ask(prompt: str) -> str:
        asked.append(prompt)
        return reply

    agent = Agent(
        model=calls("delete_file", "delete_file"),
        tools=TOOLS,
        interventions=[HumanInTheLoop(enable_trust=True, ask=ask)],
    )
    agent("twice")
    assert len(asked) == 1
    assert RUNS == ["delete x", "delete x"]
    assert agent.state.get("hitl:trusted_tools") == ["delete_file"]


def test_trust_answers_are_ordinary_denials_when_trust_is_off():
    asked: list[str] = []

    def ask(prompt: str) -> str:
        asked.append(prompt)
        return "t"

    agent = Agent(model=calls("delete_file", "delete_file"), tools=TOOLS, interventions=[HumanInTheLoop(ask=ask)])
    agent("twice")
    assert (len(asked), RUNS) == (2, [])


def test_a_custom_evaluate_trust():
    asked: list[str] = []

    def ask(prompt: str) -> str:
        asked.append(prompt)
        return "approve-and-remember"

    handler = HumanInTheLoop(enable_trust=True, ask=ask, evaluate_trust=lambda r: r == "approve-and-remember")
    agent = Agent(model=calls("delete_file", "delete_file"), tools=TOOLS, interventions=[handler])
    agent("twice")
    assert len(asked) == 1


def test_negated_tools_can_never_be_trusted():
    asked: list[str] = []

    def ask(prompt: str) -> str:
        asked.append(prompt)
        return "t"

    handler = HumanInTheLoop(allowed_tools=["*", "!delete_file"], enable_trust=True, ask=ask)
    agent = Agent(model=calls("delete_file", "delete_file"), tools=TOOLS, interventions=[handler])
    agent("twice")
    assert (len(asked), RUNS) == (2, [])


def test_trust_through_interrupt_and_resume():
    agent = Agent(
        model=calls("delete_file", "delete_file"), tools=TOOLS, interventions=[HumanInTheLoop(enable_trust=True)]
    )
    result = agent(answer(agent("twice"), "t"))
    assert result.stop_reason == "end_turn"
    assert RUNS == ["delete x", "delete x"]
    assert agent.state.get("hitl:trusted_tools") == ["delete_file"]


def test_stdio_prompts_on_the_terminal(monkeypatch):
    prompts: list[str] = []

    def fake_input(prompt: str) -> str:
        prompts.append(prompt)
        return "y"

    monkeypatch.setattr(builtins, "input", fake_input)
    agent = Agent(model=calls("delete_file"), tools=TOOLS, interventions=[HumanInTheLoop(ask="stdio")])
    assert agent("go").stop_reason == "end_turn"
    assert RUNS == ["delete x"]
    assert len(prompts) == 1
    assert "delete_file" in prompts[0]
    assert prompts[0].endswith("(y/n): ")


def test_stdio_offers_trust_when_enabled_and_n_denies(monkeypatch):
    prompts: list[str] = []
    monkeypatch.setattr(builtins, "input", lambda prompt: prompts.append(prompt) or "n")
    agent = Agent(
        model=calls("delete_file"), tools=TOOLS, interventions=[HumanInTheLoop(enable_trust=True, ask="stdio")]
    )
    agent("go")
    assert "(y/n/t)" in prompts[0]
    assert RUNS == []


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"ask": "slack"}, ValueError, "use 'stdio'"),
        ({"ask": 3}, TypeError, "ask must be"),
        ({"evaluate": "yes"}, TypeError, "evaluate must be a callable"),
        ({"ask_timeout": 5}, ValueError, "ask_timeout needs an inline ask"),
        ({"ask": "stdio", "ask_timeout": 0}, ValueError, "positive number"),
        ({"ask": "stdio", "ask_timeout": True}, ValueError, "positive number"),
        ({"allowed_tools": ["ok", 3]}, TypeError, "list of tool names"),
        ({"classifier": "llm"}, TypeError, "classifier must be"),
        ({"policy": 12}, TypeError, "policy must be"),
    ],
)
def test_bad_configuration_is_refused(kwargs, error, message):
    with pytest.raises(error, match=message):
        HumanInTheLoop(**kwargs)


def test_two_handlers_share_the_fixed_name():
    from strandslike.interventions import InterventionConfigError

    with pytest.raises(InterventionConfigError, match="Duplicate intervention handler name"):
        Agent(interventions=[HumanInTheLoop(), HumanInTheLoop()])
