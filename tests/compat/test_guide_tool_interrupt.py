"""The interrupts guide's tool-interrupt example: a `DeleteTool` class with a ``@tool(context=True)`` method.

The example code is the guide's with only the import root changed, a `ScriptedModel` as ``model=``, and the
placeholder bodies recording what ran. The guide elides the driver loop (``...``); it is the loop of the first
example, with ``input()`` answered by a script.
"""

import builtins
import json
import uuid
from typing import Any

import pytest

from strandslike import Agent, tool
from strandslike.models import ScriptedModel, text, tool_call, turn
from strandslike.types.tools import ToolContext

RUNS: list[str] = []

# ---------------------------------------------------------------- guide code (import root changed) ----


class DeleteTool:
    def __init__(self, app_name: str) -> None:
        self.app_name = app_name

    @tool(context=True)
    def delete_files(self, tool_context: ToolContext, paths: list[str]) -> bool:
        RUNS.append("delete_files:start")
        approval = tool_context.interrupt(f"{self.app_name}-approval", reason={"paths": paths})
        if approval.lower() != "y":
            return False

        # Implementation here
        RUNS.append(f"delete_files:deleted {paths}")

        return True


@tool
def inspect_files(paths: list[str]) -> dict[str, Any]:
    # Implementation here
    RUNS.append("inspect_files")
    return {"old": paths}


def make_agent(model: ScriptedModel) -> Agent:
    return Agent(
        model=model,
        system_prompt="You delete files older than 5 days",
        tools=[DeleteTool("myapp").delete_files, inspect_files],
        callback_handler=None,
    )


def drive(agent: Agent, paths: list[str]) -> Any:
    """The guide's driver loop (``...`` in the tool example), as in the hook example."""
    result = agent(f"paths=<{paths}>")

    while True:
        if result.stop_reason != "interrupt":
            break

        responses = []
        for interrupt in result.interrupts:
            if interrupt.name == "myapp-approval":
                user_input = input(f"Do you want to delete {interrupt.reason['paths']} (y/N): ")
                responses.append({"interruptResponse": {"interruptId": interrupt.id, "response": user_input}})

        result = agent(responses)

    print(f"MESSAGE: {json.dumps(result.message)}")
    return result


# ------------------------------------------------------------------------------------------ tests ----

PATHS = ["a/b/c.txt", "d/e/f.txt"]
TOOL_INTERRUPT_ID = f"v1:tool_call:d1:{uuid.uuid5(uuid.NAMESPACE_OID, 'myapp-approval')}"


@pytest.fixture(autouse=True)
def _reset_runs():
    RUNS.clear()


@pytest.fixture
def answers(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    scripted: list[str] = []

    def fake_input(prompt: str = "") -> str:
        RUNS.append(f"input:{prompt}")
        return scripted.pop(0)

    monkeypatch.setattr(builtins, "input", fake_input)
    return scripted


def batch_model() -> ScriptedModel:
    return ScriptedModel(
        [
            turn(
                tool_call("delete_files", tool_use_id="d1", paths=PATHS),
                tool_call("inspect_files", tool_use_id="i1", paths=PATHS),
            ),
            text("All done."),
        ]
    )


def test_method_tool_spec_hides_self_and_tool_context():
    agent = make_agent(batch_model())
    spec = agent.tool_registry.registry["delete_files"].tool_spec
    assert spec["name"] == "delete_files"
    assert list(spec["inputSchema"]["json"]["properties"]) == ["paths"]
    assert spec["inputSchema"]["json"]["required"] == ["paths"]


def test_tool_interrupt_pauses_only_that_tool():
    model = batch_model()
    agent = make_agent(model)

    result = agent(f"paths=<{PATHS}>")

    assert result.stop_reason == "interrupt"
    assert [(i.id, i.name, i.reason) for i in result.interrupts] == [
        (TOOL_INTERRUPT_ID, "myapp-approval", {"paths": PATHS})
    ]
    # Concurrent tools all run: inspect_files completed, delete_files stopped at its interrupt() call.
    assert sorted(RUNS) == ["delete_files:start", "inspect_files"]
    assert result.message is agent.messages[-1]
    assert [block["toolUse"]["toolUseId"] for block in result.message["content"]] == ["d1", "i1"]
    json.dumps(result.message)
    assert model.calls == 1


def test_tool_interrupt_approved(answers: list[str], capsys: pytest.CaptureFixture[str]):
    answers.append("y")
    model = batch_model()
    agent = make_agent(model)

    result = drive(agent, PATHS)

    assert result.stop_reason == "end_turn"
    assert result.message == {"role": "assistant", "content": [{"text": "All done."}]}
    assert capsys.readouterr().out == f"MESSAGE: {json.dumps(result.message)}\n"
    # The tool body re-runs from the top on resume; the completed inspect_files does not run again.
    assert RUNS.count("inspect_files") == 1
    assert [r for r in RUNS if r.startswith(("delete_files", "input"))] == [
        "delete_files:start",
        f"input:Do you want to delete {PATHS} (y/N): ",
        "delete_files:start",
        f"delete_files:deleted {PATHS}",
    ]
    # strandslike keeps the model's tool-use order on resume (Strands puts completed results first).
    assert agent.messages[2] == {
        "role": "user",
        "content": [
            {"toolResult": {"toolUseId": "d1", "status": "success", "content": [{"text": "true"}]}},
            {"toolResult": {"toolUseId": "i1", "status": "success", "content": [{"text": json.dumps({"old": PATHS})}]}},
        ],
    }
    assert model.calls == 2


def test_tool_interrupt_denied_returns_false(answers: list[str]):
    answers.append("N")
    model = batch_model()
    agent = make_agent(model)

    result = drive(agent, PATHS)

    assert result.stop_reason == "end_turn"
    assert result.message == {"role": "assistant", "content": [{"text": "All done."}]}
    assert not any(r.startswith("delete_files:deleted") for r in RUNS)
    # The tool itself handled the denial: a successful result whose value is False.
    assert agent.messages[2]["content"][0] == {
        "toolResult": {"toolUseId": "d1", "status": "success", "content": [{"text": "false"}]}
    }
    assert model.calls == 2


def test_interrupts_are_not_supported_in_direct_tool_calls():
    agent = make_agent(ScriptedModel([text("ok")]))
    with pytest.raises(RuntimeError, match="cannot raise interrupt in direct tool call"):
        agent.tool.delete_files(paths=PATHS)
    assert RUNS == ["delete_files:start"]
    assert agent.messages == []  # as in Strands, nothing is recorded
    assert agent("hi").stop_reason == "end_turn"  # and the agent is not left interrupted
