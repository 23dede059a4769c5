"""PostgreSQL session store against the file store, in one run (issue 13).

    .venv/bin/python bench/bench_postgres.py [--quick] [--json PATH] [--strict]

Starts its own tuned throwaway PostgreSQL cluster (`TUNING`, on top of ``tests/pg_cluster.py``'s: durability
untouched, ``fsync`` and ``synchronous_commit`` on) in a temporary directory, and a temporary storage directory
for the file store (``fsync=True``, the default), then measures, for both stores:

1. append: the cost of persisting one message through the manager (``append_message`` outside an invocation:
   a short claim, one append, the release), median of 300, with ``durable=False`` as every message append is;
   and one durable append under a held claim (a tool intent's write), median of 300.
2. restore: a brand-new ``Agent`` on a 2,000-message session (one read of the log, the replay); median of 15.
   Target: PostgreSQL at most 3 times the file store.
3. resumes per second with 1, 2 and 4 worker processes (3 rounds of each, interleaved, alternating the order; the
   median rate of the rounds): N sessions wait on an approval; workers (fresh
   interpreters, warmed up before the clock) take session ids from a shared queue and each builds a fresh agent
   (restore), resumes it with "y" (claim, the tool's durable intent, the tool, the model's answer, the final
   write, release), as a server replica does per request. Throughput = resumes / wall time; latency p50 and p99
   per resume. Target: PostgreSQL with 2 workers at least 1.6 times its 1-worker rate.

Results are checked (every session completed, the tool ran once per session). Load from other processes shifts
timings: the load average is printed.
"""

import argparse
import json
import multiprocessing
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from strandslike import Agent, tool  # noqa: E402
from strandslike.agent.conversation_manager import NullConversationManager  # noqa: E402
from strandslike.hooks import BeforeToolCallEvent  # noqa: E402
from strandslike.models import ScriptedModel, text, tool_call  # noqa: E402
from strandslike.session import FileSessionManager, LogRef  # noqa: E402

TUNING = {
    "shared_buffers": "256MB",
    "wal_buffers": "16MB",
    "max_wal_size": "4GB",
    "checkpoint_timeout": "30min",
    "wal_level": "minimal",
    "max_wal_senders": "0",
    "synchronous_commit": "on",
    "fsync": "on",
    "autovacuum_naptime": "10s",
}
RESTORE_MESSAGES = 2000


def manager(store: str, where: str, session_id: str) -> Any:
    if store == "postgres":
        from strandslike.session.postgres import PostgresSessionManager

        return PostgresSessionManager(session_id, dsn=where)
    return FileSessionManager(session_id, storage_dir=where)


def approval_agent(store: str, where: str, session_id: str, turns: list[Any], runs: list[str]) -> Agent:
    @tool
    def delete_files(paths: list[str]) -> bool:
        """Delete files.

        Args:
            paths: The files.
        """
        runs.append(session_id)
        return True

    def approve(event: BeforeToolCallEvent) -> None:
        if event.interrupt("approval", reason={"paths": event.tool_use["input"]["paths"]}) != "y":
            event.cancel_tool = "denied"

    return Agent(
        model=ScriptedModel(turns),
        tools=[delete_files],
        hooks=[approve],
        session_manager=manager(store, where, session_id),
        callback_handler=None,
    )


# -- 1. append ----------------------------------------------------------------------------------------------------


def bench_append(store: str, where: str, samples: int) -> dict[str, float]:
    agent = Agent(
        model=ScriptedModel([]),
        session_manager=manager(store, where, f"append-{store}"),
        conversation_manager=NullConversationManager(),
        callback_handler=None,
    )
    session_manager: Any = agent.session_manager
    message = {"role": "user", "content": [{"text": "a message of about a hundred bytes " * 3}]}
    times = []
    for _ in range(samples):
        started = time.perf_counter()
        session_manager.append_message(message, agent)
        times.append(time.perf_counter() - started)
    repository = session_manager.session_repository
    ref = LogRef(session_manager.session_id, "agent", "default")
    stored = repository.read_log(ref)
    claim = repository.claim_log(ref, stored.version)
    durable = []
    try:
        for number in range(samples):
            started = time.perf_counter()
            repository.append_log(claim, [{"k": "ti", "u": f"t{number}", "n": "x", "key": "k"}], durable=True)
            durable.append(time.perf_counter() - started)
    finally:
        repository.release_log(claim)
    session_manager.close()
    return {"append_ms": statistics.median(times) * 1000, "durable_append_ms": statistics.median(durable) * 1000}


# -- 2. restore ---------------------------------------------------------------------------------------------------


def bench_restore(store: str, where: str, samples: int) -> dict[str, float]:
    session_id = f"restore-{store}"
    turns = [text(f"answer {n}: " + "some words of an answer " * 8) for n in range(RESTORE_MESSAGES // 2)]
    writer = Agent(
        model=ScriptedModel(turns),
        session_manager=manager(store, where, session_id),
        conversation_manager=NullConversationManager(),
        callback_handler=None,
    )
    for n in range(RESTORE_MESSAGES // 2):
        writer(f"question {n}")
    writer.session_manager.close()  # type: ignore[union-attr]
    times = []
    for _ in range(samples):
        started = time.perf_counter()
        reader = Agent(
            model=ScriptedModel([]),
            session_manager=manager(store, where, session_id),
            conversation_manager=NullConversationManager(),
            callback_handler=None,
        )
        times.append(time.perf_counter() - started)
        assert len(reader.messages) == RESTORE_MESSAGES
        reader.session_manager.close()  # type: ignore[union-attr]
    return {"restore_ms": statistics.median(times) * 1000}


# -- 3. resumes per second ----------------------------------------------------------------------------------------


def prepare_resumes(store: str, where: str, count: int, prefix: str) -> list[tuple[str, str]]:
    pending = []
    for number in range(count):
        session_id = f"{prefix}-{number}"
        agent = approval_agent(store, where, session_id, [tool_call("delete_files", paths=["old.txt"])], [])
        result = agent("clean up")
        agent.session_manager.close()  # type: ignore[union-attr]
        pending.append((session_id, result.interrupts[0].id))
    return pending


def _worker(store: str, where: str, tasks: Any, ready: Any, start: Any, results: Any) -> None:
    runs: list[str] = []
    warm = approval_agent(store, where, "warm-up", [], runs)  # imports, the pool, the schema check: off the clock
    warm.session_manager.close()  # type: ignore[union-attr]
    ready.put(os.getpid())
    start.wait()
    latencies = []
    began = time.perf_counter()
    while True:
        task = tasks.get()
        if task is None:
            break
        session_id, interrupt_id = task
        started = time.perf_counter()
        agent = approval_agent(store, where, session_id, [text("Deleted.")], runs)
        result = agent([{"interruptResponse": {"interruptId": interrupt_id, "response": "y"}}])
        agent.session_manager.close()  # type: ignore[union-attr]
        latencies.append(time.perf_counter() - started)
        assert result.stop_reason == "end_turn"
    results.put({"latencies": latencies, "began": began, "ended": time.perf_counter(), "runs": runs})


def run_resumes(store: str, where: str, workers: int, pending: list[tuple[str, str]]) -> dict[str, Any]:
    """Resume every pending session with ``workers`` worker processes; return the rate and the latencies."""
    context = multiprocessing.get_context("spawn")
    tasks, ready, results = context.Queue(), context.Queue(), context.Queue()
    start = context.Event()
    for item in pending:
        tasks.put(item)
    for _ in range(workers):
        tasks.put(None)
    processes = [
        context.Process(target=_worker, args=(store, where, tasks, ready, start, results)) for _ in range(workers)
    ]
    for process in processes:
        process.start()
    for _ in range(workers):
        ready.get(timeout=120)
    start.set()
    reports = [results.get(timeout=600) for _ in range(workers)]
    for process in processes:
        process.join(timeout=60)
    latencies = [latency for report in reports for latency in report["latencies"]]
    runs = [run for report in reports for run in report["runs"]]
    assert sorted(runs) == sorted(session_id for session_id, _ in pending), "a tool ran twice or never"
    wall = max(r["ended"] for r in reports) - min(r["began"] for r in reports)
    return {"per_second": len(latencies) / wall, "latencies": latencies}


def bench_resumes(store: str, where: str, count: int, rounds: int) -> list[dict[str, Any]]:
    """Resumes per second with 1, 2 and 4 workers: ``rounds`` runs of each, interleaved, the median rate each."""
    counts = (1, 2, 4)
    pending = {
        (round_number, workers): prepare_resumes(store, where, count, f"resume-{round_number}-{workers}")
        for round_number in range(rounds)
        for workers in counts
    }
    rates: dict[int, list[float]] = {workers: [] for workers in counts}
    latencies: dict[int, list[float]] = {workers: [] for workers in counts}
    for round_number in range(rounds):
        order = counts if round_number % 2 == 0 else tuple(reversed(counts))
        for workers in order:
            done = run_resumes(store, where, workers, pending[(round_number, workers)])
            rates[workers].append(done["per_second"])
            latencies[workers].extend(done["latencies"])
    figures = []
    for workers in counts:
        ordered = sorted(latencies[workers])
        figures.append(
            {
                "workers": workers,
                "resumes": len(ordered),
                "rates": rates[workers],
                "per_second": statistics.median(rates[workers]),
                "p50_ms": ordered[len(ordered) // 2] * 1000,
                "p99_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000,
            }
        )
    return figures


# -- the run --------------------------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer samples (about a minute)")
    parser.add_argument("--json", default=str(HERE / "results" / "postgres.json"), help="where to save the figures")
    parser.add_argument("--strict", action="store_true", help="exit 1 if a target is missed")
    args = parser.parse_args()
    appends, restores, resumes, rounds = (100, 7, 150, 1) if args.quick else (300, 15, 250, 3)

    from pg_cluster import PostgresCluster, new_database

    cluster = PostgresCluster(TUNING)
    storage = tempfile.mkdtemp(prefix="strandslike-bench-files-")
    figures: dict[str, Any] = {"load_before": os.getloadavg(), "tuning": TUNING}
    try:
        cluster.start()
        dsn = new_database(cluster.dsn, "bench")
        stores = {"file": storage, "postgres": dsn}
        for name, where in stores.items():
            figures[name] = {**bench_append(name, where, appends), **bench_restore(name, where, restores)}
            figures[name]["resumes"] = bench_resumes(name, where, resumes, rounds)
            print(f"{name}: done", flush=True)
    finally:
        from strandslike.session.postgres import close_all

        close_all()
        cluster.stop()
        shutil.rmtree(storage, ignore_errors=True)
    figures["load_after"] = os.getloadavg()

    pg, files = figures["postgres"], figures["file"]
    restore_ratio = pg["restore_ms"] / files["restore_ms"]
    rates = {item["workers"]: item["per_second"] for item in pg["resumes"]}
    scaling = rates[2] / rates[1]
    print(f"\nload average before {figures['load_before'][0]:.2f}, after {figures['load_after'][0]:.2f}")
    print(f"{'':34}{'file':>12}{'postgres':>12}")
    for key, label in (
        ("append_ms", "append one message (ms)"),
        ("durable_append_ms", "durable append under a claim (ms)"),
        ("restore_ms", f"restore {RESTORE_MESSAGES} messages (ms)"),
    ):
        print(f"{label:34}{files[key]:12.2f}{pg[key]:12.2f}")
    for index, workers in enumerate((1, 2, 4)):
        f_item, p_item = files["resumes"][index], pg["resumes"][index]
        print(
            f"resumes/s, {workers} worker(s){'':13}{f_item['per_second']:12.1f}{p_item['per_second']:12.1f}"
            f"   p50 {f_item['p50_ms']:.1f} / {p_item['p50_ms']:.1f} ms, p99 {f_item['p99_ms']:.1f} / "
            f"{p_item['p99_ms']:.1f} ms"
        )
    checks = {
        f"restore: postgres / file = {restore_ratio:.2f} (target <= 3)": restore_ratio <= 3,
        f"resumes: postgres 2 workers / 1 worker = {scaling:.2f} (target >= 1.6)": scaling >= 1.6,
    }
    for label, passed in checks.items():
        print(f"{'PASS' if passed else 'FAIL'}  {label}")
    figures["checks"] = {label: passed for label, passed in checks.items()}
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(figures, indent=2))
    return 1 if args.strict and not all(checks.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
