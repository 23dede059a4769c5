"""Typed errors for bad resumes.

Each error has a stable ``code`` and also derives from the builtin type Strands raises in the same situation,
so code written for Strands (``except KeyError``, ``except TypeError``) keeps working. Raising one never
changes the agent: it stays interrupted and can be resumed with a correct answer.
"""

from ..types.exceptions import NotJSONSerializableError, StrandslikeError, safe_repr

_SHOWN_ID_LIMIT = 200


def shown_id(value: object) -> str:
    """Return an interrupt id as messages show it: as is when short and printable, else a bounded, escaped repr.

    Ids in messages come from clients too; a huge, multi-line or invisible-character id must not make the message
    huge, break a log line, or fail to print.
    """
    if isinstance(value, str) and len(value) <= _SHOWN_ID_LIMIT and value.isprintable():
        return value
    return safe_repr(value)


def _label(interrupt_id: object) -> str:
    return f"interrupt_id=<{shown_id(interrupt_id)}>"


class InterruptError(StrandslikeError):
    """A resume was refused; nothing was applied and the run is still resumable."""

    code = "INTERRUPT_ERROR"


class PendingInterruptsError(InterruptError, TypeError):
    """The agent is waiting on interrupts but was given something other than interrupt responses."""

    code = "PENDING_INTERRUPTS"


class InvalidResumeError(InterruptError, TypeError):
    """An interrupt response block is malformed."""

    code = "INVALID_PAYLOAD"


class UnknownInterruptError(InterruptError, KeyError):
    """An interrupt response names an interrupt id the agent does not have."""

    code = "UNKNOWN_INTERRUPT_ID"

    def __init__(self, interrupt_id: str) -> None:
        self.interrupt_id = interrupt_id
        super().__init__(f"{_label(interrupt_id)} | no interrupt found")

    def __str__(self) -> str:
        # KeyError's str() quotes its argument; keep Strands' text readable instead.
        return str(self.args[0])


class InterruptAlreadyAnsweredError(InterruptError, ValueError):
    """An interrupt response answers an interrupt that already has an answer."""

    code = "ALREADY_ANSWERED"

    def __init__(self, interrupt_id: str, name: str) -> None:
        self.interrupt_id = interrupt_id
        super().__init__(
            f"{_label(interrupt_id)} | interrupt {name!r} was already answered; an answer cannot be changed. "
            "Answer only the interrupts listed in the latest result.interrupts. Nothing was applied."
        )


class DuplicateInterruptResponseError(InterruptError, ValueError):
    """One resume answers the same interrupt twice."""

    code = "DUPLICATE_RESPONSE"

    def __init__(self, interrupt_id: str) -> None:
        self.interrupt_id = interrupt_id
        super().__init__(
            f"{_label(interrupt_id)} | answered more than once in one resume; give each interrupt one answer. "
            "Nothing was applied."
        )


class NotInterruptedError(InterruptError, ValueError):
    """Interrupt responses were given to an agent that is not waiting on any interrupt."""

    code = "NOT_INTERRUPTED"

    def __init__(self) -> None:
        super().__init__(
            "Received interrupt responses but agent is not in interrupt state. Ensure the agent instance is "
            "preserved between calls, or use session management to persist interrupt state across requests."
        )


class PartialResumeError(InterruptError, ValueError):
    """The resume left open interrupts unanswered and the agent refuses partial resumes (AG-UI rule 3)."""

    code = "PARTIAL_RESUME"

    def __init__(self, missing: list[str]) -> None:
        self.missing = missing
        shown = ", ".join(shown_id(interrupt_id) for interrupt_id in missing)
        super().__init__(
            f"interrupt_ids=<{shown}> | left unanswered, and this agent refuses partial resumes "
            "(partial_resume='refuse'). Answer every open interrupt in one resume. Nothing was applied."
        )


class InvalidPayloadError(InterruptError, ValueError):
    """An answer fails the interrupt's response schema (or is not JSON-serializable)."""

    code = "INVALID_PAYLOAD"

    def __init__(self, interrupt_id: str, detail: str) -> None:
        self.interrupt_id = interrupt_id
        super().__init__(f"{_label(interrupt_id)} | the answer is invalid: {detail}. Nothing was applied.")


class InterruptExpiredError(InterruptError, ValueError):
    """An answer arrived after the interrupt's ``expires_at``."""

    code = "INTERRUPT_EXPIRED"

    def __init__(self, interrupt_id: str, expires_at: str) -> None:
        self.interrupt_id = interrupt_id
        super().__init__(
            f"{_label(interrupt_id)} | expired at {expires_at}; answers are no longer accepted. "
            "Cancel it instead ({'action': 'cancel'}). Nothing was applied."
        )


class NotToolBoundError(InterruptError, ValueError):
    """``respond`` was used on an interrupt that is not bound to a tool call."""

    code = "NOT_TOOL_BOUND"

    def __init__(self, interrupt_id: str, action: str) -> None:
        self.interrupt_id = interrupt_id
        super().__init__(
            f"{_label(interrupt_id)} | '{action}' needs an interrupt bound to a tool call, and this one is not "
            "(it was raised outside a tool and its BeforeToolCallEvent). Use resume(value). Nothing was applied."
        )


class EditsNotAllowedError(InterruptError, ValueError):
    """``restart`` replaced the tool input of an interrupt raised without ``allow_edits=True``."""

    code = "EDITS_NOT_ALLOWED"

    def __init__(self, interrupt_id: str) -> None:
        self.interrupt_id = interrupt_id
        super().__init__(
            f"{_label(interrupt_id)} | restart with edited input is refused: the interrupt was raised without "
            "allow_edits=True. Restart without input, or raise the interrupt with allow_edits=True. "
            "Nothing was applied."
        )


class InvalidToolInputError(InterruptError, ValueError):
    """Edited input given to ``restart`` fails the tool's input schema."""

    code = "INVALID_TOOL_INPUT"

    def __init__(self, interrupt_id: str, tool_name: str, detail: str) -> None:
        self.interrupt_id = interrupt_id
        super().__init__(
            f"{_label(interrupt_id)} | the edited input does not fit tool {tool_name!r}: {detail}. Nothing was applied."
        )


class StaleToolCallError(InterruptError, ValueError):
    """The tool call an interrupt approved is no longer the call waiting to run."""

    code = "STALE_TOOL_CALL"

    def __init__(self, interrupt_id: str) -> None:
        self.interrupt_id = interrupt_id
        super().__init__(
            f"{_label(interrupt_id)} | the pending tool call no longer matches the call this interrupt was "
            "raised for (its name or input changed), so the answer is refused. Nothing was applied."
        )


class SessionMismatchError(InterruptError, ValueError):
    """An answer names an interrupt of another session."""

    code = "SESSION_MISMATCH"

    def __init__(self, interrupt_id: str, given: str, expected: str | None) -> None:
        self.interrupt_id = interrupt_id
        super().__init__(
            f"{_label(interrupt_id)} | the answer belongs to session {safe_repr(given)}, but this run is "
            f"session {safe_repr(expected)}. Send it to the session that raised the interrupt. Nothing was applied."
        )


class NotJSONPayloadError(InvalidPayloadError, NotJSONSerializableError):
    """An answer is not JSON-serializable (an `InvalidPayloadError` and a `NotJSONSerializableError`)."""

    def __init__(self, interrupt_id: str, detail: str) -> None:
        self.interrupt_id = interrupt_id
        # Both bases take other arguments; set the message directly.
        Exception.__init__(self, f"{_label(interrupt_id)} | the answer is invalid: {detail} Nothing was applied.")
