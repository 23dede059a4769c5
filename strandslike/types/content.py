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
SystemPrompt: TypeAlias = str | list[SystemContentBlock] | None


def split_system_prompt(system_prompt: SystemPrompt) -> tuple[str | None, list[SystemContentBlock] | None]:
    """Return a system prompt as its text and its content blocks, the two forms `Model.stream` receives (Strands).

    A string gives ``(text, [{"text": text}])``; a list of blocks gives the text of its ``text`` blocks joined with
    newlines (None if it has none) and the list itself; None gives ``(None, None)``.

    Args:
        system_prompt: A string, a list of system content blocks (text, cache points, ...) or None.

    Raises:
        TypeError: ``system_prompt`` is none of these.
    """
    if isinstance(system_prompt, str):
        return system_prompt, [{"text": system_prompt}]
    if isinstance(system_prompt, list):
        if not all(isinstance(block, dict) for block in system_prompt):
            raise TypeError(
                f"system_prompt={system_prompt!r} | a list system prompt must hold content blocks such as "
                '{"text": "..."} or {"cachePoint": {"type": "default"}}'
            )
        texts = [block["text"] for block in system_prompt if "text" in block]
        return ("\n".join(texts) if texts else None), system_prompt
    if system_prompt is None:
        return None, None
    raise TypeError(
        f"system_prompt must be a string, a list of content blocks or None, got {type(system_prompt).__name__}"
    )


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
    "SystemPrompt",
    "split_system_prompt",
]
