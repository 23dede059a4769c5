"""Core benchmarks of issue 2: strandslike vs strands-agents 1.62, side by side in one run.

    bench/.venv/bin/python bench/bench_core.py [--quick] [--json PATH] [--strict]

Each framework (and the framework-free floor) runs in its own fresh subprocess of this script, launched by this
run one after the other, so neither framework's imports or garbage shape the other's figures. Imports are timed
in fresh interpreters. The run ends with a table and PASS/FAIL verdicts computed from this run's figures only.
See bench/README.md for what each figure means.
"""

import argparse
import asyncio
import datetime
import json
import os
import platform
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

# Each round runs the floor and both frameworks once, each in a fresh subprocess; rounds alternate the order, and
# their samples are pooled, so load from other processes drifting during the run hits both frameworks alike.
FULL = {"rounds": 4, "repeats": 2, "cycles": [10, 200], "count_short": 20, "round_trips": 50, "import_runs": 15}
QUICK = {"rounds": 1, "repeats": 3, "cycles": [10, 200], "count_short": 10, "round_trips": 20, "import_runs": 5}
# Hook dispatch delta (benchmark 2c): pairs of (plain, hooked) batches of 20-cycle invocations, per round.
FULL |= {"delta_cycles": 20, "delta_pairs": 10, "delta_count": 20, "delta_count_strands": 4}
QUICK |= {"delta_cycles": 20, "delta_pairs": 8, "delta_count": 10, "delta_count_strands": 3}

TARGETS = {
    "loop_vs_strands": 1 / 50,  # strandslike ms/cycle at 200 cycles <= 1/50 of strands-agents'
    "hooks_vs_strands": 1 / 50,  # the same with 10 hook providers x 5 events
    "hook_delta_vs_strands": 0.5,  # hook dispatch cost per dispatched callback <= 1/2 of strands-agents' (issue 12)
    "loop_vs_floor": 10.0,  # ... and <= 10x the floor
    "interrupt_vs_strands": 1 / 10,  # interrupt round trip <= 1/10 of strands-agents'
    "import_vs_strands": 0.15,  # import strandslike; from strandslike import Agent <= 0.15x import strands
    "batch_ms": 52.5,  # 50 tools x 50 ms in one batch <= 1.05 x 50 ms
    "flat": 1.25,  # strandslike ms/cycle at 200 cycles <= 1.25x that at 10 cycles
}


def _progress(message: str) -> None:
    print(f"  .. {message}", file=sys.stderr, flush=True)


def _clean_env() -> dict[str, str]:
    """The environment for child interpreters: no OpenTelemetry exporter configuration, no bytecode suppression."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_") and k != "PYTHONDONTWRITEBYTECODE"}
    env["OTEL_SDK_DISABLED"] = "true"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE), env.get("PYTHONPATH", "")) if p)
    return env


# ---------------------------------------------------------------------------------------------------- workers


def run_floor(params: dict[str, Any]) -> dict[str, Any]:
    """The floor: the same per-cycle work in bare asyncio."""
    import _floor
    from _workload import add_one, batch_script, cycles_script, nap, summary, timed_batch

    out: dict[str, Any] = {}

    async def main() -> None:
        async def run(turns: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
            return await _floor.invoke(turns, {"add_one": add_one})

        await timed_batch(lambda: cycles_script(10), run, 2)  # warm-up
        for cycles in params["cycles"]:
            _progress(f"floor: {cycles} cycles")
            count = params["count_short"] if cycles <= 10 else 1
            samples = []
            for _ in range(params["repeats"]):
                elapsed, done = await timed_batch(lambda c=cycles: cycles_script(c), run, count)
                samples.append(elapsed * 1000 / (count * cycles))
                if any(len(messages) != 2 * cycles + 2 for _, messages in done):
                    raise AssertionError("floor: wrong history length")
            out[f"loop_{cycles}"] = summary(samples)

        async def run_batch(turns: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
            return await _floor.invoke(turns, {"nap": nap}, concurrent=True)

        _progress("floor: 50 x 50 ms tool batch")
        await timed_batch(lambda: batch_script(50), run_batch, 1)  # warm-up
        samples = []
        for _ in range(params["repeats"]):
            elapsed, _done = await timed_batch(lambda: batch_script(50), run_batch, 1)
            samples.append(elapsed * 1000)
        out["batch"] = {"invocation": summary(samples)}

    asyncio.run(main())
    return out


def worker(name: str, params: dict[str, Any]) -> dict[str, Any]:
    if name == "floor":
        result = run_floor(params)
        result["version"] = platform.python_version()
        return result
    from importlib.metadata import version

    from _scenarios import run_framework

    result = run_framework(name, params, _progress)
    result["version"] = version("strands-agents" if name == "strands" else name)
    return result


def spawn_worker(name: str, quick: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", name, "--out", str(out)]
        if quick:
            cmd.append("--quick")
        start = time.perf_counter()
        proc = subprocess.run(cmd, env=_clean_env(), check=False, timeout=900)
        if proc.returncode != 0 or not out.exists():
            raise SystemExit(f"worker {name!r} failed with exit code {proc.returncode}")
        result: dict[str, Any] = json.loads(out.read_text())
        result["worker_seconds"] = round(time.perf_counter() - start, 1)
        return result


def pool(first: Any, second: Any) -> Any:
    """Merge two workers' results: sample lists are concatenated and their summaries recomputed."""
    from _workload import summary

    if isinstance(first, dict) and isinstance(second, dict):
        if "samples" in first and "samples" in second:
            return {**first, **summary(first["samples"] + second["samples"])}
        return {key: pool(value, second[key]) if key in second else value for key, value in first.items()}
    if isinstance(first, int | float) and isinstance(second, int | float) and not isinstance(first, bool):
        return first + second if isinstance(first, float) else first  # worker seconds add up; counts stay
    return first


# ---------------------------------------------------------------------------------------------------- imports


def bench_imports(runs: int) -> dict[str, Any]:
    """Wall time of ``python -c "import X"`` minus ``python -c "pass"``, fresh interpreter each, interleaved.

    strandslike's statement imports the agent too (`strandslike` exports its names lazily, so a bare
    ``import strandslike`` would load almost nothing); ``import strands`` loads its Agent already.
    """
    statements = {
        "pass": "pass",
        "strandslike": "import strandslike; from strandslike import Agent",
        "strands": "import strands",
    }
    env = _clean_env()
    env.pop("PYTHONPATH", None)
    cwd = tempfile.gettempdir()

    def once(code: str) -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, check=True)
        return (time.perf_counter() - start) * 1000

    for code in statements.values():  # warm-up: bytecode caches written, files in the page cache
        once(code)
    times: dict[str, list[float]] = {name: [] for name in statements}
    for _ in range(runs):
        for name, code in statements.items():
            times[name].append(once(code))
    out: dict[str, Any] = {"runs": runs, "raw_ms": {k: [round(v, 2) for v in vs] for k, vs in times.items()}}
    for name in ("strandslike", "strands"):
        out[name] = {
            "median": statistics.median(times[name]) - statistics.median(times["pass"]),
            "best": min(times[name]) - min(times["pass"]),
        }
    out["interpreter"] = {"median": statistics.median(times["pass"]), "best": min(times["pass"])}
    return out


# ---------------------------------------------------------------------------------------------------- report


def _fmt(value: float | None, unit: str = "ms") -> str:
    if value is None:
        return "-"
    if unit == "x":
        return f"{value:.3g}x"
    if value >= 100:
        return f"{value:.1f}"
    if value >= 1:
        return f"{value:.3f}"
    return f"{value:.4f}"


def build_report(results: dict[str, Any]) -> tuple[list[list[str]], list[dict[str, Any]]]:
    ours, theirs, floor, imports = results["strandslike"], results["strands"], results["floor"], results["imports"]
    rows: list[list[str]] = []

    def row(label: str, key: tuple[str, ...], with_floor: bool = False) -> None:
        def get(data: dict[str, Any]) -> float | None:
            node: Any = data
            for part in key:
                if not isinstance(node, dict) or part not in node:
                    return None
                node = node[part]
            return float(node["median"])

        s, o = get(theirs), get(ours)
        f = get(floor) if with_floor else None
        ratio = f"{s / o:.1f}x" if s is not None and o else "-"
        rows.append([label, _fmt(s), _fmt(o), _fmt(f), ratio])

    for cycles in (10, 200):
        row(f"1. loop, ms/cycle @ {cycles} cycles", (f"loop_{cycles}",), with_floor=True)
    for cycles in (10, 200):
        row(f"2. 10 providers x 5 events, ms/cycle @ {cycles}", (f"hooks_{cycles}",))
    delta_theirs, delta_ours = theirs.get("hook_delta"), ours.get("hook_delta")
    if delta_theirs and delta_ours:
        s, o = float(delta_theirs["median"]), float(delta_ours["median"])
        label = "2c. hook dispatch per dispatched callback, us (20 cycles)"
        rows.append([label, f"{s:.3f}", f"{o:.3f}", "-", f"{s / o:.1f}x" if o > 0 else "-"])
    alone_theirs, alone_ours = theirs.get("dispatch_only"), ours.get("dispatch_only")
    if alone_theirs and alone_ours:
        s, o = float(alone_theirs["median"]), float(alone_ours["median"])
        rows.append(["2d. the same, registry alone (cross-check), us", f"{s:.3f}", f"{o:.3f}", "-", f"{s / o:.1f}x"])
    row("3. interrupt round trip, ms (invoke_async)", ("interrupt",))
    row("3b. interrupt round trip, ms (blocking agent())", ("interrupt_sync",))
    row("4. 50 x 50 ms batch, ms (BeforeTools->AfterTools)", ("batch", "batch"))
    row("4b. 50 x 50 ms batch, whole invocation, ms", ("batch", "invocation"), with_floor=True)
    for stat in ("median", "best"):
        s, o = imports["strands"][stat], imports["strandslike"][stat]
        label = f"5{'' if stat == 'median' else 'b'}. import Agent ({stat}, minus bare interpreter), ms"
        rows.append([label, _fmt(s), _fmt(o), "-", f"{s / o:.1f}x"])

    def figure(data: dict[str, Any], key: str, stat: str) -> float:
        node: Any = data
        for part in key.split("/"):
            node = node[part]
        return float(node[stat])

    def ratio(a: tuple[dict[str, Any], str], b: tuple[dict[str, Any], str]) -> Any:
        return lambda stat: figure(*a, stat) / figure(*b, stat)

    def one_over(v: float) -> str:
        return f"1/{1 / v:.1f}"

    def times(v: float) -> str:
        return f"{v:.3g}x"

    def ms(v: float) -> str:
        return f"{v:.2f} ms"

    specs = [
        ("strandslike ms/cycle @200 <= 1/50 of strands-agents'", "loop_vs_strands", one_over,
         ratio((ours, "loop_200"), (theirs, "loop_200"))),
        ("... with 10 hook providers: <= 1/50 of strands-agents'", "hooks_vs_strands", one_over,
         ratio((ours, "hooks_200"), (theirs, "hooks_200"))),
        ("strandslike ms/cycle @200 <= 10x the floor", "loop_vs_floor", times,
         ratio((ours, "loop_200"), (floor, "loop_200"))),
        ("hook dispatch per callback, in the loop (2c): <= 1/2", "hook_delta_vs_strands", times,
         ratio((ours, "hook_delta"), (theirs, "hook_delta"))),
        ("interrupt round trip <= 1/10 of strands-agents'", "interrupt_vs_strands", one_over,
         ratio((ours, "interrupt"), (theirs, "interrupt"))),
        ("import strandslike + Agent <= 0.15x import strands", "import_vs_strands", times,
         ratio((imports, "strandslike"), (imports, "strands"))),
        ("50 x 50 ms batch <= 52.5 ms (strandslike)", "batch_ms", ms,
         lambda stat: figure(ours, "batch/batch", stat)),
        ("strandslike flat: ms/cycle @200 <= 1.25x @10", "flat", times,
         ratio((ours, "loop_200"), (ours, "loop_10"))),
    ]  # fmt: skip
    if "dispatch_only" in ours and "dispatch_only" in theirs:
        specs.insert(
            next(i for i, spec in enumerate(specs) if "(2c)" in spec[0]) + 1,
            (
                "... the same, registry alone (2d): <= 1/2",
                "hook_delta_vs_strands",
                times,
                ratio((ours, "dispatch_only"), (theirs, "dispatch_only")),
            ),
        )
    noisy = _noisy_delta(theirs.get("hook_delta")) or _noisy_delta(ours.get("hook_delta"))
    checks = []
    for label, target, show, value in specs:
        median, best = value("median"), value("best")
        limit = TARGETS[target]
        verdict = "PASS" if 0 < median <= limit else "FAIL"
        verdict_best = "PASS" if 0 < best <= limit else "FAIL"
        if "(2c)" in label and noisy:
            # strands-agents' 20-cycle invocation is 28 ms and the hooks add 3 %: on a busy machine the pairs
            # scatter by more than that, and the median says nothing. 2d measures the same cost, steadily.
            verdict = verdict_best = "NOISY"
        checks.append(
            {
                "check": label,
                "target": target,
                "value": median,
                "value_best": best,
                "limit": limit,
                "shown": show(median),
                "shown_best": show(best),
                "verdict": verdict,
                "verdict_best": verdict_best,
            }
        )
    return rows, checks


def _noisy_delta(delta: dict[str, Any] | None) -> bool:
    """Whether a 2c figure is too scattered to judge: its middle half spans more than its median."""
    if not delta:
        return False
    samples = sorted(delta["samples"])
    q1, q3 = samples[len(samples) // 4], samples[(3 * len(samples)) // 4]
    return bool(delta["median"] <= 0 or q3 - q1 > abs(delta["median"]))


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]

    def line(r: list[str]) -> str:
        cells = zip(r, widths, strict=True)
        return "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(cells))

    return "\n".join([line(header), "  ".join("-" * w for w in widths), *map(line, rows)])


def machine() -> dict[str, Any]:
    return {
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M:%S %Z"),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "nproc": os.cpu_count(),
        "executable": sys.executable,
        "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
        **_git(),
    }


def _git() -> dict[str, Any]:
    """The checkout measured: commit and uncommitted changes to the package (read-only git commands)."""

    def git(*args: str) -> str:
        try:
            proc = subprocess.run(["git", *args], cwd=HERE.parent, capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return ""
        return proc.stdout.strip() if proc.returncode == 0 else ""

    changed = [line[3:] for line in git("status", "--porcelain", "--", "strandslike").splitlines()]
    return {"commit": git("rev-parse", "--short", "HEAD") or "unknown", "uncommitted": changed}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repeats (about a third of the time)")
    parser.add_argument("--json", type=Path, default=HERE / "results" / "latest.json", help="where to save results")
    parser.add_argument("--strict", action="store_true", help="exit with status 1 if any check FAILs")
    parser.add_argument("--worker", choices=["floor", "strandslike", "strands"], help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--report", type=Path, help="print the report of a saved results file; run nothing")
    args = parser.parse_args()
    params = QUICK if args.quick else FULL

    if args.worker:
        args.out.write_text(json.dumps(worker(args.worker, params)))
        return 0

    if args.report:
        return report(json.loads(args.report.read_text()), args.strict)

    started = time.perf_counter()
    info = machine()
    mode = "quick" if args.quick else "full"
    _progress(f"{mode} run: {params['rounds']} round(s) of {params['repeats']} samples per figure")
    results: dict[str, Any] = {"machine": info, "params": params}
    order = ["floor", "strandslike", "strands"]
    for round_index in range(params["rounds"]):
        _progress(f"round {round_index + 1} of {params['rounds']}: {', '.join(order)}")
        for name in order:
            result = spawn_worker(name, args.quick)
            results[name] = pool(results[name], result) if name in results else result
        order.reverse()
    _progress(f"imports: {params['import_runs']} interleaved runs each")
    results["imports"] = bench_imports(params["import_runs"])
    results["seconds"] = round(time.perf_counter() - started, 1)
    results["machine"]["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]

    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2) + "\n")  # saved before reporting, in case that fails
    status = report(results, args.strict)
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    print(f"results saved to {args.json}")
    return status


def report(results: dict[str, Any], strict: bool) -> int:
    info, params = results["machine"], results["params"]
    print(f"strandslike vs strands-agents: {info['date']}, Python {info['python']}, nproc {info['nproc']}")
    dirty = f", {len(info['uncommitted'])} uncommitted file(s) in strandslike/" if info["uncommitted"] else ""
    print(f"checkout: {info['commit']}{dirty}")
    samples = params["rounds"] * params["repeats"]
    print(f"median of {samples} samples per figure ({params['rounds']} round(s) of {params['repeats']})")
    rows, checks = build_report(results)
    results["checks"] = checks
    versions = f"strands-agents {results['strands']['version']}, strandslike {results['strandslike']['version']}"
    print(f"\n{versions}; medians in ms (lower is better); ratio = strands-agents / strandslike\n")
    print(_table(["benchmark", "strands-agents", "strandslike", "floor", "ratio"], rows))
    hooks = results["strandslike"]["hooks_10"].get("hook_calls"), results["strands"]["hooks_10"].get("hook_calls")
    print(f"\nhook callbacks per 10-cycle invocation (strandslike, strands-agents): {hooks[0]}, {hooks[1]}")
    delta = results["strandslike"].get("hook_delta"), results["strands"].get("hook_delta")
    if all(delta):
        print(
            f"hook dispatch delta (2c), us per dispatched callback, median of {len(delta[0]['samples'])} pairs: "
            f"strandslike {delta[0]['median']:.3f} (best {delta[0]['best']:.3f}), strands-agents "
            f"{delta[1]['median']:.3f} (best {delta[1]['best']:.3f}); callbacks per 20-cycle invocation "
            f"{delta[0]['callbacks_per_invocation']}, {delta[1]['callbacks_per_invocation']}; "
            f"ms per invocation plain/hooked: strandslike {delta[0]['plain_ms_per_invocation']:.4f}/"
            f"{delta[0]['hooked_ms_per_invocation']:.4f}, strands-agents {delta[1]['plain_ms_per_invocation']:.3f}/"
            f"{delta[1]['hooked_ms_per_invocation']:.3f}"
        )
    loop = results["strandslike"]
    print(
        f"strandslike ms/cycle: {loop['loop_10']['median']:.4f} @10, {loop['loop_200']['median']:.4f} @200 "
        f"(no hooks); {loop['hooks_10']['median']:.4f} @10, {loop['hooks_200']['median']:.4f} @200 (hooks)"
    )
    print()
    print(
        _table(
            ["check (verdict from medians)", "median", "verdict", "best", "(from best)"],
            [[c["check"], c["shown"], c["verdict"], c["shown_best"], c["verdict_best"]] for c in checks],
        )
    )
    info = results["machine"]
    load = f"load average {info['loadavg_at_start'][0]} at start, {info.get('loadavg_at_end', ['?'])[0]} at end"
    print(f"\ntotal {results['seconds']} s; {load} on {info['nproc']} CPUs")
    if max(info["loadavg_at_start"][0], info.get("loadavg_at_end", [0])[0]) > 0.5 * (info["nproc"] or 1):
        print("warning: other processes were busy during the run; timings (the 50 ms batch above all) are noisy")

    failed = [c for c in checks if c["verdict"] == "FAIL"]
    return 1 if strict and failed else 0


if __name__ == "__main__":
    sys.exit(main())
