"""Issue 12, item 4: a system prompt given as content blocks, as Strands 1.62 takes it."""

import pytest

from strandslike import Agent
from strandslike.models import ScriptedModel, text
from strandslike.types.content import split_system_prompt


async def test_block_system_prompt_is_joined_text_and_content_blocks() -> None:
    model = ScriptedModel([text("hi")])
    blocks = [{"text": "A"}, {"cachePoint": {"type": "default"}}, {"text": "B"}]
    agent = Agent(model=model, system_prompt=blocks)
    assert agent.system_prompt == "A\nB"
    assert agent.system_prompt_content == blocks
    await agent.invoke_async("hello")
    request = model.requests[0]
    assert request.system_prompt == "A\nB"
    assert request.kwargs["system_prompt_content"] == blocks


async def test_string_system_prompt_has_one_text_block() -> None:
    model = ScriptedModel([text("hi")])
    agent = Agent(model=model, system_prompt="Be brief.")
    assert agent.system_prompt == "Be brief."
    assert agent.system_prompt_content == [{"text": "Be brief."}]
    await agent.invoke_async("hello")
    assert model.requests[0].kwargs["system_prompt_content"] == [{"text": "Be brief."}]


def test_no_system_prompt_and_reassignment() -> None:
    agent = Agent(model=ScriptedModel([]))
    assert agent.system_prompt is None
    assert agent.system_prompt_content is None
    agent.system_prompt = [{"text": "X"}, {"text": "Y"}]
    assert agent.system_prompt == "X\nY"
    agent.system_prompt = [{"cachePoint": {"type": "default"}}]
    assert agent.system_prompt is None
    assert agent.system_prompt_content == [{"cachePoint": {"type": "default"}}]
    agent.system_prompt = None
    assert (agent.system_prompt, agent.system_prompt_content) == (None, None)
    # The property returns a copy: changing it does not change the agent.
    agent.system_prompt = [{"text": "Z"}]
    agent.system_prompt_content.append({"text": "sneaky"})  # type: ignore[union-attr]
    assert agent.system_prompt_content == [{"text": "Z"}]


def test_split_system_prompt_matches_strands() -> None:
    assert split_system_prompt("s") == ("s", [{"text": "s"}])
    assert split_system_prompt([{"text": "a"}, {"text": "b"}]) == ("a\nb", [{"text": "a"}, {"text": "b"}])
    assert split_system_prompt([]) == (None, [])
    assert split_system_prompt(None) == (None, None)


@pytest.mark.parametrize("bad", [42, ["not a block"], {"text": "a dict, not a list"}])
def test_bad_system_prompt_is_refused(bad: object) -> None:
    with pytest.raises(TypeError, match="system_prompt"):
        Agent(model=ScriptedModel([]), system_prompt=bad)  # type: ignore[arg-type]
