"""Two ``serve`` processes on one store, the same resume racing through both over real HTTP.

The store is a storage directory, or a PostgreSQL database (``serve --session-dsn``: issue 13), as replicas on
several machines share one.

Each round pauses a fresh thread on an approval, then sends two conflicting resumes at once, "y" to one server and
"n" to the other. Whatever the timing: the approved tool never runs twice, never are both answers applied, exactly
one resume proceeds, the other is refused with a typed code, and the thread goes on afterwards.

- Gated rounds hold the run that proceeds (inside the approval hook, after its answer was applied) until the other
  request has its answer, so the two overlap for certain: the refusal must be ``SESSION_CONFLICT``.
- Free rounds let the requests race, the second sent 0-20 ms after the first (seeded: ``STRANDSLIKE_RACE_SEED``),
  so the restore of one meets every stage of the other; the refusal is ``SESSION_CONFLICT`` or, if the other
  resume had already completed, ``ALREADY_ANSWERED``. Before the restore read one snapshot
  (``test_session_restore_snapshot.py``), about 1 race in 100 applied both answers.

The factories and their effect log are in ``agui_workers.py``.
"""

import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from agui_support import AguiThread, Run

REPO = Path(__file__).parent.parent.parent
HERE = Path(__file__).parent
SERVE = "import sys; from strandslike.cli.serve import serve; sys.exit(serve(sys.argv[1:]))"


class Gate:
    """A loopback server the approval hooks wait at; `open` lets every waiting and later hook through.

    It also opens by itself when two hooks wait at once: both resumes proceeded, which the test then reports,
    instead of hanging until the timeout.
    """

    def __init__(self) -> None:
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self._lock = threading.Lock()
        self._waiting: list[socket.socket] = []
        self._open = True
        self.arrivals = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            with self._lock:
                self.arrivals += 1
                self._waiting.append(conn)
                if self._open or len(self._waiting) >= 2:
                    self._release()

    def _release(self) -> None:
        for conn in self._waiting:
            try:
                conn.sendall(b"x")
            finally:
                conn.close()
        self._waiting = []

    def close_for_round(self) -> None:
        with self._lock:
            self._open = False
            self.arrivals = 0

    def open(self) -> None:
        with self._lock:
            self._open = True
            self._release()

    def shutdown(self) -> None:
        self.open()
        self._sock.close()


def start_server(port: int, storage: Path | str, factory: str, env_extra: dict[str, str]) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(HERE)]), **env_extra}
    env.pop("STRANDSLIKE_SERVE_TOKEN", None)
    env.pop("STRANDSLIKE_SESSION_DSN", None)
    where = ["--session-dsn", storage] if isinstance(storage, str) else ["--storage-dir", str(storage)]
    args = ["--agent", factory, *where, "--port", str(port), "--log-level", "warning"]
    return subprocess.Popen(
        [sys.executable, "-c", SERVE, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_up(port: int, process: subprocess.Popen[str]) -> None:
    import time

    import httpx

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server exited: {process.communicate()}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/capabilities", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.05)
    raise AssertionError("the server did not start")


@pytest.fixture
def two_servers(request, tmp_path) -> Iterator[tuple[list[str], Path, Gate]]:
    factory, store = request.param if isinstance(request.param, tuple) else (request.param, "file")
    effects = tmp_path / "effects.jsonl"
    storage: Path | str = tmp_path / "sessions"
    if store == "postgres":
        from pg_cluster import new_database

        storage = new_database(request.getfixturevalue("postgres_server"), "servers")
    gate = Gate()
    ports = [free_port(), free_port()]
    env = {"AGUI_EFFECTS": str(effects), "AGUI_GATE": str(gate.port)}
    processes = [start_server(port, storage, factory, env) for port in ports]
    try:
        for port, process in zip(ports, processes, strict=True):
            wait_until_up(port, process)
        yield [f"http://127.0.0.1:{port}" for port in ports], effects, gate
    finally:
        gate.shutdown()
        for process in processes:
            process.send_signal(signal.SIGINT)
        for process in processes:
            try:
                process.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.communicate()


def effects_of(effects: Path, tool_use_id: str) -> Counter[str]:
    counts: Counter[str] = Counter()
    if effects.exists():
        for line in effects.read_text().splitlines():
            entry = json.loads(line)
            if entry["tool_use_id"] == tool_use_id:
                counts[entry["event"] if entry["event"] == "ran" else f"decided:{entry['answer']}"] += 1
    return counts


async def race(
    urls: list[str], thread_id: str, round_number: int, gate: Gate, *, gated: bool, delay: float = 0.0
) -> dict[str, Run]:
    """Pause a thread, then send "y" to one server and "n" to the other (``delay`` later); return both runs."""
    first = AguiThread(urls[round_number % 2], thread_id)
    [interrupt] = (await first.send("Email a@b.com")).interrupts
    if gated:
        gate.close_for_round()
    clients = {"y": AguiThread(urls[0], thread_id), "n": AguiThread(urls[1], thread_id)}
    for client in clients.values():
        client.messages = list(first.messages)
    runs: dict[str, Run] = {}

    async def resume(answer: str) -> None:
        if answer == "n" and delay:
            await anyio.sleep(delay)  # spreads the second request over the first one's restore, run and write
        entry = {"interruptId": interrupt["id"], "status": "resolved", "payload": answer}
        runs[answer] = await clients[answer].resume(entry)
        gate.open()  # one request has its answer: the other (held at the gate, if it proceeded) may go on

    async with anyio.create_task_group() as group:
        group.start_soon(resume, "y")
        group.start_soon(resume, "n")
    return runs


def check_round(runs: dict[str, Run], effects: Path, tool_use_id: str, refusals: set[str]) -> str:
    """Check one race; return the answer that won."""
    counts = effects_of(effects, tool_use_id)
    decided = {key: value for key, value in counts.items() if key.startswith("decided:")}
    assert sum(decided.values()) == 1, f"{tool_use_id}: answers applied {dict(decided)} (both resumes proceeded)"
    assert counts["ran"] <= 1, f"{tool_use_id}: the approved tool ran {counts['ran']} times"
    winners = [answer for answer, run in runs.items() if run.error is None]
    assert len(winners) == 1, f"{tool_use_id}: {len(winners)} resumes proceeded: {[r.types for r in runs.values()]}"
    [winner] = winners
    assert decided == {f"decided:{winner}": 1}
    assert counts["ran"] == (1 if winner == "y" else 0)
    assert runs[winner].outcome == {"type": "success"}
    loser = runs["n" if winner == "y" else "y"]
    assert loser.error is not None
    assert loser.error["code"] in refusals, loser.error
    return winner


async def check_the_thread_goes_on(urls: list[str], thread_id: str) -> None:
    """Nothing waits after the race, one answer is on record, and the thread takes new input on either server."""
    thread = AguiThread(urls[1], thread_id)
    report = await thread.run()
    assert report.outcome == {"type": "success"}
    [second] = (await thread.send("once more")).interrupts
    thread.url = urls[0]
    done = await thread.resume({"interruptId": second["id"], "status": "resolved", "payload": "y"})
    assert done.outcome == {"type": "success"}
    # One final answer per round: a resume applied twice would have left two.
    assert [m["content"] for m in done.messages if m["role"] == "assistant" and m.get("content")] == ["Done.", "Done."]


GATED_ROUNDS = 12
FREE_ROUNDS = 60
SEED = int(os.environ.get("STRANDSLIKE_RACE_SEED", "9"))  # the delays of the free rounds; set it to replay a run


async def run_rounds(urls: list[str], effects: Path, gate: Gate, prefix: str) -> Counter[str]:
    codes: Counter[str] = Counter()
    for number in range(GATED_ROUNDS):
        thread_id = f"{prefix}-gated-{number}"
        runs = await race(urls, thread_id, number, gate, gated=True)
        check_round(runs, effects, "tc-0", {"SESSION_CONFLICT"})
        await check_the_thread_goes_on(urls, thread_id)
        _clear(effects)
    jitter = random.Random(SEED)
    for number in range(FREE_ROUNDS):
        delay = jitter.uniform(0, 0.02)
        runs = await race(urls, f"{prefix}-free-{number}", number, gate, gated=False, delay=delay)
        winner = check_round(runs, effects, "tc-0", {"SESSION_CONFLICT", "ALREADY_ANSWERED"})
        codes[runs["n" if winner == "y" else "y"].error["code"]] += 1  # type: ignore[index]
        _clear(effects)
    return codes


def _clear(effects: Path) -> None:
    effects.unlink(missing_ok=True)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("two_servers", ["agui_workers:build"], indirect=True)
async def test_two_servers_never_run_an_approved_tool_twice_for_agents(two_servers):
    urls, effects, gate = two_servers
    codes = await run_rounds(urls, effects, gate, "agent")
    assert sum(codes.values()) == FREE_ROUNDS


@pytest.mark.timeout(300)
@pytest.mark.parametrize("two_servers", ["agui_workers:build_graph", "agui_workers:build_swarm"], indirect=True)
async def test_two_servers_never_run_an_approved_tool_twice_for_orchestrators(two_servers):
    urls, effects, gate = two_servers
    await run_rounds(urls, effects, gate, "orchestrator")


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "two_servers",
    [("agui_workers:build", "postgres"), ("agui_workers:build_graph", "postgres")],
    indirect=True,
    ids=["agent", "graph"],
)
async def test_two_servers_on_one_postgres_database_never_run_an_approved_tool_twice(two_servers):
    urls, effects, gate = two_servers
    await run_rounds(urls, effects, gate, "postgres")
