"""strandslike: hook-based AI agents with human-in-the-loop interrupts, in the style of Strands Agents.

Names are imported on first use (``from strandslike import Agent`` loads the agent, not the rest).
"""

import logging
import typing

from . import _lazy
from ._version import __version__ as __version__  # written once, in _version.py (pyproject reads it too)
from .telemetry.spans import configure_from_environment as _configure_tracing

if typing.TYPE_CHECKING:
    from .agent._retry import ModelRetryStrategy
    from .agent.agent import Agent
    from .agent.agent_result import AgentResult
    from .agent.base import AgentBase
    from .interrupt._errors import (
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
    from .interrupt._interrupt import (
        Interrupt,
        InterruptAnswer,
        InterruptAnswerContent,
        InterruptException,
        ResumeAction,
    )
    from .interrupt._interrupt_tool import InterruptTool, define_interrupt, interrupt_tool
    from .interventions.handler import InterventionHandler
    from .plugins.multiagent_plugin import MultiAgentPlugin
    from .plugins.plugin import Plugin
    from .tools.decorator import tool
    from .types.tools import ToolContext

__getattr__, __dir__ = _lazy.lazy_exports(
    __name__,
    {
        "Agent": ".agent.agent",
        "AgentBase": ".agent.base",
        "AgentResult": ".agent.agent_result",
        "DuplicateInterruptResponseError": ".interrupt._errors",
        "EditsNotAllowedError": ".interrupt._errors",
        "Interrupt": ".interrupt._interrupt",
        "InterruptAlreadyAnsweredError": ".interrupt._errors",
        "InterruptAnswer": ".interrupt._interrupt",
        "InterruptAnswerContent": ".interrupt._interrupt",
        "InterruptError": ".interrupt._errors",
        "InterruptException": ".interrupt._interrupt",
        "InterruptExpiredError": ".interrupt._errors",
        "InterruptTool": ".interrupt._interrupt_tool",
        "InterventionHandler": ".interventions.handler",
        "InvalidPayloadError": ".interrupt._errors",
        "InvalidResumeError": ".interrupt._errors",
        "InvalidToolInputError": ".interrupt._errors",
        "ModelRetryStrategy": ".agent._retry",
        "MultiAgentPlugin": ".plugins.multiagent_plugin",
        "NotInterruptedError": ".interrupt._errors",
        "NotToolBoundError": ".interrupt._errors",
        "PartialResumeError": ".interrupt._errors",
        "PendingInterruptsError": ".interrupt._errors",
        "Plugin": ".plugins.plugin",
        "ResumeAction": ".interrupt._interrupt",
        "SessionMismatchError": ".interrupt._errors",
        "StaleToolCallError": ".interrupt._errors",
        "ToolContext": ".types.tools",
        "UnknownInterruptError": ".interrupt._errors",
        "define_interrupt": ".interrupt._interrupt_tool",
        "interrupt_tool": ".interrupt._interrupt_tool",
        "tool": ".tools.decorator",
    },
)

# A library logs, the application decides where logs go: without this handler Python's last-resort handler would
# print strandslike's warnings on stderr of every program that never configured logging.
logging.getLogger(__name__).addHandler(logging.NullHandler())
_configure_tracing()  # STRANDSLIKE_TRACING=1 switches tracing on (the otel extra); unset, it costs nothing

__all__ = [
    "Agent",
    "AgentBase",
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
