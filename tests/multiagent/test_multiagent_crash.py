"""SIGKILL inside approved tools of Graph and Swarm nodes: 0 torn sessions, 0 lost interrupts, 0 double runs (issue 9).

A child process serves many orchestrated sessions the server way (see `orchestration_workers`): the task, which
stops on the payer node's approval, then, in a fresh orchestrator, the resume that approves it; the approved
tool records its run in a side file, then works for a few milliseconds. The child is killed at a random moment
(inside the tool, during a write, between requests); a quarter of the trials write through a slow disk with large
records, so kills also tear records. Then this process restores every session and finishes it as a retrying
client would: it answers the interrupts the orchestration waits on (repeating answers already given), or runs
the task again when the run never reached its interrupt. Checked:

- every orchestrator log reads back with no damage beyond a torn tail, and is clean once finished;
- every interrupt the child handed to its caller is on record (waiting, or answered, in the audit trail);
- no tool use ran twice; a tool use whose run is uncertain was reported as unknown to the node's model and in
  the orchestration's audit trail (with its node), never run again;
- every session ends with the payer's final answer, and every run of a tool use has the same idempotency key.

Deterministic cases follow: a kill while the approved tool of a Graph node, a Swarm node and a node of a nested
graph runs, then the retried resume in a fresh process (not run again, unknown outcome reported and audited), and
the same for an idempotent tool (run again once, with the same key), and the same on the PostgreSQL store (node
journals live in the session manager and the replayer, so every store that implements the log contract has them).

``STRANDSLIKE_CRASH_SEED`` replays a run; ``STRANDSLIKE_ORCHESTRATION_TRIALS`` (default 32) sets the number of kills.
"""

import json
import os
import random
import signal
import subprocess
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from log_lines import body_of
from orchestration_workers import (
    KINDS,
    PAID,
    TASK,
    build,
    child_argv,
    kind_of,
    owner_of,
    payer_of,
    payer_path,
    read_line,
    session_id,
    tool_runs,
)
from orchestration_world import expected_key

from strandslike.multiagent import Status
from strandslike.session import FileSessionManager, LogRef

TRIALS = int(os.environ.get("STRANDSLIKE_ORCHESTRATION_TRIALS", "32"))
SEED = int(os.environ.get("STRANDSLIKE_CRASH_SEED") or random.SystemRandom().randrange(2**32))
SESSIONS = 3
WORKERS = 3
SLOW_DISK = {"chunk": 4096, "pause": 0.001}
PADDING = 30_000  # characters of the research node's answer in slow-disk trials: states of about 100 KB


def log_file(storage: Path, number: int) -> Path:
    owner = owner_of(kind_of(number))
    return storage / f"session_{session_id(number)}" / "multi_agents" / f"multi_agent_{owner}" / "multi_agent.jsonl"


def read_log(storage: Path, number: int) -> Any:
    sid, owner = session_id(number), owner_of(kind_of(number))
    reader = FileSessionManager(sid, storage_dir=storage)
    try:
        return reader.read_log(LogRef(sid, "multi_agent", owner))
    finally:
        reader.close()


def kill_child(storage: Path, rng: random.Random, slow: bool) -> list[str]:
    """Run the approvals child and kill it at a random moment of a random session; return what it printed."""
    arguments: dict[str, Any] = {"storage_dir": str(storage), "log": str(storage / "runs.log")}
    arguments.update(sessions=SESSIONS, seed=SEED)
    if slow:
        arguments.update(slow_disk=SLOW_DISK, padding=PADDING)
    target = rng.randrange(SESSIONS)
    # A third of the kills land anywhere in a session (the task, its interrupt, writes), a third in its resume,
    # a third inside the approved tool (it works 5-30 ms) or in the writes right after it.
    marker = rng.choice([f"S {target} start", f"S {target} paused", f"T {target} in tool"])
    wait = rng.uniform(0, 0.03) if marker.startswith("T") else rng.uniform(0, 0.12 if slow else 0.06)
    with subprocess.Popen(
        child_argv("approvals_run", **arguments), stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0
    ) as child:
        assert child.stdout is not None
        assert child.stderr is not None
        try:
            lines = [read_line(child.stdout, timeout=60)]
            assert lines[0] == "START", lines[0] + child.stderr.read().decode()
            while not lines[-1].startswith(marker) and lines[-1] != "DONE":
                lines.append(read_line(child.stdout, timeout=60))
            time.sleep(wait)
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=30)
            lines += child.stdout.read().decode().splitlines()
            errors = child.stderr.read().decode()
            assert child.returncode in (0, -signal.SIGKILL), errors
            assert "Traceback" not in errors, errors
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
    return lines


def finished(orchestrator: Any) -> bool:
    state = orchestrator.state
    status = state.status if hasattr(state, "status") else state.completion_status
    return not orchestrator._interrupt_state.activated and status == Status.COMPLETED


def finish(storage: Path, number: int, printed: str | None, done: bool) -> str:
    """Restore session ``number`` and drive it to its end as a retrying client would; return how it went."""
    kind, sid, runs = kind_of(number), session_id(number), storage / "runs.log"
    stored = read_log(storage, number)
    torn = stored is not None and bool(stored.repairs)  # None: killed before the orchestrator's first record
    resumed_open = False
    for step in range(8):
        orchestrator: Any = build(kind, storage, number, runs, seed=SEED)
        state = orchestrator._interrupt_state
        if step == 0 and printed is not None and not done:
            # The interrupt handed to the caller is still waiting (answered or not), or the run it paused completed.
            assert finished(orchestrator) or printed in state.interrupts, f"{sid}: interrupt {printed} was lost"
        if state.activated:
            resumed_open = resumed_open or bool(orchestrator.pending_interrupts)
            answers = [{"interruptResponse": {"interruptId": i, "response": "y"}} for i in state.interrupts]
            orchestrator(answers)  # repeats any answer already given (a replay) and answers the rest
        elif finished(orchestrator):
            break
        else:
            orchestrator(TASK)  # the run never reached its interrupt: the task again
        orchestrator.session_manager.close()
    else:
        raise AssertionError(f"session {sid} did not finish")
    payer = payer_of(orchestrator)
    audit = orchestrator.interrupt_audit
    orchestrator.session_manager.close()

    # The log is clean now, every line checksummed.
    after = read_log(storage, number)
    assert after.repairs == [], after.repairs
    assert all(body_of(line) for line in log_file(storage, number).read_text().splitlines())
    assert payer.messages[-1] == PAID
    results = [b["toolResult"] for m in payer.messages for b in m["content"] if "toolResult" in b]
    assert [result["toolUseId"] for result in results] == [f"pay_{number}"]
    ran = [run for run in tool_runs(runs) if run["session"] == sid]
    key = expected_key(f"{sid}/{owner_of(kind)}/{payer_path(kind)}", f"pay_{number}")
    assert {run["key"] for run in ran} <= {key}, f"{sid}: one tool use with several idempotency keys {ran}"
    if printed is not None:
        raised = [entry["interrupt_id"] for entry in audit if entry["event"] == "raised"]
        assert printed in raised, f"{sid}: interrupt {printed} is not in the audit trail"
    if "outcome of this call" in json.dumps(results[0]):
        assert len(ran) <= 1, f"{sid}: reported unknown but ran {len(ran)} times"
        [entry] = [entry for entry in audit if entry["event"] == "tool_outcome_unknown"]
        assert (entry["node_path"], entry["tool_use_id"], entry["idempotency_key"]) == (
            payer_path(kind),
            f"pay_{number}",
            key,
        )
        outcome = "unknown outcome reported"
    else:
        assert results[0]["status"] == "success", results[0]
        assert len(ran) == 1, f"{sid}: ran {len(ran)} times"
        outcome = "ran once"
    return f"{kind}: {outcome}{', torn tail' if torn else ''}{', resumed an open interrupt' if resumed_open else ''}"


def trial(root: Path, number: int) -> Counter[str]:
    storage = root / f"trial_{number}"
    rng = random.Random(SEED * 7919 + number)
    slow = number % 4 == 3
    lines: list[str] = []
    try:
        lines = kill_child(storage, rng, slow)
        printed = {
            int(line.split()[1]): line.split()[3] for line in lines if line.startswith("S ") and "paused" in line
        }
        done = {int(line.split()[1]) for line in lines if line.startswith("S ") and line.endswith("done")}
        outcomes: Counter[str] = Counter()
        for session in range(SESSIONS):
            if not (storage / f"session_{session_id(session)}").exists():
                outcomes["never started"] += 1
                continue
            outcomes[finish(storage, session, printed.get(session), session in done)] += 1
        runs = Counter((run["session"], run["id"]) for run in tool_runs(storage / "runs.log"))
        assert all(count == 1 for count in runs.values()), f"double runs: {runs}"
        return outcomes
    except Exception as exc:
        raise AssertionError(
            f"orchestration crash trial {number} failed (STRANDSLIKE_CRASH_SEED={SEED}, slow disk {slow}, "
            f"output {lines}): {type(exc).__name__}: {exc}"
        ) from exc


@pytest.mark.timeout(400)
def test_sigkill_inside_approved_node_tools_never_runs_one_twice_nor_loses_an_interrupt(tmp_path: Path) -> None:
    print(f"STRANDSLIKE_CRASH_SEED={SEED}: {TRIALS} kills, {SESSIONS} orchestrated sessions each")
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        results = list(pool.map(lambda n: trial(tmp_path, n), range(TRIALS)))
    total: Counter[str] = Counter()
    for result in results:
        total.update(result)
    print(f"sessions after the kills: {dict(sorted(total.items()))}")
    assert sum(total.values()) == TRIALS * SESSIONS
    assert any("unknown" in outcome for outcome in total), f"no kill landed inside an approved tool: {dict(total)}"


# -- one kill inside the approved tool, then the retried resume in a fresh process --------------------------------


def resume_in_child(
    storage: Path | str, runs: Path, kind: str, interrupt_id: str, *, idempotent: bool, hang: bool
) -> tuple[str, dict[str, Any]]:
    argv = child_argv(
        "approval_resume",
        kind=kind,
        storage_dir=str(storage),
        log=str(runs),
        interrupt_id=interrupt_id,
        idempotent=idempotent,
        hang=hang,
    )
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0) as child:
        assert child.stdout is not None
        assert child.stderr is not None
        try:
            line = read_line(child.stdout, timeout=60)
            if hang:
                assert line.startswith("IN TOOL "), line
                child.send_signal(signal.SIGKILL)  # the process dies inside the approved tool
                child.wait(timeout=30)
                return line.removeprefix("IN TOOL "), {}
            child.wait(timeout=30)
            assert child.returncode == 0, child.stderr.read().decode()
            return "", json.loads(line)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("idempotent", [False, True], ids=["plain-tool", "idempotent-tool"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_kill_inside_an_approved_node_tool_then_a_retried_resume_in_a_fresh_process(
    tmp_path: Path, kind: str, idempotent: bool
) -> None:
    kill_then_retry(tmp_path, tmp_path, kind, idempotent)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("kind", KINDS)
def test_on_postgresql_a_kill_inside_an_approved_node_tool_then_a_retried_resume(
    tmp_path: Path, postgres_server: str, kind: str
) -> None:
    # The node journals live in the session manager and the record replayer, not in a store: PostgreSQL gets them.
    from pg_cluster import new_database

    kill_then_retry(new_database(postgres_server, "orchestrations"), tmp_path, kind, idempotent=False)


def kill_then_retry(storage: Path | str, tmp_path: Path, kind: str, idempotent: bool) -> None:
    """Pause session 0 on its approval, kill the resume inside the approved tool, retry it, then repeat it."""
    runs = tmp_path / "runs.log"
    orchestrator: Any = build(kind, storage, 0, runs)
    [approval] = orchestrator(TASK).interrupts
    orchestrator.session_manager.close()

    key, _ = resume_in_child(storage, runs, kind, approval.id, idempotent=idempotent, hang=True)
    assert key == expected_key(f"{session_id(0)}/{owner_of(kind)}/{payer_path(kind)}", "pay_0")
    assert [(run["id"], run["key"]) for run in tool_runs(runs)] == [("pay_0", key)]

    _, retried = resume_in_child(storage, runs, kind, approval.id, idempotent=idempotent, hang=False)
    assert (retried["status"], retried["replayed"]) == ("completed", False)
    [result] = retried["tool_results"]
    events = [(e["event"], e.get("node_id")) for e in retried["audit"] if e["interrupt_id"] == approval.id]
    node = "billing" if kind == "nested" else "payer"
    if idempotent:
        assert [(run["id"], run["key"]) for run in tool_runs(runs)] == [("pay_0", key)] * 2  # once more, same key
        assert result["status"] == "success"
        assert events == [("raised", node), ("answered", node), ("tool_rerun", node), ("outcome", node)]
    else:
        assert len(tool_runs(runs)) == 1  # not run again
        assert result["status"] == "error"
        assert "outcome of this call of tool 'pay' is unknown" in result["content"][0]["text"]
        assert key in result["content"][0]["text"]
        assert retried["last_request"][-1]["content"][0]["toolResult"] == result  # the node's model got it
        assert events == [("raised", node), ("answered", node), ("tool_outcome_unknown", node), ("outcome", node)]
        [unknown] = [e for e in retried["audit"] if e["event"] == "tool_outcome_unknown"]
        assert (unknown["node_path"], unknown["tool"], unknown["tool_use_id"], unknown["idempotency_key"]) == (
            payer_path(kind),
            "pay",
            "pay_0",
            key,
        )

    # A third request repeats the resume once more: the run is over, it replays and runs nothing.
    _, third = resume_in_child(storage, runs, kind, approval.id, idempotent=idempotent, hang=False)
    assert (third["status"], third["replayed"]) == ("completed", True)
    assert len(tool_runs(runs)) == (2 if idempotent else 1)
