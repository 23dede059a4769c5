"""Human-readable renderings of messages, content blocks, interrupts and timestamps."""

import json
import re
import shlex
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from ..interrupt import Interrupt
from ..types.session import SessionMessage

DEFAULT_WIDTH = 160


def shorten(value: str, width: int | None) -> str:
    """Return ``value`` on one line, cut to ``width`` characters with ``…`` (None keeps it whole)."""
    flat = value.replace("\r", "").replace("\n", "\\n")
    if width is None or len(flat) <= width:
        return flat
    return flat[: max(width - 1, 0)] + "…"


def compact_json(value: Any) -> str:
    """Return ``value`` as one-line JSON; bytes are shown by their size."""
    return json.dumps(value, ensure_ascii=False, default=lambda raw: f"<{len(raw)} bytes>")


def when(stamp: str | float | None) -> str:
    """Return an ISO timestamp (or seconds since the epoch) as ``YYYY-MM-DDTHH:MM:SSZ`` in UTC, or ``-``."""
    if stamp is None or stamp == "":
        return "-"
    if isinstance(stamp, int | float):
        return datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    try:
        parsed = datetime.fromisoformat(stamp)
    except ValueError:
        return stamp
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(UTC)
    return parsed.strftime("%Y-%m-%dT%H:%M:%SZ")


def _size(source: Any) -> str:
    raw = source.get("bytes") if isinstance(source, dict) else None
    if isinstance(raw, bytes | bytearray):
        return f"{len(raw)} bytes"
    if isinstance(source, dict) and source:
        return str(next(iter(source)))  # e.g. an s3Location
    return "no data"


def describe_block(block: Any) -> str:
    """Return a one-line description of a content block."""
    if not isinstance(block, dict) or not block:
        return f"<{compact_json(block)}>"
    if "text" in block:
        return str(block["text"])
    if "toolUse" in block:
        use = block["toolUse"]
        return f"toolUse {use.get('name')} {compact_json(use.get('input'))} (id {use.get('toolUseId')})"
    if "toolResult" in block:
        result = block["toolResult"]
        parts = [_result_part(part) for part in result.get("content") or ()]
        return f"toolResult {result.get('status')} (id {result.get('toolUseId')}): {' '.join(parts)}"
    for kind in ("image", "document", "video"):
        if kind in block:
            body = block[kind]
            label = " ".join(str(body[key]) for key in ("name", "format") if body.get(key))
            return f"[{kind} {label}, {_size(body.get('source'))}]"
    if "reasoningContent" in block:
        reasoning = block["reasoningContent"].get("reasoningText", {})
        return f"[reasoning] {reasoning.get('text', '<redacted>')}"
    kind = next(iter(block))
    return f"[{kind}] {compact_json(block[kind])}"


def _result_part(part: Any) -> str:
    if isinstance(part, dict) and "text" in part:
        return str(part["text"])
    if isinstance(part, dict) and "json" in part:
        return compact_json(part["json"])
    return describe_block(part)


def message_lines(session_message: SessionMessage, width: int | None) -> list[str]:
    """Return the lines showing one stored message: index and role, then one line per content block."""
    message = session_message.to_message()
    role = str(message.get("role", "?"))
    content = message.get("content") or []
    blocks = [describe_block(block) for block in content] or ["<no content>"]
    if session_message.redact_message is not None:
        blocks[0] += "  (redacted)"
    prefix = f"{session_message.message_id:>4} {role:<9}  "
    indent = " " * len(prefix)
    return [
        (prefix if number == 0 else indent) + shorten(text, None if width is None else max(width - len(prefix), 20))
        for number, text in enumerate(blocks)
    ]


def interrupt_lines(interrupts: Sequence[Interrupt], width: int | None = None) -> list[str]:
    """Return the lines showing open interrupts: name, id and reason of each."""
    lines = []
    for interrupt in interrupts:
        lines.append(f"  name:   {interrupt.name}")
        lines.append(f"  id:     {interrupt.id}")
        lines.append(f"  reason: {shorten(compact_json(interrupt.reason), width)}")
    return lines


def plural(count: int, noun: str) -> str:
    """Return ``"1 message"`` / ``"2 messages"``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def resume_command(
    factory: str,
    storage_dir: str,
    session_id: str,
    responses: Sequence[tuple[str, str]],
    program: str = "python -m strandslike",
    *,
    dsn: str | None = None,
) -> str:
    """Return the shell command that resumes a session.

    Args:
        factory: The ``module:factory`` that builds the agent.
        storage_dir: The storage directory, as the user gave it.
        session_id: The session to resume.
        responses: ``(interrupt id, answer as JSON text)`` pairs.
        program: How the command line was started (``strandslike`` or ``python -m strandslike``).
        dsn: The PostgreSQL database the session is in, instead of ``storage_dir`` (shown as ``DSN`` if it holds a
            password, which a printed command must not repeat).
    """
    where = ["--storage-dir", storage_dir] if dsn is None else ["--dsn", shown_dsn(dsn)]
    words = [*program.split(), "resume", "--agent", factory, *where, session_id]
    command = shlex.join(words)
    for interrupt_id, answer in responses:
        command += f" --response {shlex.quote(interrupt_id)}={shlex.quote(answer)}"
    return command


def shown_dsn(dsn: str) -> str:
    """Return the DSN to print in a command: itself, or ``DSN`` if it holds a password."""
    lowered = dsn.lower()
    if "password" in lowered or re.match(r"^[a-z]+://[^/@]*:[^/@]*@", lowered):
        return "DSN"
    return dsn
