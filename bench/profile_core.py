"""Where the time goes: profile one core benchmark scenario, for whoever makes it faster.

    bench/.venv/bin/python bench/profile_core.py interrupt            # cProfile, scaled to us per round trip
    bench/.venv/bin/python bench/profile_core.py interrupt --py-spy   # sampling (needs `pip install py-spy`)
    bench/.venv/bin/python bench/profile_core.py loop|hooks|batch [--framework strands]
    bench/.venv/bin/python bench/profile_core.py import               # what importing strandslike's Agent spends

cProfile's per-call overhead inflates call-heavy code, so its figures are scaled to the unprofiled time and are
approximate; py-spy samples from outside the process and does not distort the run (it needs ptrace rights).
"""

import argparse
import asyncio
import collections
import cProfile
import gc
import io
import pstats
import re
import shutil
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

CHUNK = 50  # agents built per chunk, outside the clock, as in bench_core


def _scenario(name: str, fw: Any) -> tuple[Any, Any, str]:
    """(build, run, unit) for a scenario; `run` awaits one unit of work on a built subject."""
    from _scenarios import HOOK_PROVIDERS, HOOKED_EVENTS, Approval, CountingProvider, _answers

    if name == "interrupt":

        async def round_trip(agent: Any) -> None:
            first = await agent.invoke_async("go")
            await agent.invoke_async(_answers(first))

        return lambda: fw.agent(fw.cycles_model(1), [fw.add_one], [Approval(fw.hooks)]), round_trip, "round trip"
    if name in ("loop", "hooks"):
        events = [getattr(fw.hooks, event) for event in HOOKED_EVENTS]

        def build() -> Any:
            hooks = [CountingProvider(events) for _ in range(HOOK_PROVIDERS)] if name == "hooks" else []
            return fw.agent(fw.cycles_model(200), [fw.add_one], hooks)

        async def cycles(agent: Any) -> None:
            await agent.invoke_async("go")

        return build, cycles, "cycle (of a 200-cycle run)"
    if name == "batch":
        import _workload

        _workload.NAP_SECONDS = 0.0  # profile the framework's work, not the sleeping

        async def batch(agent: Any) -> None:
            await agent.invoke_async("go")

        return lambda: fw.agent(fw.batch_model(50), [fw.nap]), batch, "50-tool batch invocation (tools sleep 0)"
    raise SystemExit(f"unknown scenario {name!r}")


async def _drive(
    build: Any, run: Any, units: int, chunk: int, profiler: cProfile.Profile | None, collect: bool = True
) -> float:
    """Run ``units`` units in chunks of freshly built subjects; return the clocked seconds."""
    total = 0.0
    done = 0
    while done < units:
        subjects = [build() for _ in range(min(chunk, units - done))]
        if collect:  # not under py-spy, which would charge the collection to the caller's frame
            gc.collect()
        if profiler is not None:
            profiler.enable()
        start = time.perf_counter()
        for subject in subjects:
            await run(subject)
        total += time.perf_counter() - start
        if profiler is not None:
            profiler.disable()
        done += len(subjects)
    return total


def profile_runtime(args: argparse.Namespace) -> None:
    from _scenarios import Framework

    fw = Framework(args.framework)
    build, run, unit = _scenario(args.scenario, fw)
    per_unit = 200 if args.scenario in ("loop", "hooks") else 1  # a loop "unit" is one 200-cycle invocation
    units = args.n or (20 if per_unit > 1 else 3000) * (5 if args.py_spy or args.spy_child else 1)
    chunk = 1 if per_unit > 1 else CHUNK

    if args.spy_child:
        elapsed = asyncio.run(_drive(build, run, units, chunk, None, collect=False))
        print(f"{elapsed / (units * per_unit) * 1e6:.3f}", file=sys.stderr)
        return

    asyncio.run(_drive(build, run, max(units // 10, 1), chunk, None))  # warm-up
    plain = asyncio.run(_drive(build, run, units, chunk, None)) / (units * per_unit) * 1e6
    print(f"{args.framework} {args.scenario}: {plain:.2f} us per {unit} (unprofiled)")
    if args.py_spy:
        _py_spy(args, plain)
        return
    profiler = cProfile.Profile()
    profiled_total = asyncio.run(_drive(build, run, units, chunk, profiler))
    scale = plain / (profiled_total / (units * per_unit) * 1e6)
    stats = pstats.Stats(profiler)
    rows = []
    for (path, line, func), (_cc, calls, tottime, cumtime, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        short = re.sub(r".*/(strandslike|strands|site-packages|python3\.\d+)/", r"\1/", path)
        rows.append((tottime, cumtime, calls, f"{func} ({short}:{line})"))
    norm = units * per_unit
    print(f"cProfile, scaled by {scale:.2f} to the unprofiled time; us per {unit}:")
    for title, key in (("by own time", 0), ("by cumulative time", 1)):
        print(f"\n{'own us':>8} {'cum us':>8} {'calls':>7}  function   [{title}]")
        for tottime, cumtime, calls, label in sorted(rows, key=lambda r: -r[key])[: args.top]:
            print(
                f"{tottime / norm * 1e6 * scale:8.2f} {cumtime / norm * 1e6 * scale:8.2f} {calls / norm:7.2f}  {label}"
            )


def _py_spy(args: argparse.Namespace, plain: float) -> None:
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not Path(spy).exists():
        raise SystemExit("py-spy is not installed: bench/.venv/bin/pip install py-spy")
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "raw.txt"
        cmd = [spy, "record", "-r", "1000", "-f", "raw", "-o", str(raw), "--", sys.executable, __file__]
        cmd += [args.scenario, "--framework", args.framework, "--spy-child"] + (["--n", str(args.n)] if args.n else [])
        subprocess.run(cmd, check=True, capture_output=True)
        lines = raw.read_text().splitlines()
    # Every frame run by the event loop (tasks included), minus the untimed building of agents and models.
    inclusive: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    total = 0
    for line in lines:
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        start = next((i for i, f in enumerate(frames) if f.startswith("Handle._run ")), None)
        if start is None or any(re.match(r"(Framework\.|build|<lambda>)", f) for f in frames[start:]):
            continue
        keys = [re.sub(r"\((?:.*/)?((?:[^/]+/)?[^/:]+)(?::\d+)?\)$", r"(\1)", f) for f in frames[start + 1 :]]
        if not keys:
            continue
        total += int(count)
        for key in set(keys):
            inclusive[key] += int(count)
        own[keys[-1]] += int(count)
    print(f"py-spy: {total} samples, shares scaled to {plain:.2f} us per unit")
    for title, counter in (("by inclusive time", inclusive), ("by own time", own)):
        print(f"\n{'incl us':>8} {'own us':>8}  function   [{title}]")
        for key, _n in counter.most_common(args.top):
            print(f"{inclusive[key] / total * plain:8.2f} {own[key] / total * plain:8.2f}  {key}")


def profile_import(args: argparse.Namespace) -> None:
    """Import strandslike with its dependencies already loaded, to split its import time by cause."""
    preloads = {
        "nothing": "",
        "pydantic": "from pydantic import BaseModel, Field, ValidationError, create_model",
        "pydantic, asyncio": "from pydantic import BaseModel, Field, ValidationError, create_model; import asyncio",
        "every dependency": "from pydantic import BaseModel, Field, ValidationError, create_model; "
        "import asyncio, inspect, anyio, pluggy, json, uuid, logging, dataclasses, typing, re, threading, copy",
    }
    runs = args.n or 11
    statement = "import strandslike; from strandslike import Agent"
    print(f"in-process `{statement}` time, median of {runs} fresh interpreters, with preloaded:")
    for label, preload in preloads.items():
        code = (
            f"{preload}\nimport time\nt = time.perf_counter()\nimport strandslike\nfrom strandslike import Agent\n"
            "print(time.perf_counter() - t)"
        )
        values = [
            float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
            for _ in range(runs)
        ]
        print(f"  {statistics.median(values) * 1000:7.1f} ms  {label}")
    err = io.StringIO(
        subprocess.run(
            [sys.executable, "-X", "importtime", "-c", "import strandslike; from strandslike import Agent"],
            capture_output=True,
            text=True,
        ).stderr
    )
    rows = []
    for line in err:
        match = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if match:
            rows.append((int(match[1]), int(match[2]), match[4]))
    by_top: collections.Counter[str] = collections.Counter()
    for own_us, _cum, name in rows:
        by_top[name.split(".")[0]] += own_us
    print("\n-X importtime, own time by top-level package (importtime inflates the totals):")
    for name, own_us in by_top.most_common(args.top):
        print(f"  {own_us / 1000:7.1f} ms  {name}")
    print("\nstrandslike modules by cumulative time (first importer of each dependency pays for it):")
    for own_us, cum, name in sorted((r for r in rows if r[2].startswith("strandslike")), key=lambda r: -r[1])[:15]:
        print(f"  {cum / 1000:7.1f} ms cum {own_us / 1000:6.1f} ms own  {name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenario", choices=["interrupt", "loop", "hooks", "batch", "import"])
    parser.add_argument("--framework", choices=["strandslike", "strands"], default="strandslike")
    parser.add_argument("--n", type=int, help="units of work (or interpreters for import)")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--py-spy", action="store_true", help="sample with py-spy instead of cProfile")
    parser.add_argument("--spy-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.scenario == "import":
        profile_import(args)
    else:
        profile_runtime(args)


if __name__ == "__main__":
    main()
