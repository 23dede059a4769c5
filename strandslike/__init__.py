"""strandslike: hook-based AI agents with human-in-the-loop interrupts, in the style of Strands Agents."""

import logging

from ._version import __version__ as __version__  # written once, in _version.py (pyproject reads it too)
from .agent import Agent, AgentResult, ModelRetryStrategy
from .interrupt import (
    Interrupt,
    InterruptAnswer,
    InterruptAnswerContent,
    InterruptError,
    InterruptException,
    InterruptTool,
    ResumeAction,
    define_interrupt,
    interrupt_tool,
)
from .interrupt._errors import (
    DuplicateInterruptResponseError,
    EditsNotAllowedError,
    InterruptAlreadyAnsweredError,
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
from .interventions import InterventionHandler
from .plugins import MultiAgentPlugin, Plugin
from .telemetry.spans import configure_from_environment as _configure_tracing
from .tools.decorator import tool
from .types.tools import ToolContext

# A library logs, the application decides where logs go: without this handler Python's last-resort handler would
# print strandslike's warnings on stderr of every program that never configured logging.
logging.getLogger(__name__).addHandler(logging.NullHandler())
_configure_tracing()  # STRANDSLIKE_TRACING=1 switches tracing on (the otel extra); unset, it costs nothing

__all__ = [
    "Agent",
    "AgentResult",
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
    "InterventionHandler",
    "InvalidPayloadError",
    "InvalidResumeError",
    "InvalidToolInputError",
    "ModelRetryStrategy",
    "MultiAgentPlugin",
    "NotInterruptedError",
    "NotToolBoundError",
    "PartialResumeError",
    "PendingInterruptsError",
    "Plugin",
    "ResumeAction",
    "SessionMismatchError",
    "StaleToolCallError",
    "ToolContext",
    "UnknownInterruptError",
    "define_interrupt",
    "interrupt_tool",
    "tool",
]
