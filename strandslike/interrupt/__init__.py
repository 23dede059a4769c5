"""Interrupts: pause a run for outside input and resume it with the answers."""

from ._errors import (
    DuplicateInterruptResponseError,
    InterruptAlreadyAnsweredError,
    InterruptError,
    InvalidResumeError,
    NotInterruptedError,
    PendingInterruptsError,
    UnknownInterruptError,
)
from ._interrupt import Interrupt, InterruptException
from ._state import PendingToolExecution

__all__ = [
    "DuplicateInterruptResponseError",
    "Interrupt",
    "InterruptAlreadyAnsweredError",
    "InterruptError",
    "InterruptException",
    "InvalidResumeError",
    "NotInterruptedError",
    "PendingInterruptsError",
    "PendingToolExecution",
    "UnknownInterruptError",
]
