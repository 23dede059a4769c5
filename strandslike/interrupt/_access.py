"""Public seams onto an owner's interrupt state, for hooks, interventions and plugins.

A hook that raises an interrupt sometimes needs to know what became of it before calling ``interrupt()`` again
(was it raised already? answered by ``restart``?), and approval handlers must leave their decisions in the audit
trail next to the interrupts' own entries. These two functions give that access without reaching into the
agent's private interrupt state.
"""

import json
import time
from typing import Any

from .._json import ensure_json_serializable
from ..types.interrupt import _Interruptible
from ._interrupt import Interrupt


def find_interrupt(point: Any, name: str) -> Interrupt | None:
    """Return the interrupt ``point`` raised under ``name`` at the current interrupt point, or None.

    The interrupt is returned whether it is still open or already answered (its ``action`` says how:
    ``resume``, ``respond``, ``restart`` or ``cancel``), as long as the run has not moved past the point that
    raised it. Nothing is raised and nothing changes.

    Args:
        point: An interruptible hook event (`BeforeToolCallEvent`, `BeforeToolsEvent`, `BeforeModelCallEvent`,
            `BeforeNodeCallEvent`) or a `ToolContext`.
        name: The name given to ``interrupt()``.

    Raises:
        TypeError: ``point`` cannot raise interrupts.
    """
    if not isinstance(point, _Interruptible):
        raise TypeError(
            f"find_interrupt() takes an interruptible hook event or a ToolContext, got {type(point).__name__}"
        )
    interrupts = point._interrupt_state().interrupts
    if not interrupts:  # the usual case, and this runs before tool calls: no id to compute
        return None
    return interrupts.get(point._interrupt_id(name))


def record_audit(owner: Any, event: str, *, name: str, interrupt_id: str | None = None, **details: Any) -> None:
    """Append an entry to the interrupt audit trail of an agent (``agent.interrupt_audit``) or orchestrator.

    Entries are persisted with the session like the interrupts' own ``raised``/``answered``/``outcome`` entries,
    so they survive restarts and show in ``python -m strandslike sessions audit``.

    Args:
        owner: The `Agent` (or Graph/Swarm) whose trail gets the entry.
        event: What happened, e.g. ``"decision"``.
        name: Who recorded it: the interrupt name or the handler's name.
        interrupt_id: The interrupt the entry concerns, if any.
        **details: JSON-serializable details of the entry.

    Raises:
        TypeError: ``owner`` has no interrupt state.
        ValueError: ``event`` or ``name`` is not a non-empty string.
        NotJSONSerializableError: A detail cannot be persisted (a `TypeError`); nothing was recorded.
    """
    state = getattr(owner, "_interrupt_state", None)
    if state is None or not hasattr(state, "append_entry"):
        raise TypeError(f"record_audit() takes an Agent, Graph or Swarm, got {type(owner).__name__}")
    if type(event) is not str or not event or type(name) is not str or not name:
        label, value = ("event", event) if type(event) is not str or not event else ("name", name)
        raise ValueError(f"{label}={value!r} | an audit entry's {label} must be a non-empty string")
    # The entry keeps a copy, so what it records cannot change afterwards (a tool input edited later, say). Plain
    # data, the common case, is copied and checked in one walk without encoding it.
    entry: dict[str, Any] = {"time": time.time(), "event": event, "interrupt_id": interrupt_id, "name": name}
    if not _copy_into(entry, details, 0):
        ensure_json_serializable(details, f"The details of audit entry {event!r}")
        entry.update(json.loads(json.dumps(details)))  # as it will read back from the session (tuples as lists)
    state.append_entry(entry)


_SAFE_INT = 2**53


_NOT_PLAIN: Any = object()


def _copy_into(target: dict[str, Any], source: dict[str, Any], depth: int) -> bool:
    """Copy the plainly storable JSON items of ``source`` into ``target``; False if any is not (see `_plain_copy`)."""
    for key, item in source.items():
        if type(key) is not str or not key.isascii():
            return False
        if type(item) is str:  # the usual value, checked here rather than by a call
            if not item.isascii():
                return False
            target[key] = item
        else:
            item = _plain_copy(item, depth + 1)
            if item is _NOT_PLAIN:
                return False
            target[key] = item
    return True


def _plain_copy(value: Any, depth: int) -> Any:
    """Copy ``value`` if it is plainly storable JSON, else return `_NOT_PLAIN`.

    Plain means ASCII text, safe integers, finite floats, booleans, None, lists and dicts with ASCII string keys.
    Anything else (non-ASCII text, huge or non-finite numbers, tuples, other keys, deep nesting) is not rejected
    here: it is left to `ensure_json_serializable`, the canonical check.
    """
    kind = type(value)
    if kind is str:
        return value if value.isascii() else _NOT_PLAIN
    if kind is bool or value is None:
        return value
    if kind is int:
        return value if -_SAFE_INT < value < _SAFE_INT else _NOT_PLAIN
    if kind is float:
        return value if value - value == 0.0 else _NOT_PLAIN  # finite (inf - inf and nan - nan are nan)
    if depth > 20:
        return _NOT_PLAIN
    if kind is dict:
        copied: dict[str, Any] = {}
        return copied if _copy_into(copied, value, depth) else _NOT_PLAIN
    if kind is list:
        items = []
        for item in value:
            item = _plain_copy(item, depth + 1)
            if item is _NOT_PLAIN:
                return _NOT_PLAIN
            items.append(item)
        return items
    return _NOT_PLAIN
