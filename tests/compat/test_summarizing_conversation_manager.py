"""Issue 12, item 9: SummarizingConversationManager (Strands' constructor and behaviour), persisted with sessions."""

from pathlib import Path
from typing import Any

import pytest

from strandslike import Agent, tool
from strandslike.agent.conversation_manager import SummarizingConversationManager
from strandslike.agent.conversation_manager.summarizing_conversation_manager import DEFAULT_SUMMARIZATION_PROMPT
from strandslike.models import ScriptedModel, text
from strandslike.session import FileSessionManager
from strandslike.types.exceptions import ContextWindowOverflowException


def conversation(turns: int) -> list[Any]:
    messages = []
    for i in range(turns):
        messages.append({"role": "user", "content": [{"text": f"question {i}"}]})
        messages.append({"role": "assistant", "content": [{"text": f"answer {i}"}]})
    return messages


def test_constructor_as_strands() -> None:
    manager = SummarizingConversationManager()
    assert (manager.summary_ratio, manager.preserve_recent_messages) == (0.3, 10)
    assert SummarizingConversationManager(summary_ratio=0.01).summary_ratio == 0.1
    assert SummarizingConversationManager(summary_ratio=5).summary_ratio == 0.8
    with pytest.raises(ValueError, match="Cannot provide both summarization_agent and summarization_system_prompt"):
        SummarizingConversationManager(summarization_agent=Agent(), summarization_system_prompt="x")
    with pytest.raises(ValueError, match="compression_threshold"):
        SummarizingConversationManager(proactive_compression={"compression_threshold": 1.5})


def test_apply_management_changes_nothing() -> None:
    agent = Agent(
        model=ScriptedModel([]), messages=conversation(30), conversation_manager=SummarizingConversationManager()
    )
    agent.conversation_manager.apply_management(agent)
    assert len(agent.messages) == 60


def test_summarizes_the_oldest_messages_with_the_agents_model() -> None:
    model = ScriptedModel([text("- they talked about 0 to 2")])
    manager = SummarizingConversationManager(summary_ratio=0.5, preserve_recent_messages=2)
    agent = Agent(model=model, messages=conversation(6), conversation_manager=manager, system_prompt="Agent prompt")
    original = [dict(m) for m in agent.messages]
    manager.reduce_context(agent)
    assert agent.messages[0] == {"role": "user", "content": [{"text": "- they talked about 0 to 2"}]}
    assert agent.messages[1:] == original[6:]
    assert manager.removed_message_count == 6
    (request,) = model.requests
    assert request.system_prompt == DEFAULT_SUMMARIZATION_PROMPT
    assert request.tool_specs is None
    assert request.messages[:-1] == original[:6]
    assert request.messages[-1] == {"role": "user", "content": [{"text": "Please summarize this conversation."}]}


def test_a_custom_summarization_prompt() -> None:
    model = ScriptedModel([text("short")])
    manager = SummarizingConversationManager(preserve_recent_messages=0, summarization_system_prompt="Be short.")
    agent = Agent(model=model, messages=conversation(5), conversation_manager=manager)
    manager.reduce_context(agent)
    assert model.requests[0].system_prompt == "Be short."


def test_tool_use_and_result_stay_together() -> None:
    messages = [
        {"role": "user", "content": [{"text": "q"}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "x", "input": {}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "status": "success", "content": []}}]},
        {"role": "assistant", "content": [{"text": "a"}]},
        *conversation(3),
    ]
    model = ScriptedModel([text("summary")])
    manager = SummarizingConversationManager(summary_ratio=0.3, preserve_recent_messages=2)
    agent = Agent(model=model, messages=messages, conversation_manager=manager)
    manager.reduce_context(agent)  # 30 % of 10 is 3, which would split the tool pair: the split moves to 3
    assert agent.messages[1] == {"role": "assistant", "content": [{"text": "a"}]}
    assert len(model.requests[0].messages) == 4  # q, toolUse, toolResult + the request to summarize
    for index, message in enumerate(agent.messages):
        if any("toolResult" in b for b in message["content"]):
            assert any("toolUse" in b for b in agent.messages[index - 1]["content"])


def test_too_few_messages() -> None:
    manager = SummarizingConversationManager(preserve_recent_messages=10)
    agent = Agent(model=ScriptedModel([]), messages=conversation(3), conversation_manager=manager)
    with pytest.raises(ContextWindowOverflowException, match="insufficient messages"):
        manager.reduce_context(agent, ContextWindowOverflowException("overflow"))
    manager.reduce_context(agent)  # proactive: logged, nothing changes
    assert len(agent.messages) == 6


def test_a_failing_summary_changes_nothing() -> None:
    manager = SummarizingConversationManager(preserve_recent_messages=2)
    agent = Agent(model=ScriptedModel([]), messages=conversation(6), conversation_manager=manager)  # no turn left
    with pytest.raises(Exception, match="turn"):
        manager.reduce_context(agent, ContextWindowOverflowException("overflow"))
    assert agent.messages == conversation(6)
    assert manager.removed_message_count == 0


def test_summarization_agent_writes_the_summary_and_is_restored() -> None:
    helper = Agent(
        model=ScriptedModel([text("helper summary")]), system_prompt="I summarize.", messages=conversation(1)
    )
    manager = SummarizingConversationManager(summary_ratio=0.5, preserve_recent_messages=2, summarization_agent=helper)
    agent = Agent(model=ScriptedModel([]), messages=conversation(4), conversation_manager=manager)
    manager.reduce_context(agent)
    assert agent.messages[0] == {"role": "user", "content": [{"text": "helper summary"}]}
    (request,) = helper.model.requests
    assert request.system_prompt == "I summarize."
    assert [s["name"] for s in request.tool_specs or []] == ["_noop_tool"]  # tools present for tool-use history
    assert helper.messages == conversation(1)
    assert helper.tool_names == []


def test_summaries_of_summaries_and_pinned_messages() -> None:
    model = ScriptedModel([text("first summary"), text("second summary")])
    manager = SummarizingConversationManager(summary_ratio=0.5, preserve_recent_messages=2, pin_first=2)
    agent = Agent(model=model, messages=conversation(6), conversation_manager=manager)
    manager.reduce_context(agent)
    assert agent.messages[:3] == [*conversation(1), {"role": "user", "content": [{"text": "first summary"}]}]
    manager.reduce_context(agent)
    assert agent.messages[:2] == conversation(1)
    assert agent.messages[2] == {"role": "user", "content": [{"text": "second summary"}]}
    assert model.requests[1].messages[0] == {"role": "user", "content": [{"text": "first summary"}]}


@tool
def lookup(key: str) -> str:
    """Look up a key."""
    return key


async def test_state_persists_with_the_session(tmp_path: Path) -> None:
    def build(turns: list[Any]) -> Agent:
        return Agent(
            model=ScriptedModel(turns),
            tools=[lookup],
            conversation_manager=SummarizingConversationManager(
                summary_ratio=0.5, preserve_recent_messages=2, pin_first=1
            ),
            session_manager=FileSessionManager("chat", storage_dir=tmp_path),
        )

    agent = build([text(f"answer {i}") for i in range(6)] + [text("summary one"), text("answer 6")])
    for i in range(6):
        await agent.invoke_async(f"question {i}")
    agent.conversation_manager.reduce_context(agent)
    await agent.invoke_async("question 6")  # persists the summary with the conversation manager's state
    live = [dict(m) for m in agent.messages]
    assert live[1] == {"role": "user", "content": [{"text": "summary one"}]}

    restored = build([text("summary two"), text("answer 7")])
    assert restored.messages == live
    restored.conversation_manager.reduce_context(restored)
    await restored.invoke_async("question 7")
    again = build([])
    assert again.messages == restored.messages
    assert again.messages[0] == {"role": "user", "content": [{"text": "question 0"}]}  # pinned
    assert again.messages[1] == {"role": "user", "content": [{"text": "summary two"}]}
    assert again.messages[-1] == {"role": "assistant", "content": [{"text": "answer 7"}]}


def test_restores_a_strands_saved_state() -> None:
    manager = SummarizingConversationManager()
    summary = {"role": "user", "content": [{"text": "old summary"}]}
    state = {"__name__": "SummarizingConversationManager", "removed_message_count": 4, "summary_message": summary}
    assert manager.restore_from_session(state) == [summary]
    assert manager.removed_message_count == 4
    assert manager.get_state()["summary_message"] == summary
    with pytest.raises(ValueError, match="Invalid conversation manager state"):
        manager.restore_from_session({**state, "__name__": "SlidingWindowConversationManager"})
