"""Bedrock-Converse-shaped message types, as Strands defines them.

They are ``TypedDict``s, so plain dicts written for Strands keep working unchanged.
"""

from typing import Any, Literal, NotRequired, TypeAlias

from typing_extensions import TypedDict

from .tools import ToolResult, ToolUse

Role: TypeAlias = Literal["user", "assistant"]


class CachePoint(TypedDict):
    """A prompt-cache checkpoint marker."""

    type: str


class ImageSource(TypedDict, total=False):
    """Where an image's bytes come from."""

    bytes: bytes


class ImageContent(TypedDict):
    """An image block."""

    format: str
    source: ImageSource


class DocumentSource(TypedDict, total=False):
    """Where a document's bytes come from."""

    bytes: bytes


class DocumentContent(TypedDict, total=False):
    """A document block."""

    format: str
    name: str
    source: DocumentSource


class ReasoningTextBlock(TypedDict, total=False):
    """Reasoning text with an optional provider signature."""

    text: str
    signature: str


class ReasoningContentBlock(TypedDict, total=False):
    """A reasoning block: readable text or redacted bytes."""

    reasoningText: ReasoningTextBlock
    redactedContent: bytes


class ContentBlock(TypedDict, total=False):
    """One block of a message; exactly one key is set."""

    cachePoint: CachePoint
    citationsContent: dict[str, Any]
    document: DocumentContent
    guardContent: dict[str, Any]
    image: ImageContent
    reasoningContent: ReasoningContentBlock
    text: str
    toolResult: ToolResult
    toolUse: ToolUse
    video: dict[str, Any]


class Message(TypedDict):
    """A conversation turn."""

    role: Role
    content: list[ContentBlock]
    metadata: NotRequired[dict[str, Any]]


Messages: TypeAlias = list[Message]

SystemContentBlock: TypeAlias = dict[str, Any]

__all__ = [
    "CachePoint",
    "ContentBlock",
    "DocumentContent",
    "ImageContent",
    "Message",
    "Messages",
    "ReasoningContentBlock",
    "Role",
    "SystemContentBlock",
]
