"""SIGKILL of a replica on PostgreSQL: an approved tool never runs twice, an interrupt handed out is never lost.

The same scenarios as the file store's (``test_session_crash_approvals.py``), with the sessions in PostgreSQL:

- a worker process resumes an approval and is killed inside the approved tool (after the intent committed, before
  the outcome did); a retried resume in a fresh process does not run it again (unknown outcome, reported and
  audited), or runs it once more with the same idempotency key if the tool is idempotent. The dead worker's claim
  does not lock the session: the retry claims it at once.
- a child serves sessions the server way (prompt → approval interrupt, then the approving resume in a fresh agent)
  and is killed at a random moment; this process then finishes every session as a retrying client would. 0 double
  runs, 0 lost interrupts (every interrupt the child printed is on record), every session ends with the answer.

``STRANDSLIKE_CRASH_SEED`` replays a run; ``STRANDSLIKE_PG_CRASH_TRIALS`` (default 24) sets the number of kills.
"""

import json
import os
import random
import signal
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from pg_cluster import new_database
from pg_support import schema_dsn
from session_workers import (
    approval_agent,
    approval_call,
    approval_session,
    child_argv,
    kill_approvals_child,
    pause_turns,
    read_line,
    tool_runs,
)

from strandslike.models import text
from strandslike.types.exceptions import SessionConflictError

TRIALS = int(os.environ.get("STRANDSLIKE_PG_CRASH_TRIALS", "24"))
SEED = int(os.environ.get("STRANDSLIKE_CRASH_SEED") or random.SystemRandom().randrange(2**32))
SESSIONS = 5


@pytest.fixture(scope="module")
def crash_dsn(postgres_server: str) -> str:
    return new_database(postgres_server, "crash")


def resume_in_child(dsn: str, runs: Path, interrupt_id: str, *, idempotent: bool, hang: bool) -> tuple[str, Any]:
    argv = child_argv(
        "approval_resume", storage_dir=dsn, log=str(runs), interrupt_id=interrupt_id, idempotent=idempotent, hang=hang
    )
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0) as child:
        assert child.stdout is not None
        assert child.stderr is not None
        try:
            line = read_line(child.stdout, timeout=60)
            if hang:
                assert line.startswith("IN TOOL "), line
                child.send_signal(signal.SIGKILL)  # the replica dies inside the approved tool
                child.wait(timeout=30)
                return line.removeprefix("IN TOOL "), {}
            child.wait(timeout=30)
            assert child.returncode == 0, child.stderr.read().decode()
            return "", json.loads(line)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()


@pytest.mark.parametrize("idempotent", [False, True], ids=["plain-tool", "idempotent-tool"])
def test_a_replica_killed_inside_the_approved_tool_then_a_retry_on_another(
    crash_dsn: str, tmp_path: Path, idempotent: bool
) -> None:
    dsn = schema_dsn(crash_dsn, f"kill_in_tool_{int(idempotent)}")
    runs = tmp_path / "runs.log"
    agent, _ = approval_agent(dsn, approval_session(0), pause_turns(["old/a.txt"]), runs)
    interrupt_id = agent("Clean up").interrupts[0].id
    agent.session_manager.close()

    key, _ = resume_in_child(dsn, runs, interrupt_id, idempotent=idempotent, hang=True)
    assert [(run["id"], run["key"]) for run in tool_runs(runs)] == [("delete_1", key)]
    _, retried = resume_in_child(dsn, runs, interrupt_id, idempotent=idempotent, hang=False)  # claims at once
    assert retried["stop_reason"] == "end_turn"
    [result] = retried["tool_results"]
    events = [entry["event"] for entry in retried["audit"]]
    if idempotent:
        assert [(run["id"], run["key"]) for run in tool_runs(runs)] == [("delete_1", key)] * 2
        assert result["status"] == "success"
        assert events == ["raised", "answered", "tool_rerun", "outcome"]
    else:
        assert len(tool_runs(runs)) == 1
        assert result["status"] == "error"
        assert "outcome of this call of tool 'delete_files' is unknown" in result["content"][0]["text"]
        assert key in result["content"][0]["text"]
        assert events == ["raised", "answered", "tool_outcome_unknown", "outcome"]
    final, _ = approval_agent(dsn, approval_session(0), [text("Anything else?")], runs)
    assert not final._interrupt_state.activated
    assert final("Thanks").stop_reason == "end_turn"
    final.session_manager.close()


def kill_child(dsn: str, runs: Path, rng: random.Random) -> list[str]:
    """Run the approvals child on ``dsn`` and kill it at a random moment of a random session."""
    return kill_approvals_child(dsn, runs, rng, sessions=SESSIONS, seed=SEED, timeout=60)


def drive_once(dsn: str, runs: Path, number: int) -> tuple[bool, list[Any], Any]:
    """Take one step towards the end of session ``number``; return whether it had ended, its messages and the probe."""
    session_id = approval_session(number)
    probe, _ = approval_agent(dsn, session_id, [], runs)
    state, messages = probe._interrupt_state, probe.messages
    probe.session_manager.close()
    last = messages[-1] if messages else None
    if state.activated:
        agent, _ = approval_agent(dsn, session_id, [text("Deleted.")], runs)
        agent([{"interruptResponse": {"interruptId": i, "response": "y"}} for i in state.interrupts])
    elif last is not None and last["role"] == "assistant" and not any("toolUse" in b for b in last["content"]):
        assert last == {"role": "assistant", "content": [{"text": "Deleted."}]}
        return True, messages, probe
    elif last is not None and (last["role"] == "assistant" or any("toolResult" in b for b in last["content"])):
        agent, _ = approval_agent(dsn, session_id, [text("Deleted.")], runs)
        agent(None)
    else:
        agent, _ = approval_agent(dsn, session_id, [approval_call(number), text("Deleted.")], runs)
        agent(None)
    agent.session_manager.close()
    return False, messages, probe


def finish(dsn: str, runs: Path, number: int) -> str:
    """Restore session ``number`` and drive it to its end as a retrying client would; return how it went."""
    session_id = approval_session(number)
    for _ in range(6):
        try:
            done, messages, probe = drive_once(dsn, runs, number)
        except SessionConflictError:
            # The killed replica's last statement reached the server before the kill and committed after this
            # process read the log: the claim refuses the stale read (nothing ran), and the client retries.
            continue
        if done:
            break
    else:
        raise AssertionError(f"session {session_id} did not finish")
    results = [b["toolResult"] for m in messages for b in m["content"] if "toolResult" in b]
    assert [block["toolUseId"] for block in results] == [f"delete_{number}"]
    ran = [run for run in tool_runs(runs) if run["session"] == session_id]
    if "outcome of this call" in json.dumps(results[0]):
        assert len(ran) <= 1, f"{session_id}: reported unknown but ran {len(ran)} times"
        assert any(entry["event"] == "tool_outcome_unknown" for entry in probe.interrupt_audit)
        return "unknown outcome reported"
    assert results[0]["status"] == "success"
    assert len(ran) == 1, f"{session_id}: ran {len(ran)} times"
    return "ran once"


@pytest.mark.timeout(400)
def test_sigkill_of_a_replica_at_random_moments_never_runs_a_tool_twice_nor_loses_an_interrupt(
    crash_dsn: str, tmp_path: Path
) -> None:
    print(f"STRANDSLIKE_CRASH_SEED={SEED}: {TRIALS} kills, {SESSIONS} sessions each")
    total: Counter[str] = Counter()
    for number in range(TRIALS):
        dsn = schema_dsn(crash_dsn, f"trial_{number}")
        runs = tmp_path / f"runs_{number}.log"
        rng = random.Random(SEED * 7919 + number)
        lines = kill_child(dsn, runs, rng)
        printed = {line.split()[1]: line.split()[3] for line in lines if line.startswith("S ") and "paused" in line}
        started = {line.split()[1] for line in lines if line.startswith("S ")}
        try:
            for session in range(SESSIONS):
                if str(session) not in started:
                    total["never started"] += 1
                    continue
                total[finish(dsn, runs, session)] += 1
                if str(session) in printed:  # an interrupt handed to the caller must be on record
                    restored, _ = approval_agent(dsn, approval_session(session), [], runs)
                    raised = [e["interrupt_id"] for e in restored.interrupt_audit if e["event"] == "raised"]
                    assert printed[str(session)] in raised, f"session {session}: interrupt lost"
                    restored.session_manager.close()
            counts = Counter((run["session"], run["id"]) for run in tool_runs(runs))
            assert all(count == 1 for count in counts.values()), f"double runs: {counts}"
        except Exception as exc:
            raise AssertionError(f"trial {number} (STRANDSLIKE_CRASH_SEED={SEED}, output {lines}): {exc}") from exc
    print(f"sessions after the kills: {dict(total)}")
    assert sum(total.values()) == TRIALS * SESSIONS
