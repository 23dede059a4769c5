"""Event loop types: token usage, latency metrics and stop reasons (Strands' ``strands.types.event_loop``)."""

from .streaming import Metrics, StopReason, Usage

__all__ = ["Metrics", "StopReason", "Usage"]
