"""Seeded fuzzing of resumes and prompts (issue 9): at least 1,000 generated malformed or hostile resumes against
interrupted agents (hook interrupts, tool interrupts, several open interrupts, typed ``response_type`` interrupts,
``allow_edits`` tools), with and without a `FileSessionManager`, and hostile prompts against idle agents.

Each input is either accepted or refused with a typed error (a `StrandslikeError` with a ``code``, never a raw
builtin exception); a refusal changes nothing in memory or on disk; afterwards a correct resume (by a fresh agent
restored from the session, when there is one) completes with the correct answer, every tool having run exactly once
(at most once when the hostile resume was accepted: a cancel or a ``respond`` legitimately runs nothing).

Hypothesis is derandomized (a fixed seed derived from the test) with bounded example counts and no example
database, so every run tries the same inputs and CI stays deterministic and fast.
"""

import json
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hostile import nested, nested_dict
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, field_validator

from strandslike import Agent, ToolContext, tool
from strandslike.hooks import BeforeModelCallEvent, BeforeToolCallEvent
from strandslike.models import ScriptedModel, text, tool_call, turn
from strandslike.session import FileSessionManager
from strandslike.types.exceptions import StrandslikeError

RESUME_EXAMPLES = 1000
PROMPT_EXAMPLES = 300
SESSION = "fuzz"

# Effects of tool bodies, by tool-use id: what ran, with which input and answer.
EFFECTS: list[tuple[str, Any]] = []


class Otp(BaseModel):
    code: str

    @field_validator("code")
    @classmethod
    def six_digits(cls, value: str) -> str:
        if not (value.isdigit() and len(value) == 6):
            raise ValueError("must be 6 digits")
        return value


@tool(context=True)
def delete_files(tool_context: ToolContext, paths: list[str]) -> str:
    """Delete files.

    Args:
        paths: The files to delete.
    """
    EFFECTS.append((tool_context.tool_use["toolUseId"], paths))
    return f"deleted {len(paths)}"


@tool(context=True)
def pay(tool_context: ToolContext, amount: int) -> str:
    """Pay after a confirmation.

    Args:
        amount: How much.
    """
    confirmation = tool_context.interrupt("confirm", reason={"amount": amount})
    EFFECTS.append((tool_context.tool_use["toolUseId"], (amount, confirmation)))
    return f"paid {amount}"


@tool(context=True)
def verify(tool_context: ToolContext) -> str:
    """Verify a one-time code."""
    otp = tool_context.interrupt("otp", response_type=Otp)
    EFFECTS.append((tool_context.tool_use["toolUseId"], otp.code))
    return f"verified {otp.code}"


def approval(event: BeforeToolCallEvent) -> None:
    if event.tool_use["name"] == "delete_files" and event.interrupt("approval", reason=event.tool_use["input"]) != "y":
        event.cancel_tool = "denied"


def approval_with_edits(event: BeforeToolCallEvent) -> None:
    if event.tool_use["name"] == "delete_files":
        event.interrupt("approval", reason=event.tool_use["input"], allow_edits=True)


def budget(event: BeforeModelCallEvent) -> None:
    if event.interrupt("budget", response_type=int) < 10:
        event.cancel = "over budget"


@dataclass(frozen=True)
class Scenario:
    """An agent that pauses on ``go``, and the answers that complete it correctly."""

    name: str
    script: list[Any]
    tools: tuple[Any, ...]
    hooks: tuple[Callable[..., None], ...]
    answers: dict[str, Callable[[Any], dict[str, Any]]]  # interrupt name -> correct resume block
    effects: dict[str, Any]  # tool-use id -> the effect of the correct run

    def build(self, storage: str | None, script: list[Any] | None = None, session_id: str = SESSION) -> Agent:
        manager = FileSessionManager(session_id, storage_dir=storage) if storage is not None else None
        return Agent(
            model=ScriptedModel(script if script is not None else self.script),
            tools=list(self.tools),
            hooks=list(self.hooks),
            session_manager=manager,
        )


SCENARIOS = [
    Scenario(
        "hook",
        [tool_call("delete_files", paths=["a"], tool_use_id="t1"), text("done")],
        (delete_files,),
        (approval,),
        {"approval": lambda interrupt: interrupt.resume("y")},
        {"t1": ["a"]},
    ),
    Scenario(
        "tool",
        [tool_call("pay", amount=5, tool_use_id="t1"), text("done")],
        (pay,),
        (),
        {"confirm": lambda interrupt: interrupt.resume("ok")},
        {"t1": (5, "ok")},
    ),
    Scenario(
        "several",
        [
            turn(
                tool_call("delete_files", paths=["a"], tool_use_id="t1"),
                tool_call("delete_files", paths=["b"], tool_use_id="t2"),
                tool_call("pay", amount=7, tool_use_id="t3"),
            ),
            text("done"),
        ],
        (delete_files, pay),
        (approval,),
        {"approval": lambda interrupt: interrupt.resume("y"), "confirm": lambda interrupt: interrupt.resume("ok")},
        {"t1": ["a"], "t2": ["b"], "t3": (7, "ok")},
    ),
    Scenario(
        "typed",
        [tool_call("verify", tool_use_id="t1"), text("done")],
        (verify,),
        (),
        {"otp": lambda interrupt: interrupt.resume({"code": "123456"})},
        {"t1": "123456"},
    ),
    Scenario(
        "edits",
        [tool_call("delete_files", paths=["a"], tool_use_id="t1"), text("done")],
        (delete_files,),
        (approval_with_edits,),
        {"approval": lambda interrupt: interrupt.restart(input={"paths": ["b"]})},
        {"t1": ["b"]},
    ),
    Scenario(
        "model-hook",
        [text("done")],
        (),
        (budget,),
        {"budget": lambda interrupt: interrupt.resume(50)},
        {},
    ),
]

# -- hostile values ---------------------------------------------------------------------------------------------------


def weighted(*choices: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """Draw from one of ``choices`` with the given weights (``st.one_of`` treats repeats of a strategy as one)."""
    table = [strategy for weight, strategy in choices for _ in range(weight)]
    return st.integers(0, len(table) - 1).flatmap(lambda index: table[index])


def power_of_ten(digits: int) -> int:
    return 10**digits


CHARACTERS = st.one_of(st.characters(), st.characters(categories=["Cs"]), st.sampled_from("\x00\x85\u2028\u202e\ufeff"))
TEXT = st.text(CHARACTERS, max_size=12)
KEYS = st.one_of(TEXT, st.integers(-3, 3), st.none(), st.booleans(), st.tuples(st.integers(0, 2)), st.just("\udfff"))
LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    TEXT,
    st.sampled_from(["y", "n", "ok", "", "123456", "resume", "cancel"]),
    st.sampled_from([5000, 4001, 3999]).map(power_of_ten),  # past, at and within the stores' limit of 4000 digits
    st.sampled_from([5000, 4001]).map(lambda digits: -power_of_ten(digits)),
    st.binary(max_size=4),
    st.builds(object),
    st.sampled_from([200_000]).map(lambda size: "x" * size),
    st.sets(st.integers(0, 3), max_size=2),
    st.integers(95, 2000).map(nested),
    st.integers(95, 2000).map(nested_dict),
)
VALUES = st.recursive(
    LEAVES,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.tuples(children),
        st.dictionaries(KEYS, children, max_size=3),
        st.dictionaries(TEXT, children, max_size=3),
        st.fixed_dictionaries({"code": st.one_of(TEXT, st.just("123456"), children)}),
        st.fixed_dictionaries({"paths": st.one_of(st.lists(TEXT, max_size=2), children)}),
    ),
    max_leaves=6,
)
# Plausible answers, so that resumes get past the shape and storability checks to the deeper ones.
PLAUSIBLE = st.sampled_from(
    ["y", "n", "ok", None, 3, 50, "50", {"code": "123456"}, {"code": "12345"}, {"code": 123456}, {"paths": ["b"]}, {}]
)
ANSWERS = weighted((2, PLAUSIBLE), (1, VALUES))
ACTION_NAMES = st.sampled_from(["resume", "respond", "restart", "cancel"])
ACTIONS = weighted((3, ACTION_NAMES), (1, VALUES))
INPUTS = st.one_of(
    st.fixed_dictionaries({"paths": st.lists(st.sampled_from(["a", "b", "/"]), max_size=2)}),
    st.fixed_dictionaries({"paths": st.lists(TEXT, max_size=2)}),
    st.fixed_dictionaries({"amount": st.one_of(st.integers(), VALUES)}),
    VALUES,
)
BODY_KEYS = ("interruptId", "response", "action", "input", "metadata", "sessionId")


def interrupt_ids(ids: list[str]) -> st.SearchStrategy[Any]:
    return weighted(
        (4, st.sampled_from(ids)),
        (1, st.sampled_from(ids).map(lambda i: i + "x")),
        (1, st.sampled_from(ids).map(lambda i: i.upper())),
        (1, st.sampled_from(ids).map(lambda i: i[:-1] + "\u202e")),
        (1, TEXT),
        (1, VALUES),
    )


def bodies(ids: list[str], session_ids: list[Any]) -> st.SearchStrategy[Any]:
    full = st.fixed_dictionaries(
        {"interruptId": interrupt_ids(ids), "response": ANSWERS},
        optional={
            "action": ACTIONS,
            "input": INPUTS,
            "metadata": ANSWERS,
            "sessionId": weighted((2, st.sampled_from(session_ids)), (1, VALUES)),
        },
    )
    simple = st.fixed_dictionaries(
        {"interruptId": st.sampled_from(ids), "response": ANSWERS},
        optional={"action": ACTION_NAMES, "sessionId": st.sampled_from(session_ids)},
    )
    restart = st.fixed_dictionaries(
        {"interruptId": st.sampled_from(ids), "response": ANSWERS, "action": st.just("restart")},
        optional={"input": INPUTS, "metadata": ANSWERS},
    )
    with_junk_key = st.tuples(full, st.one_of(TEXT, st.sampled_from(["acton", "Action", "response "])), VALUES).map(
        lambda parts: {**parts[0], parts[1]: parts[2]}
    )
    missing_key = st.tuples(full, st.sampled_from(BODY_KEYS[:2])).map(
        lambda parts: {key: value for key, value in parts[0].items() if key != parts[1]}
    )
    return weighted((3, simple), (1, restart), (2, full), (1, with_junk_key), (1, missing_key), (1, VALUES))


def resumes(ids: list[str], session_ids: list[Any]) -> st.SearchStrategy[Any]:
    answer = bodies(ids, session_ids).map(lambda body: {"interruptResponse": body})
    block = weighted(
        (20, answer),
        (1, st.tuples(bodies(ids, session_ids), KEYS, VALUES).map(lambda p: {"interruptResponse": p[0], p[1]: p[2]})),
        (1, st.fixed_dictionaries({"text": TEXT})),
        (1, VALUES),
    )
    return weighted((7, st.lists(block, max_size=4)), (1, VALUES))


# -- checks -----------------------------------------------------------------------------------------------------------


def on_disk(storage: str | None) -> dict[str, bytes]:
    if storage is None:
        return {}
    return {
        os.path.join(root, name): Path(root, name).read_bytes() for root, _, names in os.walk(storage) for name in names
    }


def in_memory(agent: Agent) -> str:
    return json.dumps(
        [agent._interrupt_state.to_dict(), agent.messages, agent.state.get()], sort_keys=True, default=repr
    )


def stored(value: Any) -> Any:
    """Return ``value`` as a store gives it back: tuples become lists (as in Strands)."""
    if isinstance(value, list | tuple):
        return [stored(item) for item in value]
    if isinstance(value, dict):
        return {key: stored(item) for key, item in value.items()}
    return value


def refusal(error: BaseException) -> str:
    """Return the code of a typed refusal; fail on anything else."""
    assert isinstance(error, StrandslikeError), f"untyped {type(error).__name__}: {str(error)[:300]}"
    code = error.code
    assert isinstance(code, str), (type(error), code)
    assert code not in ("", "STRANDSLIKE_ERROR"), (type(error), code)
    message = str(error)
    assert len(message) < 5000, message[:300]
    message.encode("utf-8")
    return code


def finish(scenario: Scenario, agent: Agent) -> Any:
    """Answer whatever is still open with the correct answers until the run ends; return the last result."""
    result = None
    for _ in range(4):
        state = agent._interrupt_state
        if not state.activated:
            break
        open_interrupts = state.unanswered()
        if not open_interrupts:
            result = agent([])  # answered, but the run did not finish: continue it
            continue
        result = agent([scenario.answers[interrupt.name](interrupt) for interrupt in open_interrupts])
    assert not agent._interrupt_state.activated, "the run never completed"
    return result


STATS: Counter[str] = Counter()


STORAGE: list[str] = []  # one directory per test run; each example has its own session in it


@settings(
    max_examples=RESUME_EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
@given(data=st.data())
def _fuzz_one_resume(data: st.DataObject) -> None:
    scenario = data.draw(st.sampled_from(SCENARIOS), label="scenario")
    # A third of the examples run on a FileSessionManager (and check the files); the rest in memory.
    with_session = data.draw(st.sampled_from([True, False, False]), label="with_session")
    EFFECTS.clear()
    STATS["resumes"] += 1
    storage = os.path.join(STORAGE[0], str(STATS["resumes"])) if with_session else None
    agent = scenario.build(storage)
    paused = agent("go")
    assert paused.stop_reason == "interrupt"
    ids = [interrupt.id for interrupt in paused.interrupts]
    if len(ids) > 1 and data.draw(st.booleans(), label="answer_one_first"):
        # A partial resume first: the hostile one may then repeat or change an answer already applied.
        first = paused.interrupts[0]
        assert agent([scenario.answers[first.name](first)]).stop_reason == "interrupt"
    prompt = data.draw(resumes(ids, [SESSION, None, "other"]), label="resume")
    memory, disk = in_memory(agent), on_disk(storage)
    try:
        agent(prompt)
    except Exception as error:
        STATS[refusal(error)] += 1
        assert in_memory(agent) == memory, "a refused resume changed the agent"
        assert on_disk(storage) == disk, "a refused resume changed the session files"
        refused = True
    else:
        STATS["accepted"] += 1
        refused = False
    if storage is not None:  # the rest of the run is played by a fresh agent, restored from disk
        agent.session_manager.close()
        agent = scenario.build(storage, [text("done"), text("done")])
    finish(scenario, agent)
    final = agent.messages[-1]
    assert final["role"] == "assistant"
    ran = Counter(tool_use_id for tool_use_id, _ in EFFECTS)
    assert all(count == 1 for count in ran.values()), f"a tool ran twice: {EFFECTS}"
    if refused:
        assert dict(EFFECTS) == scenario.effects
        assert final["content"] == [{"text": "done"}]
    if storage is not None:
        agent.session_manager.close()
        if not refused:  # whatever an accepted resume did, the session it left restores
            restored = scenario.build(storage, [])
            assert restored.messages == stored(agent.messages)
            restored.session_manager.close()


@pytest.mark.timeout(300)
def test_a_thousand_hostile_resumes_are_accepted_or_refused_with_a_typed_error_and_change_nothing(
    tmp_path: Path,
) -> None:
    STATS.clear()
    STORAGE[:] = [str(tmp_path)]
    _fuzz_one_resume()
    assert STATS["resumes"] >= RESUME_EXAMPLES
    refused = STATS["resumes"] - STATS["accepted"]
    assert refused >= RESUME_EXAMPLES // 2, STATS  # mostly malformed: the refusal paths are what is exercised
    assert STATS["accepted"] > 0, STATS
    for code in ("PENDING_INTERRUPTS", "INVALID_PAYLOAD", "UNKNOWN_INTERRUPT_ID"):
        assert STATS[code] > 0, STATS


# -- prompts ----------------------------------------------------------------------------------------------------------

BLOCKS = st.one_of(
    st.fixed_dictionaries({"text": st.one_of(TEXT, VALUES)}),
    st.fixed_dictionaries({"text": TEXT}, optional={"extra": VALUES}),
    st.fixed_dictionaries({"image": st.fixed_dictionaries({"format": TEXT, "source": VALUES})}),
    st.dictionaries(KEYS, VALUES, max_size=2),
    VALUES,
)
MESSAGES = st.fixed_dictionaries(
    {
        "role": st.one_of(st.sampled_from(["user", "assistant"]), VALUES),
        "content": st.one_of(st.lists(BLOCKS, max_size=3), VALUES),
    }
)
PROMPTS = st.one_of(
    TEXT,
    st.lists(BLOCKS, max_size=3),
    st.lists(MESSAGES, min_size=1, max_size=2),
    st.lists(st.one_of(BLOCKS, MESSAGES), max_size=3),
    VALUES,
)


@settings(
    max_examples=PROMPT_EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
@given(prompt=PROMPTS, with_session=st.sampled_from([True, False, False]))
def _fuzz_one_prompt(prompt: Any, with_session: bool) -> None:
    STATS["prompts"] += 1
    storage = os.path.join(STORAGE[0], str(STATS["prompts"])) if with_session else None
    manager = FileSessionManager(SESSION, storage_dir=storage) if storage is not None else None
    agent = Agent(model=ScriptedModel([text("first"), text("second"), text("third")]), session_manager=manager)
    agent("hello")
    memory, disk = in_memory(agent), on_disk(storage)
    try:
        agent(prompt)
    except Exception as error:
        STATS["prompt:" + refusal(error)] += 1
        assert in_memory(agent) == memory
        assert on_disk(storage) == disk
    else:
        STATS["prompt:accepted"] += 1
    assert agent("again").stop_reason == "end_turn"  # still usable either way
    if manager is not None:
        manager.close()
        restored = Agent(model=ScriptedModel([]), session_manager=FileSessionManager(SESSION, storage_dir=storage))
        assert restored.messages == stored(agent.messages)
        restored.session_manager.close()


@pytest.mark.timeout(300)
def test_hostile_prompts_are_accepted_and_stored_or_refused_with_a_typed_error(tmp_path: Path) -> None:
    STATS.clear()
    STORAGE[:] = [str(tmp_path)]
    _fuzz_one_prompt()
    assert STATS["prompts"] >= PROMPT_EXAMPLES
    assert STATS["prompt:INVALID_PROMPT"] > 0, STATS
    assert STATS["prompt:accepted"] > 0, STATS
