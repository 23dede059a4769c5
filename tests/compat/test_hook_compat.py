"""Issue 12, item 6: custom hook events as Strands declares them (reverse order, writable properties)."""

from dataclasses import dataclass
from typing import Any

import pytest

from strandslike.hooks import BaseHookEvent, HookOrder, HookRegistry


@dataclass
class TeardownEvent(BaseHookEvent):
    """A user event declared the Strands way: it overrides `should_reverse_callbacks`."""

    label: str = ""

    @property
    def should_reverse_callbacks(self) -> bool:
        return True


@dataclass
class MaybeReversedEvent(BaseHookEvent):
    """An event whose direction depends on the instance."""

    backwards: bool = False

    @property
    def should_reverse_callbacks(self) -> bool:
        return self.backwards


@dataclass
class WritableEvent(BaseHookEvent):
    """An event that opens one property for writing by overriding `_can_write`, as Strands' events do."""

    value: int = 0
    locked: int = 0

    def _can_write(self, name: str) -> bool:
        return name == "value"


def _recorder(seen: list[Any], tag: Any) -> Any:
    def callback(event: BaseHookEvent) -> None:
        seen.append(tag)

    return callback


async def test_custom_event_with_should_reverse_callbacks_runs_in_reverse() -> None:
    registry = HookRegistry()
    seen: list[Any] = []
    for tag in range(3):
        registry.add_callback(TeardownEvent, _recorder(seen, tag))
    registry.add_callback(TeardownEvent, _recorder(seen, "first"), order=HookOrder.SDK_FIRST)
    registry.add_callback(TeardownEvent, _recorder(seen, "last"), order=HookOrder.SDK_LAST)
    await registry.invoke_callbacks_async(TeardownEvent(label="x"))
    # Lower order first for every event; reversed registration order only within one order (Strands 1.62).
    assert seen == ["first", 2, 1, 0, "last"]
    assert [c is not None for c in registry.get_callbacks_for(TeardownEvent())] == [True] * 5
    seen.clear()
    registry.invoke_callbacks(TeardownEvent())
    assert seen == ["first", 2, 1, 0, "last"]


async def test_direction_is_asked_of_each_event() -> None:
    registry = HookRegistry()
    seen: list[Any] = []
    for tag in range(3):
        registry.add_callback(MaybeReversedEvent, _recorder(seen, tag))
    await registry.invoke_callbacks_async(MaybeReversedEvent(backwards=False))
    await registry.invoke_callbacks_async(MaybeReversedEvent(backwards=True))
    await registry.invoke_callbacks_async(MaybeReversedEvent(backwards=False))
    assert seen == [0, 1, 2, 2, 1, 0, 0, 1, 2]
    # A callback added later is ordered in too, in both directions.
    registry.add_callback(MaybeReversedEvent, _recorder(seen, 3))
    seen.clear()
    await registry.invoke_callbacks_async(MaybeReversedEvent(backwards=True))
    assert seen == [3, 2, 1, 0]


def test_custom_can_write_opens_properties() -> None:
    event = WritableEvent(value=1, locked=2)
    event.value = 5
    assert event.value == 5
    with pytest.raises(AttributeError, match="Property locked is not writable"):
        event.locked = 3
    with pytest.raises(AttributeError, match="Property new_attribute is not writable"):
        event.new_attribute = 1  # type: ignore[attr-defined]
