"""Scripted models for the multi-agent bench (`bench_multiagent.py`), one per framework, with the same behaviour.

Both replay one scripted assistant turn per call (a text answer or a tool call), optionally sleep before the
first event (as a slow provider would), and stamp when the turn started and when its last event was consumed,
so the fan-out scenario can split a graph run into its phases. The strands-agents model is a minimal
`strands.models.Model` subclass yielding the Converse events strandslike's `ScriptedModel` yields.
"""

import asyncio
import functools
import json
import time
from collections.abc import AsyncGenerator
from typing import Any

Turn = tuple[str, Any]  # ("text", "answer") or ("tool", (name, input))

_USAGE: dict[str, Any] = {
    "metadata": {"usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}, "metrics": {"latencyMs": 0}}
}


def text_events(content: str) -> list[dict[str, Any]]:
    """Converse events of an assistant turn answering ``content`` (stop reason end_turn)."""
    return [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockStart": {"start": {}}},
        {"contentBlockDelta": {"delta": {"text": content}}},
        {"contentBlockStop": {}},
        {"messageStop": {"stopReason": "end_turn"}},
        json.loads(json.dumps(_USAGE)),
    ]


def tool_events(use_id: str, name: str, tool_input: dict[str, Any]) -> list[dict[str, Any]]:
    """Converse events of an assistant turn calling the tool ``name`` once (stop reason tool_use)."""
    return [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockStart": {"start": {"toolUse": {"toolUseId": use_id, "name": name}}}},
        {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(tool_input)}}}},
        {"contentBlockStop": {}},
        {"messageStop": {"stopReason": "tool_use"}},
        json.loads(json.dumps(_USAGE)),
    ]


@functools.cache
def _strands_model_class() -> Any:
    from strands.models import Model

    class BenchMultiAgentModel(Model):
        """Yields the i-th scripted turn's Converse events on the i-th call to `stream`."""

        def __init__(self, turns: list[Turn], delay: float) -> None:
            self._turns = [
                text_events(value) if kind == "text" else tool_events(f"tooluse_{i + 1}", value[0], value[1])
                for i, (kind, value) in enumerate(turns)
            ]
            self._delay = delay
            self._next = 0
            self._config: dict[str, Any] = {"model_id": "bench-multiagent"}
            self.started = 0.0
            self.finished = 0.0

        @property
        def remaining(self) -> int:
            return len(self._turns) - self._next

        def update_config(self, **model_config: Any) -> None:
            self._config.update(model_config)

        def get_config(self) -> dict[str, Any]:
            return self._config

        async def structured_output(  # type: ignore[override]
            self, output_model: Any, prompt: Any, system_prompt: str | None = None, **kwargs: Any
        ) -> AsyncGenerator[dict[str, Any], None]:
            raise NotImplementedError("the bench model has no structured output")
            yield {}  # pragma: no cover - makes this an async generator

        async def stream(  # type: ignore[override]
            self, messages: Any, tool_specs: Any = None, system_prompt: str | None = None, **kwargs: Any
        ) -> AsyncGenerator[dict[str, Any], None]:
            self.started = time.perf_counter()
            index = self._next
            self._next = index + 1
            if self._delay > 0:
                await asyncio.sleep(self._delay)
            for event in self._turns[index]:
                yield event
            self.finished = time.perf_counter()

    return BenchMultiAgentModel


def strands_model(turns: list[Turn], delay: float = 0.0) -> Any:
    """A strands-agents model replaying ``turns``, sleeping ``delay`` seconds before each turn."""
    return _strands_model_class()(turns, delay)


@functools.cache
def _stamped_scripted_class() -> Any:
    from strandslike.models import ScriptedModel

    class StampedScriptedModel(ScriptedModel):
        """`ScriptedModel` that stamps when each turn started and when its last event was consumed."""

        started = 0.0
        finished = 0.0

        async def stream(self, *args: Any, **kwargs: Any) -> AsyncGenerator[Any, None]:  # type: ignore[override]
            self.started = time.perf_counter()
            async for event in super().stream(*args, **kwargs):
                yield event
            self.finished = time.perf_counter()

    return StampedScriptedModel


def strandslike_model(turns: list[Turn], delay: float = 0.0, stamped: bool = False) -> Any:
    """strandslike's own `ScriptedModel` replaying ``turns``; ``stamped`` adds the start/finish stamps."""
    from strandslike.models import ScriptedModel, text, tool_call

    script = [text(value) if kind == "text" else tool_call(value[0], **value[1]) for kind, value in turns]
    model_class = _stamped_scripted_class() if stamped else ScriptedModel
    return model_class(script, delay=delay)
