"""Tracing benchmark (issue 14): the loop's per-cycle cost with OpenTelemetry tracing on, side by side.

    bench/.venv/bin/python bench/bench_tracing.py [--quick] [--json PATH] [--strict]

Four workers, each in its own fresh subprocess: strandslike with tracing off (the default) and on, strands-agents
1.62 with tracing off (its no-op tracer, no provider set) and on. "On" means the global tracer provider is an
OpenTelemetry SDK `TracerProvider` with a `SimpleSpanProcessor` exporting to an `InMemorySpanExporter`, set before
any agent is built (strandslike additionally calls `strandslike.telemetry.enable_tracing()`). The scenario is
bench_core's loop: a scripted model calls `add_one` once per turn for N turns, then answers text. See
bench/README.md, "Tracing benchmark".
"""

import argparse
import asyncio
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

MODES = ("strandslike-off", "strandslike-on", "strandslike-empty", "strands-off", "strands-on")
FULL = {"rounds": 4, "repeats": 2, "cycles": [10, 200], "count_short": 20}
QUICK = {"rounds": 1, "repeats": 2, "cycles": [10, 200], "count_short": 10}
TARGETS = {
    "on_vs_off": 2.0,  # strandslike ms/cycle at 200 cycles, tracing on <= 2x tracing off
    "on_vs_strands_on": 1 / 20,  # ... and <= 1/20 of strands-agents' with its tracing on
}


def _progress(message: str) -> None:
    print(f"  .. {message}", file=sys.stderr, flush=True)


def _clean_env() -> dict[str, str]:
    """Children's environment: no OTEL_* settings (OTEL_SDK_DISABLED would turn the SDK off) and no tracing switch."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "STRANDSLIKE_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE), env.get("PYTHONPATH", "")) if p)
    return env


def _empty_spans() -> None:
    """Make strandslike's tracer start empty spans: no attributes, not made current (the floor of any tracer)."""
    from strandslike.telemetry import spans

    def start(self: Any, *args: Any) -> Any:
        return spans.SpanScope(self.tracer.start_span("span"), None, lambda token: None)

    def end(self: Any, scope: Any, *args: Any) -> None:
        scope.span.end()

    spans.SpanTracer.start_chat = start  # type: ignore[method-assign]
    spans.SpanTracer.start_tool = start  # type: ignore[method-assign]
    spans.SpanTracer.end_chat = end  # type: ignore[method-assign]
    spans.SpanTracer.end_tool = end  # type: ignore[method-assign]


def _exporter(tracing: bool, root: str) -> Any:
    if not tracing:
        return None
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    if root == "strandslike":
        from strandslike.telemetry import enable_tracing

        enable_tracing()
    return exporter


def worker(mode: str, params: dict[str, Any]) -> dict[str, Any]:
    """Measure ms per cycle for ``mode`` (``<framework>-<on|off>``)."""
    import gc

    from _scenarios import Framework
    from _workload import summary

    root, switch = mode.split("-")
    exporter = _exporter(switch in ("on", "empty"), root)
    if switch == "empty":
        _empty_spans()
    fw = Framework(root)
    out: dict[str, Any] = {}

    async def run_cycles(cycles: int, count: int) -> tuple[float, float, int]:
        agents = [fw.agent(fw.cycles_model(cycles), [fw.add_one]) for _ in range(count)]
        if exporter is not None:
            exporter.clear()
        gc.collect()
        start, cpu = time.perf_counter(), time.process_time()
        results = [await agent.invoke_async("go") for agent in agents]
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        for agent, result in zip(agents, results, strict=True):
            if result.stop_reason != "end_turn" or not fw.model_finished(agent.model):
                raise AssertionError(f"{mode}: {cycles}-cycle run ended with {result.stop_reason!r}")
        spans = 0
        if exporter is not None:
            spans = len(exporter.get_finished_spans()) // count
            exporter.clear()
            if spans < 2 * cycles:  # at least a model span and a tool span per cycle: tracing really ran
                raise AssertionError(f"{mode}: only {spans} spans for {cycles} cycles")
        return elapsed * 1000 / (count * cycles), cpu * 1000 / (count * cycles), spans

    async def main() -> None:
        await run_cycles(10, 2)  # warm-up: imports, caches, the tracer
        for cycles in params["cycles"]:
            _progress(f"{mode}: {cycles} cycles")
            count = params["count_short"] if cycles <= 10 else 1
            samples, cpu_samples, spans = [], [], 0
            for _ in range(params["repeats"]):
                per_cycle, cpu, spans = await run_cycles(cycles, count)
                samples.append(per_cycle)
                cpu_samples.append(cpu)
            out[f"loop_{cycles}"] = {**summary(samples), "cpu": summary(cpu_samples), "spans_per_invocation": spans}

    asyncio.run(main())
    if exporter is not None:
        out["sdk_floor"] = _sdk_floor(exporter, params["repeats"])
    from importlib.metadata import version

    out["version"] = version("strands-agents" if root == "strands" else root)
    return out


def _sdk_floor(exporter: Any, repeats: int) -> dict[str, Any]:
    """Ms for two empty spans started and ended on the global provider: the least a traced cycle can add."""
    import gc

    from _workload import summary
    from opentelemetry import trace

    tracer = trace.get_tracer("bench")
    samples = []
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        for _ in range(1000):
            tracer.start_span("chat").end()
            tracer.start_span("execute_tool").end()
        samples.append((time.perf_counter() - start) * 1000 / 1000)
        exporter.clear()
    return summary(samples)


def spawn_worker(mode: str, quick: bool, baseline: str | None = None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        worker_mode = "strandslike-off" if mode == "baseline-off" else mode
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", worker_mode, "--out", str(out)]
        if quick:
            cmd.append("--quick")
        env = _clean_env()
        if mode == "baseline-off" and baseline is not None:  # the baseline checkout's strandslike comes first
            env["PYTHONPATH"] = os.pathsep.join((baseline, env["PYTHONPATH"]))
        proc = subprocess.run(cmd, env=env, check=False, timeout=1800)
        if proc.returncode != 0 or not out.exists():
            raise SystemExit(f"worker {mode!r} failed with exit code {proc.returncode}")
        result: dict[str, Any] = json.loads(out.read_text())
        return result


def pool(results: list[dict[str, Any]]) -> dict[str, Any]:
    from _workload import summary

    pooled: dict[str, Any] = {}
    for key in results[0]:
        if key.startswith("loop_"):
            samples = [s for result in results for s in result[key]["samples"]]
            cpu = [s for result in results for s in result[key]["cpu"]["samples"]]
            spans = results[0][key]["spans_per_invocation"]
            pooled[key] = {**summary(samples), "cpu": summary(cpu), "spans_per_invocation": spans}
        elif key == "sdk_floor":
            pooled[key] = summary([s for result in results for s in result[key]["samples"]])
        else:
            pooled[key] = results[0][key]
    return pooled


def report(results: dict[str, Any], meta: dict[str, Any]) -> list[dict[str, Any]]:
    print(f"\nTracing bench ({meta['mode']} mode), ms per cycle, medians (best in brackets)")
    print(
        f"machine: nproc={os.cpu_count()}, CPython {platform.python_version()}, {platform.platform()}; "
        f"strands-agents {results['strands-on']['version']}, strandslike {results['strandslike-on']['version']} "
        f"({meta['checkout']}); {meta['when']}; load average {meta['load_before']} before, {meta['load_after']} after"
    )
    header = f"{'':34}" + "".join(f"{mode:>20}" for mode in MODES)
    print("(strandslike-empty: tracing on, but every span empty: no attributes, not made current)")
    print(header)
    for cycles in (10, 200):
        key = f"loop_{cycles}"
        cells = "".join(f"{results[m][key]['median']:>11.4f} [{results[m][key]['best']:.4f}]".rjust(20) for m in MODES)
        print(f"{'loop, ms/cycle @ ' + str(cycles) + ' cycles':34}{cells}")
        cells = "".join(
            f"{results[m][key]['cpu']['median']:>11.4f} [{results[m][key]['cpu']['best']:.4f}]".rjust(20) for m in MODES
        )
        print(f"{'  the same, CPU time of the process':34}{cells}")
        spans = "".join(f"{results[m][key]['spans_per_invocation'] or '-':>20}" for m in MODES)
        print(f"{'  spans exported per invocation':34}{spans}")

    def value(mode: str, stat: str) -> float:
        return float(results[mode]["loop_200"][stat])

    checks = []
    for label, target, numerator, denominator in (
        ("strandslike tracing on <= 2x tracing off @200", "on_vs_off", "strandslike-on", "strandslike-off"),
        ("strandslike on <= 1/20 of strands-agents on @200", "on_vs_strands_on", "strandslike-on", "strands-on"),
    ):
        median = value(numerator, "median") / value(denominator, "median")
        best = value(numerator, "best") / value(denominator, "best")
        limit = TARGETS[target]
        verdict = "PASS" if median <= limit else "FAIL"
        shown = (lambda v: f"1/{1 / v:.1f}") if limit < 1 else (lambda v: f"{v:.2f}x")
        print(f"{verdict}  {label}: {shown(median)} (best/best {shown(best)}; target {shown(limit)})")
        checks.append({"check": label, "value": median, "value_best": best, "target": limit, "verdict": verdict})
    for stat in ("median", "best"):
        empty_cpu = (
            results["strandslike-empty"]["loop_200"]["cpu"][stat] / results["strandslike-off"]["loop_200"]["cpu"][stat]
        )
        print(f"INFO  empty spans vs tracing off @200, CPU time ({stat}): {empty_cpu:.2f}x")
        cpu = results["strandslike-on"]["loop_200"]["cpu"][stat] / results["strandslike-off"]["loop_200"]["cpu"][stat]
        print(f"INFO  strandslike tracing on vs off @200, CPU time ({stat}): {cpu:.2f}x")
    floor = results["strandslike-on"]["sdk_floor"]["median"]
    off = value("strandslike-off", "median")
    added = value("strandslike-on", "median") - off
    empty = value("strandslike-empty", "median") - off
    print(
        f"INFO  two empty SDK spans in a tight loop: {floor:.4f} ms = {floor / off:.2f}x a cycle untraced; in the "
        f"agent loop they add {empty:.4f} ms (on/off {1 + empty / off:.2f}x: the floor of any tracer with a span "
        f"per model call and per tool call); strandslike's spans add {added:.4f} ms ({added / empty:.2f}x that)"
    )
    for label, numerator, denominator in (
        ("INFO  strandslike off vs strands-agents off @200", "strandslike-off", "strands-off"),
        ("INFO  strands-agents on vs off @200", "strands-on", "strands-off"),
        ("INFO  strandslike on: ms/cycle @200 vs @10 (flat)", "strandslike-on", None),
    ):
        if denominator is None:
            ratio = value(numerator, "median") / float(results[numerator]["loop_10"]["median"])
        else:
            ratio = value(numerator, "median") / value(denominator, "median")
        print(f"{label}: {ratio:.3g}x")
    if "baseline-off" in results:
        for cycles in (10, 200):
            key = f"loop_{cycles}"
            for clock in ("wall", "CPU"):
                ours, base = results["strandslike-off"][key], results["baseline-off"][key]
                if clock == "CPU":
                    ours, base = ours["cpu"], base["cpu"]
                print(
                    f"INFO  tracing off, this checkout vs the baseline @{cycles}, {clock}: {ours['median']:.4f} vs "
                    f"{base['median']:.4f} ms/cycle = {ours['median'] / base['median']:.3f}x "
                    f"(best {ours['best'] / base['best']:.3f}x)"
                )
    return checks


def _checkout() -> str:
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True, cwd=HERE
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "strandslike"], capture_output=True, text=True, cwd=HERE
        ).stdout.strip()
        return f"commit {commit}{' + uncommitted changes' if dirty else ''}"
    except (OSError, subprocess.CalledProcessError):
        return "unknown checkout"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="one round")
    parser.add_argument("--json", default=str(HERE / "results" / "tracing.json"), help="where to save the samples")
    parser.add_argument("--strict", action="store_true", help="exit 1 if a check fails")
    parser.add_argument(
        "--baseline",
        metavar="DIR",
        help="also run the loop untraced with the strandslike of DIR (e.g. `git archive BASE | tar -x -C DIR`), to "
        "check that tracing code costs nothing when tracing is off",
    )
    parser.add_argument("--worker", choices=MODES, help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    params = QUICK if args.quick else FULL
    if args.worker:
        Path(args.out).write_text(json.dumps(worker(args.worker, params)))
        return 0

    started = time.perf_counter()
    meta = {
        "mode": "quick" if args.quick else "full",
        "checkout": _checkout(),
        "when": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "load_before": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }
    modes = (*MODES, "baseline-off") if args.baseline else MODES
    runs: dict[str, list[dict[str, Any]]] = {mode: [] for mode in modes}
    for number in range(params["rounds"]):
        order = modes if number % 2 == 0 else tuple(reversed(modes))
        for mode in order:
            runs[mode].append(spawn_worker(mode, args.quick, args.baseline))
    results = {mode: pool(samples) for mode, samples in runs.items()}
    meta["load_after"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    checks = report(results, meta)
    print(f"({time.perf_counter() - started:.1f} s)")
    path = Path(args.json)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"meta": meta, "results": results, "checks": checks}, indent=1))
    if args.strict and any(check["verdict"] == "FAIL" for check in checks):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
