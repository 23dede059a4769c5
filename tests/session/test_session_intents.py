"""Intent before effect: a tool body starts only once its intent is durable; a crash in it never re-runs it silently.

A process dying inside a tool body is simulated in-process by a `BaseException` the tool raises (`Died`): like a
SIGKILL it skips everything after the body, so the log holds the intent and no outcome. The real-process SIGKILL
versions of these checks are in `test_session_crash.py` and `test_session_duplicates.py`.
"""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest
from helpers import answer

from strandslike import Agent, ToolContext, tool
from strandslike.hooks import AfterToolCallEvent, BeforeToolCallEvent
from strandslike.models import ScriptedModel, text, tool_call, turn
from strandslike.session import FileSessionManager, InMemorySessionRepository, RepositorySessionManager
from strandslike.session.session_repository import LogClaim
from strandslike.tools.executors import SequentialToolExecutor

SESSION = "pay-session"


class Died(BaseException):
    """Stands for the death of the process inside a tool body."""


class RecordingRepository(InMemorySessionRepository):
    """The in-memory store, also recording every append: (kinds of its records, durable)."""

    def __init__(self) -> None:
        super().__init__()
        self.appends: list[tuple[list[str], bool]] = []

    def append_log(self, claim: LogClaim, records: Sequence[dict[str, Any]], *, durable: bool, **kwargs: Any) -> None:
        super().append_log(claim, records, durable=durable)
        self.appends.append(([record["k"] for record in records], durable))


class World:
    """One storage (a directory, or one in-memory repository) and the tools' side effects, shared by 'processes'."""

    def __init__(self, kind: str, tmp_path: Path) -> None:
        self.kind = kind
        self.tmp_path = tmp_path
        self.repository = RecordingRepository()
        self.runs: list[dict[str, Any]] = []  # every tool body that started: name, tool-use id, idempotency key
        self.die_in: set[str] = set()  # tool-use ids whose body kills the "process"

    def manager(self, session_id: str = SESSION) -> Any:
        if self.kind == "file":
            return FileSessionManager(session_id, storage_dir=self.tmp_path)
        return RepositorySessionManager(session_id, self.repository)

    def tools(self) -> list[Any]:
        world = self

        def body(name: str, tool_context: ToolContext) -> str:
            tool_use_id = tool_context.tool_use["toolUseId"]
            world.runs.append({"tool": name, "id": tool_use_id, "key": tool_context.idempotency_key})
            if tool_use_id in world.die_in:
                world.die_in.discard(tool_use_id)
                raise Died
            return f"{name} done"

        @tool(context=True)
        def pay(amount: int, tool_context: ToolContext) -> str:
            """Pay an amount.

            Args:
                amount: How much.
            """
            return body("pay", tool_context)

        @tool(context=True, idempotent=True)
        def lookup(key: str, tool_context: ToolContext) -> str:
            """Look a key up (safe to repeat).

            Args:
                key: The key.
            """
            return body("lookup", tool_context)

        return [pay, lookup]

    def agent(self, turns: list[Any], *, session_id: str = SESSION, **kwargs: Any) -> Agent:
        kwargs.setdefault("hooks", [approve_payments])
        return Agent(model=ScriptedModel(turns), tools=self.tools(), session_manager=self.manager(session_id), **kwargs)

    def close(self, agent: Agent) -> None:
        agent.session_manager.close()


def approve_payments(event: BeforeToolCallEvent) -> None:
    if event.tool_use["name"] != "pay":
        return
    if event.interrupt("approval", reason={"amount": event.tool_use["input"]["amount"]}) != "y":
        event.cancel_tool = "denied"


@pytest.fixture(params=["memory", "file"])
def world(request: pytest.FixtureRequest, tmp_path: Path) -> World:
    return World(request.param, tmp_path)


def paused(world: World, **kwargs: Any) -> tuple[Agent, Any]:
    agent = world.agent([tool_call("pay", tool_use_id="pay_1", amount=5)], **kwargs)
    result = agent("pay 5")
    assert result.stop_reason == "interrupt"
    world.close(agent)
    return agent, result.interrupts[0]


def crashed_resume(world: World, interrupt: Any, **kwargs: Any) -> None:
    world.die_in.add("pay_1")
    agent = world.agent([], **kwargs)
    with pytest.raises(Died):
        agent([answer(interrupt, "y")])
    world.close(agent)


def tool_results(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [block["toolResult"] for block in message["content"] if "toolResult" in block]


# -- the intent record --------------------------------------------------------------------------------------------


def test_the_intent_is_durable_before_the_body_runs(world: World) -> None:
    seen: list[Any] = []

    @tool(context=True)
    def pay(amount: int, tool_context: ToolContext) -> str:
        """Pay.

        Args:
            amount: How much.
        """
        # Read the session as another process would, from inside the body.
        reader = world.manager()
        stored = reader.session_repository.load_agent(SESSION, "default")
        seen.append([(a.tool_use_id, a.outcome, a.idempotency_key) for a in stored.attempts])
        seen.append(tool_context.idempotency_key)
        return "paid"

    agent = Agent(
        model=ScriptedModel([tool_call("pay", tool_use_id="pay_1", amount=5), text("Paid.")]),
        tools=[pay],
        session_manager=world.manager(),
    )
    assert agent("pay").stop_reason == "end_turn"
    assert seen == [[("pay_1", "started", seen[1])], seen[1]]
    if world.kind == "memory":
        intent_appends = [(kinds, durable) for kinds, durable in world.repository.appends if "ti" in kinds]
        assert intent_appends == [(["m", "m", "ti"], True)]  # everything pending, then the intent: one durable write
    after = world.manager().session_repository.load_agent(SESSION, "default")
    assert [(a.outcome, a.result["content"] if a.result else None) for a in after.attempts] == [
        ("done", [{"text": "paid"}])
    ]


def test_the_tools_of_one_batch_share_one_durable_write() -> None:
    repository = RecordingRepository()
    started = 0
    all_started = anyio.Event()

    @tool
    async def fetch(n: int) -> int:
        """Fetch.

        Args:
            n: Which.
        """
        nonlocal started
        started += 1
        if started == 3:
            all_started.set()
        with anyio.fail_after(5):
            await all_started.wait()  # the three bodies overlap: they really ran concurrently
        return n

    calls = [tool_call("fetch", tool_use_id=f"f{n}", n=n) for n in range(3)]
    agent = Agent(
        model=ScriptedModel([turn(*calls), text("Fetched.")]),
        tools=[fetch],
        session_manager=RepositorySessionManager(SESSION, repository),
    )
    assert agent("fetch three").stop_reason == "end_turn"
    intent_appends = [(kinds, durable) for kinds, durable in repository.appends if "ti" in kinds]
    assert intent_appends == [(["m", "m", "ti", "ti", "ti"], True)]
    outcomes = [kinds for kinds, _ in repository.appends if "to" in kinds]
    assert sum(kinds.count("to") for kinds in outcomes) == 3


def test_a_sequential_batch_writes_each_intent_before_its_own_body() -> None:
    repository = RecordingRepository()
    order: list[str] = []

    @tool
    def step(n: int) -> int:
        """Step.

        Args:
            n: Which.
        """
        order.append(f"body {n}: {sum(kinds.count('ti') for kinds, _ in repository.appends)} intents written")
        return n

    agent = Agent(
        model=ScriptedModel([turn(tool_call("step", n=1), tool_call("step", n=2)), text("Done.")]),
        tools=[step],
        tool_executor=SequentialToolExecutor(),
        session_manager=RepositorySessionManager(SESSION, repository),
    )
    agent("two steps")
    assert order == ["body 1: 1 intents written", "body 2: 2 intents written"]


# -- a crash inside the body --------------------------------------------------------------------------------------


def test_a_crash_in_an_approved_tool_is_reported_as_unknown_and_never_run_again(world: World) -> None:
    _, approval = paused(world)
    crashed_resume(world, approval)
    assert [run["id"] for run in world.runs] == ["pay_1"]

    retry = world.agent([text("I could not confirm the payment.")])
    assert retry._interrupt_state.activated  # the answer is on record, the step is not finished
    assert [a.tool_use_id for a in retry.tool_journal.unfinished()] == ["pay_1"]
    result = retry([answer(approval, "y")])  # the client retries the same resume
    assert result.stop_reason == "end_turn"
    assert [run["id"] for run in world.runs] == ["pay_1"]  # not run a second time

    model: ScriptedModel = retry.model  # type: ignore[assignment]
    [sent] = tool_results(model.requests[0].messages[-1])
    assert sent["status"] == "error"
    assert "outcome of this call of tool 'pay' is unknown" in sent["content"][0]["text"]
    assert world.runs[0]["key"] in sent["content"][0]["text"]

    unknown = [entry for entry in retry.interrupt_audit if entry["event"] == "tool_outcome_unknown"]
    assert unknown == [
        {
            "time": unknown[0]["time"],
            "event": "tool_outcome_unknown",
            "interrupt_id": approval.id,
            "name": "approval",
            "tool": "pay",
            "tool_use_id": "pay_1",
            "idempotency_key": world.runs[0]["key"],
        }
    ]
    assert [entry["event"] for entry in retry.interrupt_audit] == [
        "raised",
        "answered",
        "tool_outcome_unknown",
        "outcome",
    ]
    world.close(retry)

    final = world.agent([])  # and the next process finds a finished, consistent session
    assert not final._interrupt_state.activated
    assert final.tool_journal.unfinished() == []
    assert final.messages == retry.messages
    assert final.interrupt_audit == retry.interrupt_audit


def test_an_idempotent_tool_runs_again_once_with_the_same_key(world: World) -> None:
    agent = world.agent([tool_call("lookup", tool_use_id="look_1", key="k")], hooks=[])
    world.die_in.add("look_1")
    with pytest.raises(Died):
        agent("look k up")
    world.close(agent)

    retry = world.agent([text("Found it.")], hooks=[])
    assert retry(None).stop_reason == "end_turn"  # runs the trailing tool use without calling the model first
    assert [(run["id"], run["key"]) for run in world.runs] == [("look_1", world.runs[0]["key"])] * 2
    [result] = tool_results(retry.messages[-2])
    assert result["status"] == "success"
    assert [entry["event"] for entry in retry.interrupt_audit] == ["tool_rerun"]
    assert retry.interrupt_audit[0]["idempotency_key"] == world.runs[0]["key"]


def test_the_rerun_policy_runs_an_unfinished_tool_again(world: World) -> None:
    _, approval = paused(world)
    crashed_resume(world, approval)
    retry = world.agent([text("Paid.")], unfinished_tool_policy="rerun")
    assert retry([answer(approval, "y")]).stop_reason == "end_turn"
    assert [run["id"] for run in world.runs] == ["pay_1", "pay_1"]
    assert world.runs[0]["key"] == world.runs[1]["key"]
    assert [entry["event"] for entry in retry.interrupt_audit][2:] == ["tool_rerun", "outcome"]


def test_unfinished_tool_policy_must_be_report_or_rerun() -> None:
    with pytest.raises(ValueError, match=r"unfinished_tool_policy='again' \| must be 'report' or 'rerun'"):
        Agent(unfinished_tool_policy="again")  # type: ignore[arg-type]


def test_a_retry_hook_never_reruns_a_tool_whose_outcome_is_unknown(world: World) -> None:
    retries: list[str] = []

    def retry_errors(event: AfterToolCallEvent) -> None:
        if event.result["status"] == "error" and len(retries) < 3:
            retries.append(event.tool_use["toolUseId"])
            event.retry = True

    _, approval = paused(world)
    crashed_resume(world, approval)
    retry = world.agent([text("Unknown.")], hooks=[approve_payments, retry_errors])
    assert retry([answer(approval, "y")]).stop_reason == "end_turn"
    assert retries == ["pay_1"]  # the hook asked...
    assert [run["id"] for run in world.runs] == ["pay_1"]  # ...and the tool still did not run again


def test_a_result_recorded_before_the_crash_is_used_and_the_tool_not_run_again(world: World) -> None:
    finished = anyio.Event()

    @tool
    async def quick() -> str:
        """Finish at once."""
        world.runs.append({"tool": "quick"})
        finished.set()
        return "quick result"

    @tool
    async def slow() -> str:
        """Die once the other tool has finished."""
        world.runs.append({"tool": "slow"})
        with anyio.fail_after(5):
            await finished.wait()
        raise Died

    def build(turns: list[Any]) -> Agent:
        return Agent(model=ScriptedModel(turns), tools=[quick, slow], session_manager=world.manager())

    agent = build([turn(tool_call("quick", tool_use_id="q1"), tool_call("slow", tool_use_id="s1"))])
    with pytest.raises(Died):
        agent("both")
    world.close(agent)
    assert sorted(run["tool"] for run in world.runs) == ["quick", "slow"]

    retry = build([text("One worked, one is unknown.")])
    assert retry(None).stop_reason == "end_turn"
    assert sorted(run["tool"] for run in world.runs) == ["quick", "slow"]  # neither ran again
    quick_result, slow_result = tool_results(retry.messages[-2])
    assert quick_result == {"toolUseId": "q1", "status": "success", "content": [{"text": "quick result"}]}
    assert slow_result["status"] == "error"
    assert "unknown" in slow_result["content"][0]["text"]
    assert [entry["event"] for entry in retry.interrupt_audit] == ["tool_result_recovered", "tool_outcome_unknown"]


def test_a_new_prompt_repairs_a_dangling_tool_use_with_what_the_journal_knows(world: World) -> None:
    agent = world.agent(
        [turn(tool_call("lookup", tool_use_id="look_1", key="k"), tool_call("pay", tool_use_id="pay_9", amount=1))],
        hooks=[],
        tool_executor=SequentialToolExecutor(),  # lookup ends before pay dies
    )
    world.die_in.add("pay_9")
    with pytest.raises(Died):
        agent("both")
    world.close(agent)

    follow = world.agent([text("Moving on.")], hooks=[])
    assert follow("never mind").stop_reason == "end_turn"
    assert [run["id"] for run in world.runs] == ["look_1", "pay_9"]  # nothing ran again
    repaired = follow.messages[2]["content"]
    assert repaired[0] == {
        "toolResult": {"toolUseId": "look_1", "status": "success", "content": [{"text": "lookup done"}]}
    }
    assert "unknown" in repaired[1]["toolResult"]["content"][0]["text"]
    assert repaired[2] == {"text": "never mind"}
    assert [entry["event"] for entry in follow.interrupt_audit] == ["tool_outcome_unknown"]


def test_a_tool_use_that_never_started_runs_normally_after_a_crash(world: World) -> None:
    _, approval = paused(world)
    world.close(world.agent([]))  # a process that restored and died before resuming: nothing on record
    retry = world.agent([text("Paid.")])
    assert retry([answer(approval, "y")]).stop_reason == "end_turn"
    assert [run["id"] for run in world.runs] == ["pay_1"]
    assert [entry["event"] for entry in retry.interrupt_audit] == ["raised", "answered", "outcome"]


def test_a_model_reusing_tool_use_ids_does_not_pick_up_an_older_attempt(world: World) -> None:
    # ScriptedModel numbers its tool uses from tooluse_1 in every process, as a careless provider might.
    first = world.agent([tool_call("lookup", key="a"), text("a found")], hooks=[])
    first("find a")
    world.close(first)
    second = world.agent([tool_call("lookup", key="b"), text("b found")], hooks=[])
    assert second("find b").stop_reason == "end_turn"
    assert [run["id"] for run in world.runs] == ["tooluse_1", "tooluse_1"]
    [result] = tool_results(second.messages[-2])
    assert result["content"] == [{"text": "lookup done"}]


def test_a_tool_paused_by_its_own_interrupt_runs_its_body_again_on_resume(world: World) -> None:
    bodies: list[str] = []

    @tool(context=True)
    def confirm(item: str, tool_context: ToolContext) -> str:
        """Confirm an item.

        Args:
            item: The item.
        """
        bodies.append(item)
        return f"{item}: {tool_context.interrupt('confirm', reason=item)}"

    def build(turns: list[Any]) -> Agent:
        return Agent(model=ScriptedModel(turns), tools=[confirm], session_manager=world.manager())

    agent = build([tool_call("confirm", tool_use_id="c1", item="x")])
    result = agent("confirm x")
    world.close(agent)
    stored = world.manager().session_repository.load_agent(SESSION, "default")
    assert [(a.tool_use_id, a.outcome) for a in stored.attempts] == [("c1", "interrupted")]

    resumed = build([text("Confirmed.")])
    assert resumed([answer(result.interrupts[0], "yes")]).stop_reason == "end_turn"
    assert bodies == ["x", "x"]  # a tool interrupt re-runs the body by design: it was never "unknown"
    assert tool_results(resumed.messages[-2])[0]["content"] == [{"text": "x: yes"}]
    assert resumed.interrupt_audit[-1]["event"] == "outcome"


def test_calls_that_never_run_a_body_write_no_intent(world: World) -> None:
    def deny(event: BeforeToolCallEvent) -> None:
        if event.tool_use["name"] == "pay":
            event.cancel_tool = "not today"

    agent = world.agent(
        [turn(tool_call("pay", tool_use_id="p", amount=1), tool_call("nope", tool_use_id="n")), text("ok")],
        hooks=[deny],
    )
    assert agent("go").stop_reason == "end_turn"
    stored = world.manager().session_repository.load_agent(SESSION, "default")
    assert stored.attempts == []
    assert world.runs == []


def test_a_respond_answer_writes_no_intent(world: World) -> None:
    _, approval = paused(world)
    agent = world.agent([text("Used the answer.")])
    agent([{"interruptResponse": {"interruptId": approval.id, "response": "faked", "action": "respond"}}])
    assert world.runs == []
    stored = world.manager().session_repository.load_agent(SESSION, "default")
    assert stored.attempts == []


def test_a_direct_tool_call_is_journaled_under_a_short_claim(world: World) -> None:
    agent = world.agent([], hooks=[])
    assert agent.tool.lookup(key="z")["status"] == "success"
    stored = world.manager().session_repository.load_agent(SESSION, "default")
    assert [(a.name, a.outcome) for a in stored.attempts] == [("lookup", "done")]
    assert [a.idempotency_key for a in stored.attempts] == [world.runs[0]["key"]]


# -- idempotency keys ---------------------------------------------------------------------------------------------


def test_idempotency_keys_are_stable_per_tool_use_and_distinct_across_sessions_and_agents(world: World) -> None:
    keys: dict[tuple[str, str], str] = {}
    for session_id in ("s1", "s2"):
        for agent_id in ("a", "b"):
            agent = world.agent([], hooks=[], session_id=session_id, agent_id=agent_id)
            keys[(session_id, agent_id)] = agent.tool_journal.idempotency_key("tooluse_1")
            assert agent.tool_journal.scope == f"{session_id}/{agent_id}"
            world.close(agent)
    assert len(set(keys.values())) == 4
    again = world.agent([], hooks=[], session_id="s1", agent_id="a")
    assert again.tool_journal.idempotency_key("tooluse_1") == keys[("s1", "a")]
    without_session = Agent(agent_id="a")
    assert without_session.tool_journal.idempotency_key("tooluse_1") not in keys.values()


def test_tool_idempotence_is_declared_on_the_tool() -> None:
    @tool
    def plain() -> None:
        """Plain."""

    @tool(idempotent=True)
    def safe() -> None:
        """Safe."""

    class Box:
        @tool(idempotent=True)
        def method(self) -> None:
            """A method."""

    assert plain.idempotent is False
    assert safe.idempotent is True
    assert Box().method.idempotent is True
