"""The AG-UI server keeps hot agents between requests, and reuses one only while its session confirms it is current.

The factory counts the agents it builds, by thread: a request that reuses a kept agent builds none. Another process
advancing a thread's session (here a real subprocess resuming the same interrupt through its own
`FileSessionManager`) must make the server rebuild the agent from the session: a kept agent resuming on its stale
copy would run the approved tool a second time.
"""

import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import agui_workers
import anyio
import pytest
from agui_support import AguiThread, LiveServer, resolved

from strandslike.protocol.agui import ServerConfigError, create_app

HERE = Path(__file__).parent
REPO = HERE.parent.parent

# Another process resumes the thread's interrupt with "y", on its own agent restored from the same storage dir.
OTHER_PROCESS = """
import sys
from strandslike.session import FileSessionManager
import agui_workers

storage, thread_id = sys.argv[1], sys.argv[2]
manager = FileSessionManager(thread_id, storage_dir=storage)
agent = agui_workers.build(session_manager=manager)
[interrupt] = agent.pending_interrupts
result = agent([interrupt.resume("y")])
print(result.stop_reason)
"""


class CountingFactory:
    """`agui_workers.build`, counting the agents built per thread."""

    def __init__(self, build: Any = agui_workers.build) -> None:
        self.builds: Counter[str] = Counter()
        self._build = build

    def __call__(self, session_manager: Any) -> Any:
        self.builds[session_manager.session_id] += 1
        return self._build(session_manager=session_manager)


@pytest.fixture
def effects(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "effects.jsonl"
    monkeypatch.setenv("AGUI_EFFECTS", str(path))
    monkeypatch.delenv("AGUI_GATE", raising=False)
    return path


def ran(effects: Path, tool_use_id: str) -> list[int]:
    """Return the pids of the processes that ran the tool use's body."""
    if not effects.exists():
        return []
    entries = [json.loads(line) for line in effects.read_text().splitlines()]
    return [entry["pid"] for entry in entries if entry["event"] == "ran" and entry["tool_use_id"] == tool_use_id]


async def test_a_thread_s_next_request_reuses_its_agent(tmp_path, effects):
    factory = CountingFactory()
    with LiveServer(factory, tmp_path / "sessions") as server:
        thread = AguiThread(server.url, "t-hot")
        [interrupt] = (await thread.send("Email a@b.com")).interrupts
        run = await thread.resume(resolved(interrupt, "y"))
        assert run.outcome == {"type": "success"}
        assert (await thread.send("Email a@b.com again")).interrupts
        reported = await thread.run()  # a reconnect: nothing runs, the thread is reported
    assert factory.builds == {"t-hot": 1}
    assert ran(effects, "tc-0") == [os.getpid()]
    assert reported.outcome["type"] == "interrupt"


async def test_with_agent_cache_size_0_every_request_rebuilds(tmp_path, effects):
    factory = CountingFactory()
    with LiveServer(factory, tmp_path / "sessions", agent_cache_size=0) as server:
        thread = AguiThread(server.url, "t-cold")
        [interrupt] = (await thread.send("Email a@b.com")).interrupts
        assert (await thread.resume(resolved(interrupt, "y"))).outcome == {"type": "success"}
    assert factory.builds == {"t-cold": 2}
    assert ran(effects, "tc-0") == [os.getpid()]


async def test_a_kept_agent_is_not_reused_after_another_process_advanced_its_session(tmp_path, effects):
    storage = tmp_path / "sessions"
    factory = CountingFactory()
    with LiveServer(factory, storage) as server:
        thread = AguiThread(server.url, "t-moved")
        [interrupt] = (await thread.send("Email a@b.com")).interrupts  # the server keeps the paused agent
        assert factory.builds == {"t-moved": 1}

        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(HERE)])}
        with anyio.fail_after(60):
            other = await anyio.run_process(
                [sys.executable, "-c", OTHER_PROCESS, str(storage), "t-moved"], env=env, check=False
            )
        assert other.returncode == 0, other.stderr.decode()
        assert other.stdout.decode().strip() == "end_turn"
        [other_pid] = ran(effects, "tc-0")
        assert other_pid != os.getpid()

        # The same resume reaches the server: its kept agent still waits on the interrupt, but the session moved.
        # Rebuilt from the session, the resume is an exact replay of the one the other process applied: nothing
        # runs, and the thread is reported as the other process left it.
        run = await thread.resume(resolved(interrupt, "y"))
        assert run.outcome == {"type": "success"}
        assert "TOOL_CALL_RESULT" not in run.types
        assert ran(effects, "tc-0") == [other_pid]  # the approved tool ran once, in the other process
        assert factory.builds == {"t-moved": 2}  # rebuilt from the session
    assistant = [message for message in run.messages if message["role"] == "assistant"]
    assert assistant[-1]["content"] == "Done."
    assert [message["role"] for message in run.messages].count("tool") == 1


async def test_a_kept_agent_is_reused_after_its_own_server_wrote_the_session(tmp_path, effects):
    # The versions the kept agent remembers are those of its own writes: its next request passes the claim.
    factory = CountingFactory()
    with LiveServer(factory, tmp_path / "sessions") as server:
        thread = AguiThread(server.url, "t-own")
        for number in range(3):
            [interrupt] = (await thread.send(f"Email number {number}")).interrupts
            assert (await thread.resume(resolved(interrupt, "y"))).outcome == {"type": "success"}
    assert factory.builds == {"t-own": 1}
    assert len(ran(effects, "tc-0")) == len(ran(effects, "tc-1")) == len(ran(effects, "tc-2")) == 1


async def test_the_cache_is_bounded_least_recently_used_out_first(tmp_path, effects):
    factory = CountingFactory()
    with LiveServer(factory, tmp_path / "sessions", agent_cache_size=2) as server:
        threads = {name: AguiThread(server.url, name) for name in ("a", "b", "c")}
        pending = {}
        for name, thread in threads.items():  # a, b, c paused in turn: a is evicted when c is kept
            [pending[name]] = (await thread.send("Email a@b.com")).interrupts
        for name in ("c", "b", "a"):
            run = await threads[name].resume(resolved(pending[name], "y"))
            assert run.outcome == {"type": "success"}
    assert factory.builds == {"a": 2, "b": 1, "c": 1}


async def test_a_request_that_failed_drops_the_kept_agent(tmp_path, effects):
    factory = CountingFactory()
    with LiveServer(factory, tmp_path / "sessions") as server:
        thread = AguiThread(server.url, "t-failed")
        [interrupt] = (await thread.send("Email a@b.com")).interrupts
        (await thread.send("Something else")).assert_error("PENDING_INTERRUPTS")  # refused: nothing ran
        thread.messages.pop()
        assert (await thread.resume(resolved(interrupt, "y"))).outcome == {"type": "success"}
    assert factory.builds == {"t-failed": 2}
    assert ran(effects, "tc-0") == [os.getpid()]


async def test_graph_threads_are_rebuilt_for_every_request(tmp_path, effects):
    factory = CountingFactory(agui_workers.build_graph)
    with LiveServer(factory, tmp_path / "sessions") as server:
        thread = AguiThread(server.url, "t-graph")
        [interrupt] = (await thread.send("Email a@b.com")).interrupts
        assert (await thread.resume(resolved(interrupt, "y"))).outcome == {"type": "success"}
    assert factory.builds == {"t-graph": 2}


@pytest.mark.parametrize("size", [-1, True, 1.5, "8", None])
def test_a_bad_agent_cache_size_is_refused(tmp_path, size):
    with pytest.raises(ServerConfigError, match="agent_cache_size"):
        create_app(agui_workers.build, storage_dir=tmp_path, agent_cache_size=size)
