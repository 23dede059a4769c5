"""Public seams onto an owner's interrupt state, for hooks, interventions and plugins.

A hook that raises an interrupt sometimes needs to know what became of it before calling ``interrupt()`` again
(was it raised already? answered by ``restart``?), and approval handlers must leave their decisions in the audit
trail next to the interrupts' own entries. These two functions give that access without reaching into the
agent's private interrupt state.
"""

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
    state = point._interrupt_state()
    return state.interrupts.get(point._interrupt_id(name))


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
    if state is None or not hasattr(state, "note"):
        raise TypeError(f"record_audit() takes an Agent, Graph or Swarm, got {type(owner).__name__}")
    for label, value in (("event", event), ("name", name)):
        if not isinstance(value, str) or not value:
            raise ValueError(f"{label}={value!r} | an audit entry's {label} must be a non-empty string")
    ensure_json_serializable(details, f"The details of audit entry {event!r}")
    state.note(event, name, interrupt_id, **details)


__all__ = ["find_interrupt", "record_audit"]
