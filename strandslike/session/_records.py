"""The records of agent and orchestrator logs, and the one replayer that turns them back into an agent.

Every store keeps records opaque; this module is the only place that knows what they mean (see
`docs/exactly-once.md`, "Records of an agent log"):

- ``h`` header, the first record: ``format``, ``session_id``, ``agent_id`` (or ``multi_agent_id``), ``t``
- ``m`` message appended: ``i`` (its index in the session), ``t``, ``m`` (the message, bytes encoded)
- ``r`` message redacted: ``i``, ``t``, ``m`` (the replacement)
- ``s`` agent snapshot (the latest wins): ``t``, ``a`` (`SessionAgent.to_dict()` without the audit trail)
- ``a`` one interrupt-audit entry: ``e``
- ``ti`` tool intent, durable before the tool body starts: ``u`` (tool-use id), ``n`` (tool name), ``key``, ``t``
- ``to`` tool outcome: ``u``, ``o`` (``done`` or ``interrupted``), ``r`` (the `ToolResult`, when done), ``t``
- ``ms`` orchestrator state (multi-agent logs; the latest wins): ``t``, ``s`` (``serialize_state()``)
- ``md`` orchestrator state as a delta of the state before it (multi-agent logs): ``t``, ``s`` (the state without
  the node agents' ``messages``), ``n`` (node path -> ``b``, how many messages the node had in the state before,
  ``h``, `message_digest` of the last of those or None, ``m``, the messages it appended since)

In an orchestrator's log, ``ti`` and ``to`` records are its node agents' and carry ``p``, the node path
(``"research"``, ``"outer/inner"``); `strandslike.session._multi_agent_log` replays those logs.
"""

import base64
import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .._json import BYTES_MARKER, json_problem
from ..interrupt._state import _InterruptState
from ..tools.journal import ToolAttempt
from ..types.exceptions import NotJSONSerializableError, SessionCorruptError, SessionException
from ..types.session import SessionAgent, SessionMessage, decode_bytes_values
from ..types.tools import ToolResult
from .session_repository import LogRef, StoredLog

AGENT_LOG_FORMAT = "strandslike-agent-log/2"
AGENT_LOG_FORMATS = frozenset({"strandslike-agent-log/1", AGENT_LOG_FORMAT})
MULTI_AGENT_LOG_FORMAT = "strandslike-multi-agent-log/2"  # /2: ``md`` records
MULTI_AGENT_LOG_FORMATS = frozenset({"strandslike-multi-agent-log/1", MULTI_AGENT_LOG_FORMAT})
_OUTCOMES = ("done", "interrupted")


def now() -> str:
    """Return the current UTC time as an ISO string."""
    return datetime.now(UTC).isoformat()


class _BytesFound(Exception):
    pass


def _refuse(value: Any) -> Any:
    raise _BytesFound


# Encodes at C speed only to learn whether a value holds bytes (which must be encoded before it is stored).
_PROBE = json.JSONEncoder(check_circular=False, default=_refuse)


def storable(value: Any, what: str) -> tuple[Any, int]:
    """Return ``value`` ready for a store, and about how many bytes it takes as JSON.

    The value is checked with the strict encoder's rules (`strandslike._json`); bytes are base64-encoded.

    Raises:
        NotJSONSerializableError: ``value`` cannot be stored and read back equal.
    """
    problem = json_problem(value, allow_bytes=True)
    if problem is not None:
        raise NotJSONSerializableError(what, value, problem)
    try:
        return value, len(_PROBE.encode(value))
    except _BytesFound:
        encoded = _bytes_encoded(value)
        return encoded, len(_PROBE.encode(encoded))


def _bytes_encoded(value: Any) -> Any:
    """Return ``value`` with every ``bytes``/``bytearray`` as Strands' base64 marker (tuples become lists).

    Only called on values `json_problem` accepted, so the recursion is at most `MAX_DEPTH` deep.
    """
    if isinstance(value, bytes | bytearray):
        return {BYTES_MARKER: True, "data": base64.b64encode(value).decode()}
    if isinstance(value, dict):
        return {key: _bytes_encoded(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_bytes_encoded(item) for item in value]
    return value


# -- building records ---------------------------------------------------------------------------------------------


def header(ref: LogRef) -> dict[str, Any]:
    """Return the first record of a new log."""
    if ref.kind == "agent":
        return {
            "k": "h",
            "format": AGENT_LOG_FORMAT,
            "session_id": ref.session_id,
            "agent_id": ref.owner_id,
            "t": now(),
        }
    return {
        "k": "h",
        "format": MULTI_AGENT_LOG_FORMAT,
        "session_id": ref.session_id,
        "multi_agent_id": ref.owner_id,
        "t": now(),
    }


def message_record(session_message: SessionMessage) -> tuple[dict[str, Any], int]:
    """Return the record of an appended message, and about how many bytes it takes."""
    message, size = storable(session_message.message, f"Message {session_message.message_id}")
    return {"k": "m", "i": session_message.message_id, "t": session_message.created_at, "m": message}, size + 60


def redaction_record(message_id: int, replacement: Any) -> dict[str, Any]:
    """Return the record of a redaction of message ``message_id``."""
    message, _ = storable(replacement, f"The redaction of message {message_id}")
    return {"k": "r", "i": message_id, "t": now(), "m": message}


def snapshot_records(session_agent: SessionAgent, audit_written: int) -> tuple[list[dict[str, Any]], int, int]:
    """Return the audit entries not written yet (as ``a`` records), then the snapshot without the audit trail.

    Returns:
        The records, how many audit entries are written once they are, and about how many bytes they take.
    """
    session_agent.updated_at = now()
    data = session_agent.to_dict()
    interrupt_state = data.get("_internal_state", {}).get("interrupt_state")
    audit = interrupt_state.pop("audit", []) if isinstance(interrupt_state, dict) else []
    data, size = storable(data, f"The state of agent {session_agent.agent_id!r}")
    records: list[dict[str, Any]] = []
    for entry in audit[audit_written:]:
        stored, entry_size = storable(entry, "An interrupt audit entry")
        records.append({"k": "a", "e": stored})
        size += entry_size
    records.append({"k": "s", "t": session_agent.updated_at, "a": data})
    return records, max(audit_written, len(audit)), size + 60 * len(records)


def intent_record(attempt: ToolAttempt, path: str | None = None) -> dict[str, Any]:
    """Return the record that a tool body is about to start (of the node agent at ``path`` in an orchestrator's log)."""
    record = {"k": "ti", "u": attempt.tool_use_id, "n": attempt.name, "key": attempt.idempotency_key, "t": now()}
    if path is not None:
        record["p"] = path
    return record


def outcome_record(attempt: ToolAttempt, path: str | None = None) -> dict[str, Any]:
    """Return the record of how a tool body ended (of the node agent at ``path``, in an orchestrator's log).

    A result that cannot be stored is recorded as an error result saying so, so that the log stays writable.
    """
    record: dict[str, Any] = {"k": "to", "u": attempt.tool_use_id, "o": attempt.outcome, "t": now()}
    if path is not None:
        record["p"] = path
    if attempt.outcome == "done" and attempt.result is not None:
        try:
            record["r"] = storable(attempt.result, f"The result of tool use {attempt.tool_use_id!r}")[0]
        except NotJSONSerializableError as exc:
            record["r"] = {
                "toolUseId": attempt.tool_use_id,
                "status": "error",
                "content": [{"text": f"The tool ran, but its result could not be stored: {exc.detail}"}],
            }
    return record


def multi_agent_record(state: Any, multi_agent_id: str) -> tuple[dict[str, Any], int]:
    """Return the record of an orchestrator's state, and about how many bytes it takes.

    The record is a copy, detached from the live objects ``state`` may share (conversations, interrupt states),
    so it can be written from another thread while the orchestration goes on.
    """
    value, size = storable(state, f"The state of orchestrator {multi_agent_id!r}")
    return {"k": "ms", "t": now(), "s": json.loads(_PROBE.encode(value))}, size + 60


def multi_agent_delta_record(
    skeleton: Any, nodes: dict[str, tuple[int, str | None, list[Any]]], multi_agent_id: str
) -> tuple[dict[str, Any], int]:
    """Return the record of an orchestrator's state as a delta, and about how many bytes it takes.

    Args:
        skeleton: The state without its node agents' ``messages`` (`serialize_state_parts`).
        nodes: Node path -> (how many messages the node had in the state before, the `message_digest` of the last
            of those or None, the messages appended since).
        multi_agent_id: The orchestrator's id, for errors.

    The record is detached from the live objects, like `multi_agent_record`'s.
    """
    value = {
        "s": skeleton,
        "n": {path: {"b": base, "h": digest, "m": added} for path, (base, digest, added) in nodes.items()},
    }
    value, size = storable(value, f"The state of orchestrator {multi_agent_id!r}")
    return {"k": "md", "t": now(), **json.loads(_PROBE.encode(value))}, size + 60


def message_digest(message: Any) -> str:
    """Return a short digest of a message as stored (bytes encoded), the same whatever the key order."""
    text = json.dumps(message, sort_keys=True, separators=(",", ":"), check_circular=False)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


# -- replaying ----------------------------------------------------------------------------------------------------


@dataclass
class StoredAgent:
    """An agent as its log holds it, replayed from one consistent read.

    Attributes:
        agent: The latest snapshot (with the whole audit trail), or None if none was written yet.
        messages: The messages in order, redactions recorded.
        audit: The interrupt audit trail, oldest first.
        attempts: Every tool attempt, in log order (several per tool use when a tool ran more than once).
        repairs: What the store dropped or fixed while reading, in words.
        version: The version of exactly what was read.
    """

    agent: SessionAgent | None = None
    messages: list[SessionMessage] = field(default_factory=list)
    audit: list[dict[str, Any]] = field(default_factory=list)
    attempts: list[ToolAttempt] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)
    version: str | None = None
    # For each attempt: the index of the last message recorded before its intent (-1: none).
    _after: list[int] = field(default_factory=list, repr=False)

    def open_attempts(self, tool_uses: dict[str, int]) -> list[ToolAttempt]:
        """Return the latest attempt of each tool use the conversation still waits on.

        Args:
            tool_uses: Tool-use id → the index of the message that asked for it. Only attempts recorded after
                that message count: a model may reuse tool-use ids, and an older call's attempt is not this one.
        """
        found: dict[str, ToolAttempt] = {}
        for attempt, after in zip(self.attempts, self._after, strict=True):
            asked = tool_uses.get(attempt.tool_use_id)
            if asked is not None and after >= asked:
                found[attempt.tool_use_id] = attempt
        return list(found.values())


def _problem(stored: StoredLog, where: str, number: int, detail: str) -> SessionCorruptError:
    return SessionCorruptError(stored.location or where, f"{stored.unit} {number} is not a valid record ({detail})")


def replay_agent(stored: StoredLog, where: str) -> StoredAgent:
    """Build an agent's persisted state from its log.

    Args:
        stored: The log, from one `read_log`.
        where: What the log is, for errors when the store does not say (``StoredLog.location``).

    Raises:
        SessionCorruptError: The log is not an agent log, or a record is not valid (named by its line or number).
    """
    replayed = StoredAgent(repairs=list(stored.repairs), version=stored.version)
    records = stored.records
    if not records:
        return replayed
    head = records[0]
    if head.get("k") != "h" or head.get("format") not in AGENT_LOG_FORMATS:
        raise SessionCorruptError(
            stored.location or where,
            f"is not a strandslike agent log (its first {stored.unit} is not a {AGENT_LOG_FORMAT} header)",
        )
    by_index: dict[int, SessionMessage] = {}
    attempts: dict[str, ToolAttempt] = {}
    messages_since_snapshot = 0
    last_index = -1
    for number, record in enumerate(records[1:], start=2):
        try:
            kind = record["k"]
            if kind == "m":  # the bulk of every log: checked inline, without helper calls
                message, index = record["m"], record["i"]
                content = message.get("content") if type(message) is dict else None
                role = message.get("role") if content is not None else None
                if type(index) is not int or index < 0 or type(content) is not list or role not in _ROLES:
                    _check_message(message, index)  # raises, saying what is wrong
                    raise TypeError("a message must be an object with a role and a list of content blocks")
                plain = True
                for block in content:
                    if type(block) is not dict:
                        _check_message(message, index)
                    if plain and (block.keys() != _TEXT_ONLY or type(block["text"]) is not str):
                        plain = False
                if not plain:
                    message = decode_bytes_values(message)
                session_message = SessionMessage(message, index, None, record["t"], record["t"])
                replayed.messages.append(session_message)
                by_index[session_message.message_id] = session_message
                last_index = session_message.message_id
                messages_since_snapshot += 1
            elif kind == "r":
                _check_message(record["m"], record["i"])
                target = by_index[record["i"]]
                target.redact_message = _decoded(record["m"])
                target.updated_at = record["t"]
            elif kind == "s":
                replayed.agent = _check_snapshot(record["a"])
                messages_since_snapshot = 0
            elif kind == "a":
                if type(record["e"]) is not dict:
                    raise TypeError("an audit entry must be a JSON object")
                replayed.audit.append(record["e"])
            elif kind == "ti":
                attempt = ToolAttempt(_text(record, "u"), _text(record, "n"), _text(record, "key"))
                attempts[attempt.tool_use_id] = attempt
                replayed.attempts.append(attempt)
                replayed._after.append(last_index)
            elif kind == "to":
                _finish_attempt(attempts, record)
            else:
                raise ValueError(f"unknown record kind {kind!r}")
        except (AttributeError, KeyError, TypeError, ValueError, SessionException, RecursionError) as exc:
            raise _problem(stored, where, number, repr(exc)) from None
    if replayed.agent is not None:
        interrupt_state = replayed.agent._internal_state.get("interrupt_state")
        if isinstance(interrupt_state, dict):
            interrupt_state["audit"] = replayed.audit
        if messages_since_snapshot:
            _drop_completed_interrupt(replayed.agent)
    return replayed


_TEXT_ONLY = {"text"}
_ROLES = ("user", "assistant")


def _decoded(message: Any) -> Any:
    """Return a stored message with its bytes decoded; a message of text blocks only is returned as it is."""
    content = message.get("content") if type(message) is dict else None
    if type(content) is list:
        for block in content:
            if type(block) is not dict or block.keys() != _TEXT_ONLY or type(block["text"]) is not str:
                break
        else:
            return message  # the common case, recognised without walking the message
    return decode_bytes_values(message)


def _text(record: dict[str, Any], key: str) -> str:
    value = record[key]
    if not isinstance(value, str):
        raise TypeError(f"{key!r} must be a string, got {type(value).__name__}")
    return value


def _finish_attempt(attempts: dict[str, ToolAttempt], record: dict[str, Any]) -> None:
    attempt = attempts[_text(record, "u")]
    outcome = record["o"]
    if outcome not in _OUTCOMES:
        raise ValueError(f"unknown tool outcome {outcome!r}")
    attempt.outcome = outcome
    if outcome == "done":
        result = record.get("r")
        if not isinstance(result, dict) or not isinstance(result.get("content"), list):
            raise TypeError("a finished tool attempt must hold a ToolResult")
        attempt.result = _decode_result(result)


def _decode_result(result: dict[str, Any]) -> ToolResult:
    decoded: ToolResult = decode_bytes_values(result)
    return decoded


def _check_message(message: Any, index: Any) -> None:
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        raise TypeError(f"message index must be a non-negative integer, got {index!r}")
    content = message.get("content") if type(message) is dict else None
    if type(content) is not list or message.get("role") not in ("user", "assistant"):
        raise TypeError("a message must be an object with role 'user' or 'assistant' and a list of content blocks")
    for block in content:
        if type(block) is not dict:
            raise TypeError("a message's content must be a list of content blocks (JSON objects)")


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
