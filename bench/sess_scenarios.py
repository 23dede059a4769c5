"""The session scenarios of `bench_sessions.py`, run inside one framework's worker process.

The same code drives strandslike and strands-agents 1.62: only the import root (``strandslike`` or ``strands``)
and the scripted model (`ma_models`) differ. Every agent gets ``callback_handler=None``,
``conversation_manager=NullConversationManager()`` (so the history really grows) and ``agent_id="bench"``; every
session lives in a fresh ``tempfile.mkdtemp`` directory under /tmp that is removed afterwards. Models are built
before the clock starts; what the clock covers is stated per scenario. Results are checked after the clock stops.
"""

import asyncio
import gc
import importlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import ma_models

SESSION_ID = "bench-session"
AGENT_ID = "bench"
TMP_PARENT = "/tmp"
TOOL_ITEM = 7

RAN: list[int] = []  # every call of the `archive` tool, in this process


async def archive(item: int) -> str:
    """Archive an item (the tool the approval hook interrupts).

    Args:
        item: The item to archive.
    """
    RAN.append(item)
    return f"archived item {item}"


def question(i: int) -> str:
    return f"Question {i}: what is the status of work item {i}, and who should look at it next?"


def answer(i: int) -> str:
    return f"Work item {i} is on track; the owner reviews it on Monday and nobody else needs to act."


def history(messages: int) -> list[dict[str, Any]]:
    """A conversation of ``messages`` messages (user question, assistant answer, ...); ``messages`` is even."""
    out: list[dict[str, Any]] = []
    for i in range(messages // 2):
        out.append({"role": "user", "content": [{"text": question(i)}]})
        out.append({"role": "assistant", "content": [{"text": answer(i)}]})
    return out


def mkdtemp(label: str) -> str:
    return tempfile.mkdtemp(prefix=f"bench-sess-{label}-", dir=TMP_PARENT)


def disk_usage(directory: str) -> dict[str, int]:
    """Regular files under ``directory``, their total size and the space allocated to them (st_blocks)."""
    files = size = allocated = dirs = 0
    for root, dirnames, filenames in os.walk(directory):
        dirs += len(dirnames)
        for name in filenames:
            info = os.lstat(os.path.join(root, name))
            files += 1
            size += info.st_size
            allocated += info.st_blocks * 512
    return {"files": files, "dirs": dirs, "bytes": size, "allocated": allocated}


class Approval:
    """A `BeforeToolCallEvent` hook that interrupts every tool call for approval; runs it when the answer is "y"."""

    def __init__(self, event_type: type) -> None:
        self.event_type = event_type

    def register_hooks(self, registry: Any, **kwargs: Any) -> None:
        registry.add_callback(self.event_type, self.approve)

    def approve(self, event: Any) -> None:
        if event.interrupt("approval", reason={"tool": event.tool_use["name"]}) != "y":
            event.cancel_tool = "denied"


class HookClock:
    """Adds up the wall time an agent spends inside its session manager's hook callbacks (a cross-check of the
    per-turn session cost that does not depend on subtracting two runs).

    strands-agents registers lambdas that call the manager's ``append_message`` and ``sync_agent`` (sync, on the
    event loop); strandslike registers the manager's async ``_on_before_invocation``, ``_on_message_added`` and
    ``_on_after_invocation`` (each awaits the storage call in a worker thread). Wrapping those instance
    attributes before the Agent registers the manager times every hook call; the wrappers cost about 1 us a call.
    """

    SYNC = ("append_message", "sync_agent")
    ASYNC = ("_on_before_invocation", "_on_message_added", "_on_after_invocation")

    def __init__(self) -> None:
        self.seconds = 0.0
        self.calls = 0

    def attach(self, manager: Any, root: str) -> None:
        for name in self.ASYNC if root == "strandslike" else self.SYNC:
            original = getattr(manager, name)
            wrapper = self._async(original) if root == "strandslike" else self._sync(original)
            setattr(manager, name, wrapper)

    def _sync(self, function: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start
                self.calls += 1

        return timed

    def _async(self, function: Callable[..., Any]) -> Callable[..., Any]:
        async def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return await function(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start
                self.calls += 1

        return timed


class Framework:
    """One framework's Agent, FileSessionManager, NullConversationManager, hook event, tool and model."""

    def __init__(self, root: str) -> None:
        self.root = root
        package = importlib.import_module(root)
        self.Agent = package.Agent
        self.FileSessionManager = importlib.import_module(f"{root}.session").FileSessionManager
        managers = importlib.import_module(f"{root}.agent.conversation_manager")
        self.NullConversationManager = managers.NullConversationManager
        self.BeforeToolCallEvent = importlib.import_module(f"{root}.hooks").BeforeToolCallEvent
        self.archive = package.tool(archive)
        self.GraphBuilder = importlib.import_module(f"{root}.multiagent").GraphBuilder
        if root == "strandslike":
            self._model: Callable[[list[Any]], Any] = ma_models.strandslike_model
        else:
            self._model = ma_models.strands_model

    def model(self, turns: list[Any]) -> Any:
        """A scripted model: ``("text", answer)`` or ``("tool", (name, input))`` per call."""
        return self._model(turns)

    def agent(
        self,
        model: Any,
        storage_dir: str | None,
        messages: list[dict[str, Any]] | None = None,
        approval: bool = False,
        clock: HookClock | None = None,
        tools: bool = False,
        fsync: bool = True,
    ) -> Any:
        kwargs: dict[str, Any] = {}
        if storage_dir is not None:
            options = {} if fsync else {"fsync": False}  # strandslike only: durable writes without fdatasync
            kwargs["session_manager"] = self.FileSessionManager(SESSION_ID, storage_dir=storage_dir, **options)
            if clock is not None:
                clock.attach(kwargs["session_manager"], self.root)
        if messages is not None:
            kwargs["messages"] = messages
        if approval or tools:
            kwargs["tools"] = [self.archive]
        if approval:
            kwargs["hooks"] = [Approval(self.BeforeToolCallEvent)]
        return self.Agent(
            model=model,
            callback_handler=None,
            conversation_manager=self.NullConversationManager(),
            agent_id=AGENT_ID,
            **kwargs,
        )


def check(condition: bool, fw: Framework, what: str) -> None:
    if not condition:
        raise AssertionError(f"{fw.root}: {what}")


def played(model: Any) -> bool:
    return bool(model.remaining == 0)


def contents(messages: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """Role and content of each message (strands-agents adds `tracking_id` and `metadata` keys to its messages)."""
    return [(message["role"], message["content"]) for message in messages]


def text_of(message: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in message["content"])


def close(agent: Any) -> None:
    """Release the session manager's files (strandslike keeps its log open; strands-agents has nothing to close)."""
    manager = getattr(agent, "session_manager", None) or getattr(agent, "_session_manager", None)
    closer = getattr(manager, "close", None)
    if callable(closer):
        closer()


class Worker:
    """Runs the scenarios of one framework on one event loop (`asyncio.Runner`); set-up runs outside the clock."""

    def __init__(self, root: str) -> None:
        self.fw = Framework(root)
        self.runner = asyncio.Runner()
        self.templates: dict[int, str] = {}
        self.template_root = mkdtemp(f"{root}-templates")

    def run(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        return self.runner.run(coroutine)

    def close(self) -> None:
        self.runner.close()
        shutil.rmtree(self.template_root, ignore_errors=True)

    # -- preparation (untimed) -----------------------------------------------------------------------------

    def template(self, messages: int) -> str:
        """A storage dir holding a ``messages``-message session, written through this framework's own Agent and
        FileSessionManager: an agent built with the first ``messages - 2`` messages (both frameworks persist them
        at creation, the same records or files a conversation writes), then one invocation adds the last turn."""
        if messages not in self.templates:
            directory = os.path.join(self.template_root, f"m{messages}")
            os.mkdir(directory, 0o700)
            last = messages // 2 - 1
            model = self.fw.model([("text", answer(last))])
            agent = self.fw.agent(model, directory, messages=history(messages - 2))
            result = self.run(agent.invoke_async(question(last)))
            check(result.stop_reason == "end_turn" and len(agent.messages) == messages, self.fw, "template")
            close(agent)
            del agent
            reloaded = self.fw.agent(self.fw.model([]), directory)
            check(
                contents(reloaded.messages) == contents(history(messages)),
                self.fw,
                f"the {messages}-message template restores wrong",
            )
            close(reloaded)
            self.templates[messages] = directory
        return self.templates[messages]

    def copy_of(self, messages: int, label: str) -> str:
        """A fresh copy of the ``messages``-message template in a new temporary directory (untimed)."""
        template = self.template(messages)
        directory = mkdtemp(f"{self.fw.root}-{label}")
        try:
            shutil.copytree(template, directory, dirs_exist_ok=True)
        except BaseException:
            shutil.rmtree(directory, ignore_errors=True)
            raise
        return directory

    # -- 1. per-turn cost ----------------------------------------------------------------------------------

    def turns(self, count: int, session: bool) -> dict[str, Any]:
        """``count`` invocations of one agent, each a prompt and a text answer; the clock covers the invocations.

        With ``session``, the agent has a FileSessionManager on a new session (created with the agent, before
        the clock); afterwards a new agent restores the session and must find all ``2 * count`` messages.
        """
        fw = self.fw
        directory = mkdtemp(f"{fw.root}-turns") if session else None
        try:
            model = fw.model([("text", answer(i)) for i in range(count)])
            clock = HookClock()
            agent = fw.agent(model, directory, clock=clock)
            prompts = [question(i) for i in range(count)]

            async def timed() -> tuple[float, list[Any]]:
                stops = []
                start = time.perf_counter()
                for prompt in prompts:
                    stops.append((await agent.invoke_async(prompt)).stop_reason)
                return time.perf_counter() - start, stops

            gc.collect()
            elapsed, stops = self.run(timed())
            check(all(stop == "end_turn" for stop in stops) and len(stops) == count, fw, f"turn stops {set(stops)}")
            check(len(agent.messages) == 2 * count and played(model), fw, f"{len(agent.messages)} messages")
            out: dict[str, Any] = {"seconds": elapsed}
            if directory is not None:
                check(clock.calls >= 3 * count, fw, f"{clock.calls} session hook calls in {count} turns")
                out["in_hooks"] = clock.seconds
                out["hook_calls"] = clock.calls
                close(agent)
                reloaded = fw.agent(fw.model([]), directory)
                check(
                    contents(reloaded.messages) == contents(agent.messages),
                    fw,
                    f"the {count}-turn session restores wrong",
                )
                close(reloaded)
                out["disk"] = disk_usage(directory)
            return out
        finally:
            if directory is not None:
                shutil.rmtree(directory, ignore_errors=True)

    # -- 5. tool calls: the intent record ------------------------------------------------------------------

    def tool_calls(self, count: int, mode: str) -> dict[str, Any]:
        """One invocation in which the model calls the `archive` tool ``count`` times, one call per turn, then
        answers; the clock covers the invocation. ``mode``: ``"none"`` (no session manager), ``"session"`` (a
        FileSessionManager on a new session) or ``"nofsync"`` (strandslike's FileSessionManager with
        ``fsync=False``). With a strandslike session, every call's intent record is appended (and, by default,
        ``fdatasync``'ed) before the tool body runs."""
        fw = self.fw
        directory = mkdtemp(f"{fw.root}-tools") if mode != "none" else None
        try:
            model = fw.model([("tool", ("archive", {"item": i})) for i in range(count)] + [("text", "archived")])
            agent = fw.agent(model, directory, tools=True, fsync=mode != "nofsync")
            RAN.clear()

            async def timed() -> tuple[float, Any]:
                start = time.perf_counter()
                result = await agent.invoke_async("archive everything")
                return time.perf_counter() - start, result

            gc.collect()
            elapsed, result = self.run(timed())
            check(result.stop_reason == "end_turn" and played(model), fw, f"tool calls {result.stop_reason}")
            check(RAN == list(range(count)), fw, f"the tool ran {len(RAN)} times")
            if directory is not None:
                close(agent)
                reloaded = fw.agent(fw.model([]), directory, tools=True)
                check(len(reloaded.messages) == 2 * count + 2, fw, f"{len(reloaded.messages)} messages restored")
                close(reloaded)
            return {"seconds": elapsed}
        finally:
            if directory is not None:
                shutil.rmtree(directory, ignore_errors=True)

    # -- 6. tool calls of a Graph node: the node's intent records in the orchestrator's log ---------------------

    def node_tool_calls(self, count: int, mode: str) -> dict[str, Any]:
        """Scenario 5 inside a Graph: one node, whose agent calls the `archive` tool ``count`` times, one call per
        turn, then answers; the clock covers the graph's invocation. ``mode`` as for `tool_calls`, the
        FileSessionManager being the graph's (its node agent has none). With a strandslike session, every node tool
        call's intent record (and the orchestrator's state, when a node turn changed it) is appended to the
        orchestrator's log (and, by default, ``fdatasync``'ed) before the tool body runs."""
        fw = self.fw
        directory = mkdtemp(f"{fw.root}-node-tools") if mode != "none" else None
        try:
            model = fw.model([("tool", ("archive", {"item": i})) for i in range(count)] + [("text", "archived")])
            graph = self._archiver_graph(model, directory, fsync=mode != "nofsync")
            RAN.clear()

            async def timed() -> tuple[float, Any]:
                start = time.perf_counter()
                result = await graph.invoke_async("archive everything")
                return time.perf_counter() - start, result

            gc.collect()
            elapsed, result = self.run(timed())
            check(str(result.status).lower().endswith("completed") and played(model), fw, f"graph {result.status}")
            check(RAN == list(range(count)), fw, f"the node's tool ran {len(RAN)} times")
            if directory is not None:
                close(graph)
                if fw.root == "strandslike":  # restored: the graph completed, its node's whole conversation
                    reloaded = self._archiver_graph(fw.model([]), directory, fsync=True)
                    check(str(reloaded.state.status).lower().endswith("completed"), fw, "the restored graph")
                    messages = reloaded.nodes["archiver"].executor.messages
                    check(len(messages) == 2 * count + 2, fw, f"{len(messages)} node messages restored")
                    close(reloaded)
                else:  # strands-agents resets a completed graph it restores, and keeps no node messages: its file
                    [state_file] = Path(directory).glob("session_*/multi_agents/multi_agent_bench-graph/*.json")
                    status = json.loads(state_file.read_text())["status"]
                    check(status == "completed", fw, f"the stored graph is {status}")
            return {"seconds": elapsed}
        finally:
            if directory is not None:
                shutil.rmtree(directory, ignore_errors=True)

    def _archiver_graph(self, model: Any, storage_dir: str | None, fsync: bool) -> Any:
        fw = self.fw
        agent = fw.Agent(
            model=model,
            tools=[fw.archive],
            callback_handler=None,
            conversation_manager=fw.NullConversationManager(),
            name="archiver",
        )
        builder = fw.GraphBuilder()
        builder.add_node(agent, "archiver")
        builder.set_graph_id("bench-graph")
        builder.set_max_node_executions(10)
        builder.set_execution_timeout(600)
        if storage_dir is not None:
            options = {} if fsync else {"fsync": False}
            builder.set_session_manager(fw.FileSessionManager(SESSION_ID, storage_dir=storage_dir, **options))
        return builder.build()

    # -- 2. restore and answer -----------------------------------------------------------------------------

    def restore(self, messages: int) -> dict[str, Any]:
        """Build a new Agent with a new FileSessionManager on a ``messages``-message session (this restores it) and
        answer one turn; the clock covers both. The session is a fresh copy of the template."""
        fw = self.fw
        directory = self.copy_of(messages, "restore")
        try:
            model = fw.model([("text", "restored and answered")])

            async def timed() -> tuple[float, float, Any, int]:
                start = time.perf_counter()
                agent = fw.agent(model, directory)
                restored = len(agent.messages)
                built = time.perf_counter()
                result = await agent.invoke_async("one more question")
                end = time.perf_counter()
                return end - start, built - start, (agent, result), restored

            gc.collect()
            elapsed, construct, (agent, result), restored = self.run(timed())
            check(restored == messages, fw, f"restored {restored} messages, expected {messages}")
            check(result.stop_reason == "end_turn" and played(model), fw, f"restore answer {result.stop_reason}")
            check(len(agent.messages) == messages + 2, fw, f"{len(agent.messages)} messages after the answer")
            check(contents(agent.messages[:messages]) == contents(history(messages)), fw, "restored history differs")
            check(text_of(agent.messages[-1]) == "restored and answered", fw, "answer")
            close(agent)
            return {"seconds": elapsed, "construct": construct}
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    # -- 3. server-style interrupt and resume ------------------------------------------------------------

    def interrupt_resume(self, messages: int) -> dict[str, Any]:
        """Request 1: new Agent (restores ``messages`` messages) + invoke; the model calls `archive` and the
        approval hook interrupts. Request 2: new Agent (restores, with the open interrupt) + invoke with the
        ``interruptResponse``; the tool runs and the model answers. The clock covers both requests."""
        fw = self.fw
        directory = self.copy_of(messages, "resume")
        try:
            first_model = fw.model([("tool", ("archive", {"item": TOOL_ITEM}))])
            second_model = fw.model([("text", "archived it")])
            RAN.clear()

            async def timed() -> dict[str, Any]:
                start = time.perf_counter()
                first_agent = fw.agent(first_model, directory, approval=True)
                first_restored = len(first_agent.messages)
                first = await first_agent.invoke_async("please archive item 7")
                middle = time.perf_counter()
                ran_before = len(RAN)
                second_agent = fw.agent(second_model, directory, approval=True)
                second_restored = len(second_agent.messages)
                responses = [
                    {"interruptResponse": {"interruptId": item.id, "response": "y"}} for item in first.interrupts
                ]
                second = await second_agent.invoke_async(responses)
                end = time.perf_counter()
                return {
                    "times": (end - start, middle - start, end - middle),
                    "agents": (first_agent, second_agent),
                    "results": (first, second),
                    "restored": (first_restored, second_restored),
                    "ran_before": ran_before,
                }

            gc.collect()
            out = self.run(timed())
            first, second = out["results"]
            first_agent, second_agent = out["agents"]
            check(out["restored"] == (messages, messages + 2), fw, f"restored {out['restored']}")
            check(first.stop_reason == "interrupt" and len(first.interrupts) == 1, fw, f"first {first.stop_reason}")
            check(out["ran_before"] == 0, fw, "the tool ran before it was approved")
            check(second.stop_reason == "end_turn", fw, f"second request ended {second.stop_reason}")
            check(RAN == [TOOL_ITEM], fw, f"the tool ran {len(RAN)} times")
            check(played(first_model) and played(second_model), fw, "a scripted turn was not played")
            check(len(second_agent.messages) == messages + 4, fw, f"{len(second_agent.messages)} messages at the end")
            check(contents(second_agent.messages[:messages]) == contents(history(messages)), fw, "restored history")
            results = [b["toolResult"] for b in second_agent.messages[-2]["content"] if "toolResult" in b]
            check(len(results) == 1 and results[0]["status"] == "success", fw, f"tool results {results}")
            close(first_agent)
            close(second_agent)
            total, request_1, request_2 = out["times"]
            return {"seconds": total, "request_1": request_1, "request_2": request_2}
        finally:
            shutil.rmtree(directory, ignore_errors=True)


# ---------------------------------------------------------------------------------------------------- profile


def profile_turns(turns: int, repeats: int) -> list[str]:
    """Where strandslike's per-turn session cost goes (``bench_sessions.py --profile``), in this process.

    Runs the 500-turn scenario without a session, with the default FileSessionManager (storage calls in worker
    threads) and with the same manager switched to inline I/O by setting ``blocking_io = False`` on the instance
    (an experiment that isolates the storage work from the thread hand-offs, not a supported setting); times a
    no-op ``anyio.to_thread.run_sync``; then profiles the inline variant with cProfile (worker threads are
    invisible to cProfile, which is why the inline variant is the one profiled).
    """
    import cProfile
    import pstats
    import statistics

    import anyio

    fw = Framework("strandslike")

    def build(mode: str) -> tuple[Any, str | None, HookClock]:
        directory = mkdtemp("profile") if mode != "none" else None
        clock = HookClock()
        agent = fw.agent(fw.model([("text", answer(i)) for i in range(turns)]), directory, clock=clock)
        if mode == "inline":
            agent.session_manager.blocking_io = False
        return agent, directory, clock

    async def converse(agent: Any) -> float:
        start = time.perf_counter()
        for i in range(turns):
            await agent.invoke_async(question(i))
        return time.perf_counter() - start

    def once(mode: str, profiler: Any = None) -> tuple[float, float, float]:
        agent, directory, clock = build(mode)
        try:
            gc.collect()
            if profiler is not None:
                profiler.enable()
            elapsed = asyncio.run(converse(agent))
            if profiler is not None:
                profiler.disable()
            check(len(agent.messages) == 2 * turns, fw, "profile run")
            close(agent)
            return elapsed * 1000 / turns, clock.seconds * 1000 / turns, clock.calls / turns
        finally:
            if directory is not None:
                shutil.rmtree(directory, ignore_errors=True)

    async def hops(count: int) -> float:
        def noop() -> None:
            return None

        for _ in range(100):
            await anyio.to_thread.run_sync(noop)
        samples = []
        for _ in range(count):
            start = time.perf_counter()
            await anyio.to_thread.run_sync(noop)
            samples.append(time.perf_counter() - start)
        return statistics.median(samples) * 1e6

    lines = [f"strandslike, {turns} turns, median of {repeats} runs per variant (in this process)"]
    modes = {"none": "no session manager", "threads": "FileSessionManager (default: I/O in worker threads)"}
    modes["inline"] = "FileSessionManager, blocking_io=False on the instance (I/O inline; experiment)"
    for mode in modes:
        once(mode)  # warm-up
    figures = {mode: [once(mode) for _ in range(repeats)] for mode in modes}
    plain = statistics.median(sample[0] for sample in figures["none"])
    for mode, label in modes.items():
        per_turn = statistics.median(sample[0] for sample in figures[mode])
        in_hooks = statistics.median(sample[1] for sample in figures[mode])
        calls = statistics.median(sample[2] for sample in figures[mode])
        lines.append(
            f"  {label:80} {per_turn:.4f} ms/turn; session cost {per_turn - plain:.4f} ms/turn; "
            f"in session hooks {in_hooks:.4f} ms/turn ({calls:.0f} hook calls per turn)"
        )
    lines.append(f"  no-op anyio.to_thread.run_sync round trip: {asyncio.run(hops(2000)):.1f} us (median of 2000)")

    profiler = cProfile.Profile()
    once("inline", profiler)
    stats = pstats.Stats(profiler)
    rows = []
    for (filename, line, function), (_, calls, own, cumulative, _) in stats.stats.items():  # type: ignore[attr-defined]
        if "strandslike/session/" in filename or "strandslike/types/session" in filename:
            rows.append((cumulative, own, calls, f"{filename.split('strandslike/', 1)[1]}:{line}({function})"))
    lines.append(
        f"  cProfile of the inline variant, strandslike.session functions (us per turn, profiled; {turns} turns):"
    )
    lines.append(f"    {'cumulative':>10} {'own':>8} {'calls/turn':>10}  function")
    for cumulative, own, calls, name in sorted(rows, reverse=True)[:15]:
        lines.append(f"    {cumulative * 1e6 / turns:10.1f} {own * 1e6 / turns:8.1f} {calls / turns:10.1f}  {name}")
    return lines
