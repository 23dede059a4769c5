"""Restoring file sessions: long histories, bytes, redaction, torn logs, dangling tool uses, state, file modes."""

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from helpers import answers

from strandslike import Agent, tool
from strandslike.agent.conversation_manager import NullConversationManager
from strandslike.hooks import BeforeInvocationEvent, BeforeToolCallEvent
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.models.scripted import ScriptedTurn
from strandslike.session import FileSessionManager
from strandslike.types.content import Message
from strandslike.types.exceptions import SessionException
from strandslike.types.session import SessionAgent, SessionMessage

SESSION = "s1"
INTERRUPTED: dict[str, Any] = {"text": "Tool was interrupted."}


@tool
def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: The key.
    """
    return f"value of {key}"


def approve(event: BeforeToolCallEvent) -> None:
    if event.interrupt("approval", reason={"tool": event.tool_use["name"]}) != "y":
        event.cancel_tool = "denied"


def new_agent(storage: Path, turns: list[ScriptedTurn] | None = None, **kwargs: Any) -> Agent:
    return Agent(
        model=ScriptedModel(turns or []),
        tools=[lookup],
        session_manager=FileSessionManager(SESSION, storage_dir=storage),
        **kwargs,
    )


def log_path(storage: Path, agent_id: str = "default") -> Path:
    return storage / f"session_{SESSION}" / "agents" / f"agent_{agent_id}" / "agent.jsonl"


def log_lines(storage: Path) -> list[dict[str, Any]]:
    raw = log_path(storage).read_bytes()
    assert raw.endswith(b"\n"), "the log must end with a complete record"
    return [json.loads(line) for line in raw.decode().splitlines()]


def message_indices(storage: Path) -> list[int]:
    return [record["i"] for record in log_lines(storage) if record["k"] == "m"]


def craft(storage: Path, messages: list[Message], *, agent: SessionAgent | None = None) -> None:
    """Write a session whose stored history is ``messages``, through the repository API (as a crash leaves it)."""
    repository = FileSessionManager(SESSION, storage_dir=storage)
    repository.create_agent(SESSION, agent or SessionAgent("default", {}, {}))
    for index, message in enumerate(messages):
        repository.create_message(SESSION, "default", SessionMessage.from_message(message, index))
    repository.close()


# -- long histories -----------------------------------------------------------------------------------------


def numbered(index: int) -> Message:
    role = "user" if index % 2 == 0 else "assistant"
    return {"role": role, "content": [{"text": f"message {index} - ünïcödé {'✓' * (index % 5)}"}]}


def test_a_session_of_ten_thousand_messages_restores_in_order(tmp_path: Path) -> None:
    writer = new_agent(tmp_path, conversation_manager=NullConversationManager())
    manager = writer.session_manager
    expected = [numbered(i) for i in range(10_000)]
    for message in expected:
        manager.append_message(message, writer)

    restored = new_agent(tmp_path, [text("Reply 10001.")], conversation_manager=NullConversationManager())
    assert restored.messages == expected

    reader = FileSessionManager(SESSION, storage_dir=tmp_path)
    page = reader.list_messages(SESSION, "default", limit=5, offset=100)
    assert [m.message_id for m in page] == [100, 101, 102, 103, 104]
    assert [m.message for m in page] == expected[100:105]
    assert [m.message_id for m in reader.list_messages(SESSION, "default", offset=9_995)] == list(range(9_995, 10_000))
    assert [m.message_id for m in reader.list_messages(SESSION, "default", limit=3)] == [0, 1, 2]
    assert reader.list_messages(SESSION, "default", offset=10_000) == []
    assert reader.list_messages(SESSION, "default", limit=0, offset=10) == []
    assert len(reader.list_messages(SESSION, "default")) == 10_000
    fetched = reader.read_message(SESSION, "default", 7_777)
    assert fetched is not None
    assert fetched.message == expected[7_777]
    assert reader.read_message(SESSION, "default", 10_000) is None

    result = restored("message 10000")
    assert result.stop_reason == "end_turn"
    assert message_indices(tmp_path) == list(range(10_002))
    again = new_agent(tmp_path, conversation_manager=NullConversationManager())
    assert again.messages == [*expected, {"role": "user", "content": [{"text": "message 10000"}]}, result.message]


# -- bytes and redaction ------------------------------------------------------------------------------------

PNG = b"\x89PNG\r\n\x1a\n\x00\x01\xfe\xff" + bytes(range(256))


def test_raw_bytes_in_messages_round_trip(tmp_path: Path) -> None:
    agent = new_agent(tmp_path, [text("A tiny picture.")])
    prompt = [
        {"text": "What is this?"},
        {"image": {"format": "png", "source": {"bytes": PNG}}},
        {"document": {"format": "txt", "name": "notes", "source": {"bytes": b"plain\x00bytes"}}},
    ]
    agent(prompt)
    assert b'"__bytes_encoded__"' in log_path(tmp_path).read_bytes()

    restored = new_agent(tmp_path)
    assert restored.messages == agent.messages
    image = restored.messages[0]["content"][1]["image"]["source"]["bytes"]
    assert isinstance(image, bytes)
    assert image == PNG
    assert restored.messages[0]["content"][2]["document"]["source"]["bytes"] == b"plain\x00bytes"


def test_redact_latest_message_is_what_a_new_agent_restores(tmp_path: Path) -> None:
    agent = new_agent(tmp_path, [text("The password is hunter2.")])
    agent("What is the password?")
    redacted: Message = {"role": "assistant", "content": [{"text": "[REDACTED]"}]}
    agent.session_manager.redact_latest_message(redacted, agent)

    restored = new_agent(tmp_path, [text("OK.")])
    assert restored.messages == [agent.messages[0], redacted]
    stored = FileSessionManager(SESSION, storage_dir=tmp_path).list_messages(SESSION, "default")
    assert stored[1].message == {"role": "assistant", "content": [{"text": "The password is hunter2."}]}
    assert stored[1].redact_message == redacted

    # A restored agent knows its latest message and can redact it too; later messages keep their indices.
    restored("Thanks")
    second: Message = {"role": "assistant", "content": [{"text": "[ALSO REDACTED]"}]}
    restored.session_manager.redact_latest_message(second, restored)
    final = new_agent(tmp_path)
    assert final.messages == [agent.messages[0], redacted, {"role": "user", "content": [{"text": "Thanks"}]}, second]
    assert message_indices(tmp_path) == [0, 1, 2, 3]


def test_redacting_before_any_message_is_a_session_exception(tmp_path: Path) -> None:
    agent = new_agent(tmp_path)
    with pytest.raises(SessionException, match="No message to redact"):
        agent.session_manager.redact_latest_message({"role": "user", "content": []}, agent)


# -- torn logs ----------------------------------------------------------------------------------------------


def test_a_torn_last_record_is_ignored_then_cut_before_the_next_append(tmp_path: Path) -> None:
    agent = new_agent(tmp_path, [text("First answer.")])
    agent("First question")
    clean_size = log_path(tmp_path).stat().st_size
    with open(log_path(tmp_path), "ab") as handle:
        handle.write(b'{"k":"m","i":2,"t":"2025-01-01T00:00:00","m":{"role":"user","content":[{"text":"half a mess')

    restored = new_agent(tmp_path, [text("Second answer.")])
    assert restored.messages == agent.messages
    assert log_path(tmp_path).stat().st_size > clean_size  # restoring alone does not touch the file

    result = restored("Second question")
    assert result.stop_reason == "end_turn"
    raw = log_path(tmp_path).read_bytes()
    assert b"half a mess" not in raw
    records = log_lines(tmp_path)  # every line is valid JSON
    assert records[0]["k"] == "h"
    assert message_indices(tmp_path) == [0, 1, 2, 3]
    assert new_agent(tmp_path).messages == [
        *agent.messages,
        {"role": "user", "content": [{"text": "Second question"}]},
        {"role": "assistant", "content": [{"text": "Second answer."}]},
    ]


def test_a_torn_snapshot_keeps_the_previous_state(tmp_path: Path) -> None:
    agent = new_agent(tmp_path, [text("Hi.")], state={"counter": 1})
    agent("Hello")
    with open(log_path(tmp_path), "ab") as handle:
        handle.write(b'{"k":"s","t":"2025-01-01T00:00:00","a":{"agent_id":"default","state":{"counter":2')
    restored = new_agent(tmp_path, [text("Hi again.")])
    assert restored.state.get() == {"counter": 1}
    restored.state.set("counter", 3)
    restored("Hello again")
    log_lines(tmp_path)
    assert new_agent(tmp_path).state.get() == {"counter": 3}


def test_a_log_torn_inside_its_header_starts_over(tmp_path: Path) -> None:
    FileSessionManager(SESSION, storage_dir=tmp_path).close()  # session.json exists
    log_path(tmp_path).parent.mkdir(parents=True, mode=0o700)
    log_path(tmp_path).write_bytes(b'{"k":"h","format":"strandslike-ag')
    os.chmod(log_path(tmp_path), 0o600)
    agent = new_agent(tmp_path, [text("Fresh start.")])
    assert agent.messages == []
    assert agent("Hello").stop_reason == "end_turn"
    records = log_lines(tmp_path)
    assert [r["k"] for r in records][:2] == ["h", "s"]
    assert new_agent(tmp_path).messages == agent.messages


# -- dangling tool uses -------------------------------------------------------------------------------------

USE_1: Message = {
    "role": "assistant",
    "content": [
        {"text": "Let me look both up."},
        {"toolUse": {"toolUseId": "use_1", "name": "lookup", "input": {"key": "a"}}},
        {"toolUse": {"toolUseId": "use_2", "name": "lookup", "input": {"key": "b"}}},
    ],
}


def interrupted(tool_use_id: str) -> dict[str, Any]:
    return {"toolResult": {"toolUseId": tool_use_id, "status": "error", "content": [INTERRUPTED]}}


def test_a_dangling_tool_use_in_the_middle_of_history_is_repaired_on_restore(tmp_path: Path) -> None:
    craft(
        tmp_path,
        [
            {"role": "user", "content": [{"text": "Look up a and b"}]},
            USE_1,  # the process died while the tools ran: no results were stored
            {"role": "user", "content": [{"text": "Are you there?"}]},
            {"role": "assistant", "content": [{"text": "Yes."}]},
        ],
    )
    agent = new_agent(tmp_path, [text("All good.")])
    assert agent.messages[2] == {
        "role": "user",
        "content": [interrupted("use_1"), interrupted("use_2"), {"text": "Are you there?"}],
    }
    assert len(agent.messages) == 4
    model: ScriptedModel = agent.model  # type: ignore[assignment]
    assert agent("Continue").stop_reason == "end_turn"
    sent = model.requests[0].messages
    assert sent[2]["content"][:2] == [interrupted("use_1"), interrupted("use_2")]
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user"]
    assert message_indices(tmp_path) == [0, 1, 2, 3, 4, 5]
    assert new_agent(tmp_path).messages == agent.messages


def test_a_partly_answered_tool_batch_keeps_the_results_it_has(tmp_path: Path) -> None:
    kept = {"toolResult": {"toolUseId": "use_2", "status": "success", "content": [{"text": "value of b"}]}}
    craft(
        tmp_path,
        [
            {"role": "user", "content": [{"text": "Look up a and b"}]},
            USE_1,
            {"role": "user", "content": [kept]},
            {"role": "assistant", "content": [{"text": "Done."}]},
        ],
    )
    agent = new_agent(tmp_path)
    assert agent.messages[2] == {"role": "user", "content": [interrupted("use_1"), kept]}


def tool_uses_without_results(messages: list[Message]) -> list[str]:
    """Return the ids of tool uses not answered by the next message (a trailing one excepted)."""
    missing = []
    for index, message in enumerate(messages[:-1]):
        uses = [b["toolUse"]["toolUseId"] for b in message["content"] if "toolUse" in b]
        following = messages[index + 1]
        answered = {b["toolResult"]["toolUseId"] for b in following["content"] if "toolResult" in b}
        missing += [use for use in uses if following["role"] != "user" or use not in answered]
    return missing


def test_a_dangling_tool_use_followed_by_an_assistant_message_is_repaired_without_shifting_indices(
    tmp_path: Path,
) -> None:
    stored: list[Message] = [
        {"role": "user", "content": [{"text": "Look up a and b"}]},
        USE_1,
        {"role": "assistant", "content": [{"text": "Something went wrong."}]},
    ]
    craft(tmp_path, stored)
    agent = new_agent(tmp_path, [text("Recovered.")])
    assert tool_uses_without_results(agent.messages) == []
    assert len(agent.messages) == len(stored)  # one live message per stored one: the window's counts stay true
    assert agent.messages[0] == stored[0]
    assert agent.messages[2] == stored[2]
    assert agent("Go on").stop_reason == "end_turn"
    model: ScriptedModel = agent.model  # type: ignore[assignment]
    assert tool_uses_without_results(model.requests[0].messages) == []
    assert new_agent(tmp_path).messages == agent.messages
    assert message_indices(tmp_path) == [0, 1, 2, 3, 4]


def test_a_trailing_dangling_tool_use_is_repaired_by_the_next_prompt(tmp_path: Path) -> None:
    craft(tmp_path, [{"role": "user", "content": [{"text": "Look up a and b"}]}, USE_1])
    agent = new_agent(tmp_path, [text("Sorry, the lookups were interrupted.")])
    assert agent.messages[-1] == USE_1  # left as it is until the next prompt
    assert not agent._interrupt_state.activated

    assert agent("What happened?").stop_reason == "end_turn"
    assert agent.messages[2] == {
        "role": "user",
        "content": [interrupted("use_1"), interrupted("use_2"), {"text": "What happened?"}],
    }
    model: ScriptedModel = agent.model  # type: ignore[assignment]
    assert model.requests[0].messages[2] == agent.messages[2]
    restored = new_agent(tmp_path)
    assert restored.messages == agent.messages
    assert message_indices(tmp_path) == [0, 1, 2, 3]


def test_a_cancelled_invocation_after_a_dangling_tool_use_keeps_the_history_valid(tmp_path: Path) -> None:
    craft(tmp_path, [{"role": "user", "content": [{"text": "Look up a and b"}]}, USE_1])
    cancelled: list[bool] = []

    def deny_once(event: BeforeInvocationEvent) -> None:
        if not cancelled:
            cancelled.append(True)
            event.cancel = "Not now."

    agent = new_agent(tmp_path, [text("OK.")], hooks=[deny_once])
    assert str(agent("Hello")).strip() == "Not now."
    # A fresh agent repairs what was stored.
    restored = new_agent(tmp_path)
    assert restored.messages[2] == {"role": "user", "content": [interrupted("use_1"), interrupted("use_2")]}
    # The live agent must not send the model a tool use without its results either.
    agent("Again")
    model: ScriptedModel = agent.model  # type: ignore[assignment]
    sent = model.requests[0].messages
    assert sent[2]["role"] == "user"
    assert sent[2]["content"][:2] == [interrupted("use_1"), interrupted("use_2")]


# -- interrupts ---------------------------------------------------------------------------------------------


def pause(storage: Path) -> Agent:
    agent = Agent(
        model=ScriptedModel([tool_call("lookup", tool_use_id="use_1", key="a")]),
        tools=[lookup],
        hooks=[approve],
        session_manager=FileSessionManager(SESSION, storage_dir=storage),
    )
    assert agent("Look up a").stop_reason == "interrupt"
    return agent


def test_an_interrupt_snapshot_as_the_last_record_restores_an_interrupted_agent(tmp_path: Path) -> None:
    paused = pause(tmp_path)
    assert log_lines(tmp_path)[-1]["k"] == "s"
    restored = new_agent(tmp_path, hooks=[approve])
    assert restored._interrupt_state.activated
    assert restored._interrupt_state.to_dict() == paused._interrupt_state.to_dict()


def test_messages_after_an_interrupt_snapshot_mean_the_interrupt_was_completed(tmp_path: Path) -> None:
    paused = pause(tmp_path)
    # The resuming process appended the tool's result and died before it recorded the cleared interrupt state.
    result: Message = {
        "role": "user",
        "content": [{"toolResult": {"toolUseId": "use_1", "status": "success", "content": [{"text": "value of a"}]}}],
    }
    repository = FileSessionManager(SESSION, storage_dir=tmp_path)
    repository.read_agent(SESSION, "default")  # a writer must have seen the log it appends to
    repository.create_message(SESSION, "default", SessionMessage.from_message(result, 2))
    repository.close()

    restored = Agent(
        model=ScriptedModel([text("a is value of a.")]),
        tools=[lookup],
        hooks=[approve],
        session_manager=FileSessionManager(SESSION, storage_dir=tmp_path),
    )
    assert not restored._interrupt_state.activated
    assert restored._interrupt_state.pending_tool_execution is None
    assert restored.messages == [*paused.messages, result]
    assert restored(None).stop_reason == "end_turn"  # continues from the tool result
    assert restored.messages[-1] == {"role": "assistant", "content": [{"text": "a is value of a."}]}


def test_a_restored_interrupted_agent_resumes_without_calling_the_model_for_the_tool_turn(tmp_path: Path) -> None:
    first = pause(tmp_path)
    restored = Agent(
        model=ScriptedModel([text("a is value of a.")]),
        tools=[lookup],
        hooks=[approve],
        session_manager=FileSessionManager(SESSION, storage_dir=tmp_path),
    )
    result = restored(answers(first._interrupt_state.unanswered(), "y"))
    assert result.stop_reason == "end_turn"
    assert restored.messages[2]["content"][0]["toolResult"]["content"] == [{"text": "value of a"}]


# -- state --------------------------------------------------------------------------------------------------

STATE = {
    "str": "ünïcödé ✓",
    "int": 42,
    "float": 2.5,
    "bool": True,
    "none": None,
    "list": [1, "two", {"three": [3.0]}],
    "nested": {"a": {"b": {"c": []}}},
}


def test_agent_state_values_are_restored(tmp_path: Path) -> None:
    agent = new_agent(tmp_path, [text("Noted.")], state={"initial": "yes"})
    for key, value in STATE.items():
        agent.state.set(key, value)
    agent("Remember all that")
    agent.state.delete("initial")
    agent.state.set("after", "the invocation")  # changed outside an invocation: saved with the next one
    agent.session_manager.sync_agent(agent)

    restored = new_agent(tmp_path)
    assert restored.state.get() == {**STATE, "after": "the invocation"}


def test_initial_state_of_a_new_agent_is_stored_and_a_restore_replaces_initial_state(tmp_path: Path) -> None:
    new_agent(tmp_path, state={"seed": 1})
    restored = new_agent(tmp_path, state={"seed": 2, "other": True})
    assert restored.state.get() == {"seed": 1}


# -- conversation managers ----------------------------------------------------------------------------------


@pytest.mark.parametrize("pin_first", [None, 1])
def test_conversation_manager_state_is_persisted_and_restored(tmp_path: Path, pin_first: int | None) -> None:
    managers = pytest.importorskip("strandslike.agent.conversation_manager")

    def window() -> Any:
        return managers.SlidingWindowConversationManager(window_size=4, pin_first=pin_first)

    reference = Agent(model=ScriptedModel([text(f"answer {i}") for i in range(6)]), conversation_manager=window())
    agents: list[Agent] = []
    for i in range(6):
        agent = Agent(
            model=ScriptedModel([text(f"answer {i}")]),
            conversation_manager=window(),
            session_manager=FileSessionManager(SESSION, storage_dir=tmp_path),
        )
        if agents:
            assert agent.messages == agents[-1].messages
            assert agent.conversation_manager.get_state() == agents[-1].conversation_manager.get_state()
        agent(f"question {i}")
        reference(f"question {i}")
        assert agent.messages == reference.messages
        agents.append(agent)

    restored = Agent(
        model=ScriptedModel([]),
        conversation_manager=window(),
        session_manager=FileSessionManager(SESSION, storage_dir=tmp_path),
    )
    assert restored.messages == reference.messages
    assert restored.conversation_manager.removed_message_count == reference.conversation_manager.removed_message_count
    assert restored.conversation_manager.get_state() == reference.conversation_manager.get_state()
    if pin_first:
        assert restored.messages[0] == {"role": "user", "content": [{"text": "question 0"}]}
    assert len(FileSessionManager(SESSION, storage_dir=tmp_path).list_messages(SESSION, "default")) == 12


def test_a_dangling_tool_use_repaired_on_restore_does_not_shift_the_window(tmp_path: Path) -> None:
    managers = pytest.importorskip("strandslike.agent.conversation_manager")
    craft(
        tmp_path,
        [
            {"role": "user", "content": [{"text": "Look up a and b"}]},
            USE_1,
            {"role": "assistant", "content": [{"text": "Something went wrong."}]},
        ],
        agent=SessionAgent("default", {}, managers.SlidingWindowConversationManager(window_size=4).get_state(), {}),
    )
    turns = [text(f"answer {i}") for i in range(4)]
    for i, reply in enumerate(turns):
        agent = Agent(
            model=ScriptedModel([reply]),
            conversation_manager=managers.SlidingWindowConversationManager(window_size=4),
            session_manager=FileSessionManager(SESSION, storage_dir=tmp_path),
        )
        before = list(agent.messages)
        agent(f"question {i}")
        assert agent.messages[-2:] == [
            {"role": "user", "content": [{"text": f"question {i}"}]},
            {"role": "assistant", "content": [{"text": f"answer {i}"}]},
        ]
        restored = Agent(
            model=ScriptedModel([]),
            conversation_manager=managers.SlidingWindowConversationManager(window_size=4),
            session_manager=FileSessionManager(SESSION, storage_dir=tmp_path),
        )
        assert restored.messages == agent.messages, f"after question {i} (history before: {before})"


# -- file modes ---------------------------------------------------------------------------------------------


def session_tree(storage: Path) -> tuple[list[Path], list[Path]]:
    agent = Agent(
        model=ScriptedModel([tool_call("lookup", tool_use_id="use_1", key="a")]),
        tools=[lookup],
        hooks=[approve],
        agent_id="worker",
        session_manager=FileSessionManager(SESSION, storage_dir=storage),
    )
    agent("Look up a")
    entries = [storage, *storage.rglob("*")]
    return [p for p in entries if p.is_dir()], [p for p in entries if p.is_file()]


def test_session_files_are_readable_by_their_owner_only(tmp_path: Path) -> None:
    _, files = session_tree(tmp_path / "sessions")
    names = {p.name for p in files}
    assert {"session.json", "agent.jsonl", "lock"} <= names
    modes = {str(p): oct(stat.S_IMODE(p.stat().st_mode)) for p in files}
    assert set(modes.values()) == {"0o600"}, modes


def test_session_directories_are_readable_by_their_owner_only(tmp_path: Path) -> None:
    directories, _ = session_tree(tmp_path / "sessions")
    modes = {str(p): oct(stat.S_IMODE(p.stat().st_mode)) for p in directories}
    assert len(modes) == 4  # storage dir, session_s1, agents, agent_worker
    assert set(modes.values()) == {"0o700"}, modes
