"""Multi-agent benchmarks of issue 4: strandslike vs strands-agents 1.62 Graph and Swarm, side by side in one run.

    /work/benchvenv/bin/python bench/bench_multiagent.py [--quick] [--json PATH] [--strict]

Three scenarios, the same code for both frameworks (only the import root and the scripted model differ):

- chain: a Graph n0 -> n1 -> ... -> n49 of one-turn agents (text answer, no delay). Per node: the graph's time / 50,
  and its overhead, (graph time - the same 50 one-turn invocations run directly, without a graph) / 50.
- fan-out: a Graph whose entry node (no delay) feeds 20 children whose models sleep 50 ms. The fan-out phase is
  from the entry model's last event to the graph's return; pure waiting would make it 50 ms.
- swarm: 5 agents a0..a4 handing off a0 -> a1 -> ... 20 times (21 node runs; each run is one
  ``handoff_to_agent`` turn then a text turn, the last run a text turn only). Per handoff: the swarm's time / 20,
  and its overhead, (swarm time - 21 direct invocations of agents with the same script and a no-op
  ``handoff_to_agent`` tool) / 20.

Graphs, swarms, agents and models are built before the clock starts, fresh for every repetition; every run's
status, node count and handoff count are checked before its time is kept. Each framework runs in its own fresh
subprocess of this script; a full run makes 4 rounds of both (the order alternating, so a burst of load from other
processes hits both frameworks alike) and pools the samples. The run ends with a table and PASS/FAIL verdicts
computed from this run's figures only. See the "Multi-agent" section of bench/README.md.
"""

import argparse
import asyncio
import datetime
import functools
import gc
import hashlib
import importlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

CHAIN_NODES = 50
FANOUT_CHILDREN = 20
FANOUT_DELAY = 0.05
SWARM_AGENTS = 5
SWARM_HANDOFFS = 20
SWARM_LIMIT = 30  # max_handoffs and max_iterations for both frameworks (strands' default of 20 would stop early)

FULL = {"repeats": 10, "rounds": 4}  # each round runs both frameworks in turn (the order alternates)
QUICK = {"repeats": 7, "rounds": 1}

TARGETS = {
    "per_node_vs_strands": 1 / 5,  # strandslike chain cost per node <= 1/5 of strands-agents'
    "per_handoff_vs_strands": 1 / 5,  # strandslike swarm cost per handoff <= 1/5 of strands-agents'
    "fanout_ms": 1.05 * FANOUT_DELAY * 1000,  # fan-out phase <= 52.5 ms beyond the entry node
}


def _progress(message: str) -> None:
    print(f"  .. {message}", file=sys.stderr, flush=True)


def summary(samples: list[float]) -> dict[str, Any]:
    """Median, best (lowest) and all samples (milliseconds)."""
    return {"median": statistics.median(samples), "best": min(samples), "samples": [round(s, 4) for s in samples]}


# ---------------------------------------------------------------------------------------------------- workers


def handoff_to_agent(agent_name: str, message: str, context: dict[str, Any] | None = None) -> dict[str, Any]:
    """Transfer control to another agent (a no-op stand-in for the direct-invocation baseline).

    Args:
        agent_name: Name of the agent to hand off to.
        message: What needs to be done and why you are handing off.
        context: Additional context to share with the next agent.
    """
    return {"status": "success", "content": [{"text": f"Handing off to {agent_name}: {message}"}]}


class Framework:
    """One framework's agent class, orchestrators, status enum and scripted model."""

    def __init__(self, root: str) -> None:
        import ma_models

        self.root = root
        package = importlib.import_module(root)
        multiagent = importlib.import_module(f"{root}.multiagent")
        self.Agent = package.Agent
        self.GraphBuilder = multiagent.GraphBuilder
        self.Swarm = multiagent.Swarm
        self.Status = multiagent.Status
        self.handoff_stub = package.tool(handoff_to_agent)
        if root == "strandslike":
            self._model = ma_models.strandslike_model
        else:
            self._model = lambda turns, delay=0.0, stamped=False: ma_models.strands_model(turns, delay)

    def model(self, turns: list[Any], delay: float = 0.0, stamped: bool = False) -> Any:
        return self._model(turns, delay=delay, stamped=stamped)

    def agent(self, model: Any, name: str | None = None, tools: list[Any] | None = None) -> Any:
        kwargs: dict[str, Any] = {"name": name} if name else {}
        return self.Agent(model=model, tools=tools or [], callback_handler=None, **kwargs)

    def graph(self, agents: dict[str, Any], edges: list[tuple[str, str]], entry: str) -> Any:
        builder = self.GraphBuilder()
        for node_id, agent in agents.items():
            builder.add_node(agent, node_id)
        for source, target in edges:
            builder.add_edge(source, target)
        builder.set_entry_point(entry)
        builder.set_max_node_executions(1000)  # strands-agents warns about an unbounded graph otherwise
        builder.set_execution_timeout(600.0)
        return builder.build()


def _check(condition: bool, fw: Framework, what: str) -> None:
    if not condition:
        raise AssertionError(f"{fw.root}: {what}")


def _check_graph(fw: Framework, result: Any, agents: list[Any], nodes: int) -> None:
    _check(result.status == fw.Status.COMPLETED, fw, f"graph ended {result.status}")
    _check(result.completed_nodes == nodes and len(result.execution_order) == nodes, fw, "not every node completed")
    _check(len(result.results) == nodes, fw, f"{len(result.results)} node results, expected {nodes}")
    _check(all(agent.model.remaining == 0 for agent in agents), fw, "a node's script was not played to the end")


async def _timed(run: Callable[[], Awaitable[Any]]) -> tuple[Any, float, float]:
    """Run ``run()`` after a collection; return its result, wall seconds and CPU seconds (all threads)."""
    gc.collect()
    cpu, wall = time.process_time(), time.perf_counter()
    result = await run()
    return result, time.perf_counter() - wall, time.process_time() - cpu


async def _one_by_one(agents: list[Any]) -> list[Any]:
    return [await agent.invoke_async("go") for agent in agents]


def _add_pair(
    figures: dict[str, list[float]], names: tuple[str, str, str], run: float, direct: float, units: int
) -> None:
    """Append one sample of (orchestrated, direct, overhead) ms per unit to ``figures``."""
    for name, value in zip(names, (run, direct, run - direct), strict=True):
        figures.setdefault(name, []).append(value * 1000 / units)


async def chain(fw: Framework, repeats: int, nodes: int = CHAIN_NODES) -> dict[str, Any]:
    """A graph chain of ``nodes`` one-turn agents vs the same invocations run directly."""

    def one_turn_agent(i: int) -> Any:
        return fw.agent(fw.model([("text", f"n{i} done")]), name=f"n{i}")

    figures: dict[str, list[float]] = {}
    for _ in range(repeats):
        agents = [one_turn_agent(i) for i in range(nodes)]
        graph = fw.graph(
            {f"n{i}": agent for i, agent in enumerate(agents)}, [(f"n{i}", f"n{i + 1}") for i in range(nodes - 1)], "n0"
        )
        direct = [one_turn_agent(i) for i in range(nodes)]
        result, graph_wall, graph_cpu = await _timed(functools.partial(graph.invoke_async, "go"))
        _check_graph(fw, result, agents, nodes)
        _check([node.node_id for node in result.execution_order] == [f"n{i}" for i in range(nodes)], fw, "order")

        answers, direct_wall, direct_cpu = await _timed(functools.partial(_one_by_one, direct))
        _check(all(answer.stop_reason == "end_turn" for answer in answers), fw, "a direct invocation did not end")
        _add_pair(figures, ("per_node", "direct_per_invocation", "overhead_per_node"), graph_wall, direct_wall, nodes)
        _add_pair(figures, ("cpu_per_node", "cpu_direct", "cpu_overhead_per_node"), graph_cpu, direct_cpu, nodes)
    return figures


class TimerCounter:
    """Counts the timers armed on the running event loop (``loop.call_at``, behind every sleep and timeout) and
    how many of them fired; a scheduler that polls arms a timer per poll."""

    def __init__(self) -> None:
        self.armed = 0
        self.fired = 0

    def __enter__(self) -> "TimerCounter":
        self.loop = asyncio.get_running_loop()
        original = self.loop.call_at

        def call_at(when: float, callback: Callable[..., Any], *args: Any, context: Any = None) -> Any:
            self.armed += 1

            def fire(*fire_args: Any) -> Any:
                self.fired += 1
                return callback(*fire_args)

            return original(when, fire, *args, context=context)

        self.loop.call_at = call_at  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        del self.loop.call_at  # back to the class's method


async def fanout(fw: Framework, repeats: int, children: int = FANOUT_CHILDREN) -> dict[str, Any]:
    """An entry node feeding ``children`` parallel nodes whose models sleep ``FANOUT_DELAY`` before answering."""
    total, phase, span, head, tail, armed, fired = [], [], [], [], [], [], []
    for _ in range(repeats):
        entry = fw.agent(fw.model([("text", "fan out")], stamped=True), name="entry")
        kids = [
            fw.agent(fw.model([("text", f"c{i} done")], delay=FANOUT_DELAY, stamped=True), name=f"c{i}")
            for i in range(children)
        ]
        agents = {"entry": entry} | {f"c{i}": kid for i, kid in enumerate(kids)}
        graph = fw.graph(agents, [("entry", f"c{i}") for i in range(children)], "entry")
        gc.collect()
        with TimerCounter() as timers:
            start = time.perf_counter()
            result = await graph.invoke_async("go")
            end = time.perf_counter()
        _check_graph(fw, result, [entry, *kids], children + 1)
        armed.append(timers.armed - children)  # beyond the children's model sleeps
        fired.append(timers.fired - children)
        first_start = min(kid.model.started for kid in kids)
        last_finish = max(kid.model.finished for kid in kids)
        total.append((end - start) * 1000)
        phase.append((end - entry.model.finished) * 1000)
        span.append((last_finish - first_start) * 1000)
        head.append((first_start - entry.model.finished) * 1000)
        tail.append((end - last_finish) * 1000)
    figures = {"graph": total, "fanout_phase": phase, "children_span": span, "head": head, "tail": tail}
    return figures | {"timers_armed": armed, "timers_fired": fired}


def _swarm_scripts(agents: int, handoffs: int) -> list[list[list[Any]]]:
    """Per agent, per run of that agent: the turns (a handoff to the next agent then text; the last run text)."""
    scripts: list[list[list[Any]]] = [[] for _ in range(agents)]
    for step in range(handoffs + 1):
        if step < handoffs:
            call = ("handoff_to_agent", {"agent_name": f"a{(step + 1) % agents}", "message": f"step {step + 1}"})
            turns = [("tool", call), ("text", f"handed off at step {step}")]
        else:
            turns = [("text", "finished")]
        scripts[step % agents].append(turns)
    return scripts


async def swarm(
    fw: Framework, repeats: int, agents: int = SWARM_AGENTS, handoffs: int = SWARM_HANDOFFS
) -> dict[str, Any]:
    """A swarm of ``agents`` handing off ``handoffs`` times vs the same agent runs invoked directly."""
    scripts = _swarm_scripts(agents, handoffs)
    expected = [f"a{step % agents}" for step in range(handoffs + 1)]
    figures: dict[str, list[float]] = {}
    for _ in range(repeats):
        members = [
            fw.agent(fw.model([turn for run in runs for turn in run]), name=f"a{k}") for k, runs in enumerate(scripts)
        ]
        orchestrator = fw.Swarm(members, entry_point=members[0], max_handoffs=SWARM_LIMIT, max_iterations=SWARM_LIMIT)
        # The baseline: each node run as a fresh agent (the swarm resets a node's conversation before each run).
        direct = [
            fw.agent(
                fw.model(scripts[step % agents][step // agents]), name=f"a{step % agents}", tools=[fw.handoff_stub]
            )
            for step in range(handoffs + 1)
        ]
        result, swarm_wall, swarm_cpu = await _timed(functools.partial(orchestrator.invoke_async, "go"))
        _check(result.status == fw.Status.COMPLETED, fw, f"swarm ended {result.status}")
        history = [node.node_id for node in result.node_history]
        _check(history == expected, fw, f"swarm history {history}")
        _check(all(member.model.remaining == 0 for member in members), fw, "a member's script was not played")

        answers, direct_wall, direct_cpu = await _timed(functools.partial(_one_by_one, direct))
        _check(all(answer.stop_reason == "end_turn" for answer in answers), fw, "a direct invocation did not end")
        _check(all(agent.model.remaining == 0 for agent in direct), fw, "a direct agent's script was not played")
        names = ("per_handoff", "direct_per_handoff", "overhead_per_handoff")
        _add_pair(figures, names, swarm_wall, direct_wall, handoffs)
        names = ("cpu_per_handoff", "cpu_direct", "cpu_overhead_per_handoff")
        _add_pair(figures, names, swarm_cpu, direct_cpu, handoffs)
    return figures


def run_framework(root: str, params: dict[str, Any]) -> dict[str, Any]:
    """Run every multi-agent scenario for ``root``; return each figure's samples (ms) by scenario."""
    fw = Framework(root)
    repeats = params["repeats"]
    out: dict[str, Any] = {}

    async def main() -> None:
        # Warm up every path once (imports, caches, specialisation) before measuring.
        await chain(fw, 1, nodes=5)
        await fanout(fw, 1, children=3)
        await swarm(fw, 1, handoffs=5)
        _progress(f"  {root}: chain of {CHAIN_NODES} nodes")
        out["chain"] = await chain(fw, repeats)
        _progress(f"  {root}: fan-out of {FANOUT_CHILDREN} x {FANOUT_DELAY * 1000:.0f} ms nodes")
        out["fanout"] = await fanout(fw, repeats)
        _progress(f"  {root}: swarm of {SWARM_AGENTS} agents, {SWARM_HANDOFFS} handoffs")
        out["swarm"] = await swarm(fw, repeats)

    asyncio.run(main())
    return out


# ---------------------------------------------------------------------------------------------------- parent


def _clean_env() -> dict[str, str]:
    """The environment for child interpreters: no OpenTelemetry exporter configuration."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["OTEL_SDK_DISABLED"] = "true"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE), env.get("PYTHONPATH", "")) if p)
    return env


def _run_worker(root: str, quick: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", root, "--out", str(out)]
        if quick:
            cmd.append("--quick")
        proc = subprocess.run(cmd, env=_clean_env(), check=False, timeout=600)
        if proc.returncode != 0:
            raise SystemExit(f"the {root} worker failed with status {proc.returncode}")
        return dict(json.loads(out.read_text()))


def _machine() -> dict[str, Any]:
    import importlib.metadata as md

    def version(name: str) -> str:
        try:
            return md.version(name)
        except md.PackageNotFoundError:
            return "not installed"

    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "nproc": os.cpu_count(),
        "strands-agents": version("strands-agents"),
        "strandslike": version("strandslike"),
        "source": _source_state(),
    }


def _source_state() -> str:
    """The checkout measured: its commit, and a digest of strandslike's sources when they differ from it."""
    root = HERE.parent
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "strandslike"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit, dirty = "no git", "?"
    digest = hashlib.sha256()
    for path in sorted((root / "strandslike").rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return f"commit {commit}" + (
        f" + uncommitted strandslike changes (sources sha256 {digest.hexdigest()[:12]})" if dirty else ""
    )


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def collect(params: dict[str, Any], quick: bool) -> dict[str, Any]:
    """Run both frameworks ``rounds`` times, alternating which goes first; summarise every figure's samples."""
    samples: dict[str, dict[str, dict[str, list[float]]]] = {"strandslike": {}, "strands": {}}
    for index in range(params["rounds"]):
        order = ("strandslike", "strands") if index % 2 == 0 else ("strands", "strandslike")
        for root in order:
            _progress(f"round {index + 1}/{params['rounds']}: {root}")
            for scenario, figures in _run_worker(root, quick).items():
                for figure, values in figures.items():
                    samples[root].setdefault(scenario, {}).setdefault(figure, []).extend(values)
    results: dict[str, Any] = {}
    for root, scenarios in samples.items():
        results[root] = {
            scenario: {figure: summary(values) for figure, values in figures.items()}
            for scenario, figures in scenarios.items()
        }
        # The best overhead is the best run less the best direct run (the best of the differences would pair a
        # fast run with a slow baseline).
        for scenario, raw, direct, overhead in (
            ("chain", "per_node", "direct_per_invocation", "overhead_per_node"),
            ("chain", "cpu_per_node", "cpu_direct", "cpu_overhead_per_node"),
            ("swarm", "per_handoff", "direct_per_handoff", "overhead_per_handoff"),
            ("swarm", "cpu_per_handoff", "cpu_direct", "cpu_overhead_per_handoff"),
        ):
            figures = results[root][scenario]
            figures[overhead]["best"] = figures[raw]["best"] - figures[direct]["best"]
        results[root]["chain"]["total_ms"] = results[root]["chain"]["per_node"]["median"] * CHAIN_NODES
        results[root]["swarm"]["total_ms"] = results[root]["swarm"]["per_handoff"]["median"] * SWARM_HANDOFFS
    return results


def verdicts(results: dict[str, Any]) -> list[tuple[str, bool, str]]:
    """(check, passed, detail) for each target, from this run's figures."""
    mine, theirs = results["strandslike"], results["strands"]
    checks: list[tuple[str, bool, str]] = []
    for label, scenario, key, target in (
        ("chain per node (raw)", "chain", "per_node", "per_node_vs_strands"),
        ("chain per node (overhead)", "chain", "overhead_per_node", "per_node_vs_strands"),
        ("swarm per handoff (raw)", "swarm", "per_handoff", "per_handoff_vs_strands"),
        ("swarm per handoff (overhead)", "swarm", "overhead_per_handoff", "per_handoff_vs_strands"),
    ):
        ours, base = mine[scenario][key]["median"], theirs[scenario][key]["median"]
        ratio = ours / base if base > 0 else float("inf")
        detail = f"{ours:.3f} / {base:.3f} ms = {ratio:.3f} (target <= {TARGETS[target]:.2f})"
        checks.append((f"{label} vs strands", ratio <= TARGETS[target], detail))
    phase = mine["fanout"]["fanout_phase"]["median"]
    detail = f"{phase:.2f} ms (target <= {TARGETS['fanout_ms']:.1f} ms; strands-agents: "
    detail += f"{theirs['fanout']['fanout_phase']['median']:.2f} ms)"
    checks.append(("fan-out phase of 20 x 50 ms nodes", phase <= TARGETS["fanout_ms"], detail))
    return checks


def report(results: dict[str, Any]) -> str:
    """The figures table and verdicts, as printed at the end of a run."""
    mine, theirs = results["strandslike"], results["strands"]
    count = len(mine["chain"]["per_node"]["samples"])
    lines = [f"Multi-agent bench, {results['mode']} mode: median of {count} repetitions per figure (ms)"]
    m = results["machine"]
    lines.append(
        f"machine: nproc={m['nproc']}, {m['implementation']} {m['python']}, {m['platform']}; "
        f"strands-agents {m['strands-agents']}, strandslike {m['strandslike']} ({m['source']}); {m['date']}; "
        f"load average {results['load_before']} before, {results['load_after']} after"
    )
    rows = [
        (f"chain {CHAIN_NODES} nodes: total", "chain", None, "total_ms"),
        (f"chain: per node (graph / {CHAIN_NODES})", "chain", "per_node", None),
        ("chain: direct invocation, per node", "chain", "direct_per_invocation", None),
        ("chain: overhead per node", "chain", "overhead_per_node", None),
        ("chain: CPU time per node", "chain", "cpu_per_node", None),
        ("chain: CPU overhead per node", "chain", "cpu_overhead_per_node", None),
        (f"fan-out {FANOUT_CHILDREN} x {FANOUT_DELAY * 1000:.0f} ms: graph total", "fanout", "graph", None),
        ("fan-out: phase after entry node", "fanout", "fanout_phase", None),
        ("fan-out: entry done -> first child start", "fanout", "head", None),
        ("fan-out: first child start -> last child done", "fanout", "children_span", None),
        ("fan-out: last child done -> graph returns", "fanout", "tail", None),
        (f"swarm {SWARM_HANDOFFS} handoffs: total", "swarm", None, "total_ms"),
        (f"swarm: per handoff (swarm / {SWARM_HANDOFFS})", "swarm", "per_handoff", None),
        ("swarm: direct invocations, per handoff", "swarm", "direct_per_handoff", None),
        ("swarm: overhead per handoff", "swarm", "overhead_per_handoff", None),
        ("swarm: CPU time per handoff", "swarm", "cpu_per_handoff", None),
        ("swarm: CPU overhead per handoff", "swarm", "cpu_overhead_per_handoff", None),
    ]
    width = max(len(row[0]) for row in rows)
    lines.append(f"{'':{width}}  {'strandslike':>12}  {'strands':>12}  {'ratio':>7}  {'best/best':>9}")
    for label, scenario, key, flat in rows:
        ours = mine[scenario][flat] if flat else mine[scenario][key]["median"]
        base = theirs[scenario][flat] if flat else theirs[scenario][key]["median"]
        ratio = f"{ours / base:7.3f}" if base > 0 else f"{'-':>7}"
        best = ""
        if key:
            best_ours, best_base = mine[scenario][key]["best"], theirs[scenario][key]["best"]
            best = f"{best_ours / best_base:9.3f}" if best_base > 0 else f"{'-':>9}"
        lines.append(f"{label:{width}}  {ours:12.3f}  {base:12.3f}  {ratio}  {best}")
    armed, fired = mine["fanout"]["timers_armed"]["median"], mine["fanout"]["timers_fired"]["median"]
    their_armed, their_fired = theirs["fanout"]["timers_armed"]["median"], theirs["fanout"]["timers_fired"]["median"]
    lines.append(
        f"fan-out: event-loop timers beyond the {FANOUT_CHILDREN} model sleeps, armed/fired: "
        f"strandslike {armed:.0f}/{fired:.0f}, strands {their_armed:.0f}/{their_fired:.0f}"
    )
    lines.append("")
    for check, passed, detail in verdicts(results):
        lines.append(f"{'PASS' if passed else 'FAIL'}  {check}: {detail}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="one round of 7 repetitions instead of 4 rounds of 10")
    parser.add_argument("--json", type=Path, help="also save the results to this file")
    parser.add_argument("--strict", action="store_true", help="exit with status 1 if any check FAILs")
    parser.add_argument("--worker", choices=["strandslike", "strands"], help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    params = QUICK if args.quick else FULL

    if args.worker:
        args.out.write_text(json.dumps(run_framework(args.worker, params)))
        return 0

    started = time.perf_counter()
    results: dict[str, Any] = {"mode": "quick" if args.quick else "full", "machine": _machine(), "load_before": _load()}
    results.update(collect(params, args.quick))
    results["load_after"] = _load()
    results["seconds"] = round(time.perf_counter() - started, 1)
    print(report(results))
    print(f"({results['seconds']} s)")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2))
    failed = [check for check, passed, _ in verdicts(results) if not passed]
    return 1 if args.strict and failed else 0


if __name__ == "__main__":
    sys.exit(main())
