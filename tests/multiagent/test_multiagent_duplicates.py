"""Duplicate delivery of orchestration resumes: each is delivered twice, to competing worker processes (issue 9).

Interrupted Graph, Swarm and nested-graph sessions wait on the approval of a node's tool. Their resumes go into a
queue held by this process, each one twice (at-least-once delivery: a retried webhook, a double-clicked button),
and 4 worker processes take them as they become free. A worker that gets `SessionConflictError` reports it and the
message is delivered again later; a message in the hands of a killed worker is delivered again too. Checked: 0
double runs of an approved tool, 0 lost interrupts, 0 errors but conflicts (no typed refusal, nothing untyped),
every session completed, and every second delivery of a finished run answered with a replayed result.

``STRANDSLIKE_DUP_SEED`` replays a run (the seed is printed).
"""

import json
import os
import random
import select
import signal
import time
from collections import Counter, deque
from pathlib import Path
from typing import Any

import pytest
from orchestration_workers import (
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
from process_support import Worker, delivery_order

SESSIONS = int(os.environ.get("STRANDSLIKE_DUP_ORCHESTRATIONS", "120"))
WORKERS = 4
DELIVERIES = 2
SEED = int(os.environ.get("STRANDSLIKE_DUP_SEED") or random.SystemRandom().randrange(2**32))
DEADLINE = 300.0


def prepare(storage: Path, runs: Path) -> dict[int, str]:
    """Leave SESSIONS orchestrations waiting on an approval; return each session's interrupt id."""
    interrupts = {}
    for number in range(SESSIONS):
        orchestrator: Any = build(kind_of(number), storage, number, runs, seed=SEED)
        result = orchestrator(TASK)
        orchestrator.session_manager.close()
        [interrupt] = result.interrupts
        interrupts[number] = interrupt.id
    return interrupts


def start_worker(storage: Path, runs: Path) -> Worker:
    """Start one worker process taking resumes of the sessions in ``storage``."""
    return Worker(child_argv("resume_worker", storage_dir=str(storage), log=str(runs), seed=SEED))


def deliver(storage: Path, interrupts: dict[int, str], kill_one: bool) -> dict[str, Any]:
    runs = storage / "runs.log"
    rng = random.Random(SEED + kill_one)
    queue: deque[dict[str, Any]] = deque(delivery_order(interrupts, rng, spread=30))
    workers = [start_worker(storage, runs) for _ in range(WORKERS)]
    reports: list[dict[str, Any]] = []
    doomed, doom_after = (workers[0], rng.randrange(10, 40)) if kill_one else (None, -1)
    killed: dict[str, Any] = {}
    started = time.monotonic()
    errors: list[str] = []
    try:
        for worker in workers:
            assert read_line(worker.stdout, timeout=60) == "READY"
            worker.send(queue.popleft())
        while any(worker.holding is not None for worker in workers):
            assert time.monotonic() - started < DEADLINE, "the workers did not finish in time"
            ready, _, _ = select.select([w.stdout for w in workers if w.holding is not None], [], [], 10)
            for worker in [w for w in workers if w.stdout in ready]:
                report = json.loads(read_line(worker.stdout, timeout=30))
                reports.append(report)
                worker.done += 1
                if report["outcome"] == "conflict":
                    queue.append(worker.holding)  # type: ignore[arg-type]  # delivered again later
                worker.holding = None
                if worker is doomed and worker.done == doom_after and queue:
                    worker.send(queue.popleft())
                    time.sleep(rng.uniform(0, 0.03))  # inside the restore, a node, the approved tool, or a write
                    worker.process.send_signal(signal.SIGKILL)
                    _, stderr = worker.process.communicate(timeout=30)
                    assert "Traceback" not in stderr.decode(), stderr.decode()
                    worker.alive = False
                    killed = {"message": worker.holding, "after": doom_after}
                    queue.append(worker.holding)  # type: ignore[arg-type]  # its message becomes visible again
                    worker.holding = None
                    continue
                if queue and worker.alive:
                    worker.send(queue.popleft())
    finally:
        for worker in workers:
            if worker.process.poll() is None:
                errors.append(worker.stop())
        for worker in workers:
            if worker.process.poll() is None:
                worker.process.kill()
                worker.process.wait()
    return {"reports": reports, "killed": killed, "errors": errors, "seconds": time.monotonic() - started}


@pytest.mark.timeout(500)
@pytest.mark.parametrize("kill_one", [False, True], ids=["all-workers-live", "one-worker-killed"])
def test_every_orchestration_resume_delivered_twice_runs_each_approved_tool_at_most_once(
    tmp_path: Path, kill_one: bool
) -> None:
    print(f"STRANDSLIKE_DUP_SEED={SEED}: {SESSIONS} orchestrations, each resume delivered {DELIVERIES} times")
    runs = tmp_path / "runs.log"
    interrupts = prepare(tmp_path, runs)
    outcome = deliver(tmp_path, interrupts, kill_one)
    reports = outcome["reports"]
    kinds = Counter(report["outcome"] for report in reports)
    replays = sum(1 for report in reports if report.get("replayed"))
    print(
        f"{len(interrupts)} orchestrations, {len(reports)} deliveries in "
        f"{outcome['seconds']:.1f}s: {dict(kinds)}, {replays} replayed; killed {outcome['killed'] or 'none'}"
    )
    refused = [report for report in reports if report["outcome"] in ("untyped", "typed")]
    assert refused == [], refused
    assert all("Traceback" not in errors for errors in outcome["errors"]), outcome["errors"]
    assert all(report["status"] == "completed" for report in reports if report["outcome"] == "ok"), reports
    # Every delivery ended (a killed worker's message was delivered again): one finished the run, the other
    # replayed it (both replay when the killed worker finished the run before it died).
    assert kinds["ok"] == len(interrupts) * DELIVERIES
    assert replays >= len(interrupts)

    counts = Counter((run["session"], run["id"]) for run in tool_runs(runs))
    assert [key for key, count in counts.items() if count > 1] == [], "an approved tool ran twice"
    unknown = 0
    for number, interrupt_id in interrupts.items():
        kind, sid = kind_of(number), session_id(number)
        orchestrator: Any = build(kind, tmp_path, number, runs, seed=SEED)
        assert not orchestrator._interrupt_state.activated, f"{sid} is still interrupted"
        payer = payer_of(orchestrator)
        assert payer.messages[-1] == PAID, sid
        [result] = [b["toolResult"] for m in payer.messages for b in m["content"] if "toolResult" in b]
        events = [(entry["event"], entry["interrupt_id"]) for entry in orchestrator.interrupt_audit]
        assert ("raised", interrupt_id) in events, f"{sid}: {events}"
        assert ("answered", interrupt_id) in events, f"{sid}: {events}"
        key = expected_key(f"{sid}/{owner_of(kind)}/{payer_path(kind)}", f"pay_{number}")
        ran = [run for run in tool_runs(runs) if run["session"] == sid]
        assert {run["key"] for run in ran} <= {key}
        if result["status"] == "success":
            assert len(ran) == 1
        else:  # only possible for the session whose worker was killed inside the tool
            assert "outcome of this call" in result["content"][0]["text"]
            assert len(ran) <= 1
            unknown += 1
        orchestrator.session_manager.close()
    assert unknown <= (1 if kill_one else 0)
