"""The interrupts guide's server/client pattern: every request builds a NEW agent on the same session.

The approval is the public `HumanInTheLoop` (trust enabled, ``inspect_files`` allowed), in place of the guide's
hand-written approval hook: ``y`` approves, ``t`` approves and trusts ``delete_files`` for the session.

Each ``server()`` call gets its own `ScriptedModel` holding only the turns that call needs, so a resume whose
model has only the final text turn proves the model is not called again for the interrupted tool turn. The
same scenarios run on a `FileSessionManager` and on a `RepositorySessionManager` sharing one
`InMemorySessionRepository`.
"""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import answer, answers

from strandslike import Agent, tool
from strandslike.agent import AgentResult
from strandslike.interrupt import PendingInterruptsError
from strandslike.models import ScriptedModel, text, tool_call, turn
from strandslike.models.scripted import ScriptedTurn
from strandslike.session import FileSessionManager, InMemorySessionRepository, RepositorySessionManager
from strandslike.session.session_manager import SessionManager
from strandslike.testing import answer_all
from strandslike.types.agent import AgentInput
from strandslike.vended_interventions.hitl import HumanInTheLoop

DELETED: list[list[str]] = []
INSPECTED: list[list[str]] = []


@tool
def delete_files(paths: list[str]) -> bool:
    """Delete files.

    Args:
        paths: The files to delete.
    """
    DELETED.append(paths)
    return True


@tool
def inspect_files(paths: list[str]) -> dict[str, Any]:
    """Inspect files.

    Args:
        paths: The files to inspect.
    """
    INSPECTED.append(paths)
    return {"inspected": paths}


APPROVAL = HumanInTheLoop.name


def prompt(paths: list[str]) -> str:
    """The question HumanInTheLoop asks about a delete_files call (also the interrupt's reason)."""
    return 'Approve "delete_files"?\n  Input: {"paths": ' + str(paths).replace("'", '"') + "}"


class Server:
    """The guide's ``server()``: a fresh agent per call, with a fresh session manager and a per-call model."""

    def __init__(self, make_session_manager: Callable[[], SessionManager]) -> None:
        self.make_session_manager = make_session_manager
        self.agents: list[Agent] = []
        self.models: list[ScriptedModel] = []

    def agent(self, turns: list[ScriptedTurn]) -> Agent:
        model = ScriptedModel(turns)
        agent = Agent(
            model=model,
            interventions=[HumanInTheLoop(allowed_tools=["inspect_files"], enable_trust=True)],
            session_manager=self.make_session_manager(),
            system_prompt="You delete files older than 5 days",
            tools=[delete_files, inspect_files],
            callback_handler=None,
        )
        self.agents.append(agent)
        self.models.append(model)
        return agent

    def __call__(self, prompt: AgentInput, turns: list[ScriptedTurn]) -> AgentResult:
        return self.agent(turns)(prompt)


@pytest.fixture(autouse=True)
def _clear_tool_records() -> None:
    DELETED.clear()
    INSPECTED.clear()


@pytest.fixture(params=["file", "memory"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Server:
    if request.param == "file":
        return Server(lambda: FileSessionManager(session_id="myapp", storage_dir=tmp_path))
    repository = InMemorySessionRepository()  # one store shared by every request, like a database
    return Server(lambda: RepositorySessionManager("myapp", repository))


PATHS = ["a/b/c.txt", "d/e/f.txt"]
DELETE_CALL = [tool_call("delete_files", tool_use_id="delete_1", paths=PATHS)]


def test_trust_answer_runs_the_tool_and_skips_later_interrupts(server: Server) -> None:
    first = server(f"paths=<{PATHS}>", DELETE_CALL)
    assert first.stop_reason == "interrupt"
    [interrupt] = first.interrupts
    assert interrupt.name == APPROVAL
    assert interrupt.reason == prompt(PATHS)
    assert interrupt.metadata["input"] == {"paths": PATHS}
    assert DELETED == []

    second = server([answer(interrupt, "t")], [text("Deleted both files.")])
    assert second.stop_reason == "end_turn"
    assert second.message == {"role": "assistant", "content": [{"text": "Deleted both files."}]}
    assert DELETED == [PATHS]
    resume_model = server.models[1]
    assert resume_model.calls == 1  # only the final text turn: the tool turn was not asked for again
    last_sent = resume_model.requests[0].messages[-1]
    assert last_sent == {
        "role": "user",
        "content": [{"toolResult": {"toolUseId": "delete_1", "status": "success", "content": [{"text": "true"}]}}],
    }
    assert server.agents[1].state.get("hitl:trusted_tools") == ["delete_files"]

    third = server(
        "Now delete old.txt",
        [tool_call("delete_files", tool_use_id="delete_2", paths=["old.txt"]), text("Deleted old.txt.")],
    )
    assert third.stop_reason == "end_turn"  # trusted: no interrupt
    assert not third.interrupts
    assert DELETED == [PATHS, ["old.txt"]]
    assert server.models[2].remaining == 0
    assert [m["role"] for m in server.agents[2].messages] == ["user", "assistant", "user", "assistant"] * 2


def test_yes_then_no_interrupts_again_and_a_denial_cancels_the_tool(server: Server) -> None:
    first = server("Delete the logs", DELETE_CALL)
    second = server(answers(first.interrupts, "y"), [text("Deleted.")])
    assert second.stop_reason == "end_turn"
    assert DELETED == [PATHS]
    assert server.agents[1].state.get() == {}  # "y" approves this call only

    third = server("And old.txt", [tool_call("delete_files", tool_use_id="delete_2", paths=["old.txt"])])
    assert third.stop_reason == "interrupt"  # "y" is not trust: asked again
    assert [i.reason for i in third.interrupts] == [prompt(["old.txt"])]

    fourth = server(answers(third.interrupts, "n"), [text("I did not delete old.txt.")])
    assert fourth.stop_reason == "end_turn"
    assert DELETED == [PATHS]  # denied: the tool did not run
    denied = server.models[3].requests[0].messages[-1]["content"][0]["toolResult"]
    assert denied["status"] == "error"
    assert denied["content"] == [{"text": f"CONFIRMATION_FAILED: {prompt(['old.txt'])}"}]
    assert server.agents[3].state.get() == {}

    restored = server.agent([])
    assert restored.messages == server.agents[3].messages
    assert restored.state.get() == {}
    assert restored.pending_interrupts == []
    decisions = [(e["decision"], e["input"]["paths"]) for e in restored.interrupt_audit if e["event"] == "decision"]
    assert decisions == [("approved", PATHS), ("denied", ["old.txt"])]


def test_the_guide_client_loop_with_a_model_per_request(server: Server) -> None:
    scripts = [DELETE_CALL, [text("Deleted.")]]
    typed = ["t"]

    def client(paths: list[str]) -> AgentResult:
        result = server(f"paths=<{paths}>", scripts.pop(0))
        while True:
            if result.stop_reason != "interrupt":
                break
            responses = []
            for interrupt in result.interrupts:
                if interrupt.name == APPROVAL:
                    responses.append({"interruptResponse": {"interruptId": interrupt.id, "response": typed.pop(0)}})
            result = server(responses, scripts.pop(0))
        return result

    result = client(PATHS)
    assert result.stop_reason == "end_turn"
    assert str(result).strip() == "Deleted."
    assert DELETED == [PATHS]
    assert scripts == []
    assert typed == []
    assert len(server.agents) == 2


def test_a_new_agent_restores_messages_state_and_interrupts_exactly(server: Server) -> None:
    first = server("Delete the logs", DELETE_CALL)
    paused = server.agents[0]
    restored = server.agent([])
    assert restored.messages == paused.messages
    assert restored.state.get() == paused.state.get()
    assert [i.id for i in restored.pending_interrupts] == [i.id for i in first.interrupts]
    assert restored._interrupt_state.to_dict() == paused._interrupt_state.to_dict()
    restored_interrupt = restored._interrupt_state.interrupts[first.interrupts[0].id]
    assert (restored_interrupt.name, restored_interrupt.reason) == (APPROVAL, prompt(PATHS))
    assert restored_interrupt.response_schema is not None
    assert restored_interrupt.allow_edits

    resumed = server(answers(first.interrupts, "t"), [text("Deleted.")])
    assert resumed.stop_reason == "end_turn"
    done = server.agents[-1]
    again = server.agent([])
    assert again.messages == done.messages
    assert again.state.get("hitl:trusted_tools") == ["delete_files"]
    assert [(g.tool, g.granted_by) for g in HumanInTheLoop.list_trust(again)] == [("delete_files", "human")]
    assert again.pending_interrupts == []
    assert again._interrupt_state.to_dict() == done._interrupt_state.to_dict()


def test_a_new_prompt_while_interrupted_is_refused_by_the_restored_agent(server: Server) -> None:
    first = server("Delete the logs", DELETE_CALL)
    restored = server.agent([text("never")])
    with pytest.raises(PendingInterruptsError):
        restored("something else")
    assert server.models[-1].calls == 0
    # Still resumable by yet another fresh agent.
    resumed = server(answers(first.interrupts, "y"), [text("Deleted.")])
    assert resumed.stop_reason == "end_turn"
    assert DELETED == [PATHS]


def test_partial_resume_across_new_agents_runs_each_tool_once(server: Server) -> None:
    batch = [
        turn(
            tool_call("delete_files", tool_use_id="delete_a", paths=["a.txt"]),
            tool_call("inspect_files", tool_use_id="inspect_b", paths=["b.txt"]),
            tool_call("delete_files", tool_use_id="delete_c", paths=["c.txt"]),
        )
    ]
    first = server("Clean up", batch)
    assert first.stop_reason == "interrupt"
    by_path = {i.metadata["input"]["paths"][0]: i for i in first.interrupts}
    assert sorted(by_path) == ["a.txt", "c.txt"]
    assert INSPECTED == [["b.txt"]]  # the uninterrupted tool of the batch completed

    second = server([answer(by_path["a.txt"], "y")], [])  # the model is not called: its script is empty
    assert second.stop_reason == "interrupt"
    assert [i.id for i in second.interrupts] == [by_path["c.txt"].id]
    assert DELETED == [["a.txt"]]
    assert INSPECTED == [["b.txt"]]

    between = server.agent([])
    pending = between._interrupt_state.pending_tool_execution
    assert pending is not None
    assert [r["toolUseId"] for r in pending.completed_tool_results] == ["delete_a", "inspect_b"]
    assert [i.id for i in between.pending_interrupts] == [by_path["c.txt"].id]

    third = server([answer(by_path["c.txt"], "n")], [text("Deleted a.txt, kept c.txt.")])
    assert third.stop_reason == "end_turn"
    assert DELETED == [["a.txt"]]
    assert INSPECTED == [["b.txt"]]
    results = server.models[-1].requests[0].messages[-1]["content"]
    assert [(b["toolResult"]["toolUseId"], b["toolResult"]["status"]) for b in results] == [
        ("delete_a", "success"),
        ("inspect_b", "success"),
        ("delete_c", "error"),
    ]
    assert all(model.remaining == 0 for model in server.models)


def test_one_script_for_the_whole_conversation_with_the_testing_fixtures(scripted_model, session_store) -> None:
    """The guide's server, written as a user would test it: one script, a new agent and model per request."""
    script = [*DELETE_CALL, text("Deleted both files."), tool_call("delete_files", paths=["x"]), text("Done.")]

    def server_call(prompt: AgentInput) -> AgentResult:
        agent = Agent(
            model=scripted_model(script, mode="conversation"),
            interventions=[HumanInTheLoop(allowed_tools=["inspect_files"], enable_trust=True)],
            session_manager=session_store.manager("myapp"),
            tools=[delete_files, inspect_files],
        )
        return agent(prompt)

    first = server_call("Delete the logs")
    assert first.stop_reason == "interrupt"
    second = server_call(answer_all(first, "t"))
    assert str(second) == "Deleted both files.\n"
    third = server_call("and x")  # trusted now: no interrupt
    assert str(third) == "Done.\n"
    assert DELETED == [PATHS, ["x"]]
    assert [model.calls for model in scripted_model.models] == [1, 1, 2]
    assert scripted_model.models[-1].remaining == 0
