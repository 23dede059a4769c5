"""A context-window overflow makes the conversation manager reduce the history, and the call is made again."""

import pytest

from strandslike import Agent
from strandslike.agent.conversation_manager import NullConversationManager, SlidingWindowConversationManager
from strandslike.models import ScriptedModel, text
from strandslike.types.exceptions import ContextWindowOverflowException


async def test_overflow_reduces_then_retries():
    model = ScriptedModel([text("one"), text("two"), ContextWindowOverflowException("too long"), text("three")])
    agent = Agent(
        model=model, conversation_manager=SlidingWindowConversationManager(window_size=3, should_truncate_results=False)
    )
    await agent.invoke_async("a")
    await agent.invoke_async("b")
    result = await agent.invoke_async("c")
    assert str(result) == "three\n"
    retried = model.requests[3].messages
    assert len(retried) < len(model.requests[2].messages)
    assert retried[-1]["content"] == [{"text": "c"}]


async def test_overflow_that_cannot_be_reduced_is_raised():
    model = ScriptedModel([ContextWindowOverflowException("too long")])
    agent = Agent(model=model, conversation_manager=NullConversationManager())
    with pytest.raises(ContextWindowOverflowException):
        await agent.invoke_async("a")
    assert model.calls == 1
