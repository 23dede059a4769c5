"""ScriptedModel(mode="conversation"): the turn is chosen by the conversation, not by a counter; reply functions."""

import json
from pathlib import Path
from typing import Any

import pytest

from strandslike import Agent, tool
from strandslike.agent.conversation_manager import SlidingWindowConversationManager
from strandslike.hooks import BeforeModelCallEvent, BeforeToolCallEvent
from strandslike.models import ScriptedModel, ScriptExhaustedError, text, tool_call, turn
from strandslike.session import FileSessionManager
from strandslike.types.content import Message, Messages

RAN: list[str] = []


@pytest.fixture(autouse=True)
def _clear():
    RAN.clear()


@tool
def lookup(key: str) -> str:
    """Look something up.

    Args:
        key: What to look up.
    """
    RAN.append(key)
    return f"value of {key}"


def approve(event: BeforeToolCallEvent) -> None:
    if event.interrupt("approval", reason=event.tool_use["input"]) != "y":
        event.cancel_tool = "denied"


SCRIPT = [tool_call("lookup", key="a"), tool_call("lookup", key="b"), text("a and b looked up")]


def user(text_: str) -> Message:
    return {"role": "user", "content": [{"text": text_}]}


def assistant(*blocks: Any) -> Message:
    return {"role": "assistant", "content": list(blocks)}


def test_a_fresh_model_on_a_conversation_continues_after_the_turns_it_holds():
    messages: Messages = [
        user("go"),
        assistant({"toolUse": {"toolUseId": "tooluse_1", "name": "lookup", "input": {"key": "a"}}}),
        {"role": "user", "content": [{"toolResult": {"toolUseId": "tooluse_1", "status": "success", "content": []}}]},
    ]
    model = ScriptedModel(SCRIPT, mode="conversation")
    assert model.mode == "conversation"
    agent = Agent(model=model, tools=[lookup], messages=messages)

    result = agent()  # the trailing tool result: the model is called with the conversation as it stands

    assert str(result) == "a and b looked up\n"
    assert RAN == ["b"]  # turn 0 was not played again
    assert model.calls == 2
    assert model.remaining == 0


def test_the_same_conversation_twice_plays_the_same_turn_twice():
    model = ScriptedModel([text("one"), text("two")], mode="conversation")
    first = Agent(model=model)
    second = Agent(model=model)
    assert str(first("hi")) == "one\n"
    assert str(second("hi")) == "one\n"  # a counter would have said "two"
    assert str(first("again")) == "two\n"


def test_a_new_agent_per_request_continues_the_script_through_a_file_session(tmp_path: Path):
    def build() -> Agent:
        return Agent(
            model=ScriptedModel(SCRIPT, mode="conversation"),
            tools=[lookup],
            hooks=[approve],
            session_manager=FileSessionManager("s", storage_dir=tmp_path),
        )

    first = build()
    paused = first("look up a and b")
    assert paused.stop_reason == "interrupt"
    first.session_manager.close()

    second = build()  # a new agent, a new model: the conversation says turn 0 was played
    paused = second([{"interruptResponse": {"interruptId": paused.interrupts[0].id, "response": "y"}}])
    assert paused.stop_reason == "interrupt"
    assert paused.interrupts[0].reason == {"key": "b"}
    second.session_manager.close()

    third = build()
    done = third([{"interruptResponse": {"interruptId": paused.interrupts[0].id, "response": "y"}}])
    assert str(done) == "a and b looked up\n"
    assert RAN == ["a", "b"]
    third.session_manager.close()


def test_a_new_process_continues_the_script(tmp_path: Path):
    import subprocess
    import sys

    program = f"""
import sys
from strandslike import Agent
from strandslike.models import ScriptedModel, text
from strandslike.session import FileSessionManager
agent = Agent(
    model=ScriptedModel([text("first"), text("second"), text("third")], mode="conversation"),
    session_manager=FileSessionManager("p", storage_dir={str(tmp_path)!r}),
)
print(str(agent(sys.argv[1])).strip())
"""
    replies = [
        subprocess.run([sys.executable, "-c", program, prompt], capture_output=True, text=True, check=True).stdout
        for prompt in ("one", "two", "three")
    ]
    assert [reply.strip() for reply in replies] == ["first", "second", "third"]


def test_repeated_text_turns_are_told_apart_by_the_conversation_before_them():
    model = ScriptedModel([text("ok"), text("ok"), text("done")], mode="conversation")
    history: Messages = []
    assert str(Agent(model=model, messages=history)("1")) == "ok\n"
    history = [user("1"), assistant({"text": "ok"})]
    assert str(Agent(model=model, messages=history)("2")) == "ok\n"
    history += [user("2"), assistant({"text": "ok"})]
    assert str(Agent(model=model, messages=history)("3")) == "done\n"


def test_a_trimmed_conversation_still_finds_its_place():
    turns = [text(f"reply {n}") for n in range(12)]
    agent = Agent(
        model=ScriptedModel(turns, mode="conversation"),
        conversation_manager=SlidingWindowConversationManager(window_size=4),
    )
    replies = [str(agent(f"prompt {n}")).strip() for n in range(12)]
    assert replies == [f"reply {n}" for n in range(12)]
    assert len(agent.messages) <= 4


def test_assistant_messages_that_are_no_scripted_turn_are_skipped():
    cancelled = {"count": 0}

    def deny_once(event: BeforeModelCallEvent) -> None:
        if cancelled["count"] == 0:
            cancelled["count"] += 1
            event.cancel = "not now"

    model = ScriptedModel([text("first"), text("second")], mode="conversation")
    agent = Agent(model=model, hooks=[deny_once])
    assert str(agent("a")) == "not now\n"  # a hook's message, not the script's
    assert str(agent("b")) == "first\n"
    assert str(agent("c")) == "second\n"


def test_an_exhausted_conversation_says_so():
    model = ScriptedModel([text("only")], mode="conversation")
    agent = Agent(model=model)
    agent("a")
    with pytest.raises(ScriptExhaustedError, match="the conversation already holds all of them"):
        agent("b")


def test_conversation_mode_refuses_exception_turns_and_unknown_modes():
    with pytest.raises(ValueError, match="turn 1 is an exception"):
        ScriptedModel([text("a"), RuntimeError("boom")], mode="conversation")
    with pytest.raises(ValueError, match="mode='replay'"):
        ScriptedModel([text("a")], mode="replay")  # type: ignore[arg-type]


def test_a_reply_function_answers_from_the_conversation():
    def summarise(messages: Messages) -> Any:
        results = [
            block["toolResult"]["content"][0]["text"]
            for message in messages
            for block in message["content"]
            if "toolResult" in block
        ]
        return text("; ".join(results))

    model = ScriptedModel([tool_call("lookup", key="a"), summarise])
    agent = Agent(model=model, tools=[lookup])
    assert str(agent("go")) == "value of a\n"


def test_a_reply_function_may_call_tools_with_ids_of_its_own():
    model = ScriptedModel(
        [
            tool_call("lookup", key="a"),
            lambda messages: turn(tool_call("lookup", key="b"), tool_call("lookup", key="c")),
            text("done"),
        ]
    )
    agent = Agent(model=model, tools=[lookup])
    agent("go")
    ids = [block["toolUse"]["toolUseId"] for block in agent.messages[3]["content"]]
    assert ids == ["tooluse_2_1", "tooluse_2_2"]
    assert sorted(RAN) == ["a", "b", "c"]


def test_reply_functions_in_conversation_mode_count_as_played_by_the_message_they_produced():
    model = ScriptedModel(
        [text("hello"), lambda messages: text(f"you said {len(messages)} things"), text("bye")], mode="conversation"
    )
    agent = Agent(model=model)
    assert [str(agent(p)).strip() for p in ("a", "b", "c")] == ["hello", "you said 3 things", "bye"]
    rebuilt = Agent(model=ScriptedModel([text("hello"), lambda m: text("?"), text("bye")], mode="conversation"))
    rebuilt.messages.extend(json.loads(json.dumps(agent.messages[:4])))  # hello and the reply function's answer
    assert str(rebuilt("c")) == "bye\n"


def test_bad_reply_functions_and_exception_classes_are_clear_errors():
    with pytest.raises(TypeError, match="pass an instance"):
        ScriptedModel([RuntimeError])
    agent = Agent(model=ScriptedModel([lambda messages: lambda m: text("x")]))
    with pytest.raises(TypeError, match="returned another function"):
        agent("go")
    agent = Agent(model=ScriptedModel([lambda messages: 42]))
    with pytest.raises(TypeError, match="turn 0 is 42"):
        agent("go")
