"""Interrupts: pause a run for outside input and resume it with the answers.

Besides Strands' ``Interrupt`` and ``InterruptException``, this package holds the typed resume errors (each an
`InterruptError` with a stable ``code``), the resume builders' types, `interrupt_tool` / `define_interrupt`, and
`find_interrupt` / `record_audit`, the seams hooks and approval handlers use to see their own interrupts and to
audit their decisions.
"""

import typing

from .. import _lazy

if typing.TYPE_CHECKING:
    from ._access import find_interrupt, record_audit
    from ._errors import (
        DuplicateInterruptResponseError,
        EditsNotAllowedError,
        InterruptAlreadyAnsweredError,
        InterruptError,
        InterruptExpiredError,
        InvalidPayloadError,
        InvalidResumeError,
        InvalidToolInputError,
        NotInterruptedError,
        NotToolBoundError,
        PartialResumeError,
        PendingInterruptsError,
        SessionMismatchError,
        StaleToolCallError,
        UnknownInterruptError,
    )
    from ._interrupt import Interrupt, InterruptAnswer, InterruptAnswerContent, InterruptException, ResumeAction
    from ._interrupt_tool import InterruptTool, define_interrupt, interrupt_tool
    from ._state import PendingToolExecution

__getattr__, __dir__ = _lazy.lazy_exports(
    __name__,
    {
        "DuplicateInterruptResponseError": "._errors",
        "EditsNotAllowedError": "._errors",
        "Interrupt": "._interrupt",
        "InterruptAlreadyAnsweredError": "._errors",
        "InterruptAnswer": "._interrupt",
        "InterruptAnswerContent": "._interrupt",
        "InterruptError": "._errors",
        "InterruptException": "._interrupt",
        "InterruptExpiredError": "._errors",
        "InterruptTool": "._interrupt_tool",
        "InvalidPayloadError": "._errors",
        "InvalidResumeError": "._errors",
        "InvalidToolInputError": "._errors",
        "NotInterruptedError": "._errors",
        "NotToolBoundError": "._errors",
        "PartialResumeError": "._errors",
        "PendingInterruptsError": "._errors",
        "PendingToolExecution": "._state",
        "ResumeAction": "._interrupt",
        "SessionMismatchError": "._errors",
        "StaleToolCallError": "._errors",
        "UnknownInterruptError": "._errors",
        "define_interrupt": "._interrupt_tool",
        "find_interrupt": "._access",
        "interrupt_tool": "._interrupt_tool",
        "record_audit": "._access",
    },
)

__all__ = [
    "DuplicateInterruptResponseError",
    "EditsNotAllowedError",
    "Interrupt",
    "InterruptAlreadyAnsweredError",
    "InterruptAnswer",
    "InterruptAnswerContent",
    "InterruptError",
    "InterruptException",
    "InterruptExpiredError",
    "InterruptTool",
    "InvalidPayloadError",
    "InvalidResumeError",
    "InvalidToolInputError",
    "NotInterruptedError",
    "NotToolBoundError",
    "PartialResumeError",
    "PendingInterruptsError",
    "PendingToolExecution",
    "ResumeAction",
    "SessionMismatchError",
    "StaleToolCallError",
    "UnknownInterruptError",
    "define_interrupt",
    "find_interrupt",
    "interrupt_tool",
    "record_audit",
]
