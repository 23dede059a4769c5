"""Replaying an orchestrator's log: its latest state, and the tool attempts of its node agents.

An orchestrator's log (format ``strandslike-multi-agent-log/1``) holds, after its header:

- ``ms`` records: the orchestrator's state (``serialize_state()``, node agents' conversations included); the latest
  wins. One is appended durably after every node and every invocation, and with the first intent of each batch of
  node tools;
- ``ti`` / ``to`` records of its node agents' tool bodies, each with ``p``, the node path (``"research"``,
  ``"outer/inner"``; ``/`` and ``%`` inside a node id are written ``%2F`` and ``%25``), as an agent's own log
  holds them (see `strandslike.session._records`).

Which attempts a restored node agent's tool journal gets: the latest attempt of each of its tool uses that no
later state settled. A state settles an attempt when the node's conversation in it holds a result for the
latest call with that tool-use id (in the messages, or among the completed results of a paused tool batch): the
result then speaks for the call, and a model that reuses the id later makes a new call, which a stale attempt
must not stand for. An attempt recorded after the latest state always counts.
"""

from dataclasses import dataclass, field
from typing import Any

from ..tools.journal import ToolAttempt
from ..types.exceptions import SessionCorruptError, SessionException
from ._records import MULTI_AGENT_LOG_FORMAT, _finish_attempt, _problem, _text
from .session_repository import StoredLog


@dataclass
class StoredMultiAgent:
    """An orchestrator as its log holds it, replayed from one consistent read.

    Attributes:
        state: The latest state, or None if none was written yet.
        attempts: The node agents' unsettled tool attempts by node path, in log order.
        repairs: What the store dropped or fixed while reading, in words.
        version: The version of exactly what was read.
    """

    state: dict[str, Any] | None = None
    attempts: dict[str, list[ToolAttempt]] = field(default_factory=dict)
    repairs: list[str] = field(default_factory=list)
    version: str | None = None


def replay_orchestrator(stored: StoredLog, where: str) -> StoredMultiAgent:
    """Build an orchestrator's persisted state and its node agents' open tool attempts from its log.

    Args:
        stored: The log, from one `read_log`.
        where: What the log is, for errors when the store does not say (``StoredLog.location``).

    Raises:
        SessionCorruptError: The log is not an orchestrator log, or a record is not valid (named by its line).
    """
    replayed = StoredMultiAgent(repairs=list(stored.repairs), version=stored.version)
    records = stored.records
    if not records:
        return replayed
    head = records[0]
    if head.get("k") != "h" or head.get("format") != MULTI_AGENT_LOG_FORMAT:
        raise SessionCorruptError(
            stored.location or where,
            f"is not a strandslike orchestrator log (its first {stored.unit} is not a {MULTI_AGENT_LOG_FORMAT} header)",
        )
    by_path: dict[str, dict[str, ToolAttempt]] = {}  # the latest attempt of each tool use, for its outcome
    live: dict[tuple[str, str], ToolAttempt] = {}  # the attempts no later state settled, in log order
    for number, record in enumerate(records[1:], start=2):
        try:
            kind = record["k"]
            if kind == "ms":
                state = record["s"]
                if type(state) is not dict:
                    raise TypeError("an orchestrator state must be a JSON object")
                replayed.state = state
                if live:
                    _settle(live, state)
            elif kind == "ti":
                path = _path(record)
                attempt = ToolAttempt(_text(record, "u"), _text(record, "n"), _text(record, "key"))
                by_path.setdefault(path, {})[attempt.tool_use_id] = attempt
                live.pop((path, attempt.tool_use_id), None)  # the latest attempt goes last, as the log has it
                live[(path, attempt.tool_use_id)] = attempt
            elif kind == "to":
                _finish_attempt(by_path[_path(record)], record)
            else:
                raise ValueError(f"unknown record kind {kind!r}")
        except (AttributeError, KeyError, TypeError, ValueError, SessionException, RecursionError) as exc:
            raise _problem(stored, where, number, repr(exc)) from None
    for (path, _), attempt in live.items():
        replayed.attempts.setdefault(path, []).append(attempt)
    return replayed


def replay_multi_agent(stored: StoredLog, where: str) -> dict[str, Any] | None:
    """Return an orchestrator's latest state from its log, or None if none was written yet.

    Raises:
        SessionCorruptError: The log is not an orchestrator log, or a record is not valid.
    """
    return replay_orchestrator(stored, where).state


def _path(record: dict[str, Any]) -> str:
    path = _text(record, "p")
    if not path or any(not part for part in path.split("/")):
        raise ValueError(f"invalid node path {path!r}")
    return path


def _settle(live: dict[tuple[str, str], ToolAttempt], state: dict[str, Any]) -> None:
    """Drop the attempts whose tool use has its result in ``state`` (the node's conversation answers it)."""
    answered_by_path: dict[str, set[str]] = {}
    for key in list(live):
        path, tool_use_id = key
        if path not in answered_by_path:
            answered_by_path[path] = answered_tool_uses(_node_snapshot(state, path))
        if tool_use_id in answered_by_path[path]:
            del live[key]


def _unescape(part: str) -> str:
    return part.replace("%2F", "/").replace("%25", "%") if "%" in part else part


def _node_snapshot(state: Any, path: str) -> Any:
    """Return the saved agent of the node at ``path`` in an orchestrator's state, or None if there is none."""
    current = state
    parts = [_unescape(part) for part in path.split("/")]
    for position, part in enumerate(parts):
        nodes = current.get("nodes") if isinstance(current, dict) else None
        node = nodes.get(part) if isinstance(nodes, dict) else None
        if not isinstance(node, dict):
            return None
        if position == len(parts) - 1:
            return node if node.get("type") == "agent" else None
        if node.get("type") != "multiagent":
            return None
        current = node.get("state")
    return None


def answered_tool_uses(node: Any) -> set[str]:
    """Return the tool-use ids whose latest call has a result in a saved node agent (messages or a paused batch).

    Never raises: a saved agent of an unexpected shape answers nothing, so no attempt is dropped for it.
    """
    if not isinstance(node, dict):
        return set()
    messages = node.get("messages")
    messages = messages if isinstance(messages, list) else []
    answered: dict[str, bool] = {}
    for position, message in enumerate(messages):
        uses = _ids(message, "assistant", "toolUse")
        if not uses:
            continue
        following = messages[position + 1] if position + 1 < len(messages) else None
        results = set(_ids(following, "user", "toolResult"))
        for tool_use_id in uses:
            answered[tool_use_id] = tool_use_id in results
    interrupt_state = node.get("interrupt_state")
    pending = interrupt_state.get("pending_tool_execution") if isinstance(interrupt_state, dict) else None
    completed = pending.get("completed_tool_results") if isinstance(pending, dict) else None
    for result in completed if isinstance(completed, list) else []:
        completed_id = result.get("toolUseId") if isinstance(result, dict) else None
        if isinstance(completed_id, str):
            answered[completed_id] = True
    return {tool_use_id for tool_use_id, done in answered.items() if done}


def _ids(message: Any, role: str, kind: str) -> list[str]:
    if not isinstance(message, dict) or message.get("role") != role or not isinstance(message.get("content"), list):
        return []
    found = []
    for block in message["content"]:
        inner = block.get(kind) if isinstance(block, dict) else None
        tool_use_id = inner.get("toolUseId") if isinstance(inner, dict) else None
        if isinstance(tool_use_id, str):
            found.append(tool_use_id)
    return found
