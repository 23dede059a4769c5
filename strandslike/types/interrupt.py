"""Interrupt wire types and the mixin that gives events and tool contexts their ``interrupt()`` method."""

import uuid
from typing import TYPE_CHECKING, Any

from typing_extensions import TypedDict

if TYPE_CHECKING:
    from ..interrupt._state import _InterruptState


class InterruptResponse(TypedDict):
    """An answer to one interrupt."""

    interruptId: str
    response: Any


class InterruptResponseContent(TypedDict):
    """A content block carrying an interrupt answer."""

    interruptResponse: InterruptResponse


def name_uuid(name: str) -> str:
    """Return the uuid5 (OID namespace) of ``name``, the building block of Strands' interrupt ids."""
    return str(uuid.uuid5(uuid.NAMESPACE_OID, name))


class _Interruptible:
    """Mixin for objects that can pause the run: interruptible hook events and tool contexts."""

    __slots__ = ()

    def interrupt(self, name: str, reason: Any = None, response: Any = None) -> Any:
        """Pause the run for outside input, or return the answer once it was given.

        Args:
            name: Name of the interrupt; unique among the interrupts raised at this point.
            reason: JSON-serializable context shown to whoever answers.
            response: A preemptive answer; when not None the run does not pause and this value is returned.

        Returns:
            The answer given by the caller on resume.

        Raises:
            InterruptException: No answer yet; the framework catches it and pauses the run.
        """
        return self._interrupt_state().interrupt(self._interrupt_id(name), name, reason, response)

    def _interrupt_id(self, name: str) -> str:
        raise NotImplementedError

    def _interrupt_state(self) -> "_InterruptState":
        owner = getattr(self, "agent", None) or getattr(self, "source", None)
        if owner is None:
            raise RuntimeError("agent instance attribute not set")
        state: _InterruptState = owner._interrupt_state
        return state
