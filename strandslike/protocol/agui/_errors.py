"""What a refused or failed run is answered with: the ``code`` and message of its ``RUN_ERROR`` event.

Every `InterruptError` keeps its own stable ``code`` (``PENDING_INTERRUPTS``, ``PARTIAL_RESUME``, ...); the
server adds codes for what only it can refuse (`ProtocolError`) and for session and agent failures.
"""

from ...interrupt import InterruptError
from ...types.exceptions import (
    ConcurrencyException,
    SessionConflictError,
    SessionCorruptError,
    SessionException,
    StrandslikeError,
)

INVALID_INPUT = "INVALID_INPUT"
INVALID_THREAD_ID = "INVALID_THREAD_ID"
AGENT_FACTORY_ERROR = "AGENT_FACTORY_ERROR"
SESSION_CONFLICT = "SESSION_CONFLICT"
SESSION_CORRUPT = "SESSION_CORRUPT"
RUN_FAILED = "RUN_FAILED"
AGENT_ERROR = "AGENT_ERROR"


class ProtocolError(StrandslikeError, ValueError):
    """A request the AG-UI server refuses itself; nothing ran and nothing was written.

    Attributes:
        code: The ``RUN_ERROR`` code (``INVALID_INPUT``, ``INVALID_THREAD_ID``, ``AGENT_FACTORY_ERROR``,
            ``SESSION_CONFLICT`` or ``RUN_FAILED``).
    """

    def __init__(self, code: str, message: str) -> None:
        self.code = code
        super().__init__(message)


def _unwrap(exc: BaseException) -> BaseException:
    # A task group reports a lone failure as a group of one; the failure itself says what happened.
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def error_code(exc: BaseException) -> str:
    """Return the ``RUN_ERROR`` code for an exception raised while preparing or running an agent."""
    exc = _unwrap(exc)
    if isinstance(exc, InterruptError | ProtocolError):
        return exc.code
    if isinstance(exc, SessionConflictError | ConcurrencyException):
        return SESSION_CONFLICT
    if isinstance(exc, SessionCorruptError):
        return SESSION_CORRUPT
    if isinstance(exc, SessionException) and isinstance(exc, StrandslikeError):
        return exc.code  # a store's own typed failure (POSTGRES_UNAVAILABLE, ...): clients may retry on it
    return AGENT_ERROR


def error_message(exc: BaseException) -> str:
    """Return the message of the ``RUN_ERROR`` event for ``exc``.

    Refusals (typed errors) keep their own message, which says what happened and that nothing changed; an
    unexpected failure names its type, since the message alone may not say what failed.
    """
    exc = _unwrap(exc)
    if isinstance(exc, StrandslikeError | SessionConflictError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"
