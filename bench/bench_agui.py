"""AG-UI round trip over HTTP, 50 threads at once: strandslike vs the ag-ui-strands adapter on strands-agents 1.62.

    bench/.venv/bin/python bench/bench_agui.py [--quick] [--json PATH] [--strict]

One round trip, on a new thread: POST a RunAgentInput with a user message; the model calls ``send_email``, whose
approval pauses the run (``RUN_FINISHED`` with an ``interrupt`` outcome); POST the resume (``{"approved": true}``,
with the messages of the first run's ``MESSAGES_SNAPSHOT``, as a client does); the tool runs, the model answers,
``RUN_FINISHED`` ``success``. Every response is read to its end and checked (outcome, one interrupt bound to the
tool call, the tool's result) before its time counts. The servers are in `agui_servers.py`.

Load: 50 concurrent clients, each on its own keep-alive HTTP/1.1 connection (a minimal client: with httpx the
client process used more CPU than either server and set the pace), each doing ``per_client`` round trips one after
another on fresh threads. Latency = one round trip (both requests), median and p90 over every
round trip; throughput = round trips completed / wall time of the wave. Each server runs alone in a fresh process
(uvicorn, one worker) on its own fresh storage directory, warmed up first; its CPU time during the wave is read from
/proc. A full run makes 3 rounds, alternating the order of the servers, and pools the samples.
"""

import argparse
import asyncio
import contextlib
import datetime
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

HERE = Path(__file__).resolve().parent
SERVERS = ("strandslike", "adapter", "adapter-files")
CONCURRENCY = 50
FULL = {"rounds": 3, "per_client": 6, "warmup": 40}
QUICK = {"rounds": 1, "per_client": 3, "warmup": 20}
TARGET_LATENCY = 1 / 3  # strandslike latency / the adapter's, at most
TARGET_THROUGHPUT = 3.0  # strandslike throughput / the adapter's, at least

BASE = {"state": {}, "tools": [], "context": [], "forwardedProps": {}}


def _progress(message: str) -> None:
    print(f"  .. {message}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Server:
    """One server process of `agui_servers.py` on a free port and a fresh storage directory."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.storage = tempfile.mkdtemp(prefix=f"bench-agui-{kind}-")
        env = {key: value for key, value in os.environ.items() if not key.startswith("OTEL_")}
        self.process = subprocess.Popen(
            [sys.executable, str(HERE / "agui_servers.py"), kind, str(self.port), self.storage],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,  # strands-agents' tracer logs context warnings under streaming
            env=env,
        )

    def wait_until_up(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.kind} server exited with {self.process.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"{self.kind} server did not start")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.storage, ignore_errors=True)


class Connection:
    """A minimal HTTP/1.1 keep-alive client connection for the load (what httpx would cost is not measured).

    With httpx the client process spent more CPU per round trip than either server, so on two cores it, not the
    servers, set the pace. This client writes the request and reads the (chunked) answer, nothing more.
    """

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        payload = json.dumps(body).encode()
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        self.writer.write(
            b"POST / HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (self.host.encode(), self.port, len(payload), payload)
        )
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        headers = {
            name.strip().lower(): value.strip()
            for name, _, value in (line.partition(b":") for line in head.split(b"\r\n")[1:] if line)
        }
        if b"content-length" in headers:
            text = await self.reader.readexactly(int(headers[b"content-length"]))
        else:
            parts = []
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if size == 0:
                    await self.reader.readuntil(b"\r\n")
                    break
                parts.append((await self.reader.readexactly(size + 2))[:-2])
            text = b"".join(parts)
        if headers.get(b"connection", b"").lower() == b"close":
            await self.close()
        if status != 200:
            raise RuntimeError(f"HTTP {status}: {text[:300]!r}")
        return [json.loads(line[6:]) for line in text.decode().splitlines() if line.startswith("data: ")]

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            with contextlib.suppress(OSError):
                await self.writer.wait_closed()
        self.reader = self.writer = None


async def round_trip(connection: Connection, thread_id: str) -> float:
    """One run → interrupt → resume → success on a new thread; return its seconds (checked)."""
    message = {"id": f"{thread_id}-u", "role": "user", "content": "Email a@b.com"}
    start = time.perf_counter()
    first = await connection.post({**BASE, "threadId": thread_id, "runId": "r1", "messages": [message]})
    outcome = first[-1].get("outcome") or {}
    if first[-1]["type"] != "RUN_FINISHED" or outcome.get("type") != "interrupt":
        raise RuntimeError(f"{thread_id}: the first run did not pause: {first[-1]}")
    [interrupt] = outcome["interrupts"]
    snapshots = [event["messages"] for event in first if event["type"] == "MESSAGES_SNAPSHOT"]
    resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}]
    body = {**BASE, "threadId": thread_id, "runId": "r2", "messages": snapshots[-1], "resume": resume}
    second = await connection.post(body)
    elapsed = time.perf_counter() - start
    if second[-1]["type"] != "RUN_FINISHED" or (second[-1].get("outcome") or {}).get("type") != "success":
        raise RuntimeError(f"{thread_id}: the resume did not succeed: {second[-1]}")
    results = [event["content"] for event in second if event["type"] == "TOOL_CALL_RESULT"]
    if interrupt.get("toolCallId") is None or len(results) != 1 or "Email sent to a@b.com." not in results[0]:
        raise RuntimeError(f"{thread_id}: unexpected tool results {results} for {interrupt}")
    return elapsed


async def wave(port: int, prefix: str, per_client: int) -> tuple[list[float], float, int]:
    """Run CONCURRENCY clients, each doing ``per_client`` round trips; return latencies, wall time, and errors.

    A round trip whose connection broke (an OS error, not an answer) is counted and done again, on a new
    connection and a new thread; any other failure stops the run.
    """
    latencies: list[float] = []
    errors = 0
    connections = [Connection("127.0.0.1", port) for _ in range(CONCURRENCY)]

    async def worker(number: int) -> None:
        nonlocal errors
        index = 0
        while index < per_client:
            try:
                latencies.append(await round_trip(connections[number], f"{prefix}-{number}-{index}-{errors}"))
                index += 1
            except (OSError, asyncio.IncompleteReadError):
                errors += 1
                await connections[number].close()
                if errors > CONCURRENCY:
                    raise

    start = time.perf_counter()
    try:
        async with anyio.create_task_group() as group:
            for number in range(CONCURRENCY):
                group.start_soon(worker, number)
    finally:
        wall = time.perf_counter() - start
        for connection in connections:
            await connection.close()
    return latencies, wall, errors


async def measure(kind: str, params: dict[str, Any], round_index: int) -> dict[str, Any]:
    server = Server(kind)
    try:
        server.wait_until_up()
        warm = Connection("127.0.0.1", server.port)  # warm-up: imports, caches, first threads
        for index in range(params["warmup"]):
            await round_trip(warm, f"warm-{round_index}-{index}")
        await warm.close()
        await wave(server.port, f"warmwave-{round_index}", 1)
        cpu_before = cpu_seconds(server.process.pid)
        client_before = time.process_time()
        latencies, wall, errors = await wave(server.port, f"r{round_index}", params["per_client"])
        client_cpu = time.process_time() - client_before
        cpu = cpu_seconds(server.process.pid) - cpu_before
    finally:
        server.stop()
    return {
        "latencies": latencies,
        "wall": wall,
        "count": len(latencies),
        "server_cpu": cpu,
        "client_cpu": client_cpu,
        "errors": errors,
    }


def p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1]


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    latencies = [value for run in runs for value in run["latencies"]]
    throughputs = [run["count"] / run["wall"] for run in runs]
    count = sum(run["count"] for run in runs)
    return {
        "round_trips": count,
        "latency_median_ms": statistics.median(latencies) * 1000,
        "latency_p90_ms": p90(latencies) * 1000,
        "throughput_per_s": statistics.median(throughputs),
        "throughputs": throughputs,
        "server_cpu_ms_per_round_trip": sum(run["server_cpu"] for run in runs) / count * 1000,
        "client_cpu_ms_per_round_trip": sum(run["client_cpu"] for run in runs) / count * 1000,
        "transport_errors": sum(run["errors"] for run in runs),
    }


def checkout() -> str:
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True, cwd=HERE
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "strandslike"], capture_output=True, text=True, check=True, cwd=HERE.parent
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return commit + (" (uncommitted changes under strandslike/)" if dirty else "")


def report(results: dict[str, dict[str, Any]], meta: dict[str, Any]) -> list[tuple[str, bool]]:
    print(
        f"\nAG-UI round trip, {CONCURRENCY} concurrent threads: {meta['date']}, checkout {meta['checkout']}, "
        f"{meta['python']}, nproc {meta['nproc']}, load average {meta['load_start']} -> {meta['load_end']}"
    )
    print(
        f"{'server':<40} {'round trips':>11} {'latency med':>12} {'p90':>9} {'throughput':>11} {'server CPU':>11} "
        f"{'client CPU':>11} {'errors':>6}"
    )
    names = {
        "strandslike": "strandslike (FileSessionManager)",
        "adapter": "ag-ui-strands 1.0.2 (in memory)",
        "adapter-files": "ag-ui-strands 1.0.2 (FileSessionManager)",
    }
    for kind, figures in results.items():
        print(
            f"{names[kind]:<40} {figures['round_trips']:>11} {figures['latency_median_ms']:>9.1f} ms "
            f"{figures['latency_p90_ms']:>6.1f} ms {figures['throughput_per_s']:>7.1f} /s "
            f"{figures['server_cpu_ms_per_round_trip']:>8.2f} ms {figures['client_cpu_ms_per_round_trip']:>8.2f} ms "
            f"{figures['transport_errors']:>6}"
        )
    checks: list[tuple[str, bool]] = []
    ours = results["strandslike"]
    for kind in ("adapter", "adapter-files"):
        theirs = results[kind]
        latency = ours["latency_median_ms"] / theirs["latency_median_ms"]
        throughput = ours["throughput_per_s"] / theirs["throughput_per_s"]
        for label, ratio, passed, target in (
            ("latency", latency, latency <= TARGET_LATENCY, f"<= {TARGET_LATENCY:.3f}"),
            ("throughput", throughput, throughput >= TARGET_THROUGHPUT, f">= {TARGET_THROUGHPUT:.1f}"),
        ):
            verdict = "PASS" if passed else "FAIL"
            print(f"{verdict}  {label} vs {names[kind]}: {ratio:.3f} (target {target})")
            checks.append((f"{label} vs {kind}", passed))
    return checks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="1 round of 50 x 3 round trips per server")
    parser.add_argument("--json", type=Path, help="also save every sample to this file")
    parser.add_argument("--strict", action="store_true", help="exit with status 1 if a target FAILs")
    args = parser.parse_args()
    params = QUICK if args.quick else FULL
    meta = {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "checkout": checkout(),
        "python": f"CPython {platform.python_version()}",
        "nproc": os.cpu_count(),
        "load_start": os.getloadavg()[0],
    }
    runs: dict[str, list[dict[str, Any]]] = {kind: [] for kind in SERVERS}
    for round_index in range(params["rounds"]):
        order = SERVERS if round_index % 2 == 0 else tuple(reversed(SERVERS))
        for kind in order:
            _progress(f"round {round_index + 1}/{params['rounds']}: {kind}")
            runs[kind].append(anyio.run(measure, kind, params, round_index))
    meta["load_end"] = os.getloadavg()[0]
    results = {kind: summarize(samples) for kind, samples in runs.items()}
    checks = report(results, meta)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"meta": meta, "results": results, "runs": runs}, indent=1))
    return 1 if args.strict and not all(passed for _, passed in checks) else 0


if __name__ == "__main__":
    sys.exit(main())
