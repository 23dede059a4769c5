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

from ..types.exceptions import SessionCorruptError
from ..types.session import SessionAgent, SessionMessage, decode_bytes_values
from ._files import FILE_MODE

FORMAT = "strandslike-agent-log/1"
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
    header: dict[str, Any] = field(default_factory=dict)
    audit: list[dict[str, Any]] = field(default_factory=list)


def read_log(path: Path) -> LoadedLog | None:
    """Read and replay an agent log in one pass, or return None if it does not exist.

    Raises:
        SessionCorruptError: The file is not an agent log, or a complete record in it is invalid.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        detail = f"cannot be opened ({exc.strerror}); session files must be regular files"
        raise SessionCorruptError(str(path), detail) from None
    with os.fdopen(fd, "rb") as handle:
        inode = os.fstat(handle.fileno()).st_ino
        data = handle.read()
    good_size = data.rfind(b"\n") + 1
    lines = data[:good_size].split(b"\n")[:-1] if good_size else []
    records = _parse(path, lines)
    loaded = LoadedLog(size=len(data), good_size=good_size, inode=inode)
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
                session_message = SessionMessage(message, record["i"], None, record["t"], record["t"])
                loaded.messages.append(session_message)
                by_index[session_message.message_id] = session_message
                messages_since_snapshot += 1
            elif kind == "r":
                target = by_index[record["i"]]
                target.redact_message = decode_bytes_values(record["m"]) if decode else record["m"]
                target.updated_at = record["t"]
            elif kind == "s":
                loaded.agent = SessionAgent.from_dict(record["a"])
                messages_since_snapshot = 0
            elif kind == "a":
                entry = record["e"]
                if not isinstance(entry, dict):
                    raise TypeError("an audit entry must be a JSON object")
                loaded.audit.append(entry)
            else:
                raise ValueError(f"unknown record kind {kind!r}")
        except (KeyError, TypeError, ValueError) as exc:
            raise SessionCorruptError(str(path), f"line {number} is not a valid record ({exc!r})") from None
    if loaded.agent is not None:
        interrupt_state = loaded.agent._internal_state.get("interrupt_state")
        if isinstance(interrupt_state, dict):
            interrupt_state["audit"] = loaded.audit
        if messages_since_snapshot:
            _drop_completed_interrupt(loaded.agent)


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

    def append(self, payload: bytes) -> int:
        """Append encoded records with as few writes as possible; return the file's new size."""
        view = memoryview(payload)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
        return os.fstat(self._fd).st_size

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
