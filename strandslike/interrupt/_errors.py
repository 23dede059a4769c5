"""Typed errors for bad resumes.

Each error has a stable ``code`` and also derives from the builtin type Strands raises in the same situation,
so code written for Strands (``except KeyError``, ``except TypeError``) keeps working. Raising one never
changes the agent: it stays interrupted and can be resumed with a correct answer.
"""

from typing import ClassVar

from ..types.exceptions import StrandslikeError


class InterruptError(StrandslikeError):
    """A resume was refused; nothing was applied and the run is still resumable."""

    code: ClassVar[str] = "INTERRUPT_ERROR"


class PendingInterruptsError(InterruptError, TypeError):
    """The agent is waiting on interrupts but was given something other than interrupt responses."""

    code: ClassVar[str] = "PENDING_INTERRUPTS"


class InvalidResumeError(InterruptError, TypeError):
    """An interrupt response block is malformed."""

    code: ClassVar[str] = "INVALID_PAYLOAD"


class UnknownInterruptError(InterruptError, KeyError):
    """An interrupt response names an interrupt id the agent does not have."""

    code: ClassVar[str] = "UNKNOWN_INTERRUPT_ID"

    def __init__(self, interrupt_id: str) -> None:
        self.interrupt_id = interrupt_id
        super().__init__(f"interrupt_id=<{interrupt_id}> | no interrupt found")

    def __str__(self) -> str:
        # KeyError's str() quotes its argument; keep Strands' text readable instead.
        return str(self.args[0])


class InterruptAlreadyAnsweredError(InterruptError, ValueError):
    """An interrupt response answers an interrupt that already has an answer."""

    code: ClassVar[str] = "ALREADY_ANSWERED"

    def __init__(self, interrupt_id: str, name: str) -> None:
        self.interrupt_id = interrupt_id
        super().__init__(
            f"interrupt_id=<{interrupt_id}> | interrupt {name!r} was already answered; an answer cannot be changed. "
            "Answer only the interrupts listed in the latest result.interrupts. Nothing was applied."
        )


class DuplicateInterruptResponseError(InterruptError, ValueError):
    """One resume answers the same interrupt twice."""

    code: ClassVar[str] = "DUPLICATE_RESPONSE"

    def __init__(self, interrupt_id: str) -> None:
        self.interrupt_id = interrupt_id
        super().__init__(
            f"interrupt_id=<{interrupt_id}> | answered more than once in one resume; give each interrupt one answer. "
            "Nothing was applied."
        )


class NotInterruptedError(InterruptError, ValueError):
    """Interrupt responses were given to an agent that is not waiting on any interrupt."""

    code: ClassVar[str] = "NOT_INTERRUPTED"

    def __init__(self) -> None:
        super().__init__(
            "Received interrupt responses but agent is not in interrupt state. Ensure the agent instance is "
            "preserved between calls, or use session management to persist interrupt state across requests."
        )
