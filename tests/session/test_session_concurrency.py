"""Concurrent writers: exactly one resume of an interrupted session proceeds, and no tool runs twice.

The cross-process race runs ``STRANDSLIKE_RACE_TRIALS`` trials (default 20): two child processes restore the
same interrupted session, block on a pipe until the parent closes it, and resume at the same moment.
"""

import json
import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import pytest
from helpers import answers
from session_workers import SESSION_ID, build_agent, child_argv, pause_turns, read_line, resume_turns, tool_runs

from strandslike import Agent, tool
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.session import FileSessionManager
from strandslike.types.exceptions import SessionConflictError, SessionException

PATHS = ["a.txt", "b.txt"]


def log_file(storage: Path, session_id: str = SESSION_ID, agent_id: str = "default") -> Path:
    return storage / f"session_{session_id}" / "agents" / f"agent_{agent_id}" / "agent.jsonl"


def paused_session(storage: Path, log: Path) -> str:
    """Leave ``storage`` with an interrupted session; return the interrupt id."""
    agent, _ = build_agent(storage, pause_turns(PATHS), log)
    result = agent("Clean up")
    assert result.stop_reason == "interrupt"
    agent.session_manager.close()
    return result.interrupts[0].id


# -- in one process -----------------------------------------------------------------------------------------


def test_of_two_agents_restored_from_one_interrupt_only_the_first_resume_runs(tmp_path: Path) -> None:
    log = tmp_path / "tools.log"
    interrupt_id = paused_session(tmp_path, log)
    first, _ = build_agent(tmp_path, resume_turns(), log)
    second, second_model = build_agent(tmp_path, resume_turns(), log)
    assert first._interrupt_state.activated
    assert second._interrupt_state.activated

    resume = [{"interruptResponse": {"interruptId": interrupt_id, "response": "y"}}]
    assert first(resume).stop_reason == "end_turn"
    assert len(tool_runs(log)) == 1
    size = log_file(tmp_path).stat().st_size
    content = log_file(tmp_path).read_bytes()

    with pytest.raises(SessionConflictError) as caught:
        second(resume)
    assert isinstance(caught.value, SessionException)
    assert "Nothing was written and no tool ran" in str(caught.value)
    assert caught.value.session_id == SESSION_ID
    assert caught.value.agent_id == "default"
    assert len(tool_runs(log)) == 1
    assert second_model.calls == 0
    assert log_file(tmp_path).stat().st_size == size
    assert log_file(tmp_path).read_bytes() == content

    with pytest.raises(SessionConflictError):  # retrying with the stale agent changes nothing either
        second(resume)
    assert len(tool_runs(log)) == 1
    assert log_file(tmp_path).read_bytes() == content

    fresh, _ = build_agent(tmp_path, [text("Anything else?")], log)  # what the error tells the caller to do
    assert not fresh._interrupt_state.activated
    assert fresh.messages == first.messages
    assert fresh("Thanks").stop_reason == "end_turn"


def test_a_stale_agent_cannot_append_a_new_prompt_either(tmp_path: Path) -> None:
    log = tmp_path / "tools.log"
    first, _ = build_agent(tmp_path, [text("one")], log)
    stale, stale_model = build_agent(tmp_path, [text("two")], log)
    first("hello")
    size = log_file(tmp_path).stat().st_size
    with pytest.raises(SessionConflictError):
        stale("hello from the stale copy")
    assert stale_model.calls == 0
    assert log_file(tmp_path).stat().st_size == size


async def test_the_lock_held_during_an_invocation_refuses_another_manager(tmp_path: Path) -> None:
    started = anyio.Event()
    release = anyio.Event()
    runs: list[str] = []

    @tool
    async def slow(name: str) -> str:
        """Run slowly.

        Args:
            name: Who runs.
        """
        runs.append(name)
        started.set()
        await release.wait()
        return "done"

    def agent(turns: list[Any]) -> Agent:
        return Agent(
            model=ScriptedModel(turns),
            tools=[slow],
            session_manager=FileSessionManager(SESSION_ID, storage_dir=tmp_path),
        )

    holder = agent([tool_call("slow", tool_use_id="slow_1", name="holder"), text("Held.")])
    early = agent([text("never")])  # restored before the holder started: up to date, but the lock is taken
    outcomes: dict[str, Any] = {}

    async def hold() -> None:
        outcomes["holder"] = await holder.invoke_async("Hold the lock")

    async with anyio.create_task_group() as group:
        group.start_soon(hold)
        with anyio.fail_after(5):
            await started.wait()
        size = log_file(tmp_path).stat().st_size
        late = agent([text("never")])  # restored mid-invocation
        for contender in (early, late):
            with pytest.raises(SessionConflictError, match="another process is running this agent"):
                await contender.invoke_async("Let me in")
            assert log_file(tmp_path).stat().st_size == size
            model: ScriptedModel = contender.model  # type: ignore[assignment]
            assert model.calls == 0
        release.set()

    assert outcomes["holder"].stop_reason == "end_turn"
    assert runs == ["holder"]
    with pytest.raises(SessionConflictError):  # now stale: the holder changed the log
        await early.invoke_async("Let me in")
    after = agent([text("Welcome.")])
    assert (await after.invoke_async("Let me in")).stop_reason == "end_turn"
    assert after.messages[:4] == holder.messages


@pytest.mark.parametrize("layout", ["sessions", "agents"])
async def test_different_sessions_and_agents_never_block_each_other(tmp_path: Path, layout: str) -> None:
    running = 0
    overlapped = anyio.Event()

    @tool
    async def slow(seconds: float) -> str:
        """Sleep.

        Args:
            seconds: How long.
        """
        nonlocal running
        running += 1
        if running == 2:
            overlapped.set()
        with anyio.fail_after(5):
            await overlapped.wait()  # each tool waits until the other one runs too: proves they overlap
        await anyio.sleep(seconds)
        running -= 1
        return "slept"

    def agent(index: int) -> Agent:
        session_id, agent_id = (f"session-{index}", "default") if layout == "sessions" else (SESSION_ID, f"a{index}")
        return Agent(
            model=ScriptedModel([tool_call("slow", tool_use_id=f"slow_{index}", seconds=0.05), text(f"Done {index}.")]),
            tools=[slow],
            agent_id=agent_id,
            session_manager=FileSessionManager(session_id, storage_dir=tmp_path),
        )

    agents = [agent(0), agent(1)]
    results: dict[int, Any] = {}

    async def run(index: int) -> None:
        results[index] = await agents[index].invoke_async(f"Sleep {index}")

    async with anyio.create_task_group() as group:
        for index in range(2):
            group.start_soon(run, index)

    assert [results[i].stop_reason for i in range(2)] == ["end_turn", "end_turn"]
    assert overlapped.is_set()
    for index in range(2):
        restored = agent(index)
        assert restored.messages == agents[index].messages


def test_two_agents_of_one_manager_persist_independently(tmp_path: Path) -> None:
    manager = FileSessionManager(SESSION_ID, storage_dir=tmp_path)
    first = Agent(model=ScriptedModel([text("one")]), agent_id="first", session_manager=manager)
    with pytest.raises(SessionException, match="unique"):
        Agent(model=ScriptedModel([]), agent_id="first", session_manager=manager)
    second = Agent(model=ScriptedModel([text("two")]), agent_id="second", session_manager=manager)
    first("hi first")
    second("hi second")
    restored = FileSessionManager(SESSION_ID, storage_dir=tmp_path)
    assert Agent(model=ScriptedModel([]), agent_id="first", session_manager=restored).messages == first.messages
    assert Agent(model=ScriptedModel([]), agent_id="second", session_manager=restored).messages == second.messages


def test_a_stale_agent_is_refused_even_when_the_log_size_happens_to_match(tmp_path: Path) -> None:
    import shutil

    storage, rehearsal = tmp_path / "storage", tmp_path / "rehearsal"

    def agent(turns: list[Any], where: Path = storage) -> Agent:
        return Agent(model=ScriptedModel(turns), session_manager=FileSessionManager(SESSION_ID, storage_dir=where))

    agent([text("first")])("hello")
    good = log_file(storage).stat().st_size
    shutil.copytree(storage, rehearsal)  # learn how many bytes the next turn appends
    agent([text("from B")], rehearsal)("question")
    grows_by = log_file(rehearsal).stat().st_size - good
    with open(log_file(storage), "ab") as handle:
        handle.write(b"x" * grows_by)  # a crash left a torn record exactly as long as the next turn

    writer, stale = agent([text("from B")]), agent([text("from C")])  # both restore the same state
    writer("question")  # cuts the torn tail and appends: the log has its old size again
    assert log_file(storage).stat().st_size == good + grows_by
    with pytest.raises(SessionConflictError):
        stale("other question")
    stored = FileSessionManager(SESSION_ID, storage_dir=storage).list_messages(SESSION_ID, "default")
    assert [m.message["content"][0]["text"] for m in stored] == ["hello", "first", "question", "from B"]


# -- across processes ---------------------------------------------------------------------------------------

RACE_TRIALS = int(os.environ.get("STRANDSLIKE_RACE_TRIALS", "20"))


def race_trial(storage: Path, trial: int) -> dict[str, Any]:
    log = storage / "tools.log"
    interrupt_id = paused_session(storage, log)
    read_end, write_end = os.pipe()
    children: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(2):
            argv = child_argv(
                "race",
                storage_dir=str(storage),
                log=str(log),
                interrupt_id=interrupt_id,
                barrier_fd=read_end,
                tool_delay=0.02 * (trial % 3),  # vary how long the winner holds the lock
            )
            children.append(
                subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=(read_end,), bufsize=0)
            )
        os.close(read_end)
        read_end = -1
        for child in children:
            line = read_line(child.stdout, timeout=30)
            assert line == "READY", line
        os.close(write_end)  # both children wake up together
        write_end = -1
        outcomes = []
        for child in children:
            out, err = child.communicate(timeout=30)
            assert child.returncode == 0, err.decode()
            outcomes.append(json.loads(out.decode().strip().splitlines()[-1]))
    finally:
        for fd in (read_end, write_end):
            if fd >= 0:
                os.close(fd)
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()
    return {"outcomes": outcomes, "runs": tool_runs(log), "interrupt_id": interrupt_id}


@pytest.mark.timeout(600)
def test_two_processes_resuming_one_interrupt_at_once_exactly_one_proceeds(tmp_path: Path) -> None:
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=2) as pool:
        trials = list(pool.map(lambda n: race_trial(tmp_path / f"trial_{n}", n), range(RACE_TRIALS)))
    reasons: dict[str, int] = {}
    for number, trial in enumerate(trials):
        kinds = sorted(outcome["outcome"] for outcome in trial["outcomes"])
        assert kinds == ["conflict", "ok"], f"trial {number}: {trial['outcomes']}"
        assert [run["tool"] for run in trial["runs"]] == ["delete_files"], f"trial {number}: {trial['runs']}"
        winner = next(o for o in trial["outcomes"] if o["outcome"] == "ok")
        assert winner["stop_reason"] == "end_turn"
        loser = next(o for o in trial["outcomes"] if o["outcome"] == "conflict")
        reason = "locked" if "another process is running" in loser["error"] else "stale"
        reasons[reason] = reasons.get(reason, 0) + 1

        storage = tmp_path / f"trial_{number}"
        restored, _ = build_agent(storage, [], storage / "tools.log")
        assert not restored._interrupt_state.activated
        assert [m["role"] for m in restored.messages] == ["user", "assistant", "user", "assistant"]
        assert restored.messages[-1] == {"role": "assistant", "content": [{"text": "Deleted."}]}
        assert restored.state.get(f"{SESSION_ID}-approval") == "y"
    elapsed = time.monotonic() - started
    print(f"{RACE_TRIALS} race trials in {elapsed:.1f}s; the loser found the session {reasons}")


def test_a_resume_refused_for_a_conflict_can_be_retried_by_a_fresh_agent(tmp_path: Path) -> None:
    log = tmp_path / "tools.log"
    interrupt_id = paused_session(tmp_path, log)
    holder, _ = build_agent(tmp_path, resume_turns(), log)
    loser, _ = build_agent(tmp_path, resume_turns(), log)
    holder([{"interruptResponse": {"interruptId": interrupt_id, "response": "n"}}])
    with pytest.raises(SessionConflictError):
        loser(answers(loser._interrupt_state.unanswered(), "y"))
    retry, model = build_agent(tmp_path, [text("Nothing to do.")], log)
    assert not retry._interrupt_state.activated  # the other resume already answered it
    assert retry("Anything left?").stop_reason == "end_turn"
    assert tool_runs(log) == []  # "n": the tool never ran
    assert model.calls == 1
