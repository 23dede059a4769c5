"""Where a traced cycle's time goes (issue 14's tracing overhead), for whoever makes it cheaper.

    bench/.venv/bin/python bench/profile_tracing.py spy [--no-gc] [--cycles 200 --runs 150]   # pip install py-spy
    bench/.venv/bin/python bench/profile_tracing.py ideas [--processor batch] [--baseline DIR]  # ways to make them
    bench/.venv/bin/python bench/profile_tracing.py calls                   # function calls per cycle, by owner
    bench/.venv/bin/python bench/profile_tracing.py ab --baseline DIR       # this SpanTracer against DIR's, in the loop
    bench/.venv/bin/python bench/profile_tracing.py gc                      # what garbage collection costs a cycle

``spy`` samples bench_core's traced loop (SimpleSpanProcessor, in-memory exporter) from outside the process and
splits its samples by owner: the OpenTelemetry SDK and API, strandslike's tracing code (``strandslike/telemetry``)
and the rest of the loop; then the SDK's own-time lines. A garbage collection is charged to the line whose
allocation triggered it; ``--no-gc`` disables the collector in the profiled process to show the split without it.
py-spy pauses the process to sample it, so shares are meaningful and absolute times are not.

``ideas`` times, in a tight loop inside a current parent span, each way of making the cycle's two spans that
bench/README.md ("Tracing benchmark") discusses, in turn, and prints each one's paired difference from the way
strandslike makes them. ``--baseline DIR`` adds two rows: this checkout's `SpanTracer` and DIR's (a checkout made
with ``git archive BASE | tar -x -C DIR``), each making a model call's and a tool call's spans for a real agent.

``calls`` counts (with cProfile, so load cannot disturb it) the function calls per cycle of the 200-cycle loop
untraced and traced, split by owner, and of the same cycle's two spans made by the SDK alone with no agent: a
measure of the work tracing adds that does not depend on the machine.

``ab`` runs the traced 200-cycle loop in one process with this checkout's `SpanTracer` and DIR's in turn (the
same SDK tracer, provider and exporter; only the tracer strandslike's components ask for differs) and prints the
paired difference: a change to the tracing code, measured in the loop, without the subprocess workers' bias.

``gc`` times (with ``gc.callbacks``) the collections the 200-cycle loop triggers, untraced and traced.
"""

import argparse
import asyncio
import collections
import gc
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


def _provider(processor: str) -> tuple[Any, Any]:
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(
        SimpleSpanProcessor(exporter) if processor == "simple" else BatchSpanProcessor(exporter)
    )
    trace.set_tracer_provider(provider)
    return provider, exporter


def _child(cycles: int, runs: int, no_gc: bool) -> None:
    """The profiled process: ``runs`` traced invocations of the ``cycles``-cycle loop."""
    if no_gc:
        gc.disable()
    from _scenarios import Framework

    from strandslike.telemetry import enable_tracing

    _, exporter = _provider("simple")
    enable_tracing()
    fw = Framework("strandslike")

    async def main() -> None:
        for _ in range(runs):
            agent = fw.agent(fw.cycles_model(cycles), [fw.add_one])
            exporter.clear()
            await agent.invoke_async("go")

    asyncio.run(main())


def spy(args: argparse.Namespace) -> None:
    spy_bin = Path(sys.executable).parent / "py-spy"
    if not spy_bin.exists():
        raise SystemExit(f"py-spy is not installed: {Path(sys.executable).parent / 'pip'} install py-spy")
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "raw.txt"
        cmd = [str(spy_bin), "record", "-r", "1000", "--full-filenames", "-f", "raw", "-o", str(raw), "--"]
        cmd += [sys.executable, __file__, "child", "--cycles", str(args.cycles), "--runs", str(args.runs)]
        cmd += ["--no-gc"] if args.no_gc else []
        subprocess.run(cmd, check=True, capture_output=True)
        lines = raw.read_text().splitlines()
    owners: collections.Counter[str] = collections.Counter()
    sdk_lines: collections.Counter[str] = collections.Counter()
    total = 0
    for line in lines:
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        start = next((i for i, frame in enumerate(frames) if frame.startswith("Agent.invoke_async ")), None)
        if start is None:  # building agents and models, outside bench_core's clock
            continue
        loop = frames[start:]
        total += int(count)
        # trace_agent wraps the whole invocation: only frames below it that are tracing code count as tracing.
        tracing = [i for i, frame in enumerate(loop) if "/telemetry/" in frame and "trace_agent" not in frame]
        sdk = next((i for i, frame in enumerate(loop) if "/opentelemetry/" in frame), None)
        if sdk is not None:
            owners["OpenTelemetry SDK and API (called by strandslike's tracing code)"] += int(count)
            sdk_lines[loop[-1].rsplit("/site-packages/", 1)[-1]] += int(count)
        elif tracing:
            owners["strandslike's tracing code itself (strandslike/telemetry)"] += int(count)
        else:
            owners["the loop's own work (what an untraced cycle does)"] += int(count)
    collector = "garbage collector disabled" if args.no_gc else "garbage collector on"
    print(f"py-spy, {total} samples of {args.runs} traced invocations of {args.cycles} cycles ({collector}), by owner:")
    for owner, count in owners.most_common():
        print(f"  {count / total:6.1%}  {owner}")
    print("the SDK's share by innermost line (garbage collection shows up in whatever line allocated):")
    for key, count in sdk_lines.most_common(args.top):
        print(f"  {count / total:6.1%}  {key}")


def _ways(tracer: Any) -> dict[str, Any]:
    """One model call's and one tool call's spans, made each way the README weighs; ``strandslike`` is its way."""
    from opentelemetry import context, trace

    attach, detach, in_context, current = context.attach, context.detach, trace.set_span_in_context, context.get_current
    client = trace.SpanKind.CLIENT
    chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "scripted"}
    tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "add_one", "gen_ai.tool.type": "function"}

    def end_chat(span: Any, reasons: Any) -> None:
        span.set_attributes(
            {"gen_ai.response.finish_reasons": reasons, "gen_ai.usage.input_tokens": 1, "gen_ai.usage.output_tokens": 1}
        )

    def strandslike() -> None:  # the current context read once, start attributes at creation, made current
        parent = current()
        span = tracer.start_span("chat scripted", context=parent, kind=client, attributes=chat)
        detach(attach(in_context(span, parent)))
        end_chat(span, ["tool_use"])
        span.end()
        parent = current()
        span = tracer.start_span(
            "execute_tool add_one", context=parent, attributes={**tool, "gen_ai.tool.call.id": "tooluse_1"}
        )
        detach(attach(in_context(span, parent)))
        span.end()

    def sdk_reads_context() -> None:  # main's way before: the SDK reads the current context three times per span
        span = tracer.start_span("chat scripted", kind=client, attributes=chat)
        detach(attach(in_context(span)))
        end_chat(span, ["tool_use"])
        span.end()
        span = tracer.start_span("execute_tool add_one", attributes={**tool, "gen_ai.tool.call.id": "tooluse_1"})
        detach(attach(in_context(span)))
        span.end()

    def reasons_tuple() -> None:  # main's way before: CPython never caches isinstance(tuple, Sequence)
        parent = current()
        span = tracer.start_span("chat scripted", context=parent, kind=client, attributes=chat)
        detach(attach(in_context(span, parent)))
        end_chat(span, ("tool_use",))
        span.end()
        parent = current()
        span = tracer.start_span(
            "execute_tool add_one", context=parent, attributes={**tool, "gen_ai.tool.call.id": "tooluse_1"}
        )
        detach(attach(in_context(span, parent)))
        span.end()

    def set_after_start() -> None:  # every attribute by set_attribute after creation: samplers never see them
        parent = current()
        span = tracer.start_span("chat scripted", context=parent, kind=client)
        detach(attach(in_context(span, parent)))
        for key, value in chat.items():
            span.set_attribute(key, value)
        span.set_attribute("gen_ai.response.finish_reasons", ["tool_use"])
        span.set_attribute("gen_ai.usage.input_tokens", 1)
        span.set_attribute("gen_ai.usage.output_tokens", 1)
        span.end()
        parent = current()
        span = tracer.start_span("execute_tool add_one", context=parent)
        detach(attach(in_context(span, parent)))
        for key, value in {**tool, "gen_ai.tool.call.id": "tooluse_1"}.items():
            span.set_attribute(key, value)
        span.end()

    def not_current() -> None:  # never made current: a tool's or provider's own spans would not nest under them
        span = tracer.start_span("chat scripted", kind=client, attributes=chat)
        end_chat(span, ["tool_use"])
        span.end()
        span = tracer.start_span("execute_tool add_one", attributes={**tool, "gen_ai.tool.call.id": "tooluse_1"})
        span.end()

    def empty() -> None:  # no attributes, not current: not a conventional span at all
        tracer.start_span("chat").end()
        tracer.start_span("execute_tool").end()

    return {
        "strandslike": strandslike,
        "SDK reads context": sdk_reads_context,
        "reasons as tuple": reasons_tuple,
        "set after start": set_after_start,
        "not current": not_current,
        "empty spans": empty,
    }


def _baseline_spans(baseline: str) -> Any:
    """DIR's ``strandslike/telemetry/spans.py``, loaded under this package (its relative imports resolve here)."""
    import importlib.util

    name = "strandslike.telemetry._baseline_spans"
    spec = importlib.util.spec_from_file_location(name, Path(baseline) / "strandslike" / "telemetry" / "spans.py")
    if spec is None or spec.loader is None:
        raise SystemExit(f"no strandslike/telemetry/spans.py under {baseline}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _span_tracers(tracer: Any, baseline: str) -> dict[str, Any]:
    """This checkout's `SpanTracer` and ``baseline``'s, each making one cycle's spans for a real agent."""
    from opentelemetry import trace

    from strandslike import Agent
    from strandslike.models import ScriptedModel, text
    from strandslike.telemetry import spans

    module = _baseline_spans(baseline)
    agent = Agent(model=ScriptedModel([text("-")]), callback_handler=None)
    use = {"toolUseId": "tooluse_1", "name": "add_one", "input": {"x": 1}}
    usage = {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}
    done = {"toolUseId": "tooluse_1", "status": "success", "content": [{"text": "2"}]}

    def cycle(span_tracer: Any) -> Any:
        def run() -> None:
            scope = span_tracer.start_chat(agent)
            span_tracer.end_chat(scope, "tool_use", usage)
            scope = span_tracer.start_tool(use, agent)
            span_tracer.end_tool(scope, done)

        return run

    # On the API's no-op tracer the SDK's work is gone and what is left is the tracer's own code (and the API's).
    noop = trace.NoOpTracer()
    return {
        "SpanTracer, this": cycle(spans.SpanTracer(tracer)),
        "SpanTracer, baseline": cycle(module.SpanTracer(tracer)),
        "no-op SDK, this": cycle(spans.SpanTracer(noop)),
        "no-op SDK, baseline": cycle(module.SpanTracer(noop)),
    }


def ideas(args: argparse.Namespace) -> None:
    from opentelemetry import context, trace

    provider, exporter = _provider(args.processor)
    tracer = trace.get_tracer("bench")
    ways = _ways(tracer)
    if args.baseline:
        ways.update(_span_tracers(tracer, args.baseline))
    parent = tracer.start_span("invoke_agent")
    token = context.attach(trace.set_span_in_context(parent))
    samples: dict[str, list[float]] = {name: [] for name in ways}
    for number in range(args.rounds):
        for name in list(ways) if number % 2 == 0 else reversed(list(ways)):
            exporter.clear()
            gc.collect()
            cpu = time.process_time()
            for done in range(1, args.n + 1):
                ways[name]()
                if done % 200 == 0:  # as the loop does per invocation; a batch queue (2048) would drop spans
                    provider.force_flush()
            provider.force_flush()
            if len(exporter.get_finished_spans()) != (0 if name.startswith("no-op") else 2 * args.n):
                raise AssertionError(f"{name}: {len(exporter.get_finished_spans())} spans for {args.n} cycles")
            samples[name].append((time.process_time() - cpu) * 1e6 / args.n)
    context.detach(token)
    parent.end()
    for kind in ("SpanTracer", "no-op SDK") if args.baseline else ():
        theirs, ours = samples[f"{kind}, baseline"], samples[f"{kind}, this"]
        deltas = [value - base for value, base in zip(theirs, ours, strict=True)]
        low, _, high = statistics.quantiles(deltas, n=4)
        print(
            f"{kind}: baseline {statistics.median(theirs):.2f}, this checkout {statistics.median(ours):.2f} us per "
            f"cycle; baseline - this, paired: {statistics.median(deltas):+.2f} (IQR {low:+.2f} to {high:+.2f})"
        )
    base = samples["strandslike"]
    print(f"us of CPU per cycle's two spans ({args.processor} processor), {args.rounds} rounds of {args.n}:")
    for name, values in samples.items():
        deltas = [value - ours for value, ours in zip(values, base, strict=True)]
        low, _, high = statistics.quantiles(deltas, n=4)
        print(
            f"  {name:18} median {statistics.median(values):6.2f}  vs strandslike, paired: "
            f"{statistics.median(deltas):+6.2f} (IQR {low:+.2f} to {high:+.2f})"
        )


def _count_calls(run: Any) -> collections.Counter[str]:
    """Function calls (Python and builtin) made by ``run()``, by owner."""
    import cProfile
    import pstats

    profile = cProfile.Profile()
    profile.enable()
    run()
    profile.disable()
    owners: collections.Counter[str] = collections.Counter()
    for (filename, _, _), (_, count, _, _, _) in pstats.Stats(profile).stats.items():  # type: ignore[attr-defined]
        if "/opentelemetry/" in filename:
            owners["OpenTelemetry"] += count
        elif "/strandslike/telemetry/" in filename:
            owners["strandslike/telemetry"] += count
        elif "/strandslike/" in filename or "/bench/" in filename:
            owners["strandslike's loop and the scenario"] += count
        elif filename == "~":
            owners["builtins"] += count
        else:
            owners["Python's library (asyncio, abc, enum...)"] += count
    return owners


def calls(args: argparse.Namespace) -> None:
    from _scenarios import Framework
    from bench_tracing import _sdk_cycles

    from strandslike.telemetry import disable_tracing, enable_tracing

    _, exporter = _provider("simple")
    fw = Framework("strandslike")
    cycles = args.cycles

    def loop(traced: bool) -> Any:
        (enable_tracing if traced else disable_tracing)()
        agent = fw.agent(fw.cycles_model(cycles), [fw.add_one])
        return lambda: asyncio.run(agent.invoke_async("go"))

    sdk = _sdk_cycles()["sdk"]
    loop(True)(), loop(False)()  # warm-up: imports and first-call caches
    counts = {
        "untraced loop": _count_calls(loop(False)),
        "traced loop": _count_calls(loop(True)),
        "SDK alone (the cycle's two spans, no agent)": _count_calls(lambda: sdk(cycles)),
    }
    exporter.clear()
    print(f"function calls per cycle ({cycles}-cycle invocations; asyncio.run's set-up included, spread over them)")
    for name, owners in counts.items():
        total = sum(owners.values())
        split = ", ".join(f"{owner} {count / cycles:.1f}" for owner, count in owners.most_common())
        print(f"  {name:44} {total / cycles:6.1f}  ({split})")
    added = sum(counts["traced loop"].values()) - sum(counts["untraced loop"].values())
    print(f"  {'added by tracing (traced - untraced)':44} {added / cycles:6.1f}")


def ab(args: argparse.Namespace) -> None:
    from _scenarios import Framework
    from opentelemetry import trace

    from strandslike.telemetry import enable_tracing, spans

    _, exporter = _provider("simple")
    enable_tracing()
    tracer = trace.get_tracer("strandslike")
    tracers = {"this": spans.SpanTracer(tracer), "baseline": _baseline_spans(args.baseline).SpanTracer(tracer)}
    fw = Framework("strandslike")
    cycles = args.cycles

    async def one(which: str) -> float:
        spans._active = tracers[which]  # what current_tracer() returns: enable_tracing() with this class
        agent = fw.agent(fw.cycles_model(cycles), [fw.add_one])
        exporter.clear()
        gc.collect()
        cpu = time.process_time()
        await agent.invoke_async("go")
        cpu = time.process_time() - cpu
        if len(exporter.get_finished_spans()) < 2 * cycles:
            raise AssertionError(f"{which}: {len(exporter.get_finished_spans())} spans for {cycles} cycles")
        return cpu * 1e6 / cycles

    async def main() -> dict[str, list[float]]:
        await one("this"), await one("baseline")  # warm-up
        samples: dict[str, list[float]] = {"this": [], "baseline": []}
        for number in range(args.pairs):
            for which in ("this", "baseline") if number % 2 else ("baseline", "this"):
                samples[which].append(await one(which))
        return samples

    samples = asyncio.run(main())
    deltas = [mine - theirs for mine, theirs in zip(samples["this"], samples["baseline"], strict=True)]
    low, _, high = statistics.quantiles(deltas, n=4)
    print(
        f"traced {cycles}-cycle loop, us of CPU per cycle: this checkout {statistics.median(samples['this']):.1f}, "
        f"baseline {statistics.median(samples['baseline']):.1f}; this - baseline, paired: "
        f"{statistics.median(deltas):+.2f} (IQR {low:+.2f} to {high:+.2f}, n={len(deltas)})"
    )


def collections_cost(args: argparse.Namespace) -> None:
    from _scenarios import Framework

    from strandslike.telemetry import disable_tracing, enable_tracing

    _, exporter = _provider("simple")
    fw = Framework("strandslike")
    cycles = args.cycles
    seen: dict[str, Any] = {"count": 0, "cpu": 0.0, "started": 0.0}

    def on_collection(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            seen["started"] = time.process_time()
            seen["count"] += 1
        else:
            seen["cpu"] += time.process_time() - seen["started"]

    async def one(traced: bool) -> tuple[float, float, int]:
        (enable_tracing if traced else disable_tracing)()
        agent = fw.agent(fw.cycles_model(cycles), [fw.add_one])
        exporter.clear()
        gc.collect()
        seen.update(count=0, cpu=0.0)
        cpu = time.process_time()
        await agent.invoke_async("go")
        cpu = time.process_time() - cpu
        return cpu * 1e6 / cycles, seen["cpu"] * 1e6 / cycles, seen["count"]

    async def main() -> dict[bool, list[tuple[float, float, int]]]:
        await one(True), await one(False)
        samples: dict[bool, list[tuple[float, float, int]]] = {False: [], True: []}
        for _ in range(args.pairs):
            for traced in (False, True):
                samples[traced].append(await one(traced))
        return samples

    gc.callbacks.append(on_collection)
    samples = asyncio.run(main())
    gc.callbacks.remove(on_collection)
    print(f"{cycles}-cycle invocations, {args.pairs} each, medians, us of CPU per cycle:")
    for traced, rows in samples.items():
        total, collecting, count = (statistics.median(row[i] for row in rows) for i in range(3))
        print(
            f"  {'traced' if traced else 'untraced':8} {total:6.1f}, of which garbage collection {collecting:4.1f} "
            f"({count:.0f} collections per invocation)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    spy_parser = sub.add_parser("spy", help="py-spy the traced loop")
    spy_parser.add_argument("--cycles", type=int, default=200)
    spy_parser.add_argument("--runs", type=int, default=150)
    spy_parser.add_argument("--top", type=int, default=15)
    spy_parser.add_argument("--no-gc", action="store_true", help="disable the garbage collector while profiling")
    child = sub.add_parser("child")
    child.add_argument("--no-gc", action="store_true")
    child.add_argument("--cycles", type=int, default=200)
    child.add_argument("--runs", type=int, default=150)
    ideas_parser = sub.add_parser("ideas", help="time ways of making the cycle's spans")
    ideas_parser.add_argument("--processor", choices=("simple", "batch"), default="simple")
    ideas_parser.add_argument("--rounds", type=int, default=15)
    ideas_parser.add_argument("--n", type=int, default=3000)
    ideas_parser.add_argument("--baseline", metavar="DIR", help="also time DIR's SpanTracer against this one's")
    calls_parser = sub.add_parser("calls", help="count function calls per cycle, by owner")
    calls_parser.add_argument("--cycles", type=int, default=200)
    ab_parser = sub.add_parser("ab", help="this SpanTracer against DIR's, in the traced loop")
    ab_parser.add_argument("--baseline", metavar="DIR", required=True)
    ab_parser.add_argument("--cycles", type=int, default=200)
    ab_parser.add_argument("--pairs", type=int, default=60)
    gc_parser = sub.add_parser("gc", help="what garbage collection costs the loop, untraced and traced")
    gc_parser.add_argument("--cycles", type=int, default=200)
    gc_parser.add_argument("--pairs", type=int, default=20)
    args = parser.parse_args()
    if args.command == "gc":
        collections_cost(args)
    elif args.command == "ab":
        ab(args)
    elif args.command == "calls":
        calls(args)
    elif args.command == "child":
        _child(args.cycles, args.runs, args.no_gc)
    elif args.command == "spy":
        spy(args)
    else:
        ideas(args)


if __name__ == "__main__":
    main()
