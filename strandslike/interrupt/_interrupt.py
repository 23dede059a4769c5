"""The `Interrupt` record and the exception that carries it out of a hook or tool."""

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Interrupt:
    """A named request for outside input that paused a run.

    Attributes:
        id: Opaque, deterministic id; answer the interrupt by sending it back in an ``interruptResponse``.
        name: The name the hook or tool gave the interrupt.
        reason: JSON-serializable context for whoever answers.
        response: The answer, once given.
    """

    id: str
    name: str
    reason: Any = None
    response: Any = None
    # Whether an answer was given. Kept apart from `response` so that `None` is a legitimate answer
    # (Strands treats a None response as "unanswered" and asks again forever, harness-sdk#4470).
    answered: bool = field(default=False, repr=False, compare=False, kw_only=True)

    def __post_init__(self) -> None:
        if self.response is not None:
            self.answered = True

    def to_dict(self) -> dict[str, Any]:
        """Return the interrupt as a JSON-serializable dict (Strands' four keys)."""
        return {"id": self.id, "name": self.name, "reason": self.reason, "response": self.response}


class InterruptException(Exception):
    """Raised inside a hook or tool to pause the run; the framework catches it.

    An interrupt is control flow, not an error: it never reaches the caller as an exception.
    """

    def __init__(self, interrupt: Interrupt) -> None:
        self.interrupt = interrupt
        super().__init__(interrupt)
