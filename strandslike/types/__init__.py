"""Wire types shared across strandslike: messages, tools, stream events and exceptions.

Names are imported on first use.
"""

import typing

from .. import _lazy

if typing.TYPE_CHECKING:
    from .agent import AgentInput, ConcurrentInvocationMode
    from .content import ContentBlock, Message, Messages
    from .exceptions import (
        ConcurrencyException,
        ContextWindowOverflowException,
        EventLoopException,
        IdempotencyAbortedError,
        MaxTokensReachedException,
        ModelThrottledException,
        ProviderNotInstalledError,
        SessionException,
        StrandslikeError,
        StructuredOutputException,
        StructuredOutputValidationError,
    )
    from .streaming import StopReason, StreamEvent
    from .tools import AgentTool, ToolContext, ToolResult, ToolSpec, ToolUse

__getattr__, __dir__ = _lazy.lazy_exports(
    __name__,
    {
        "AgentInput": ".agent",
        "AgentTool": ".tools",
        "ConcurrencyException": ".exceptions",
        "ConcurrentInvocationMode": ".agent",
        "ContentBlock": ".content",
        "ContextWindowOverflowException": ".exceptions",
        "EventLoopException": ".exceptions",
        "IdempotencyAbortedError": ".exceptions",
        "MaxTokensReachedException": ".exceptions",
        "Message": ".content",
        "Messages": ".content",
        "ModelThrottledException": ".exceptions",
        "ProviderNotInstalledError": ".exceptions",
        "SessionException": ".exceptions",
        "StopReason": ".streaming",
        "StrandslikeError": ".exceptions",
        "StreamEvent": ".streaming",
        "StructuredOutputException": ".exceptions",
        "StructuredOutputValidationError": ".exceptions",
        "ToolContext": ".tools",
        "ToolResult": ".tools",
        "ToolSpec": ".tools",
        "ToolUse": ".tools",
    },
)

__all__ = [
    "AgentInput",
    "AgentTool",
    "ConcurrencyException",
    "ConcurrentInvocationMode",
    "ContentBlock",
    "ContextWindowOverflowException",
    "EventLoopException",
    "IdempotencyAbortedError",
    "MaxTokensReachedException",
    "Message",
    "Messages",
    "ModelThrottledException",
    "ProviderNotInstalledError",
    "SessionException",
    "StopReason",
    "StrandslikeError",
    "StreamEvent",
    "StructuredOutputException",
    "StructuredOutputValidationError",
    "ToolContext",
    "ToolResult",
    "ToolSpec",
    "ToolUse",
]
