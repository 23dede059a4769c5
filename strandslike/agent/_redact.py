"""Redacting the user's input when a model's guardrail asks for it (a ``redactContent`` stream event)."""

from typing import TYPE_CHECKING

from ..types.content import ContentBlock

if TYPE_CHECKING:
    from .agent import Agent


def redact_latest_user_message(agent: "Agent", replacement: str) -> None:
    """Replace the content of the agent's latest message with ``replacement`` and tell its session manager.

    As in Strands: tool results keep their blocks with only their content replaced; any other content becomes one
    text block. The session manager persists the redaction (``redact_latest_message``), so a restored agent sees
    the redacted message.
    """
    if not agent.messages:
        return
    message = agent.messages[-1]
    kept: list[ContentBlock] = []
    for block in message["content"]:
        if "toolResult" in block:
            block["toolResult"]["content"] = [{"text": replacement}]
            kept.append(block)
    message["content"] = kept or [{"text": replacement}]
    manager = agent.session_manager
    redact = getattr(manager, "redact_latest_message", None)
    if callable(redact):
        redact(message, agent)
