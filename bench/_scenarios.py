"""The framework benchmarks, written once against the Strands API and run with either import root.

strandslike mirrors the public API of strands-agents 1.62, so the same code drives both: only the import root
(``strands`` or ``strandslike``) and the scripted model differ. Agents and models are built before the clock
starts; the clock covers `invoke_async` calls only.
"""

import asyncio
import gc
import importlib
import statistics
import time
from collections.abc import Callable
from typing import Any

from _workload import NAP_SECONDS, add_one, batch_script, cycles_script, nap, summary, timed_batch

HOOK_PROVIDERS = 10
HOOKED_EVENTS = ("BeforeModelCallEvent", "AfterModelCallEvent", "BeforeToolCallEvent", "AfterToolCallEvent")
HOOKED_EVENTS += ("MessageAddedEvent",)
BATCH_TOOLS = 50


class Framework:
    """One framework's agent class, tool decorator, hook events and scripted model."""

    def __init__(self, root: str) -> None:
        self.root = root
        package = importlib.import_module(root)
        self.hooks = importlib.import_module(f"{root}.hooks")
        self.Agent = package.Agent
        self.add_one = package.tool(add_one)
        self.nap = package.tool(nap)
        if root == "strandslike":
            models = importlib.import_module("strandslike.models")
            self._scripted, self._tool_call = models.ScriptedModel, models.tool_call
            self._text, self._turn = models.text, models.turn
        else:
            from _strands_model import BenchStrandsModel

            self._bench_model = BenchStrandsModel

    def cycles_model(self, cycles: int) -> Any:
        """A model that calls add_one (x = 1..cycles) once per turn, then answers text."""
        if self.root == "strandslike":
            return self._scripted(
                [self._tool_call("add_one", x=i) for i in range(1, cycles + 1)] + [self._text("done")]
            )
        return self._bench_model(cycles_script(cycles))

    def batch_model(self, tools: int) -> Any:
        """A model that calls nap ``tools`` times in one turn, then answers text."""
        if self.root == "strandslike":
            calls = [self._tool_call("nap", x=i) for i in range(1, tools + 1)]
            return self._scripted([self._turn(*calls), self._text("done")])
        return self._bench_model(batch_script(tools))

    def model_finished(self, model: Any) -> bool:
        """Whether every scripted turn was played."""
        if self.root == "strandslike":
            return bool(model.remaining == 0)
        return bool(model._next == len(model._turns))

    def agent(self, model: Any, tools: list[Any], hooks: list[Any] | None = None) -> Any:
        return self.Agent(model=model, tools=tools, callback_handler=None, hooks=hooks or [])


class CountingProvider:
    """A hook provider with one trivial callback on each of ``events``."""

    def __init__(self, events: list[type]) -> None:
        self.events = events
        self.calls = 0

    def register_hooks(self, registry: Any, **kwargs: Any) -> None:
        for event_type in self.events:
            registry.add_callback(event_type, self.on_event)

    def on_event(self, event: Any) -> None:
        self.calls += 1


class Approval:
    """Interrupts every tool call for approval; runs it when the answer is "y"."""

    def __init__(self, hooks: Any) -> None:
        self.before_tool_call = hooks.BeforeToolCallEvent

    def register_hooks(self, registry: Any, **kwargs: Any) -> None:
        registry.add_callback(self.before_tool_call, self.approve)

    def approve(self, event: Any) -> None:
        if event.interrupt("approval", reason={"tool": event.tool_use["name"]}) != "y":
            event.cancel_tool = "denied"


class BatchTimer:
    """Stamps BeforeToolsEvent and AfterToolsEvent, bracketing the tool batch."""

    def __init__(self, hooks: Any) -> None:
        self.hooks = hooks
        self.before = 0.0
        self.after = 0.0

    def register_hooks(self, registry: Any, **kwargs: Any) -> None:
        registry.add_callback(self.hooks.BeforeToolsEvent, self.on_before)
        registry.add_callback(self.hooks.AfterToolsEvent, self.on_after)

    def on_before(self, event: Any) -> None:
        self.before = time.perf_counter()

    def on_after(self, event: Any) -> None:
        self.after = time.perf_counter()


def _answers(result: Any) -> list[dict[str, Any]]:
    return [{"interruptResponse": {"interruptId": item.id, "response": "y"}} for item in result.interrupts]


def _tool_results(messages: list[Any]) -> list[dict[str, Any]]:
    return [
        block["toolResult"]
        for message in messages
        if message["role"] == "user"
        for block in message["content"]
        if "toolResult" in block
    ]


async def loop_cycles(fw: Framework, cycles: int, count: int, repeats: int, hooked: bool) -> dict[str, Any]:
    """Milliseconds per cycle of ``count`` back-to-back invocations of ``cycles`` cycles each."""
    events = [getattr(fw.hooks, name) for name in HOOKED_EVENTS]

    def build() -> tuple[Any, list[CountingProvider]]:
        providers = [CountingProvider(events) for _ in range(HOOK_PROVIDERS)] if hooked else []
        return fw.agent(fw.cycles_model(cycles), [fw.add_one], providers), providers

    async def run(subject: tuple[Any, list[CountingProvider]]) -> Any:
        return await subject[0].invoke_async("go")

    samples = []
    calls = 0
    for _ in range(repeats):
        elapsed, done = await timed_batch(build, run, count)
        samples.append(elapsed * 1000 / (count * cycles))
        for (agent, providers), result in done:
            if result.stop_reason != "end_turn" or not fw.model_finished(agent.model):
                raise AssertionError(f"{fw.root}: {cycles}-cycle run ended with {result.stop_reason!r}")
            calls = sum(provider.calls for provider in providers)
    out = summary(samples)
    out["invocations_per_sample"] = count
    if hooked:
        out["hook_calls"] = calls
    return out


async def hook_delta(fw: Framework, cycles: int, count: int, pairs: int) -> dict[str, Any]:
    """Microseconds of hook dispatch per dispatched callback: (hooked run - plain run) / callbacks, paired.

    Each pair times ``count`` invocations of ``cycles`` cycles without hook providers and ``count`` with the 10
    providers (5 events each), back to back and in alternating order, so drift in machine load hits both alike;
    the figure is the median over the pairs. The clock is the process's CPU time: the difference is a few percent
    of strands-agents' invocation (which deep-copies the history every cycle), and wall time on a shared machine
    swings by more than that; CPU time does not count other processes' work (the wall-time figure is kept too).
    The cyclic garbage collector is off while a batch runs (for both frameworks): a collection costs more than the
    difference being measured and lands in one run of a pair or the other at random.
    The callbacks are counted, not assumed (checked equal for both frameworks in the report).
    """
    events = [getattr(fw.hooks, name) for name in HOOKED_EVENTS]

    def build(hooked: bool) -> Callable[[], tuple[Any, list[CountingProvider]]]:
        def make() -> tuple[Any, list[CountingProvider]]:
            providers = [CountingProvider(events) for _ in range(HOOK_PROVIDERS)] if hooked else []
            return fw.agent(fw.cycles_model(cycles), [fw.add_one], providers), providers

        return make

    async def run(subject: tuple[Any, list[CountingProvider]]) -> Any:
        return await subject[0].invoke_async("go")

    deltas, wall_deltas, plain_ms, hooked_ms = [], [], [], []
    callbacks = 0
    for index in range(pairs):
        timings: dict[bool, float] = {}
        walls: dict[bool, float] = {}
        for hooked in (False, True) if index % 2 == 0 else (True, False):
            subjects = [build(hooked)() for _ in range(count)]
            gc.collect()
            results = []
            gc.disable()  # a collection landing in one run of the pair but not the other would swamp the difference
            try:
                cpu_start, wall_start = time.process_time(), time.perf_counter()
                for subject in subjects:
                    results.append(await run(subject))
                timings[hooked] = time.process_time() - cpu_start
                walls[hooked] = time.perf_counter() - wall_start
            finally:
                gc.enable()
            done = list(zip(subjects, results, strict=True))
            for (agent, providers), result in done:
                if result.stop_reason != "end_turn" or not fw.model_finished(agent.model):
                    raise AssertionError(f"{fw.root}: hook delta run ended with {result.stop_reason!r}")
                if hooked:
                    callbacks = sum(provider.calls for provider in providers)
        if not callbacks:
            raise AssertionError(f"{fw.root}: the hook providers were never called")
        deltas.append((timings[True] - timings[False]) * 1e6 / (count * callbacks))
        wall_deltas.append((walls[True] - walls[False]) * 1e6 / (count * callbacks))
        plain_ms.append(timings[False] * 1000 / count)
        hooked_ms.append(timings[True] * 1000 / count)
    out = summary(deltas)
    out.update(
        {
            "unit": "us of CPU time per dispatched callback",
            "wall": summary(wall_deltas),
            "callbacks_per_invocation": callbacks,
            "cycles": cycles,
            "invocations_per_sample": count,
            "plain_ms_per_invocation": statistics.median(plain_ms),
            "hooked_ms_per_invocation": statistics.median(hooked_ms),
        }
    )
    return out


async def dispatch_only(fw: Framework, rounds: int, repeats: int) -> dict[str, Any]:
    """Microseconds per dispatched callback of the registry alone (cross-check of 2c, little affected by load).

    One agent with the 10 counting providers; each round builds the events of one loop cycle with the
    framework's own event classes (before/after model call, the assistant and tool-result MessageAddedEvents,
    before/after tool call) and awaits the registry's ``invoke_callbacks_async`` for each; building the events is
    timed too, as the loop builds them. CPU time, collector off while timed.
    """
    hooks = fw.hooks
    providers = [CountingProvider([getattr(hooks, name) for name in HOOKED_EVENTS]) for _ in range(HOOK_PROVIDERS)]
    agent = fw.agent(fw.cycles_model(1), [fw.add_one], providers)
    tool_use = {"toolUseId": "t1", "name": "add_one", "input": {"x": 1}}
    result = {"toolUseId": "t1", "status": "success", "content": [{"text": "2"}]}
    assistant = {"role": "assistant", "content": [{"toolUse": tool_use}]}
    user = {"role": "user", "content": [{"toolResult": result}]}
    selected = agent.tool_registry.registry["add_one"]
    stop = hooks.AfterModelCallEvent.ModelStopResponse

    def cycle_events() -> list[Any]:
        state: dict[str, Any] = {}
        return [
            hooks.BeforeModelCallEvent(agent=agent, invocation_state=state),
            hooks.AfterModelCallEvent(agent=agent, invocation_state=state, stop_response=stop(assistant, "tool_use")),
            hooks.MessageAddedEvent(agent=agent, message=assistant),
            hooks.BeforeToolCallEvent(agent=agent, selected_tool=selected, tool_use=tool_use, invocation_state=state),
            hooks.AfterToolCallEvent(
                agent=agent, selected_tool=selected, tool_use=tool_use, invocation_state=state, result=result
            ),
            hooks.MessageAddedEvent(agent=agent, message=user),
        ]

    dispatch = agent.hooks.invoke_callbacks_async
    samples = []
    for _ in range(repeats):
        before = sum(provider.calls for provider in providers)
        gc.collect()
        gc.disable()
        try:
            start = time.process_time()
            for _ in range(rounds):
                for event in cycle_events():
                    await dispatch(event)
            elapsed = time.process_time() - start
        finally:
            gc.enable()
        calls = sum(provider.calls for provider in providers) - before
        if calls != rounds * 6 * HOOK_PROVIDERS:
            raise AssertionError(f"{fw.root}: {calls} callbacks, expected {rounds * 6 * HOOK_PROVIDERS}")
        samples.append(elapsed * 1e6 / calls)
    out = summary(samples)
    out["unit"] = "us of CPU time per dispatched callback"
    return out


async def interrupt_round_trip(fw: Framework, count: int, repeats: int) -> dict[str, Any]:
    """Milliseconds per interrupt-and-resume round trip (both invocations)."""

    def build() -> Any:
        return fw.agent(fw.cycles_model(1), [fw.add_one], [Approval(fw.hooks)])

    async def run(agent: Any) -> tuple[Any, Any]:
        first = await agent.invoke_async("go")
        second = await agent.invoke_async(_answers(first))
        return first, second

    samples = []
    for _ in range(repeats):
        elapsed, done = await timed_batch(build, run, count)
        samples.append(elapsed * 1000 / count)
        for agent, (first, second) in done:
            _check_round_trip(fw, agent, first, second)
    out = summary(samples)
    out["round_trips_per_sample"] = count
    return out


def _check_round_trip(fw: Framework, agent: Any, first: Any, second: Any) -> None:
    results = _tool_results(agent.messages)
    if (
        first.stop_reason != "interrupt"
        or second.stop_reason != "end_turn"
        or len(results) != 1
        or results[0]["status"] != "success"
        or results[0]["content"] != [{"text": "2"}]
    ):
        raise AssertionError(f"{fw.root}: unexpected round trip {first.stop_reason!r} {second.stop_reason!r} {results}")


def interrupt_round_trip_sync(fw: Framework, count: int, repeats: int) -> dict[str, Any]:
    """The same round trip through the blocking ``agent(...)`` call, as the interrupts guide writes it."""
    samples = []
    for _ in range(repeats):
        agents = [fw.agent(fw.cycles_model(1), [fw.add_one], [Approval(fw.hooks)]) for _ in range(count)]
        gc.collect()
        pairs = []
        start = time.perf_counter()
        for agent in agents:
            first = agent("go")
            pairs.append((first, agent(_answers(first))))
        samples.append((time.perf_counter() - start) * 1000 / count)
        for agent, (first, second) in zip(agents, pairs, strict=True):
            _check_round_trip(fw, agent, first, second)
    out = summary(samples)
    out["round_trips_per_sample"] = count
    return out


async def concurrent_batch(fw: Framework, repeats: int) -> dict[str, Any]:
    """Wall time of one batch of 50 tools that each sleep 50 ms (BeforeToolsEvent to AfterToolsEvent)."""
    batch, whole = [], []
    for _ in range(repeats):
        timer = BatchTimer(fw.hooks)
        agent = fw.agent(fw.batch_model(BATCH_TOOLS), [fw.nap], [timer])
        gc.collect()
        start = time.perf_counter()
        result = await agent.invoke_async("go")
        whole.append((time.perf_counter() - start) * 1000)
        batch.append((timer.after - timer.before) * 1000)
        results = _tool_results(agent.messages)
        if (
            result.stop_reason != "end_turn"
            or len(results) != BATCH_TOOLS
            or any(r["status"] != "success" for r in results)
        ):
            raise AssertionError(f"{fw.root}: batch run ended with {result.stop_reason!r}, {len(results)} results")
    return {"batch": summary(batch), "invocation": summary(whole), "tools": BATCH_TOOLS, "sleep_ms": NAP_SECONDS * 1000}


def run_framework(root: str, params: dict[str, Any], progress: Callable[[str], None]) -> dict[str, Any]:
    """Run every framework benchmark for ``root``."""
    fw = Framework(root)
    repeats = params["repeats"]
    out: dict[str, Any] = {}

    async def main() -> None:
        # Warm up every path once (imports, caches, specialisation) before measuring.
        await loop_cycles(fw, 10, 2, 1, hooked=False)
        await loop_cycles(fw, 10, 2, 1, hooked=True)
        await interrupt_round_trip(fw, 2, 1)
        await hook_delta(fw, 5, 2, 2)
        await dispatch_only(fw, 200, 1)
        await concurrent_batch(fw, 1)  # the first task group loads anyio's asyncio backend (about 10 ms)
        for hooked in (False, True):
            key = "hooks" if hooked else "loop"
            for cycles in params["cycles"]:
                progress(f"{root}: {key} {cycles} cycles")
                count = params["count_short"] if cycles <= 10 else 1
                out[f"{key}_{cycles}"] = await loop_cycles(fw, cycles, count, repeats, hooked)
        progress(f"{root}: hook dispatch delta ({params['delta_pairs']} pairs)")
        count = params["delta_count_strands"] if root == "strands" else params["delta_count"]
        out["hook_delta"] = await hook_delta(fw, params["delta_cycles"], count, params["delta_pairs"])
        progress(f"{root}: hook dispatch alone (cross-check)")
        out["dispatch_only"] = await dispatch_only(fw, 2000, repeats)
        progress(f"{root}: interrupt round trip")
        out["interrupt"] = await interrupt_round_trip(fw, params["round_trips"], repeats)
        progress(f"{root}: 50 x 50 ms tool batch")
        out["batch"] = await concurrent_batch(fw, repeats)

    asyncio.run(main())
    progress(f"{root}: interrupt round trip (blocking agent(...))")
    interrupt_round_trip_sync(fw, 2, 1)
    out["interrupt_sync"] = interrupt_round_trip_sync(fw, params["round_trips"], repeats)
    return out
