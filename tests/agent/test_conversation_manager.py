import json
import logging

import pytest

from strandslike import Agent, tool
from strandslike.agent.conversation_manager import (
    ConversationManager,
    NullConversationManager,
    SlidingWindowConversationManager,
)
from strandslike.hooks import HookRegistry
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.types.exceptions import ContextWindowOverflowException


def user(content):
    return {"role": "user", "content": [{"text": content}]}


def assistant(content):
    return {"role": "assistant", "content": [{"text": content}]}


def tool_use(tool_use_id, *more_ids):
    return {
        "role": "assistant",
        "content": [{"toolUse": {"toolUseId": i, "name": "step", "input": {}}} for i in (tool_use_id, *more_ids)],
    }


def tool_result(tool_use_id, *more_ids, content="ok"):
    return {
        "role": "user",
        "content": [
            {"toolResult": {"toolUseId": i, "status": "success", "content": [{"text": content}]}}
            for i in (tool_use_id, *more_ids)
        ],
    }


def turns(count, start=0):
    """Plain text turns: u0, a0, u1, a1, ..."""
    history = []
    for i in range(start, start + count):
        history += [user(f"u{i}"), assistant(f"a{i}")]
    return history


def assert_valid_history(messages):
    """The history begins where a model accepts it and no tool use is split from its results."""
    first = messages[0]
    if first["role"] == "user":
        assert not any("toolResult" in block for block in first["content"])
    else:
        assert any("toolUse" in block for block in first["content"])
    for index, message in enumerate(messages):
        result_ids = {b["toolResult"]["toolUseId"] for b in message["content"] if "toolResult" in b}
        if result_ids:
            previous = messages[index - 1]
            assert index > 0
            assert result_ids <= {b["toolUse"]["toolUseId"] for b in previous["content"] if "toolUse" in b}
        use_ids = {b["toolUse"]["toolUseId"] for b in message["content"] if "toolUse" in b}
        if use_ids and index + 1 < len(messages):
            following = messages[index + 1]
            assert use_ids == {b["toolResult"]["toolUseId"] for b in following["content"] if "toolResult" in b}


@tool
def step(n: int) -> str:
    """Take one step.

    Args:
        n: The step number.
    """
    return f"step {n}"


# Sliding window: plain turns


def test_apply_management_keeps_the_latest_window_size_messages():
    agent = Agent(messages=turns(5))
    manager = SlidingWindowConversationManager(window_size=4)
    manager.apply_management(agent)
    assert agent.messages == turns(2, start=3)
    assert manager.removed_message_count == 6


def test_apply_management_leaves_a_history_within_the_window_alone():
    agent = Agent(messages=turns(2))
    manager = SlidingWindowConversationManager(window_size=4)
    manager.apply_management(agent)
    assert agent.messages == turns(2)
    assert manager.removed_message_count == 0


def test_an_odd_cut_moves_forward_to_a_user_message():
    agent = Agent(messages=[*turns(3), user("u3")])
    manager = SlidingWindowConversationManager(window_size=4)
    manager.apply_management(agent)
    # Keeping 4 would start at the assistant message a1; the window starts at the next user message.
    assert agent.messages == [user("u2"), assistant("a2"), user("u3")]
    assert manager.removed_message_count == 4


def test_agent_applies_the_window_after_each_invocation():
    model = ScriptedModel([text(f"answer {i}") for i in range(4)])
    agent = Agent(model=model, conversation_manager=SlidingWindowConversationManager(window_size=3))
    for i in range(4):
        agent(f"question {i}")
        assert len(agent.messages) <= 3
    assert agent.messages == [user("question 3"), assistant("answer 3")]
    assert agent.conversation_manager.removed_message_count == 6


# Sliding window: tool use and results


def test_trimming_never_starts_the_window_on_a_tool_result():
    history = [user("go"), tool_use("t1"), tool_result("t1"), assistant("done"), user("again"), assistant("ok")]
    agent = Agent(messages=history)
    SlidingWindowConversationManager(window_size=4).apply_management(agent)
    # len - window = 2 is the tool result; the first valid start after it is "again".
    assert agent.messages == [user("again"), assistant("ok")]


def test_trimming_falls_back_to_a_complete_tool_pair_when_no_plain_user_message_is_left():
    history = [user("go")]
    for i in range(1, 4):
        history += [tool_use(f"t{i}"), tool_result(f"t{i}")]
    history.append(assistant("done"))
    agent = Agent(messages=history)
    manager = SlidingWindowConversationManager(window_size=4)
    manager.apply_management(agent)
    assert agent.messages == [tool_use("t3"), tool_result("t3"), assistant("done")]
    assert manager.removed_message_count == 5
    assert_valid_history(agent.messages)


def test_parallel_tool_uses_stay_with_all_their_results():
    history = [user("go"), tool_use("t1", "t2"), tool_result("t1", "t2"), *turns(2, start=1)]
    for window in range(2, len(history)):
        agent = Agent(messages=list(history))
        SlidingWindowConversationManager(window_size=window).apply_management(agent)
        assert len(agent.messages) <= window
        assert_valid_history(agent.messages)


def test_apply_management_leaves_the_history_when_no_valid_cut_exists(caplog):
    history = [user("go"), tool_use("t1"), tool_result("t1"), tool_use("t2")]
    agent = Agent(messages=list(history))
    manager = SlidingWindowConversationManager(window_size=1)
    with caplog.at_level(logging.WARNING):
        manager.apply_management(agent)
    assert agent.messages == history
    assert manager.removed_message_count == 0
    assert "no valid place to cut" in caplog.text


# Sliding window: reduce_context


def test_reduce_context_truncates_a_tool_result_before_removing_messages():
    long = "x" * 300 + "y" * 400 + "z" * 300
    history = [user("go"), tool_use("t1"), tool_result("t1", content=long), assistant("done")]
    agent = Agent(messages=history)
    manager = SlidingWindowConversationManager(window_size=10)
    overflow = ContextWindowOverflowException("too long")

    manager.reduce_context(agent, e=overflow)

    assert len(agent.messages) == 4
    assert manager.removed_message_count == 0
    result = agent.messages[2]["content"][0]["toolResult"]
    assert result["status"] == "success"
    assert result["toolUseId"] == "t1"
    assert result["content"] == [
        {"text": "x" * 200 + "...\n\n... [truncated: 600 chars removed] ...\n\n..." + "z" * 200}
    ]


def test_reduce_context_shortens_the_oldest_result_that_can_still_be_shortened():
    long = "x" * 1000
    history = [
        user("go"),
        tool_use("t1"),
        tool_result("t1", content="short"),
        tool_use("t2"),
        tool_result("t2", content=long),
        tool_use("t3"),
        tool_result("t3", content=long),
        assistant("done"),
    ]
    agent = Agent(messages=history)
    manager = SlidingWindowConversationManager(window_size=10)
    overflow = ContextWindowOverflowException("too long")

    manager.reduce_context(agent, e=overflow)
    assert agent.messages[2] == tool_result("t1", content="short")
    assert "[truncated: 600 chars removed]" in agent.messages[4]["content"][0]["toolResult"]["content"][0]["text"]
    assert agent.messages[6] == tool_result("t3", content=long)

    manager.reduce_context(agent, e=overflow)
    assert "[truncated: 600 chars removed]" in agent.messages[6]["content"][0]["toolResult"]["content"][0]["text"]
    assert manager.removed_message_count == 0

    # Nothing left to shorten: the oldest turn goes, keeping the pairs whole.
    manager.reduce_context(agent, e=overflow)
    assert manager.removed_message_count == 3
    assert agent.messages[0] == tool_use("t2")
    assert_valid_history(agent.messages)


def test_reduce_context_replaces_images_in_tool_results_with_a_placeholder():
    image = {"image": {"format": "png", "source": {"bytes": b"\x89PNG" * 10}}}
    result = {"toolResult": {"toolUseId": "t1", "status": "success", "content": [image, {"text": "caption"}]}}
    agent = Agent(messages=[user("go"), tool_use("t1"), {"role": "user", "content": [result]}, assistant("ok")])
    SlidingWindowConversationManager().reduce_context(agent, e=ContextWindowOverflowException())
    assert agent.messages[2]["content"][0]["toolResult"]["content"] == [
        {"text": "[image: png, 40 bytes]"},
        {"text": "caption"},
    ]


def test_reduce_context_without_an_overflow_error_only_trims():
    long = "x" * 1000
    history = [user("go"), tool_use("t1"), tool_result("t1", content=long), assistant("done"), *turns(1, start=1)]
    agent = Agent(messages=history)
    manager = SlidingWindowConversationManager(window_size=10)
    manager.reduce_context(agent)
    assert agent.messages == turns(1, start=1)
    assert manager.removed_message_count == 4


def test_reduce_context_with_truncation_disabled_trims_the_oldest_turn():
    history = [user("go"), tool_use("t1"), tool_result("t1", content="x" * 1000), assistant("done"), *turns(1, 1)]
    agent = Agent(messages=history)
    SlidingWindowConversationManager(should_truncate_results=False).reduce_context(
        agent, e=ContextWindowOverflowException()
    )
    assert agent.messages == turns(1, start=1)


def test_reduce_context_raises_when_nothing_can_be_removed():
    history = [user("go"), tool_use("t1"), tool_result("t1")]
    agent = Agent(messages=list(history))
    manager = SlidingWindowConversationManager(window_size=10, should_truncate_results=False)
    overflow = ContextWindowOverflowException("too long")
    with pytest.raises(ContextWindowOverflowException, match="Unable to trim conversation context!") as info:
        manager.reduce_context(agent, e=overflow)
    assert info.value.__cause__ is overflow
    assert agent.messages == history
    assert manager.removed_message_count == 0


def test_reduce_context_raises_when_only_pinned_messages_are_left():
    agent = Agent(messages=turns(2))
    manager = SlidingWindowConversationManager(window_size=4, pin_first=2)
    with pytest.raises(ContextWindowOverflowException):
        manager.reduce_context(agent, e=ContextWindowOverflowException())
    assert agent.messages == turns(2)


def test_window_size_zero_removes_every_unpinned_message():
    agent = Agent(messages=turns(3))
    manager = SlidingWindowConversationManager(window_size=0, pin_first=1)
    manager.apply_management(agent)
    assert agent.messages == [user("u0")]
    assert manager.removed_message_count == 6  # 5 removed + 1 pinned carried by the manager


# Pinning


def test_pinned_messages_survive_every_trim_and_the_window_counts_them():
    agent = Agent(messages=[user("system-ish context"), assistant("noted")])
    manager = SlidingWindowConversationManager(window_size=6, pin_first=2)
    for i in range(8):
        agent.messages += turns(1, start=i)
        manager.apply_management(agent)
        assert agent.messages[:2] == [user("system-ish context"), assistant("noted")]
        assert len(agent.messages) <= 6
    assert agent.messages[2:] == turns(2, start=6)
    # 12 removed, and the 2 pinned messages now come from the manager's state rather than the session's log.
    assert manager.removed_message_count == 14
    assert manager.get_state()["pinned_messages"] == [user("system-ish context"), assistant("noted")]


def test_a_pinned_tool_use_keeps_its_results():
    history = [user("go"), tool_use("t1"), tool_result("t1"), assistant("done"), *turns(3, start=1)]
    agent = Agent(messages=history)
    manager = SlidingWindowConversationManager(window_size=5, pin_first=2)
    manager.apply_management(agent)
    assert agent.messages[:3] == [user("go"), tool_use("t1"), tool_result("t1")]
    assert agent.messages[3:] == turns(1, start=3)
    assert len(manager.get_state()["pinned_messages"]) == 3


def test_pinned_messages_are_not_truncated():
    long = "x" * 1000
    agent = Agent(messages=[user("go"), tool_use("t1"), tool_result("t1", content=long), assistant("done")])
    manager = SlidingWindowConversationManager(window_size=10, pin_first=3)
    with pytest.raises(ContextWindowOverflowException):
        manager.reduce_context(agent, e=ContextWindowOverflowException())
    assert agent.messages[2] == tool_result("t1", content=long)


def test_pins_survive_a_json_round_trip_of_the_state_and_the_session_restore():
    """harness-sdk#4087: Strands lost the pinned messages on restore; here they come back from the state."""
    image = {"image": {"format": "png", "source": {"bytes": b"\x00\x01binary"}}}
    first = {"role": "user", "content": [{"text": "look"}, image]}
    log = []  # what a session stores: every message ever appended, in order

    def add(agent, *messages):
        agent.messages.extend(messages)
        log.extend(messages)

    agent = Agent()
    manager = SlidingWindowConversationManager(window_size=4, pin_first=2)
    add(agent, first, assistant("seen"))
    for i in range(3):
        add(agent, *turns(1, start=i))
        manager.apply_management(agent)
    assert agent.messages == [first, assistant("seen"), *turns(1, start=2)]

    state = json.loads(json.dumps(manager.get_state()))
    assert state["__name__"] == "SlidingWindowConversationManager"
    assert state["removed_message_count"] == 6  # 4 removed + 2 pinned
    assert state["model_call_count"] == 0
    assert state["pinned_messages"][0]["content"][1]["image"]["source"]["bytes"] == {
        "__bytes_encoded__": True,
        "data": "AAFiaW5hcnk=",
    }

    restored_manager = SlidingWindowConversationManager(window_size=4, pin_first=2)
    prepend = restored_manager.restore_from_session(state)
    restored = Agent(messages=[*prepend, *log[restored_manager.removed_message_count :]])
    assert restored.messages == agent.messages
    assert restored.messages[0]["content"][1]["image"]["source"]["bytes"] == b"\x00\x01binary"

    # The restored agent goes on like the original, and a second restore still adds up.
    add(restored, *turns(2, start=3))
    agent.messages.extend(turns(2, start=3))
    restored_manager.apply_management(restored)
    manager.apply_management(agent)
    assert restored.messages == agent.messages == [first, assistant("seen"), *turns(1, start=4)]
    second = SlidingWindowConversationManager(window_size=4, pin_first=2)
    prepend = second.restore_from_session(json.loads(json.dumps(restored_manager.get_state())))
    assert [*prepend, *log[second.removed_message_count :]] == restored.messages


def test_state_without_pins_restores_nothing_to_prepend():
    agent = Agent(messages=turns(3))
    manager = SlidingWindowConversationManager(window_size=2)
    manager.apply_management(agent)
    state = json.loads(json.dumps(manager.get_state()))
    assert state == {
        "__name__": "SlidingWindowConversationManager",
        "removed_message_count": 4,
        "model_call_count": 0,
        "pinned_messages": [],
    }
    restored = SlidingWindowConversationManager(window_size=2)
    assert restored.restore_from_session(state) is None
    assert restored.removed_message_count == 4


def test_a_strands_state_restores_with_defaults():
    manager = SlidingWindowConversationManager()
    state = {"__name__": "SlidingWindowConversationManager", "removed_message_count": 3}
    assert manager.restore_from_session(state) is None
    assert manager.get_state() == {**state, "model_call_count": 0, "pinned_messages": []}


# State validation


def test_restore_from_a_state_saved_by_another_manager_raises_naming_both():
    state = NullConversationManager().get_state()
    with pytest.raises(ValueError, match=r"'NullConversationManager'.*'SlidingWindowConversationManager'"):
        SlidingWindowConversationManager().restore_from_session(state)


def test_restore_from_a_state_without_a_name_raises():
    with pytest.raises(ValueError, match="Invalid conversation manager state"):
        NullConversationManager().restore_from_session({"removed_message_count": 0})


@pytest.mark.parametrize(
    "changes",
    [
        {"removed_message_count": -1},
        {"removed_message_count": "2"},
        {"model_call_count": True},
        {"pinned_messages": "hello"},
        {"pinned_messages": [{"role": "system", "content": []}]},
        {"pinned_messages": [user("a"), user("b"), user("c")]},  # more pins than removed_message_count
    ],
)
def test_a_malformed_state_raises_and_changes_nothing(changes):
    manager = SlidingWindowConversationManager(pin_first=1)
    manager.restore_from_session({"__name__": "SlidingWindowConversationManager", "removed_message_count": 2})
    before = manager.get_state()
    state = {**before, **changes}
    with pytest.raises(ValueError, match="Invalid conversation manager state"):
        manager.restore_from_session(state)
    assert manager.get_state() == before


def test_get_state_is_a_copy():
    agent = Agent(messages=turns(3))
    manager = SlidingWindowConversationManager(window_size=3, pin_first=1)
    manager.apply_management(agent)
    manager.get_state()["pinned_messages"][0]["content"][0]["text"] = "changed"
    assert manager.get_state()["pinned_messages"] == [user("u0")]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"window_size": -1}, "window_size must be a non-negative integer"),
        ({"window_size": 2.5}, "window_size must be a non-negative integer"),
        ({"window_size": True}, "window_size must be a non-negative integer"),
        ({"per_turn": 0}, "per_turn must be True, False or a positive number"),
        ({"per_turn": -3}, "per_turn must be True, False or a positive number"),
        ({"pin_first": -1}, "pin_first must be None or a non-negative integer"),
        ({"window_size": 4, "pin_first": 4}, "pin_first=4 leaves no room in window_size=4"),
    ],
)
def test_invalid_arguments_raise_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SlidingWindowConversationManager(**kwargs)


# per_turn


async def test_per_turn_keeps_every_model_request_within_the_window():
    model = ScriptedModel([*(tool_call("step", n=i, tool_use_id=f"t{i}") for i in range(6)), text("done")])
    manager = SlidingWindowConversationManager(window_size=4, per_turn=True)
    agent = Agent(model=model, tools=[step], conversation_manager=manager)

    result = await agent.invoke_async("walk")

    assert result.stop_reason == "end_turn"
    assert model.calls == 7
    for request in model.requests:
        assert len(request.messages) <= 4
        assert_valid_history(request.messages)
    assert len(agent.messages) <= 4
    assert agent.messages[-1] == assistant("done")
    assert manager.get_state()["model_call_count"] == 7
    assert manager.removed_message_count == 14 - len(agent.messages)


async def test_per_turn_every_n_model_calls():
    model = ScriptedModel([*(tool_call("step", n=i, tool_use_id=f"t{i}") for i in range(5)), text("done")])
    manager = SlidingWindowConversationManager(window_size=3, per_turn=3)
    agent = Agent(model=model, tools=[step], conversation_manager=manager)

    await agent.invoke_async("walk")

    sizes = [len(request.messages) for request in model.requests]
    # Only the 3rd and 6th calls are preceded by the window: 5 messages become 2, 7 become 2.
    assert sizes == [1, 3, 2, 4, 6, 2]
    assert manager.get_state()["model_call_count"] == 6
    assert len(agent.messages) <= 3


async def test_without_per_turn_the_window_applies_only_after_the_invocation():
    model = ScriptedModel([*(tool_call("step", n=i, tool_use_id=f"t{i}") for i in range(3)), text("done")])
    manager = SlidingWindowConversationManager(window_size=3)
    agent = Agent(model=model, tools=[step], conversation_manager=manager)

    await agent.invoke_async("walk")

    assert [len(request.messages) for request in model.requests] == [1, 3, 5, 7]
    assert len(agent.messages) == 3
    assert agent.messages[0]["content"][0]["toolUse"]["toolUseId"] == "t2"
    assert_valid_history(agent.messages)
    assert manager.get_state()["model_call_count"] == 0


async def test_pin_first_with_per_turn_keeps_the_prompt_in_every_request():
    model = ScriptedModel([*(tool_call("step", n=i, tool_use_id=f"t{i}") for i in range(6)), text("done")])
    manager = SlidingWindowConversationManager(window_size=4, per_turn=True, pin_first=1)
    agent = Agent(model=model, tools=[step], conversation_manager=manager)

    await agent.invoke_async("walk")

    for request in model.requests:
        assert request.messages[0] == user("walk")
        assert len(request.messages) <= 4


# Null manager and the base class


def test_null_manager_never_changes_the_history():
    agent = Agent(messages=turns(50))
    manager = NullConversationManager()
    manager.apply_management(agent)
    assert agent.messages == turns(50)
    assert manager.get_state() == {"__name__": "NullConversationManager", "removed_message_count": 0}


def test_null_manager_reraises_an_overflow_error():
    overflow = ContextWindowOverflowException("too long")
    with pytest.raises(ContextWindowOverflowException) as info:
        NullConversationManager().reduce_context(Agent(), e=overflow)
    assert info.value is overflow


def test_null_manager_wraps_other_errors_and_raises_without_one():
    cause = RuntimeError("provider said no")
    with pytest.raises(ContextWindowOverflowException, match="NullConversationManager never removes") as info:
        NullConversationManager().reduce_context(Agent(), e=cause)
    assert info.value.__cause__ is cause
    with pytest.raises(ContextWindowOverflowException):
        NullConversationManager().reduce_context(Agent())


def test_null_manager_restores_its_counter():
    manager = NullConversationManager()
    assert manager.restore_from_session({"__name__": "NullConversationManager", "removed_message_count": 5}) is None
    assert manager.removed_message_count == 5


async def test_a_custom_manager_is_a_hook_provider_that_registers_nothing_by_default():
    class KeepLast(ConversationManager):
        def apply_management(self, agent, **kwargs):
            del agent.messages[:-1]

        def reduce_context(self, agent, e=None, **kwargs):
            raise ContextWindowOverflowException("no") from e

    registry = HookRegistry()
    KeepLast().register_hooks(registry)
    assert not registry.has_callbacks()

    agent = Agent(model=ScriptedModel([text("a"), text("b")]), conversation_manager=KeepLast())
    await agent.invoke_async("one")
    await agent.invoke_async("two")
    assert agent.messages == [assistant("b")]


def test_per_turn_false_registers_no_callback():
    registry = HookRegistry()
    SlidingWindowConversationManager().register_hooks(registry)
    assert not registry.has_callbacks()
    SlidingWindowConversationManager(per_turn=2).register_hooks(registry)
    assert registry.has_callbacks()
