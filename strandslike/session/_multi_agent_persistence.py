"""How a session manager persists orchestrators (Graph, Swarm) and their node agents' tool bodies (layer 2).

An orchestrator is one log (see `strandslike.session._multi_agent_log`), and its node agents have no session of
their own: the orchestrator's state carries their conversations. Their tool journals sink into the
orchestrator's log, so the durable line holds inside nodes as it does for agents:

- restoring reads the log once, gives the orchestrator its latest state, and hands each node agent's tool
  journal the attempts of its node path that no later state settled; every node agent's idempotency keys are
  scoped to ``"<session>/<orchestrator id>/<node path>"``, the same in every process;
- `BeforeMultiAgentInvocationEvent` claims the log at the version read; every write of the invocation, node
  agents' records included, is appended under that claim;
- before a node tool's body starts, its intent record is appended durably, after the orchestrator's state as it
  stands then (the answers just applied, the node's conversation up to the tool call), in one write shared by the
  tools that start together. That state is written as a delta (``md``) of the last one this process wrote: the
  state without the node agents' conversations, and the messages each node appended since, so a node tool call
  costs about the same however long the conversations are. A node whose conversation is not the last written one
  plus new messages (a conversation manager trimmed it, a redaction or a hook changed a message in place; the
  messages are compared by value with copies kept of what was written) makes it a whole state (``ms``) instead;
- how a body ended is buffered and written with the next write; the state is appended durably after every node
  and every invocation, before the claim is released.
"""

import copy
import functools
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel

from ..tools.journal import ToolAttempt
from ._ids import validate_id
from ._multi_agent_log import _node_snapshot, replay_orchestrator
from ._records import intent_record, message_digest, multi_agent_delta_record, multi_agent_record, outcome_record
from .session_repository import LogRef

if TYPE_CHECKING:
    from ._log_persistence import LogPersistence, _AgentLog


class NodeJournalSink:
    """Makes a node agent's tool intents durable in its orchestrator's log before the bodies run.

    Implements `strandslike.tools.journal.JournalSink` for the agent at ``path`` in ``source``.
    """

    def __init__(self, logs: "MultiAgentLogs", log: "_AgentLog", source: Any, path: str) -> None:
        self._logs = logs
        self._log = log
        self._source = source
        self.path = path

    async def tool_started(self, attempt: ToolAttempt) -> None:
        """Write the orchestrator's state and the intent durably; return then.

        The tools of one batch of this node share one state (the node's conversation does not change within a
        batch); a state another write captured (another node's batch, a node's end) may predate this node's last
        turn, so the state is captured again then.
        """
        persistence, log = self._logs.persistence, self._log
        self._logs.buffer_state(log, self._source, for_path=self.path)
        needed = persistence.buffer(log, [intent_record(attempt, self.path)], 0, durable=True)
        await anyio.lowlevel.checkpoint()  # the other tools starting now add their intents: one write for all
        await persistence.flush_async(log, durable=True, needed=needed)

    def tool_finished(self, attempt: ToolAttempt) -> None:
        """Buffer how the body ended (written with the next write)."""
        self._logs.persistence.write(self._log, [outcome_record(attempt, self.path)], 0)


class _Written:
    """A node agent's conversation as the latest state record buffered for its orchestrator holds it."""

    __slots__ = ("digest", "messages")

    def __init__(self, messages: list[Any], digest: str | None) -> None:
        self.messages = messages  # deep copies of the live messages as they were written, to compare by value
        self.digest = digest  # `message_digest` of the last one as stored, None if there is none


def _nothing() -> None:
    pass


def _extensions(
    written: dict[str, _Written], conversations: dict[str, list[Any]]
) -> dict[str, tuple[int, str | None, list[Any]]] | None:
    """Return each node's message count and last digest as written and its new messages; None if one is not that."""
    if written.keys() != conversations.keys():
        return None
    nodes: dict[str, tuple[int, str | None, list[Any]]] = {}
    for path, messages in conversations.items():
        before = written[path]
        count = len(before.messages)
        if len(messages) < count or messages[:count] != before.messages:
            return None  # trimmed, redacted or changed in place: the state goes whole
        nodes[path] = (count, before.digest, messages[count:])
    return nodes


def _extend(written: dict[str, _Written], added: dict[str, list[Any]], record: dict[str, Any]) -> None:
    for path, messages in added.items():
        written[path].messages.extend(messages)
        written[path].digest = message_digest(record["n"][path]["m"][-1])


def _last_digest(state: Any, path: str) -> str | None:
    node = _node_snapshot(state, path)
    messages = node["messages"] if node is not None else []
    return message_digest(messages[-1]) if messages else None


class MultiAgentLogs:
    """The orchestrators one `LogPersistence` persists, each as one log."""

    def __init__(self, persistence: "LogPersistence") -> None:
        self.persistence = persistence
        self.logs: dict[str, _AgentLog] = {}
        # By orchestrator id: each node agent's conversation in the latest state record buffered, by node path.
        # Absent: the next state is written whole (a state this process has not written may differ from the live one).
        self.written: dict[str, dict[str, _Written]] = {}
        self._state_lock = threading.Lock()  # a state record and what it changes in `written` are buffered as one

    def _ref(self, source: Any) -> LogRef:
        return LogRef(self.persistence.session_id, "multi_agent", validate_id(source.id, "multi_agent"))

    def initialize(self, source: Any, is_new_session: bool) -> None:
        """Restore an orchestrator from one read of its log (node agents' tool attempts too), or start the log.

        Raises:
            SessionCorruptError: The log is damaged or not an orchestrator log.
        """
        from ._log_persistence import _AgentLog

        persistence = self.persistence
        ref = self._ref(source)
        stored = None if is_new_session else persistence.repository.read_log(ref)
        replayed = None if stored is None else replay_orchestrator(stored, persistence.where(ref))
        log = _AgentLog(ref, None if stored is None else stored.version, bool(stored and stored.records))
        self.logs[ref.owner_id] = log
        self.written.pop(ref.owner_id, None)  # the first state this object writes goes whole
        if replayed is not None and replayed.state is not None:
            source.deserialize_state(replayed.state)
        journals = source.tool_journals() if callable(getattr(source, "tool_journals", None)) else {}
        for path, journal in journals.items():
            journal.scope = f"{self.persistence.session_id}/{ref.owner_id}/{path}"
            journal.sink = NodeJournalSink(self, log, source, path)
            journal.restore(replayed.attempts.get(path, ()) if replayed is not None else ())
        if replayed is None or replayed.state is None:
            self.buffer_state(log, source)
            persistence.flush(log, durable=True)

    def log_of(self, source: Any) -> "_AgentLog":
        """Return an orchestrator's log; one this manager did not restore is acted on as it is now."""
        from ._log_persistence import _AgentLog

        log = self.logs.get(source.id)
        if log is None:
            ref = self._ref(source)
            stored = self.persistence.repository.read_log(ref)
            log = _AgentLog(ref, None if stored is None else stored.version, bool(stored and stored.records))
            self.logs[source.id] = log
            self.written.pop(source.id, None)
        return log

    def buffer_state(self, log: "_AgentLog", source: Any, *, for_path: str | None = None) -> None:
        """Buffer a record of the orchestrator's state as it stands now (built here, in the caller's thread).

        With ``for_path`` (a node's tool batch starting), nothing is buffered if a state captured for a tool batch
        of that node waits to be written already.

        Raises:
            SessionException: An earlier write of this orchestrator failed.
            NotJSONSerializableError: The state cannot be stored.
        """
        if log.failed is not None:
            raise self.persistence.failed(log)
        if for_path is not None and log.state_pending and log.state_pending_for == for_path:
            return
        with self._state_lock:
            record, size, written = self._state_record(log, source, delta=for_path is not None)
            self.persistence.buffer(log, [record], size, durable=True, state=True, state_for=for_path)
            written()

    def _state_record(
        self, log: "_AgentLog", source: Any, *, delta: bool
    ) -> tuple[dict[str, Any], int, Callable[[], None]]:
        """Return the record of the orchestrator's state now, its size, and what to call once it is buffered.

        A delta if ``delta`` and every node agent's conversation is the written one plus new messages; else whole.
        The callable brings `written` up to the record.
        """
        owner = log.ref.owner_id
        parts = getattr(source, "serialize_state_parts", None)
        if not callable(parts):
            self.written.pop(owner, None)
            record, size = multi_agent_record(source.serialize_state(), owner)
            return record, size, _nothing
        state, conversations = parts()
        written = self.written.get(owner)
        nodes = _extensions(written, conversations) if delta and written is not None else None
        if written is not None and nodes is not None:
            added = {path: copy.deepcopy(new) for path, (_, _, new) in nodes.items() if new}
            record, size = multi_agent_delta_record(state, nodes, owner)
            return record, size, functools.partial(_extend, written, added, record)
        copies = {path: copy.deepcopy(messages) for path, messages in conversations.items()}
        for path, messages in copies.items():
            node = _node_snapshot(state, path)
            if node is None or "messages" in node:  # not the shape Graph and Swarm give: written as they give it
                self.written.pop(owner, None)
                record, size = multi_agent_record(source.serialize_state(), owner)
                return record, size, _nothing
            rest = dict(node)
            node.clear()
            node.update({"type": rest.pop("type"), "messages": messages, **rest})  # as `serialize_state()` orders it
        record, size = multi_agent_record(state, owner)

        def replace() -> None:
            self.written[owner] = {
                path: _Written(messages, _last_digest(record["s"], path)) for path, messages in copies.items()
            }

        return record, size, replace

    def sync(self, source: Any) -> None:
        """Append the orchestrator's state durably, under its claim if held, else under a short claim."""
        log = self.log_of(source)
        self.buffer_state(log, source)
        self.persistence.flush(log, durable=True)

    async def sync_async(self, source: Any) -> None:
        """`sync` from the event loop: the state is captured here, the durable write runs in a worker thread."""
        log = self.log_of(source)
        self.buffer_state(log, source)
        await self.persistence.flush_async(log, durable=True)

    def begin(self, source: Any) -> None:
        """Claim an orchestrator's log at the version this process last read or wrote (nested calls count up).

        Raises:
            SessionConflictError: Another process holds the claim or changed the orchestration since.
            SessionException: An earlier write of this orchestrator failed.
        """
        log = self.log_of(source)
        if log.failed is not None:
            raise self.persistence.failed(log)
        if log.depth == 0:
            log.claim = self.persistence.repository.claim_log(log.ref, log.version)
        log.depth += 1

    def end(self, source: Any) -> None:
        """Release the outermost claim of an orchestrator's log, after writing what its node agents left pending."""
        log = self.logs.get(source.id)
        if log is None or log.depth == 0:
            return
        try:
            if log.depth == 1 and log.failed is None and log.pending:
                self.persistence.flush(log)
        finally:
            log.depth -= 1
            if log.depth == 0 and log.claim is not None:
                claim, log.claim = log.claim, None
                self.persistence.repository.release_log(claim)
