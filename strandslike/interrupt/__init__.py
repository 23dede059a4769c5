"""Interrupts: pause a run for outside input and resume it with the answers.

Besides Strands' ``Interrupt`` and ``InterruptException``, this package holds the typed resume errors (each an
`InterruptError` with a stable ``code``), the resume builders' types, and `interrupt_tool` / `define_interrupt`.
"""

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
    "interrupt_tool",
]
