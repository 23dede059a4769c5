"""Conversation ↔ AG-UI messages: ids, the ``MESSAGES_SNAPSHOT`` conversion, and the new user input of a run.

Message ids are stable across runs, so a client's copy of the conversation (reconciled with each snapshot by id)
keeps its order, and a message whose id the session does not know is new input:

- a user message the client sent keeps the client's id, stored with the message (``metadata["agui"]``);
- any other message's id is its position in the agent's whole stored conversation (``msg-<n>``, counting the
  messages a conversation manager trimmed), which the server also uses while streaming it;
- a tool message's id is the tool call it answers (``tool-<toolUseId>``).

Inside a multi-agent orchestration the derived ids are prefixed with the node (``<node>:msg-<n>``).
"""

import json
from typing import Any

from ag_ui.core import AssistantMessage, FunctionCall, TextPart, ToolCall, ToolMessage, UserMessage
from ag_ui.core import Message as AguiMessage

from ...agent.agent import Agent
from ...types.content import ContentBlock, Message
from ...types.tools import ToolResult
from ._errors import INVALID_INPUT, ProtocolError

_METADATA_KEY = "agui"


def user_message(text: str, message_id: str) -> Message:
    """Return the conversation message for a client's user message, remembering the client's id."""
    return {"role": "user", "content": [{"text": text}], "metadata": {_METADATA_KEY: {"messageId": message_id}}}


def _client_id(message: Any) -> str | None:
    metadata = message.get("metadata")
    stored = metadata.get(_METADATA_KEY) if isinstance(metadata, dict) else None
    identifier = stored.get("messageId") if isinstance(stored, dict) else None
    return identifier if isinstance(identifier, str) and identifier else None


def message_offset(agent: Agent) -> int:
    """Return how many messages at the head of the stored conversation the live history no longer holds."""
    manager = agent.conversation_manager
    count = getattr(manager, "removed_message_count", 0) if manager is not None else 0
    return count if isinstance(count, int) else 0


def message_id(prefix: str, index: int) -> str:
    """Return the AG-UI id of the message at ``index`` of the stored conversation."""
    return f"{prefix}msg-{index}"


def tool_message_id(prefix: str, tool_use_id: str) -> str:
    """Return the AG-UI id of the tool message answering ``tool_use_id``."""
    return f"{prefix}tool-{tool_use_id}"


def result_text(result: ToolResult) -> str:
    """Return a tool result's content as text (JSON content is serialized)."""
    parts: list[str] = []
    for item in result.get("content", []):
        if "text" in item:
            parts.append(str(item["text"]))
        elif "json" in item:
            parts.append(json.dumps(item["json"], ensure_ascii=False, default=str))
    return "\n".join(parts)


def _text(content: list[ContentBlock]) -> str:
    parts: list[str] = []
    for block in content:
        if "text" in block:
            parts.append(block["text"])
        elif "citationsContent" in block:
            parts.extend(part.get("text", "") for part in block["citationsContent"].get("content", []))
    return "\n".join(parts)


def agent_messages(agent: Agent, prefix: str = "", name: str | None = None) -> list[AguiMessage]:
    """Convert an agent's conversation into AG-UI messages.

    Assistant messages carry their text and tool calls; each tool result becomes a tool message (with ``error``
    set when the tool failed); the text of a user message becomes a user message. Blocks AG-UI cannot carry here
    (images, documents, reasoning) are left out.

    Args:
        agent: The agent whose ``messages`` to convert.
        prefix: Id prefix (the node, inside an orchestration).
        name: Author name of the assistant messages (the node id, inside an orchestration).
    """
    converted: list[AguiMessage] = []
    offset = message_offset(agent)
    used: set[str] = set()
    for index, message in enumerate(agent.messages):
        identifier = message_id(prefix, offset + index)
        content = message["content"]
        if message["role"] == "assistant":
            calls = [
                ToolCall(
                    id=block["toolUse"]["toolUseId"],
                    function=FunctionCall(
                        name=block["toolUse"]["name"],
                        arguments=json.dumps(block["toolUse"]["input"], ensure_ascii=False, default=str),
                    ),
                )
                for block in content
                if "toolUse" in block
            ]
            converted.append(
                AssistantMessage(id=identifier, content=_text(content) or None, tool_calls=calls or None, name=name)
            )
            continue
        for block in content:
            if "toolResult" in block:
                result = block["toolResult"]
                tool_id = tool_message_id(prefix, result["toolUseId"])
                if tool_id in used:  # a model reused a tool-use id: keep message ids unique
                    tool_id = f"{tool_id}-{offset + index}"
                used.add(tool_id)
                text = result_text(result)
                error = text if result.get("status") == "error" else None
                converted.append(
                    ToolMessage(id=tool_id, tool_call_id=result["toolUseId"], content=text, error=error or None)
                )
        text = _text(content)
        if text:
            client_id = _client_id(message)
            if client_id is not None and client_id not in used:
                identifier = client_id
            used.add(identifier)
            converted.append(UserMessage(id=identifier, content=text))
    return converted


def new_user_message(messages: list[AguiMessage], known_ids: set[str]) -> UserMessage | None:
    """Return the last user message the session does not have yet, or None if there is none.

    Only the messages after the last one the session knows count as new: older messages the client kept (its
    own history, or copies from before a snapshot replaced them) are not input. Of the new user messages the last
    one is the prompt; the session's conversation, not the client's copy, is what the agent continues.
    """
    start = 0
    for index, message in enumerate(messages):
        if message.id in known_ids:
            start = index + 1
    return next((m for m in reversed(messages[start:]) if isinstance(m, UserMessage)), None)


def user_text(message: UserMessage) -> str:
    """Return the text of a user message (text parts joined by newlines).

    Raises:
        ProtocolError: The message has content parts other than text (``INVALID_INPUT``).
    """
    if isinstance(message.content, str):
        return message.content
    texts: list[str] = []
    for part in message.content:
        if not isinstance(part, TextPart):
            kind: Any = getattr(part, "type", type(part).__name__)
            raise ProtocolError(
                INVALID_INPUT,
                f"message_id=<{message.id}> | user message has a {kind!r} part; this server accepts text only. "
                "Send the content as text parts or a string. Nothing ran.",
            )
        texts.append(part.text)
    return "\n".join(texts)
