"""`EventRecorder`: a hook provider that records the events it sees, for assertions in tests."""

from typing import Any, TypeVar

from ..hooks.events import BaseHookEvent
from ..hooks.registry import BUILTIN_EVENTS, HookProvider, HookRegistry

E = TypeVar("E", bound=BaseHookEvent)


class EventRecorder(HookProvider):
    """Record every hook event that fires, in order.

    Register it like any hook provider: ``Agent(hooks=[recorder])``, ``GraphBuilder.set_hook_providers([recorder])``
    or ``Swarm(..., hooks=[recorder])``. It listens to every built-in event unless given the ones to record.

    ```python
    recorder = EventRecorder()
    agent = Agent(model=model, tools=[delete_files], hooks=[recorder])
    agent("clean up")
    assert recorder.names[:2] == ["AgentInitializedEvent", "BeforeInvocationEvent"]
    [call] = recorder.of(BeforeToolCallEvent)
    ```

    Args:
        *event_types: The event classes to record; none means every built-in event.

    Attributes:
        events: The events recorded, oldest first (the event objects themselves, as the hooks saw them).
    """

    def __init__(self, *event_types: type[BaseHookEvent]) -> None:
        self.event_types: tuple[type[BaseHookEvent], ...] = event_types or BUILTIN_EVENTS
        self.events: list[BaseHookEvent] = []

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        """Register the recording callback for each event type."""
        for event_type in self.event_types:
            registry.add_callback(event_type, self._record)

    def _record(self, event: BaseHookEvent) -> None:
        self.events.append(event)

    @property
    def names(self) -> list[str]:
        """The class names of the events recorded, oldest first."""
        return [type(event).__name__ for event in self.events]

    def of(self, event_type: type[E]) -> list[E]:
        """Return the recorded events of exactly ``event_type`` (not of its subclasses), oldest first."""
        return [event for event in self.events if type(event) is event_type]

    def clear(self) -> None:
        """Forget the events recorded so far."""
        self.events.clear()


__all__ = ["EventRecorder"]
