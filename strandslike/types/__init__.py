"""Wire types shared across strandslike: messages, tools, stream events and exceptions."""

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
