"""What every benchmark shares: the tool bodies, the scripted Converse events and the timing helpers.

The same tool functions are wrapped by each framework's ``@tool``, and the same Converse event builders feed the
strands-agents bench model (`_strands_model`) and the framework-free floor (`_floor`), so the frameworks and the
floor do the same work per cycle. strandslike's own `ScriptedModel` streams the same event shapes.
"""

import asyncio
import gc
import json
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

NAP_SECONDS = 0.05

_USAGE_METADATA: dict[str, Any] = {
    "metadata": {"usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}, "metrics": {"latencyMs": 0}}
}


async def add_one(x: int) -> int:
    """Add one to a number.

    Args:
        x: The number.
    """
    return x + 1


async def nap(x: int) -> int:
    """Sleep 50 ms, then return the number.

    Args:
        x: The number.
    """
    await asyncio.sleep(NAP_SECONDS)
    return x


def tool_use_id(cycle: int) -> str:
    """The tool use id of the ``cycle``-th tool use (1-based), as strandslike's ScriptedModel numbers them."""
    return f"tooluse_{cycle}"


def tool_turn_events(uses: list[tuple[str, str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Converse events of an assistant turn calling the tools ``uses`` (id, name, input), stop reason tool_use."""
    events: list[dict[str, Any]] = [{"messageStart": {"role": "assistant"}}]
    for use_id, name, tool_input in uses:
        events.append({"contentBlockStart": {"start": {"toolUse": {"toolUseId": use_id, "name": name}}}})
        events.append({"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(tool_input)}}}})
        events.append({"contentBlockStop": {}})
    events.append({"messageStop": {"stopReason": "tool_use"}})
    events.append(json.loads(json.dumps(_USAGE_METADATA)))
    return events


def text_turn_events(text: str) -> list[dict[str, Any]]:
    """Converse events of an assistant turn answering ``text``, stop reason end_turn."""
    return [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockStart": {"start": {}}},
        {"contentBlockDelta": {"delta": {"text": text}}},
        {"contentBlockStop": {}},
        {"messageStop": {"stopReason": "end_turn"}},
        json.loads(json.dumps(_USAGE_METADATA)),
    ]


def cycles_script(cycles: int) -> list[list[dict[str, Any]]]:
    """The turns of a ``cycles``-cycle run: one add_one call per cycle (input x = cycle), then a text turn."""
    turns = [tool_turn_events([(tool_use_id(i), "add_one", {"x": i})]) for i in range(1, cycles + 1)]
    turns.append(text_turn_events("done"))
    return turns


def batch_script(tools: int) -> list[list[dict[str, Any]]]:
    """One turn calling ``nap`` ``tools`` times in a single batch, then a text turn."""
    return [
        tool_turn_events([(tool_use_id(i), "nap", {"x": i}) for i in range(1, tools + 1)]),
        text_turn_events("done"),
    ]


def summary(samples: list[float]) -> dict[str, Any]:
    """Median, best and all samples (milliseconds)."""
    return {"median": statistics.median(samples), "best": min(samples), "samples": [round(s, 5) for s in samples]}


async def timed_batch(
    build: Callable[[], Any], run: Callable[[Any], Awaitable[Any]], count: int
) -> tuple[float, list[Any]]:
    """Build ``count`` subjects (untimed), then time running them one after another.

    Returns:
        The elapsed seconds and the subjects with their run results, for checking after the clock stopped.
    """
    subjects = [build() for _ in range(count)]
    gc.collect()
    results = []
    start = time.perf_counter()
    for subject in subjects:
        results.append(await run(subject))
    elapsed = time.perf_counter() - start
    return elapsed, list(zip(subjects, results, strict=True))
