"""The append-only log that holds one agent of a file session.

Every change to the agent is one JSON record on one line, appended with a single ``write``; records are never
rewritten, so appending costs the same whatever the conversation's length, and restoring reads the file once.
A crash can only cut the last record short: a line without its trailing newline is ignored on read and cut off
(under the agent's lock) before the next append. A complete line that is not a valid record is corruption and
is reported with the file and line number.

Record kinds (key ``k``):

- ``h`` header, the first line: ``{"k": "h", "format": "strandslike-agent-log/1", "session_id", "agent_id", "t"}``
- ``m`` message appended: ``{"k": "m", "i": index, "t": timestamp, "m": message}``
- ``r`` message redacted: ``{"k": "r", "i": index, "t": timestamp, "m": replacement}``
- ``s`` agent snapshot (the latest wins): ``{"k": "s", "t": timestamp, "a": SessionAgent.to_dict()}``, without
  the interrupt audit trail, which grows by its own records:
- ``a`` one audit entry of an interrupt's life: ``{"k": "a", "e": {"time", "event", "interrupt_id", ...}}``

Bytes are stored as ``{"__bytes_encoded__": true, "data": base64}``, as Strands does.
"""

import base64
import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..interrupt._state import _InterruptState
from ..types.exceptions import SessionCorruptError, SessionException
from ..types.session import SessionAgent, SessionMessage, decode_bytes_values
from ._files import FILE_MODE, read_regular_file

FORMAT = "strandslike-agent-log/1"
TAIL_BYTES = 64  # how much of the log's end identifies its version, with its inode, size and mtime
_BYTES_MARK = b'"__bytes_encoded__"'


def now() -> str:
    """Return the current UTC time as an ISO string."""
    return datetime.now(UTC).isoformat()


def _encode_default(value: Any) -> Any:
    if isinstance(value, bytes | bytearray):
        return {"__bytes_encoded__": True, "data": base64.b64encode(value).decode()}
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def encode_record(record: dict[str, Any]) -> bytes:
    """Return one record as a newline-terminated JSON line."""
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=_encode_default) + "\n").encode()


@dataclass
class LoadedLog:
    """The replayed contents of an agent log.

    Attributes:
        agent: The latest agent snapshot, or None if none was written yet.
        messages: The messages in order, with redactions applied.
        size: The file's size when read, torn tail included.
        good_size: The offset just past the last complete record.
        inode: The file's inode, to notice a replaced file.
    """

    agent: SessionAgent | None = None
    messages: list[SessionMessage] = field(default_factory=list)
    size: int = 0
    good_size: int = 0
    inode: int = 0
    mtime_ns: int = 0
    tail: bytes = b""
    header: dict[str, Any] = field(default_factory=dict)
    audit: list[dict[str, Any]] = field(default_factory=list)


def read_log(path: Path) -> LoadedLog | None:
    """Read and replay an agent log in one pass, or return None if it does not exist.

    Raises:
        SessionCorruptError: The file is not an agent log, or a complete record in it is invalid.
    """
    found = read_regular_file(path)
    if found is None:
        return None
    data, status = found
    inode = status.st_ino
    good_size = data.rfind(b"\n") + 1
    lines = data[:good_size].split(b"\n")[:-1] if good_size else []
    records = _parse(path, lines)
    loaded = LoadedLog(
        size=len(data), good_size=good_size, inode=inode, mtime_ns=status.st_mtime_ns, tail=data[-TAIL_BYTES:]
    )
    if not records:
        return loaded
    header = records[0]
    if not isinstance(header, dict) or header.get("k") != "h" or header.get("format") != FORMAT:
        raise SessionCorruptError(
            str(path), f"is not a strandslike agent log (its first line is not a {FORMAT} header)"
        )
    loaded.header = header
    _replay(path, records, loaded, decode=_BYTES_MARK in data)
    return loaded


def _parse(path: Path, lines: list[bytes]) -> list[Any]:
    if not lines:
        return []
    try:  # one C-level parse of the whole file: the fast path
        parsed = json.loads(b"[" + b",".join(lines) + b"]")
        if isinstance(parsed, list) and len(parsed) == len(lines):
            return parsed
    except (UnicodeDecodeError, json.JSONDecodeError):
        pass
    records = []
    for number, line in enumerate(lines, start=1):
        try:
            records.append(json.loads(line))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise SessionCorruptError(str(path), f"line {number} is not a valid record ({exc})") from None
    return records


def _replay(path: Path, records: list[Any], loaded: LoadedLog, *, decode: bool) -> None:
    by_index: dict[int, SessionMessage] = {}
    messages_since_snapshot = 0
    for number, record in enumerate(records[1:], start=2):
        try:
            kind = record["k"]
            if kind == "m":
                message = decode_bytes_values(record["m"]) if decode else record["m"]
                _check_message(message, record["i"])
                session_message = SessionMessage(message, record["i"], None, record["t"], record["t"])
                loaded.messages.append(session_message)
                by_index[session_message.message_id] = session_message
                messages_since_snapshot += 1
            elif kind == "r":
                _check_message(record["m"], record["i"])
                target = by_index[record["i"]]
                target.redact_message = decode_bytes_values(record["m"]) if decode else record["m"]
                target.updated_at = record["t"]
            elif kind == "s":
                loaded.agent = _check_snapshot(record["a"])
                messages_since_snapshot = 0
            elif kind == "a":
                entry = record["e"]
                if not isinstance(entry, dict):
                    raise TypeError("an audit entry must be a JSON object")
                loaded.audit.append(entry)
            else:
                raise ValueError(f"unknown record kind {kind!r}")
        except (AttributeError, KeyError, TypeError, ValueError, SessionException) as exc:
            raise SessionCorruptError(str(path), f"line {number} is not a valid record ({exc!r})") from None
    if loaded.agent is not None:
        interrupt_state = loaded.agent._internal_state.get("interrupt_state")
        if isinstance(interrupt_state, dict):
            interrupt_state["audit"] = loaded.audit
        if messages_since_snapshot:
            _drop_completed_interrupt(loaded.agent)


def _check_message(message: Any, index: Any) -> None:
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        raise TypeError(f"message index must be a non-negative integer, got {index!r}")
    if (
        not isinstance(message, dict)
        or message.get("role") not in ("user", "assistant")
        or not isinstance(message.get("content"), list)
        or not all(isinstance(block, dict) for block in message["content"])
    ):
        raise TypeError("a message must be an object with role 'user' or 'assistant' and a list of content blocks")


def _check_snapshot(data: Any) -> SessionAgent:
    if not isinstance(data, dict):
        raise TypeError("an agent snapshot must be a JSON object")
    agent = SessionAgent.from_dict(data)
    if not isinstance(agent.state, dict) or not isinstance(agent.conversation_manager_state, dict):
        raise TypeError("an agent snapshot's state and conversation_manager_state must be JSON objects")
    if not isinstance(agent._internal_state, dict):
        raise TypeError("an agent snapshot's _internal_state must be a JSON object")
    interrupt_state = agent._internal_state.get("interrupt_state")
    if interrupt_state is not None:
        if not isinstance(interrupt_state, dict):
            raise TypeError("interrupt_state must be a JSON object")
        _InterruptState.from_dict(interrupt_state)  # raises SessionException if malformed
    return agent


def _drop_completed_interrupt(agent: SessionAgent) -> None:
    # The snapshot was taken while the agent waited on interrupts, and messages followed it: the interrupted
    # step completed, but the process stopped before it recorded the (cleared) interrupt state.
    interrupt_state = agent._internal_state.get("interrupt_state")
    if isinstance(interrupt_state, dict) and interrupt_state.get("activated"):
        agent._internal_state["interrupt_state"] = {
            **interrupt_state,
            "interrupts": {},
            "context": {},
            "activated": False,
            "pending_tool_execution": None,
        }


class LogWriter:
    """Appends records to an agent log through one file descriptor."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)

    def append(self, payload: bytes) -> None:
        """Append encoded records with as few writes as possible."""
        view = memoryview(payload)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    def truncate(self, size: int) -> None:
        """Cut a torn tail off the log."""
        os.ftruncate(self._fd, size)

    def sync(self) -> None:
        """Flush appended records to disk."""
        os.fsync(self._fd)

    def stat(self) -> os.stat_result:
        """Return the log file's status."""
        return os.fstat(self._fd)

    def close(self) -> None:
        """Close the descriptor."""
        os.close(self._fd)
