"""Shared helpers for the test suite (importable as ``helpers`` thanks to pytest's ``pythonpath``)."""

from collections.abc import Iterable
from typing import Any

from strandslike.hooks import HookRegistry


def answer(interrupt: Any, response: Any) -> dict[str, Any]:
    """Build the Strands resume block for one interrupt."""
    return {"interruptResponse": {"interruptId": interrupt.id, "response": response}}


def answers(interrupts: Iterable[Any], response: Any) -> list[dict[str, Any]]:
    """Answer every interrupt with the same response."""
    return [answer(interrupt, response) for interrupt in interrupts]


class EventLog:
    """A hook provider recording the name of every event it sees."""

    def __init__(self, *event_types: type) -> None:
        self.event_types = event_types
        self.names: list[str] = []
        self.events: list[Any] = []

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        from strandslike.hooks.registry import BUILTIN_EVENTS

        for event_type in self.event_types or BUILTIN_EVENTS:
            registry.add_callback(event_type, self.record)

    def record(self, event: Any) -> None:
        self.names.append(type(event).__name__)
        self.events.append(event)
