"""The interrupts guide's first Python example: an ApprovalHook interrupting on BeforeToolCallEvent.

The example code below is the guide's, with only the import root changed (``strands`` -> ``strandslike``), a
`ScriptedModel` passed as ``model=``, the tools' placeholder bodies recording their calls, and ``input()``
answered by a script (patched with pytest's ``monkeypatch``).
"""

import builtins
import json
import uuid
from typing import Any

import pytest

from strandslike import Agent, tool
from strandslike.hooks import BeforeToolCallEvent, HookProvider, HookRegistry
from strandslike.models import ScriptedModel, text, tool_call

DELETED: list[list[str]] = []
INSPECTED: list[list[str]] = []

# ---------------------------------------------------------------- guide code (import root changed) ----


@tool
def delete_files(paths: list[str]) -> bool:
    # Implementation here
    DELETED.append(paths)
    return True


@tool
def inspect_files(paths: list[str]) -> dict[str, Any]:
    # Implementation here
    INSPECTED.append(paths)
    return {path: {"age_days": 7} for path in paths}


class ApprovalHook(HookProvider):
    def __init__(self, app_name: str) -> None:
        self.app_name = app_name

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeToolCallEvent, self.approve)

    def approve(self, event: BeforeToolCallEvent) -> None:
        if event.tool_use["name"] != "delete_files":
            return

        approval = event.interrupt(f"{self.app_name}-approval", reason={"paths": event.tool_use["input"]["paths"]})
        if approval.lower() != "y":
            event.cancel_tool = "User denied permission to delete files"


def run_guide_example(model: ScriptedModel) -> tuple[Agent, Any]:
    """The guide's script, verbatim apart from ``model=model``; returns the agent and the final result."""
    agent = Agent(
        model=model,
        hooks=[ApprovalHook("myapp")],
        system_prompt="You delete files older than 5 days",
        tools=[delete_files, inspect_files],
        callback_handler=None,
    )

    paths = ["a/b/c.txt", "d/e/f.txt"]
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
    return agent, result


# ------------------------------------------------------------------------------------------ tests ----

PATHS = ["a/b/c.txt", "d/e/f.txt"]
APPROVAL_ID = f"v1:before_tool_call:delete-1:{uuid.uuid5(uuid.NAMESPACE_OID, 'myapp-approval')}"


class ScriptedInput:
    """Stands in for ``input()``: returns scripted answers and records the prompts."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.answers: list[str] = []
        self.prompts: list[str] = []
        monkeypatch.setattr(builtins, "input", self)

    def __call__(self, prompt: str = "") -> str:
        self.prompts.append(prompt)
        return self.answers.pop(0)


@pytest.fixture
def user(monkeypatch: pytest.MonkeyPatch) -> ScriptedInput:
    return ScriptedInput(monkeypatch)


@pytest.fixture(autouse=True)
def _reset_records():
    DELETED.clear()
    INSPECTED.clear()


def cleanup_model() -> ScriptedModel:
    """The LLM's part: inspect the files, delete them, then report."""
    return ScriptedModel(
        [
            tool_call("inspect_files", tool_use_id="inspect-1", paths=PATHS),
            tool_call("delete_files", tool_use_id="delete-1", paths=PATHS),
            text("Deleted the old files."),
        ]
    )


def tool_result(agent: Agent, tool_use_id: str) -> dict[str, Any]:
    results = [
        block["toolResult"]
        for message in agent.messages
        for block in message["content"]
        if "toolResult" in block and block["toolResult"]["toolUseId"] == tool_use_id
    ]
    assert len(results) == 1, results
    return results[0]


def test_first_call_pauses_before_delete_files_with_the_guides_interrupt():
    model = cleanup_model()
    agent = Agent(
        model=model,
        hooks=[ApprovalHook("myapp")],
        system_prompt="You delete files older than 5 days",
        tools=[delete_files, inspect_files],
        callback_handler=None,
    )

    result = agent(f"paths=<{PATHS}>")

    assert result.stop_reason == "interrupt"
    assert len(result.interrupts) == 1
    interrupt = result.interrupts[0]
    assert interrupt.name == "myapp-approval"
    assert interrupt.reason == {"paths": PATHS}
    assert interrupt.id == APPROVAL_ID
    assert interrupt.response is None
    # inspect_files is not guarded and ran; delete_files waits for the answer.
    assert INSPECTED == [PATHS]
    assert DELETED == []
    # The result's message is the assistant tool use that paused, and the history ends with it (no result yet).
    assert result.message == {
        "role": "assistant",
        "content": [{"toolUse": {"toolUseId": "delete-1", "name": "delete_files", "input": {"paths": PATHS}}}],
    }
    assert agent.messages[-1] is result.message
    json.dumps(result.message)
    assert str(result) == str([interrupt.to_dict()])
    assert model.calls == 2
    assert model.requests[0].system_prompt == "You delete files older than 5 days"


@pytest.mark.parametrize("answer", ["y", "Y"])
def test_guide_example_approved(user: ScriptedInput, capsys: pytest.CaptureFixture[str], answer: str):
    user.answers = [answer]
    model = cleanup_model()

    agent, result = run_guide_example(model)

    assert user.prompts == [f"Do you want to delete {PATHS} (y/N): "]
    assert result.stop_reason == "end_turn"
    assert result.interrupts in (None, [])
    assert result.message == {"role": "assistant", "content": [{"text": "Deleted the old files."}]}
    assert capsys.readouterr().out == f"MESSAGE: {json.dumps(result.message)}\n"
    assert DELETED == [PATHS]
    assert INSPECTED == [PATHS]  # the completed tool of the earlier cycle did not run again
    assert tool_result(agent, "delete-1") == {
        "toolUseId": "delete-1",
        "status": "success",
        "content": [{"text": "true"}],
    }
    # Resuming did not ask the model for the tool-use turn again: three turns, three calls.
    assert model.calls == 3
    assert model.remaining == 0
    assert [m["role"] for m in agent.messages] == ["user", "assistant", "user", "assistant", "user", "assistant"]
    json.dumps(agent.messages)


@pytest.mark.parametrize("answer", ["n", "N", ""])
def test_guide_example_denied(user: ScriptedInput, capsys: pytest.CaptureFixture[str], answer: str):
    user.answers = [answer]
    model = cleanup_model()

    agent, result = run_guide_example(model)

    assert len(user.prompts) == 1
    assert result.stop_reason == "end_turn"
    assert result.message == {"role": "assistant", "content": [{"text": "Deleted the old files."}]}
    assert capsys.readouterr().out == f"MESSAGE: {json.dumps(result.message)}\n"
    assert DELETED == []
    assert tool_result(agent, "delete-1") == {
        "toolUseId": "delete-1",
        "status": "error",
        "content": [{"text": "User denied permission to delete files"}],
    }
    # The model saw the denial in its last request.
    last_request = model.requests[-1].messages
    assert last_request[-1]["content"][0]["toolResult"]["content"] == [
        {"text": "User denied permission to delete files"}
    ]
    assert model.calls == 3


def test_two_deletes_in_one_turn_raise_two_interrupts_answered_separately(user: ScriptedInput):
    model = ScriptedModel(
        [
            {
                "role": "assistant",
                "content": [
                    {"toolUse": {"toolUseId": "d1", "name": "delete_files", "input": {"paths": ["a/b/c.txt"]}}},
                    {"toolUse": {"toolUseId": "d2", "name": "delete_files", "input": {"paths": ["d/e/f.txt"]}}},
                ],
            },
            text("Deleted one file."),
        ]
    )
    # Prompts come in the order of result.interrupts; answer by path rather than by position.
    agent = Agent(model=model, hooks=[ApprovalHook("myapp")], tools=[delete_files, inspect_files])
    first = agent(f"paths=<{PATHS}>")
    assert first.stop_reason == "interrupt"
    by_path = {interrupt.reason["paths"][0]: interrupt for interrupt in first.interrupts}
    assert set(by_path) == set(PATHS)
    assert {i.id.split(":")[2] for i in first.interrupts} == {"d1", "d2"}
    assert {i.name for i in first.interrupts} == {"myapp-approval"}

    result = agent(
        [
            {"interruptResponse": {"interruptId": by_path["a/b/c.txt"].id, "response": "y"}},
            {"interruptResponse": {"interruptId": by_path["d/e/f.txt"].id, "response": "n"}},
        ]
    )

    assert result.stop_reason == "end_turn"
    assert DELETED == [["a/b/c.txt"]]
    assert tool_result(agent, "d1")["status"] == "success"
    assert tool_result(agent, "d2")["content"] == [{"text": "User denied permission to delete files"}]
    # Results follow the model's tool-use order.
    results_message = agent.messages[2]
    assert [block["toolResult"]["toolUseId"] for block in results_message["content"]] == ["d1", "d2"]
    assert model.calls == 2
