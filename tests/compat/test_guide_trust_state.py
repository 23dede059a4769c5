"""The interrupts guide's server/client example: remembering a "(t)rust" answer in ``agent.state``.

Sessions are not built yet, so instead of a new agent with a ``FileSessionManager`` per ``server()`` call, ONE
agent instance is kept between calls; everything else is the guide's code with only the import root changed, a
`ScriptedModel` as ``model=``, recording tool bodies, and ``input()`` answered by a script.
"""

import builtins
import json
from typing import Any

import pytest

from strandslike import Agent, tool
from strandslike.agent import AgentResult
from strandslike.hooks import BeforeToolCallEvent, HookProvider, HookRegistry
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.types.agent import AgentInput

DELETED: list[list[str]] = []
PROMPTS: list[str] = []
ANSWERS: list[str] = []

# ---------------------------------------------------------------- guide code (import root changed) ----

##### server.py #####


@tool
def delete_files(paths: list[str]) -> bool:
    # Implementation here
    DELETED.append(paths)
    return True


@tool
def inspect_files(paths: list[str]) -> dict[str, Any]:
    # Implementation here
    return {}


class ApprovalHook(HookProvider):
    def __init__(self, app_name: str) -> None:
        self.app_name = app_name

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeToolCallEvent, self.approve)

    def approve(self, event: BeforeToolCallEvent) -> None:
        if event.tool_use["name"] != "delete_files":
            return

        if event.agent.state.get(f"{self.app_name}-approval") == "t":  # (t)rust
            return

        approval = event.interrupt(f"{self.app_name}-approval", reason={"paths": event.tool_use["input"]["paths"]})
        if approval.lower() not in ["y", "t"]:
            event.cancel_tool = "User denied permission to delete files"

        event.agent.state.set(f"{self.app_name}-approval", approval.lower())


SERVER: dict[str, Agent] = {}  # no session manager yet: the one agent lives here between calls


def start_server(model: ScriptedModel) -> Agent:
    SERVER["agent"] = Agent(
        model=model,
        hooks=[ApprovalHook("myapp")],
        system_prompt="You delete files older than 5 days",
        tools=[delete_files, inspect_files],
        callback_handler=None,
    )
    return SERVER["agent"]


def server(prompt: AgentInput) -> AgentResult:
    agent = SERVER["agent"]
    return agent(prompt)


##### client.py #####


def client(paths: list[str]) -> AgentResult:
    result = server(f"paths=<{paths}>")

    while True:
        if result.stop_reason != "interrupt":
            break

        responses = []
        for interrupt in result.interrupts:
            if interrupt.name == "myapp-approval":
                user_input = input(f"Do you want to delete {interrupt.reason['paths']} (t/y/N): ")
                responses.append({"interruptResponse": {"interruptId": interrupt.id, "response": user_input}})

        result = server(responses)

    return result


# ------------------------------------------------------------------------------------------ tests ----


@pytest.fixture(autouse=True)
def _scripted_user(monkeypatch: pytest.MonkeyPatch):
    DELETED.clear()
    PROMPTS.clear()
    ANSWERS.clear()
    SERVER.clear()

    def fake_input(prompt: str = "") -> str:
        PROMPTS.append(prompt)
        return ANSWERS.pop(0)

    monkeypatch.setattr(builtins, "input", fake_input)


def two_invocations_model() -> ScriptedModel:
    return ScriptedModel(
        [
            tool_call("delete_files", tool_use_id="d1", paths=["a/b/c.txt", "d/e/f.txt"]),
            text("Deleted the first batch."),
            tool_call("delete_files", tool_use_id="d2", paths=["g/h/i.txt"]),
            text("Deleted the second batch."),
        ]
    )


def delete_result(agent: Agent, tool_use_id: str) -> dict[str, Any]:
    for message in agent.messages:
        for block in message["content"]:
            if "toolResult" in block and block["toolResult"]["toolUseId"] == tool_use_id:
                return block["toolResult"]
    raise AssertionError(f"no result for {tool_use_id}")


def test_trust_answer_is_remembered_and_a_later_delete_is_not_interrupted():
    model = two_invocations_model()
    agent = start_server(model)
    ANSWERS.append("t")

    first = client(["a/b/c.txt", "d/e/f.txt"])

    assert PROMPTS == ["Do you want to delete ['a/b/c.txt', 'd/e/f.txt'] (t/y/N): "]
    assert first.stop_reason == "end_turn"
    assert first.message == {"role": "assistant", "content": [{"text": "Deleted the first batch."}]}
    json.dumps(first.message)
    assert agent.state.get("myapp-approval") == "t"
    assert DELETED == [["a/b/c.txt", "d/e/f.txt"]]

    second = client(["g/h/i.txt"])

    assert len(PROMPTS) == 1  # trusted: no second question
    assert second.stop_reason == "end_turn"
    assert second.interrupts in (None, [])
    assert second.message == {"role": "assistant", "content": [{"text": "Deleted the second batch."}]}
    print(f"MESSAGE: {json.dumps(second.message)}")
    assert DELETED == [["a/b/c.txt", "d/e/f.txt"], ["g/h/i.txt"]]
    assert delete_result(agent, "d2")["status"] == "success"
    assert model.calls == 4
    assert [m["role"] for m in agent.messages] == ["user", "assistant", "user", "assistant"] * 2


def test_yes_is_not_remembered_so_the_later_delete_asks_again():
    model = two_invocations_model()
    agent = start_server(model)
    ANSWERS.extend(["y", "Y"])

    first = client(["a/b/c.txt", "d/e/f.txt"])
    assert agent.state.get("myapp-approval") == "y"
    second = client(["g/h/i.txt"])

    assert PROMPTS == [
        "Do you want to delete ['a/b/c.txt', 'd/e/f.txt'] (t/y/N): ",
        "Do you want to delete ['g/h/i.txt'] (t/y/N): ",
    ]
    assert first.stop_reason == second.stop_reason == "end_turn"
    assert DELETED == [["a/b/c.txt", "d/e/f.txt"], ["g/h/i.txt"]]
    assert model.calls == 4


def test_deny_then_trust():
    model = two_invocations_model()
    agent = start_server(model)
    ANSWERS.extend(["n", "t"])

    first = client(["a/b/c.txt", "d/e/f.txt"])

    assert first.stop_reason == "end_turn"
    assert first.message == {"role": "assistant", "content": [{"text": "Deleted the first batch."}]}
    assert DELETED == []
    assert delete_result(agent, "d1") == {
        "toolUseId": "d1",
        "status": "error",
        "content": [{"text": "User denied permission to delete files"}],
    }
    assert agent.state.get("myapp-approval") == "n"

    second = client(["g/h/i.txt"])

    assert len(PROMPTS) == 2
    assert second.stop_reason == "end_turn"
    assert DELETED == [["g/h/i.txt"]]
    assert agent.state.get("myapp-approval") == "t"


def test_interrupt_details_of_the_first_server_call():
    start_server(two_invocations_model())

    result = server("paths=<['a/b/c.txt', 'd/e/f.txt']>")

    assert result.stop_reason == "interrupt"
    (interrupt,) = result.interrupts
    assert interrupt.name == "myapp-approval"
    assert interrupt.reason == {"paths": ["a/b/c.txt", "d/e/f.txt"]}
    assert interrupt.id.startswith("v1:before_tool_call:d1:")
    assert result.message["content"][0]["toolUse"]["toolUseId"] == "d1"
    json.dumps(result.message)
    json.dumps([i.to_dict() for i in result.interrupts])


def test_trust_within_one_invocation_skips_the_later_cycles_question():
    model = ScriptedModel(
        [
            tool_call("delete_files", tool_use_id="d1", paths=["a"]),
            tool_call("delete_files", tool_use_id="d2", paths=["b"]),
            text("Both deleted."),
        ]
    )
    start_server(model)
    ANSWERS.append("t")

    result = client(["a", "b"])

    assert len(PROMPTS) == 1
    assert result.stop_reason == "end_turn"
    assert DELETED == [["a"], ["b"]]
    assert model.calls == 3
