"""Per-agent metrics: cycles, tool calls and token usage."""

from dataclasses import dataclass, field
from typing import Any, cast

from ..types.streaming import Metrics, Usage


@dataclass
class ToolMetrics:
    """Counters for one tool."""

    call_count: int = 0
    success_count: int = 0
    error_count: int = 0
    total_time: float = 0.0

    def record(self, success: bool, duration: float) -> None:
        """Count one call."""
        self.call_count += 1
        if success:
            self.success_count += 1
        else:
            self.error_count += 1
        self.total_time += duration


def _zero_usage() -> Usage:
    return {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}


@dataclass
class EventLoopMetrics:
    """Metrics accumulated over an agent's life.

    Attributes:
        model_retry_count: Model calls made again because a hook (such as `ModelRetryStrategy`) asked for a retry.
    """

    cycle_count: int = 0
    tool_metrics: dict[str, ToolMetrics] = field(default_factory=dict)
    cycle_durations: list[float] = field(default_factory=list)
    accumulated_usage: Usage = field(default_factory=_zero_usage)
    accumulated_metrics: Metrics = field(default_factory=lambda: Metrics(latencyMs=0))
    model_retry_count: int = 0

    def add_usage(self, usage: Usage, metrics: Metrics) -> None:
        """Add one model call's usage."""
        total = cast(dict[str, int], self.accumulated_usage)
        for key, value in usage.items():
            if isinstance(value, int) and value:
                total[key] = total.get(key, 0) + value
        self.accumulated_metrics["latencyMs"] = self.accumulated_metrics.get("latencyMs", 0) + metrics.get(
            "latencyMs", 0
        )

    def add_tool_call(self, name: str, success: bool, duration: float) -> None:
        """Count one tool call."""
        tool = self.tool_metrics.get(name)
        if tool is None:
            tool = self.tool_metrics[name] = ToolMetrics()
        tool.record(success, duration)

    def get_summary(self) -> dict[str, Any]:
        """Return a JSON-serializable summary."""
        return {
            "total_cycles": self.cycle_count,
            "total_duration": sum(self.cycle_durations),
            "accumulated_usage": dict(self.accumulated_usage),
            "accumulated_metrics": dict(self.accumulated_metrics),
            "tool_usage": {name: vars(tool).copy() for name, tool in self.tool_metrics.items()},
            "model_retry_count": self.model_retry_count,
        }
