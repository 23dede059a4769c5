"""Session benchmarks of issue 3: strandslike's FileSessionManager vs strands-agents 1.62's, side by side in one run.

    bench/.venv/bin/python bench/bench_sessions.py [--quick] [--tools-only] [--json PATH] [--strict]

Scenarios (the same code for both frameworks, `sess_scenarios.py`; only the import root and the scripted model
differ; every agent uses ``NullConversationManager()`` so that histories really grow):

1. per turn: one agent, 500 invocations (a user prompt and a text answer each: 2 messages per turn), with a
   FileSessionManager on a new session and without any session manager; ms per turn = time / 500, and the
   session cost per turn = the difference.
2. restore and answer: a brand-new Agent with a new FileSessionManager on a 2,000-message session (this
   restores it) plus one invocation answering one turn.
3. server-style interrupt and resume on a 1,000-message session: new Agent + invoke (a BeforeToolCallEvent hook
   interrupts), then new Agent + invoke with the interruptResponse (the tool runs, the model answers).
4. files and bytes on disk of the 500-turn session and of the 2,000-message session.
5. the intent record per tool call: one invocation, 200 tool calls (``--tool-calls N``; one per model turn),
   without a session, with a FileSessionManager and (strandslike) with ``fsync=False``; ms per tool call.
6. the same inside a Graph: one node whose agent makes the tool calls, the FileSessionManager the graph's;
   ms per node tool call (strandslike journals the node's tool calls in the orchestrator's log).

``--tools-only`` runs scenarios 5 and 6 alone (no targets are checked then).

Sessions live in fresh ``tempfile.mkdtemp`` directories under /tmp, removed afterwards; the prepared sessions of
2 and 3 are written before any timing through each framework's own Agent and FileSessionManager and copied into
a fresh directory for every sample. Each framework runs in its own fresh subprocess of this script; a full run
makes 6 rounds of both (the order alternating) and pools the samples; every figure is a median. Results are
checked after the clock stops (history lengths and contents, stop reasons, the tool ran exactly once, the
session on disk restores to the same messages). See the "Session benchmarks" section of bench/README.md.
"""

import argparse
import datetime
import hashlib
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

TURNS = 500
TOOL_CALLS = 200
# Scenario 5's variants per framework: without a session, with one, and (strandslike only) with fsync=False.
TOOL_MODES = {"strandslike": ("none", "session", "nofsync"), "strands": ("none", "session")}
# Scenario 6 (the same tool calls by a Graph node's agent) has the same variants.
RESTORE_MESSAGES = 2000
RESUME_MESSAGES = 1000

# Per round, each framework's worker takes `turn_pairs` samples of scenario 1 (with and without a session, in
# alternating order) and `samples` of scenarios 2 and 3.
FULL = {"rounds": 6, "turn_pairs": 1, "samples": 4}
QUICK = {"rounds": 2, "turn_pairs": 1, "samples": 3}

TARGETS = {
    "restore": 10.0,  # strands-agents time / strandslike time, at least
    "resume": 10.0,
    "session_per_turn": 5.0,
}

ROOTS = ("strandslike", "strands")


def _progress(message: str) -> None:
    print(f"  .. {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------------- worker


def run_framework(root: str, params: dict[str, Any], round_index: int) -> dict[str, Any]:
    """Run every session scenario for ``root``; return the samples (seconds) and disk figures."""
    from sess_scenarios import Worker

    worker = Worker(root)
    samples: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        samples.setdefault(name, []).append(value)

    try:
        # Warm up every path (imports, caches, the first thread-pool start) on small sessions.
        for mode in TOOL_MODES[root]:
            worker.tool_calls(10, mode)
            worker.node_tool_calls(10, mode)
        if params.get("tools_only"):
            _tool_scenarios(worker, root, params, round_index, add)
            return {"samples": samples, "disk": {}}
        worker.turns(20, True)
        worker.turns(20, False)
        worker.restore(100)
        worker.interrupt_resume(100)
        # Prepare the sessions of scenarios 2 and 3 before anything is timed.
        worker.template(RESTORE_MESSAGES)
        worker.template(RESUME_MESSAGES)

        disk_turns: dict[str, int] = {}
        _progress(f"  {root}: {TURNS} turns with and without a session")
        for index in range(params["turn_pairs"]):
            order = (True, False) if (index + round_index) % 2 == 0 else (False, True)
            pair = {}
            for session in order:
                out = worker.turns(TURNS, session)
                pair[session] = out["seconds"]
                if session:
                    disk_turns = out["disk"]
                    add("turn_in_hooks", out["in_hooks"] * 1000 / TURNS)
                    add("hook_calls_per_turn", out["hook_calls"] / TURNS)
            add("turn_session", pair[True] * 1000 / TURNS)
            add("turn_plain", pair[False] * 1000 / TURNS)
            add("turn_cost_paired", (pair[True] - pair[False]) * 1000 / TURNS)
        _progress(f"  {root}: restore {RESTORE_MESSAGES} messages and answer; interrupt and resume")
        for _ in range(params["samples"]):
            out = worker.restore(RESTORE_MESSAGES)
            add("restore", out["seconds"] * 1000)
            add("restore_construct", out["construct"] * 1000)
            out = worker.interrupt_resume(RESUME_MESSAGES)
            add("resume", out["seconds"] * 1000)
            add("resume_1", out["request_1"] * 1000)
            add("resume_2", out["request_2"] * 1000)
        _tool_scenarios(worker, root, params, round_index, add)
        from sess_scenarios import disk_usage

        disk = {
            "turns": disk_turns,
            "restore": disk_usage(worker.template(RESTORE_MESSAGES)),
            "resume": disk_usage(worker.template(RESUME_MESSAGES)),
        }
    finally:
        worker.close()
    return {"samples": samples, "disk": disk}


def _tool_scenarios(worker: Any, root: str, params: dict[str, Any], round_index: int, add: Any) -> None:
    """Scenarios 5 (an agent's tool calls) and 6 (a Graph node agent's), each mode in alternating order."""
    calls = params["tool_calls"]
    _progress(f"  {root}: {calls} tool calls of an agent, then of a Graph node, with and without a session")
    for index in range(params["samples"]):
        modes = TOOL_MODES[root] if (index + round_index) % 2 == 0 else TOOL_MODES[root][::-1]
        for mode in modes:
            add(f"tools_{mode}", worker.tool_calls(calls, mode)["seconds"] * 1000 / calls)
        for mode in modes:
            add(f"node_tools_{mode}", worker.node_tool_calls(calls, mode)["seconds"] * 1000 / calls)


# ---------------------------------------------------------------------------------------------------- parent


def _clean_env() -> dict[str, str]:
    """The environment for child interpreters: no OpenTelemetry exporter configuration."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["OTEL_SDK_DISABLED"] = "true"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE), env.get("PYTHONPATH", "")) if p)
    return env


def _run_worker(root: str, quick: bool, round_index: int, tools_only: bool, tool_calls: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-sess-out-", dir="/tmp") as tmp:
        out = Path(tmp) / "out.json"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", root, "--out", str(out)]
        cmd += ["--round", str(round_index), "--tool-calls", str(tool_calls)] + (["--quick"] if quick else [])
        cmd += ["--tools-only"] if tools_only else []
        proc = subprocess.run(cmd, env=_clean_env(), check=False, timeout=900)
        if proc.returncode != 0:
            raise SystemExit(f"the {root} worker failed with status {proc.returncode}")
        return dict(json.loads(out.read_text()))


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
    if not dirty:
        return f"commit {commit}"
    digest = hashlib.sha256()
    for path in sorted((root / "strandslike").rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return f"commit {commit} + uncommitted strandslike changes (sources sha256 {digest.hexdigest()[:12]})"


def _machine() -> dict[str, Any]:
    import importlib.metadata as md

    def version(name: str) -> str:
        try:
            return md.version(name)
        except md.PackageNotFoundError:
            return "not installed"

    filesystem = "?"
    try:
        filesystem = subprocess.run(
            ["findmnt", "-n", "-o", "FSTYPE", "--target", "/tmp"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "nproc": os.cpu_count(),
        "tmp_filesystem": filesystem,
        "strands-agents": version("strands-agents"),
        "strandslike": version("strandslike"),
        "source": _source_state(),
    }


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def collect(params: dict[str, Any], quick: bool) -> dict[str, Any]:
    """Run both frameworks ``rounds`` times, alternating which goes first; pool and summarise the samples."""
    pooled: dict[str, dict[str, list[float]]] = {root: {} for root in ROOTS}
    disk: dict[str, Any] = {}
    for index in range(params["rounds"]):
        order = ROOTS if index % 2 == 0 else ROOTS[::-1]
        for root in order:
            _progress(f"round {index + 1}/{params['rounds']}: {root}")
            out = _run_worker(root, quick, index, bool(params.get("tools_only")), params["tool_calls"])
            for name, values in out["samples"].items():
                pooled[root].setdefault(name, []).extend(values)
            disk[root] = out["disk"]
    results: dict[str, Any] = {}
    for root in ROOTS:
        figures = {
            name: {"median": statistics.median(values), "best": min(values), "samples": values}
            for name, values in pooled[root].items()
        }
        # The session cost per turn: the difference of the medians (the verdict), and the median of the
        # differences of the paired runs (one with, one without a session, back to back in the same process).
        if "turn_session" in figures:
            cost = figures["turn_session"]["median"] - figures["turn_plain"]["median"]
            figures["turn_cost"] = {"median": cost}
        for prefix in ("tools", "node_tools"):
            median = {mode: figures[f"{prefix}_{mode}"]["median"] for mode in TOOL_MODES[root]}
            figures[f"{prefix}_cost"] = {"median": median["session"] - median["none"]}
            if "nofsync" in median:
                figures[f"{prefix}_fsync"] = {"median": median["session"] - median["nofsync"]}
                figures[f"{prefix}_cost_nofsync"] = {"median": median["nofsync"] - median["none"]}
        results[root] = {"figures": figures, "disk": disk[root]}
    return results


def _ratio(theirs: float, ours: float) -> float:
    return theirs / ours if ours > 0 else float("inf")


def verdicts(results: dict[str, Any]) -> list[tuple[str, bool, str]]:
    """(check, passed, detail) per target, from this run's medians: how many times faster strandslike is."""
    mine, theirs = results["strandslike"]["figures"], results["strands"]["figures"]
    checks = []
    for label, key, target in (
        (f"restore {RESTORE_MESSAGES} messages + answer one turn", "restore", "restore"),
        (f"server-style interrupt + resume, {RESUME_MESSAGES} messages", "resume", "resume"),
        (f"session cost per turn ({TURNS} turns, difference of medians)", "turn_cost", "session_per_turn"),
        (f"session cost per turn ({TURNS} turns, median of paired differences)", "turn_cost_paired", None),
        (f"time inside the session hooks per turn ({TURNS} turns)", "turn_in_hooks", None),
    ):
        ours, base = mine[key]["median"], theirs[key]["median"]
        ratio = _ratio(base, ours)
        goal = TARGETS[target or "session_per_turn"]
        detail = f"strands-agents {base:.3f} ms / strandslike {ours:.3f} ms = {ratio:.1f}x (target >= {goal:.0f}x)"
        checks.append((label + ("" if target else " [cross-check]"), ratio >= goal, detail))
    return checks


def _size(value: int) -> str:
    return f"{value / 1024:.1f} KiB" if value < 1024 * 1024 else f"{value / 1024 / 1024:.2f} MiB"


def tool_report(results: dict[str, Any], width: int) -> list[str]:
    """The figures of scenarios 5 (an agent's tool calls) and 6 (a Graph node agent's)."""
    mine, theirs = results["strandslike"]["figures"], results["strands"]["figures"]
    lines = []
    for number, prefix, what in (
        (5, "tools", "tool calls in one invocation (one per model turn), ms per tool call"),
        (6, "node_tools", "tool calls of a Graph node's agent (one per model turn), ms per node tool call"),
    ):
        lines.append(f"{number}. {results['tool_calls']} {what}:")
        for label, key in (
            ("   without a session manager", f"{prefix}_none"),
            ("   with FileSessionManager", f"{prefix}_session"),
            ("   session cost per tool call (with - without)", f"{prefix}_cost"),
        ):
            lines.append(
                f"{label:{width}}  {mine[key]['median']:11.4f}  {theirs[key]['median']:10.3f}  "
                f"{_ratio(theirs[key]['median'], mine[key]['median']):11.1f}x"
            )
        for label, key in (
            ("   strandslike with fsync=False", f"{prefix}_nofsync"),
            ("   session cost per tool call, fsync=False", f"{prefix}_cost_nofsync"),
            ("   of which the intent fdatasync (fsync=True - False)", f"{prefix}_fsync"),
        ):
            lines.append(f"{label:{width}}  {mine[key]['median']:11.4f}")
    added = mine["node_tools_cost"]["median"] - mine["tools_cost"]["median"]
    lines.append(f"{'   strandslike: a node tool call costs more than an agent one by':{width}}  {added:11.4f}")
    return lines


def report(results: dict[str, Any]) -> str:
    """The figures table and verdicts, as printed at the end of a run."""
    mine, theirs = results["strandslike"]["figures"], results["strands"]["figures"]
    lines = [
        f"Session bench, {results['mode']} mode; ms, medians (samples per figure: scenario 1 "
        f"{len(mine['turn_session']['samples'])}, scenarios 2-3 {len(mine['restore']['samples'])})",
        header(results),
    ]
    rows = [
        (f"1. {TURNS} turns with FileSessionManager, ms per turn", "turn_session"),
        (f"1. {TURNS} turns without session manager, ms per turn", "turn_plain"),
        ("1. session cost per turn (difference of medians)", "turn_cost"),
        ("1. session cost per turn (median of paired differences)", "turn_cost_paired"),
        ("1. time inside the session manager's hooks, per turn", "turn_in_hooks"),
        (f"2. restore {RESTORE_MESSAGES} messages + answer one turn", "restore"),
        ("2.   of which: new Agent + FileSessionManager (restore)", "restore_construct"),
        (f"3. interrupt + resume, {RESUME_MESSAGES} messages: both requests", "resume"),
        ("3.   request 1: new Agent + invoke -> interrupt", "resume_1"),
        ("3.   request 2: new Agent + invoke(interruptResponse) -> answer", "resume_2"),
    ]
    width = max(len(label) for label, _ in rows)
    lines.append(f"{'':{width}}  {'strandslike':>11}  {'strands':>10}  {'strands/ours':>12}  {'best/best':>9}")
    for label, key in rows:
        ours, base = mine[key], theirs[key]
        best = "" if key.startswith("turn_cost") else f"{_ratio(base['best'], ours['best']):8.1f}x"
        lines.append(
            f"{label:{width}}  {ours['median']:11.4f}  {base['median']:10.3f}  "
            f"{_ratio(base['median'], ours['median']):11.1f}x  {best}"
        )
    lines.append("")
    lines += tool_report(results, width)
    lines.append("")
    lines.append("4. on disk (regular files; bytes = file sizes, allocated = st_blocks):")
    for label, key in ((f"{TURNS}-turn session", "turns"), (f"{RESTORE_MESSAGES}-message session", "restore")):
        for root in ROOTS:
            d = results[root]["disk"][key]
            lines.append(
                f"   {label:22} {root:11}  {d['files']:5d} files, {d['dirs']:3d} dirs, {_size(d['bytes']):>10} "
                f"({d['bytes']} B), allocated {_size(d['allocated'])}"
            )
    lines.append(
        "   session hook calls per turn: "
        + ", ".join(f"{root} {results[root]['figures']['hook_calls_per_turn']['median']:.0f}" for root in ROOTS)
    )
    lines.append("")
    raw = _ratio(theirs["turn_session"]["median"], mine["turn_session"]["median"])
    lines.append(
        f"INFO  raw per-turn time with a session: strands-agents {theirs['turn_session']['median']:.3f} ms / "
        f"strandslike {mine['turn_session']['median']:.4f} ms = {raw:.1f}x (the 5x target is on the session cost)"
    )
    for check, passed, detail in verdicts(results):
        lines.append(f"{'PASS' if passed else 'FAIL'}  {check}: {detail}")
    return "\n".join(lines)


def header(results: dict[str, Any]) -> str:
    m = results["machine"]
    return (
        f"machine: nproc={m['nproc']}, {m['implementation']} {m['python']}, {m['platform']}, /tmp on "
        f"{m['tmp_filesystem']}; strands-agents {m['strands-agents']}, strandslike {m['strandslike']} "
        f"({m['source']}); {m['date']}; load average {results['load_before']} before, {results['load_after']} after"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="2 rounds (2 samples of scenario 1, 6 of 2 and 3)")
    parser.add_argument("--json", type=Path, help="also save every sample to this file")
    parser.add_argument("--strict", action="store_true", help="exit with status 1 if a target FAILs")
    parser.add_argument("--tools-only", action="store_true", help="run scenarios 5 and 6 only (no targets)")
    parser.add_argument(
        "--tool-calls", type=int, default=TOOL_CALLS, help=f"tool calls of scenarios 5 and 6 (default {TOOL_CALLS})"
    )
    parser.add_argument(
        "--profile", action="store_true", help="show where strandslike's per-turn session cost goes, then exit"
    )
    parser.add_argument("--worker", choices=ROOTS, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--round", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    params = dict(QUICK if args.quick else FULL, tools_only=args.tools_only, tool_calls=args.tool_calls)

    if args.profile:
        from sess_scenarios import profile_turns

        print("\n".join(profile_turns(TURNS, 5)))
        return 0
    if args.worker:
        args.out.write_text(json.dumps(run_framework(args.worker, params, args.round)))
        return 0

    started = time.perf_counter()
    results: dict[str, Any] = {"mode": "quick" if args.quick else "full", "machine": _machine(), "load_before": _load()}
    results["tool_calls"] = args.tool_calls
    results.update(collect(params, args.quick))
    results["load_after"] = _load()
    results["seconds"] = round(time.perf_counter() - started, 1)
    if args.tools_only:
        samples = len(results["strandslike"]["figures"]["node_tools_session"]["samples"])
        print(f"Session bench, {results['mode']} mode, scenarios 5 and 6 only; ms, medians of {samples} samples")
        print(header(results))
        print("\n".join(tool_report(results, 66)))
    else:
        print(report(results))
    print(f"({results['seconds']} s)")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2))
    checks = [] if args.tools_only else verdicts(results)
    failed = [check for check, passed, _ in checks if not passed and "cross-check" not in check]
    return 1 if args.strict and failed else 0


if __name__ == "__main__":
    sys.exit(main())
