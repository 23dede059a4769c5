"""Replaying an orchestrator's log: its latest state, and the tool attempts of its node agents.

An orchestrator's log (format ``strandslike-multi-agent-log/2``; ``/1`` logs hold no ``md`` records) holds, after
its header:

- ``ms`` records: the orchestrator's state (``serialize_state()``, node agents' conversations included); one is
  appended durably after every node and every invocation;
- ``md`` records: the orchestrator's state as a delta of the state before it, appended durably with the first intent
  of each batch of node tools: the state without the node agents' conversations, and for each node agent how many
  messages it had in the state before (with the digest of the last one) and the messages it appended since. The
  state is the latest ``ms`` with the ``md`` records after it applied in order; a delta that does not fit the state
  before it (another message count or last message, a node that is not there) is a damaged log, never guessed at;
- ``ti`` / ``to`` records of its node agents' tool bodies, each with ``p``, the node path (``"research"``,
  ``"outer/inner"``; ``/`` and ``%`` inside a node id are written ``%2F`` and ``%25``), as an agent's own log
  holds them (see `strandslike.session._records`).

Which attempts a restored node agent's tool journal gets: the latest attempt of each of its tool uses that no
later state settled. A state settles an attempt when the node's conversation in it holds a result for the
latest call with that tool-use id (in the messages, or among the completed results of a paused tool batch): the
result then speaks for the call, and a model that reuses the id later makes a new call, which a stale attempt
must not stand for. An attempt recorded after the latest state always counts.
"""

import copy
from dataclasses import dataclass, field
from typing import Any

from ..tools.journal import ToolAttempt
from ..types.exceptions import SessionCorruptError, SessionException
from ._records import (
    MULTI_AGENT_LOG_FORMAT,
    MULTI_AGENT_LOG_FORMATS,
    _check_message,
    _finish_attempt,
    _problem,
    _text,
    message_digest,
)
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
    if head.get("k") != "h" or head.get("format") not in MULTI_AGENT_LOG_FORMATS:
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
            elif kind == "md":
                if replayed.state is None:
                    raise ValueError("a state delta with no whole state (ms) before it")
                replayed.state = apply_delta(replayed.state, record)
                if live:
                    _settle(live, replayed.state)
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


def apply_delta(previous: dict[str, Any], record: dict[str, Any]) -> dict[str, Any]:
    """Return the state an ``md`` record makes of the state before it (``previous`` is left as it was).

    Raises:
        TypeError, ValueError: The record is malformed, or does not fit ``previous``.
    """
    state, nodes = record["s"], record["n"]
    if type(state) is not dict or type(nodes) is not dict:
        raise TypeError("a state delta's 's' and 'n' must be JSON objects")
    state = copy.deepcopy(state)  # the record stays as read (a store may hand out the records it keeps)
    for path, entry in nodes.items():
        _check_path(path)
        if type(entry) is not dict:
            raise TypeError(f"the delta of node {path!r} must be a JSON object")
        base, digest, added = entry["b"], entry["h"], entry["m"]
        if type(base) is not int or base < 0:
            raise TypeError(f"the delta of node {path!r}: 'b' must be a non-negative integer, got {base!r}")
        if (digest is None) != (base == 0) or (digest is not None and type(digest) is not str):
            raise TypeError(f"the delta of node {path!r}: 'h' must be the digest of message {base - 1}, got {digest!r}")
        if type(added) is not list:
            raise TypeError(f"the delta of node {path!r}: 'm' must be a list of messages")
        for position, message in enumerate(added, start=base):
            _check_message(message, position)
        before = _node_snapshot(previous, path)
        messages = before.get("messages") if isinstance(before, dict) else None
        if type(messages) is not list:
            raise ValueError(f"node {path!r} has no agent conversation in the state before this delta")
        if len(messages) != base:
            raise ValueError(
                f"node {path!r} had {len(messages)} messages in the state before this delta, "
                f"which was written after {base}"
            )
        if base and message_digest(messages[-1]) != digest:
            raise ValueError(f"message {base - 1} of node {path!r} is not the one this delta was written after")
        node = _node_snapshot(state, path)
        if node is None or "messages" in node:
            raise ValueError(f"node {path!r} is not an agent without its conversation in this delta's state")
        rest = dict(node)
        node.clear()
        node.update({"type": rest.pop("type"), "messages": messages + added, **rest})
    missing = _without_messages(state)
    if missing:
        raise ValueError(f"the delta leaves the conversation of node {missing[0]!r} out and does not give it")
    return state


def _without_messages(state: Any, prefix: str = "") -> list[str]:
    """Return the paths of the agent nodes in ``state`` (nested ones too) that have no ``messages``."""
    nodes = state.get("nodes") if isinstance(state, dict) else None
    found: list[str] = []
    for node_id, node in nodes.items() if isinstance(nodes, dict) else ():
        if not isinstance(node, dict) or not isinstance(node_id, str):
            continue
        path = prefix + node_id.replace("%", "%25").replace("/", "%2F")
        if node.get("type") == "agent" and "messages" not in node:
            found.append(path)
        elif node.get("type") == "multiagent":
            found.extend(_without_messages(node.get("state"), path + "/"))
    return found


def _path(record: dict[str, Any]) -> str:
    return _check_path(_text(record, "p"))


def _check_path(path: Any) -> str:
    if not isinstance(path, str) or not path or any(not part for part in path.split("/")):
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
