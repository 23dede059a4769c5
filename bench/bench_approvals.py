"""Approval benchmarks of issue 11: what `HumanInTheLoop` with a 20-rule policy adds to each tool call.

    bench/.venv/bin/python bench/bench_approvals.py [--quick] [--json PATH] [--strict]

One invocation runs 200 cycles; each cycle the scripted model calls ``add_one`` once (the tool of the core
benchmarks), then a text turn ends it. The same agent runs:

- ``plain``: no interventions;
- ``policy``: ``HumanInTheLoop(policy=<20 rules>, enable_trust=True)``; the call is allowed by the 20th rule after
  the handler checked it against the others (10 rules name other tools, exactly or by pattern; 9 name ``add_one``
  or ``add_*`` with argument conditions that do not hold), and every decision is written to the audit trail;
- ``trusted``: the same handler and policy, where no rule matches and a trust grant (scoped to an argument range)
  lets the call run;
- ``allowed``: ``HumanInTheLoop(allowed_tools=["add_one"])``, Strands' own configuration, for reference.

The overhead per tool call is ``(variant - plain) / 200``, in µs; target for ``policy``: at most 20 µs. The same
``plain`` / ``allowed`` pair runs on strands-agents 1.62 (its HumanInTheLoop has no policy; for reference only).
Each framework runs in its own fresh subprocess; a full run makes 5 rounds, each worker taking 8 samples of every
variant, one after another in rotating order. Invocations are timed in CPU time of the process
(``time.process_time``): the work is single-threaded (``add_one`` is async, the models yield precomputed events),
so this is its cost whatever other processes do with the machine's cores, where wall-clock time would also count
the time the process waited for a core. The overhead is the median of the paired differences (each sample of
a variant minus the ``plain`` sample taken next to it), so load from other processes, which drifts over seconds,
cancels out; the table also shows the medians of the invocations themselves, and the overhead between the fastest
samples (the least disturbed by other processes). Every run is checked after the clock
stops (stop reason, 200 tool results, the audit trail holds 200 decisions by the expected rule or trust).
"""

import argparse
import asyncio
import datetime
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

CYCLES = 200
TARGET_US = 20.0
FULL = {"rounds": 5, "samples": 8}
QUICK = {"rounds": 2, "samples": 3}
VARIANTS = {"strandslike": ("plain", "policy", "trusted", "allowed"), "strands": ("plain", "allowed")}


def policy_data() -> dict[str, Any]:
    """The 20-rule policy: 19 rules that do not allow the benchmark's call, then the one that does."""
    rules: list[dict[str, Any]] = []
    for n in range(5):
        rules.append({"name": f"other tool {n}", "tool": f"tool_{n}", "action": "deny"})
    for n in range(5):
        rules.append({"name": f"other pattern {n}", "tool": f"read_{n}_*", "action": "allow"})
    for n in range(5):
        rules.append({"name": f"large x {n}", "tool": "add_one", "action": "ask", "args": {"x": {"min": 10**9 + n}}})
    for n in range(4):
        rules.append({"name": f"listed x {n}", "tool": "add_*", "action": "deny", "args": {"x": {"in": [-1 - n]}}})
    rules.append({"name": "small additions", "tool": "add_one", "action": "allow", "args": {"x": {"max": 10**6}}})
    assert len(rules) == 20
    return {"default": "ask", "rules": rules}


def trust_policy_data() -> dict[str, Any]:
    """The same 20 rules, the last one narrowed so it does not match: trust decides instead."""
    data = policy_data()
    data["rules"][-1]["args"] = {"x": {"max": -1}}
    return data


# ---------------------------------------------------------------------------------------------------- workers


def strandslike_builder(variant: str) -> Any:
    from _workload import add_one

    from strandslike import Agent, tool
    from strandslike.agent.conversation_manager import NullConversationManager
    from strandslike.models import ScriptedModel, text, tool_call
    from strandslike.vended_interventions.hitl import ApprovalPolicy, HumanInTheLoop

    wrapped = tool(add_one)
    script = [tool_call("add_one", x=i) for i in range(1, CYCLES + 1)] + [text("done")]
    policy = ApprovalPolicy.from_dict(policy_data())
    trust_policy = ApprovalPolicy.from_dict(trust_policy_data())

    def build() -> Any:
        interventions: list[Any] = []
        if variant == "policy":
            interventions = [HumanInTheLoop(policy=policy, enable_trust=True)]
        elif variant == "trusted":
            interventions = [HumanInTheLoop(policy=trust_policy, enable_trust=True)]
        elif variant == "allowed":
            interventions = [HumanInTheLoop(allowed_tools=["add_one"])]
        agent = Agent(
            model=ScriptedModel(script),
            tools=[wrapped],
            callback_handler=None,
            conversation_manager=NullConversationManager(),
            interventions=interventions,
        )
        if variant == "trusted":
            HumanInTheLoop.grant_trust(agent, "add_one", {"x": {"min": 0, "max": 10**6}}, by="bench")
        return agent

    return build


def strands_builder(variant: str) -> Any:
    from _strands_model import BenchStrandsModel
    from _workload import add_one, cycles_script
    from strands import Agent, tool
    from strands.agent.conversation_manager import NullConversationManager
    from strands.vended_interventions.hitl import HumanInTheLoop

    wrapped = tool(add_one)

    def build() -> Any:
        interventions = [HumanInTheLoop(allowed_tools=["add_one"])] if variant == "allowed" else []
        return Agent(
            model=BenchStrandsModel(cycles_script(CYCLES)),
            tools=[wrapped],
            callback_handler=None,
            conversation_manager=NullConversationManager(),
            interventions=interventions,
        )

    return build


def check(root: str, variant: str, agent: Any, result: Any) -> None:
    """Fail loudly if a run did not do the work it is timed for."""
    if result.stop_reason != "end_turn":
        raise RuntimeError(f"{root}/{variant}: stop reason {result.stop_reason!r}")
    results = [b for m in agent.messages for b in m["content"] if "toolResult" in b]
    if len(results) != CYCLES or any(b["toolResult"]["status"] != "success" for b in results):
        raise RuntimeError(f"{root}/{variant}: expected {CYCLES} successful tool results")
    if root == "strandslike" and variant in ("policy", "trusted"):
        decided = [e["decided_by"] for e in agent.interrupt_audit if e["event"] == "decision"]
        expected = "rule:small additions" if variant == "policy" else "trust:add_one"
        if decided != [expected] * CYCLES:
            raise RuntimeError(f"{root}/{variant}: unexpected decisions {sorted(set(decided))}")


async def sample(root: str, variant: str, build: Any) -> float:
    agent = build()
    gc.collect()
    start = time.process_time()
    result = await agent.invoke_async("go")
    elapsed = time.process_time() - start
    check(root, variant, agent, result)
    return elapsed


async def run_worker(root: str, samples: int, round_index: int) -> dict[str, list[float]]:
    builders = {
        variant: (strandslike_builder if root == "strandslike" else strands_builder)(variant)
        for variant in VARIANTS[root]
    }
    variants = list(VARIANTS[root])
    for variant in variants:  # warm up every path
        await sample(root, variant, builders[variant])
    timings: dict[str, list[float]] = {variant: [] for variant in variants}
    for n in range(samples):
        shift = (n + round_index) % len(variants)
        for variant in variants[shift:] + variants[:shift]:
            timings[variant].append(await sample(root, variant, builders[variant]))
    return timings


# ---------------------------------------------------------------------------------------------------- driver


def spawn(root: str, params: dict[str, Any], round_index: int) -> dict[str, list[float]] | None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("OTEL_")}
    command = [sys.executable, str(Path(__file__)), "--worker", root, "--samples", str(params["samples"])]
    command += ["--round", str(round_index)]
    completed = subprocess.run(command, capture_output=True, text=True, env=env, check=False, timeout=1800)
    if completed.returncode != 0:
        if root == "strands" and "No module named 'strands'" in completed.stderr:
            return None
        raise RuntimeError(f"{root} worker failed:\n{completed.stderr}")
    result: dict[str, list[float]] = json.loads(completed.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", type=Path, default=HERE / "results" / "approvals.json")
    parser.add_argument("--strict", action="store_true", help="exit 1 if the target is missed")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--samples", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--round", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        timings = asyncio.run(run_worker(args.worker, args.samples, args.round))
        print(json.dumps(timings))
        return 0

    params = QUICK if args.quick else FULL
    started = time.time()
    load_start = os.getloadavg()[0]
    pooled: dict[str, dict[str, list[float]]] = {root: {v: [] for v in VARIANTS[root]} for root in VARIANTS}
    strands_missing = False
    for round_index in range(params["rounds"]):
        roots = list(VARIANTS) if round_index % 2 == 0 else list(reversed(VARIANTS))
        for root in roots:
            if root == "strands" and strands_missing:
                continue
            print(f"  .. round {round_index + 1}/{params['rounds']}: {root}", file=sys.stderr, flush=True)
            timings = spawn(root, params, round_index)
            if timings is None:
                strands_missing = True
                print("  .. strands-agents is not installed here: its reference figures are skipped", file=sys.stderr)
                continue
            for variant, values in timings.items():
                pooled[root][variant].extend(values)

    def best_us(root: str, variant: str) -> float:
        return (min(pooled[root][variant]) - min(pooled[root]["plain"])) / CYCLES * 1e6

    def per_call_us(root: str, variant: str) -> float:
        pairs = zip(pooled[root][variant], pooled[root]["plain"], strict=True)
        return statistics.median(variant_time - plain_time for variant_time, plain_time in pairs) / CYCLES * 1e6

    rows = []
    for root in VARIANTS:
        if root == "strands" and strands_missing:
            continue
        for variant in VARIANTS[root]:
            values = pooled[root][variant]
            rows.append(
                {
                    "framework": "strands-agents 1.62" if root == "strands" else "strandslike",
                    "variant": variant,
                    "ms_per_invocation": statistics.median(values) * 1000,
                    "us_per_cycle": statistics.median(values) / CYCLES * 1e6,
                    "overhead_us_per_tool_call": None if variant == "plain" else per_call_us(root, variant),
                    "best_overhead_us_per_tool_call": None if variant == "plain" else best_us(root, variant),
                    "samples": len(values),
                }
            )
    overhead = per_call_us("strandslike", "policy")
    passed = overhead <= TARGET_US
    print()
    print(f"bench_approvals: {CYCLES} cycles per invocation, one add_one call per cycle; medians")
    print(
        f"{'framework':<22}{'variant':<10}{'ms/invocation':>15}{'µs/cycle':>11}{'µs added/tool call':>21}"
        f"{'(best samples)':>16}"
    )
    for row in rows:
        added = "" if row["overhead_us_per_tool_call"] is None else f"{row['overhead_us_per_tool_call']:.2f}"
        best = "" if row["best_overhead_us_per_tool_call"] is None else f"{row['best_overhead_us_per_tool_call']:.2f}"
        print(
            f"{row['framework']:<22}{row['variant']:<10}{row['ms_per_invocation']:>15.3f}"
            f"{row['us_per_cycle']:>11.2f}{added:>21}{best:>16}"
        )
    verdict = "PASS" if passed else "FAIL"
    print(
        f"\ncheck: HumanInTheLoop + 20-rule policy adds {overhead:.2f} µs per tool call (target ≤ {TARGET_US}): "
        f"{verdict}"
    )
    load_end = os.getloadavg()[0]
    print(f"load average {load_start:.2f} at the start, {load_end:.2f} at the end; {time.time() - started:.0f} s")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(
        json.dumps(
            {
                "when": datetime.datetime.now(datetime.UTC).isoformat(),
                "python": platform.python_version(),
                "machine": platform.machine(),
                "params": params,
                "rows": rows,
                "policy_overhead_us": overhead,
                "target_us": TARGET_US,
                "passed": passed,
                "samples": pooled,
            },
            indent=2,
        )
    )
    return 1 if args.strict and not passed else 0


if __name__ == "__main__":
    sys.exit(main())
