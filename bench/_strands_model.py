"""A scripted `strands.models.Model` for strands-agents 1.62: replays precomputed Converse events, one turn per call.

It does the least a provider can do (yield events built before the clock starts), so the figures measure the
strands-agents loop, not the model.
"""

from collections.abc import AsyncGenerator
from typing import Any

from strands.models import Model


class BenchStrandsModel(Model):
    """Yields ``turns[i]`` on the i-th call to `stream`."""

    def __init__(self, turns: list[list[dict[str, Any]]]) -> None:
        self._turns = turns
        self._next = 0
        self._config: dict[str, Any] = {"model_id": "bench-scripted"}

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
        self,
        messages: Any,
        tool_specs: Any = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncGenerator[dict[str, Any], None]:
        index = self._next
        self._next = index + 1
        for event in self._turns[index]:
            yield event
