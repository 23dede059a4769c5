"""What the commands share: exit codes, output, and read-only access to a storage directory.

Read-only commands never create anything: `FileSessionManager.__init__` creates a session that does not exist,
so a manager is only opened for a session whose record is already on disk, and its repository methods
(`read_session`, `read_agent`, `list_messages`) read without taking locks.
"""

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..interrupt import Interrupt
from ..interrupt._state import _InterruptState
from ..session._ids import validate_id
from ..session.file_session_manager import SESSION_PREFIX, FileSessionManager
from ..session.log_session_repository import LogSessionRepository
from ..session.repository_session_manager import RepositorySessionManager
from ..session.session_repository import LogRef
from ..types.exceptions import MissingExtraError, SessionCorruptError, SessionException, StrandslikeError
from ..types.session import Session, SessionAgent, SessionMessage, encode_bytes_values

EXIT_OK = 0
EXIT_FAILURE = 1  # the command was refused: unknown session, existing target, a resume the agent rejected
EXIT_USAGE = 2  # bad input or unreadable data: argparse errors, invalid JSON or ids, corrupt files


class CliError(StrandslikeError):
    """A command failed in a way the user can fix; the message is printed on stderr.

    Attributes:
        exit_code: The process exit code to return.
    """

    def __init__(self, message: str, exit_code: int = EXIT_FAILURE) -> None:
        self.exit_code = exit_code
        super().__init__(message)


def out(text: str = "") -> None:
    """Write a line to stdout."""
    sys.stdout.write(text + "\n")


def err(text: str) -> None:
    """Write a line to stderr."""
    sys.stderr.write(text + "\n")


def to_json(value: Any, *, indent: int | None = 2) -> str:
    """Return ``value`` as JSON, with bytes base64-encoded the way sessions store them."""
    return json.dumps(encode_bytes_values(value), indent=indent, ensure_ascii=False)


def storage_path(value: str) -> Path:
    """Return the storage directory, which must exist (read-only commands never create it).

    Raises:
        CliError: The directory does not exist.
    """
    path = Path(value)
    if not path.is_dir():
        raise CliError(f"storage directory {value} does not exist (pass the --storage-dir the agents used)")
    return path


def session_ids(storage_dir: Path) -> list[str]:
    """Return the ids of the sessions stored in ``storage_dir``, sorted."""
    return sorted(
        entry.name[len(SESSION_PREFIX) :]
        for entry in storage_dir.iterdir()
        if entry.name.startswith(SESSION_PREFIX) and entry.is_dir() and (entry / "session.json").exists()
    )


def open_session(storage_dir: Path, session_id: str) -> FileSessionManager:
    """Open an existing session for reading; never create one.

    Raises:
        CliError: ``session_id`` is not a valid id, or no such session is stored in ``storage_dir``.
        SessionCorruptError: The session record is corrupt or was written by strands-agents.
    """
    try:
        validate_id(session_id, "session")
    except ValueError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    if not (storage_dir / f"{SESSION_PREFIX}{session_id}" / "session.json").is_file():
        known = session_ids(storage_dir)
        listing = f"sessions there: {', '.join(known)}" if known else "it holds no sessions"
        raise CliError(f"no session {session_id!r} in {storage_dir} ({listing})")
    return FileSessionManager(session_id, storage_dir=storage_dir)


def _postgres_store(dsn: str) -> Any:
    """Open the PostgreSQL store named by ``--dsn`` for reading (it never creates tables).

    Raises:
        CliError: The postgres extra is missing, or the database's schema cannot be read (exit code 2), or the
            database cannot be reached (exit code 1).
    """
    try:
        from ..session import postgres

        postgres.import_psycopg()
    except MissingExtraError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    try:
        store = postgres.PostgresSessionRepository(dsn, create_schema=False)
        store.list_sessions()  # checks the schema version once
    except postgres.PostgresSchemaError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    except postgres.PostgresStoreError as exc:
        raise CliError(str(exc), EXIT_FAILURE) from None
    return store


def stored_session_ids(args: Any) -> list[str]:
    """Return the ids of the sessions of ``--dsn``'s database or of ``--storage-dir``, sorted."""
    if getattr(args, "dsn", None):
        return list(_postgres_store(args.dsn).list_sessions())
    return session_ids(storage_path(args.storage_dir))


def where(args: Any) -> str:
    """Return where the command reads sessions from, for messages: the storage directory or the database."""
    if getattr(args, "dsn", None):
        return str(_postgres_store(args.dsn).where)
    return str(args.storage_dir)


def open_existing(args: Any, session_id: str) -> RepositorySessionManager:
    """Open an existing session of ``--dsn``'s database or of ``--storage-dir``, for reading; never create one.

    Raises:
        CliError: ``session_id`` is not a valid id, or there is no such session.
        SessionCorruptError: The session record is corrupt.
    """
    if not getattr(args, "dsn", None):
        return open_session(storage_path(args.storage_dir), session_id)
    try:
        validate_id(session_id, "session")
    except ValueError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    store = _postgres_store(args.dsn)
    if store.read_session(session_id) is None:
        known = store.list_sessions()
        listing = f"sessions there: {', '.join(known)}" if known else "it holds no sessions"
        raise CliError(f"no session {session_id!r} in {store.where} ({listing})")
    from ..session.postgres import PostgresSessionManager

    return PostgresSessionManager(session_id, session_repository=store)


@dataclass
class AgentView:
    """What a stored agent holds, as the commands show it.

    Attributes:
        agent_id: The agent's id.
        agent: Its latest snapshot (state, interrupt state), or None if none was written yet.
        messages: Its messages in order, redactions recorded.
        open_interrupts: Interrupts it waits on that have no answer yet.
        interrupted: Whether it waits on interrupts.
        repairs: What reading the log dropped or will fix (a torn last record, ...), in words.
    """

    agent_id: str
    agent: SessionAgent | None
    messages: list[SessionMessage]
    open_interrupts: list[Interrupt] = field(default_factory=list)
    interrupted: bool = False
    repairs: list[str] = field(default_factory=list)

    @property
    def audit(self) -> list[dict[str, Any]]:
        """The agent's interrupt audit trail: raised, answered and outcome entries, oldest first."""
        if self.agent is None:
            return []
        interrupt_state = self.agent._internal_state.get("interrupt_state") or {}
        return list(interrupt_state.get("audit") or [])

    @property
    def updated_at(self) -> str | None:
        """Return the latest timestamp of its snapshot and messages."""
        stamps = [message.updated_at for message in self.messages[-1:]]
        if self.agent is not None:
            stamps.append(self.agent.updated_at)
        return latest(stamps)


def latest(stamps: list[str]) -> str | None:
    """Return the latest of ISO timestamps (all UTC, as sessions write them), or None."""
    return max((stamp for stamp in stamps if isinstance(stamp, str)), default=None)


def _store(manager: RepositorySessionManager) -> LogSessionRepository:
    store = manager.session_repository
    assert isinstance(store, LogSessionRepository)
    return store


def read_agents(manager: RepositorySessionManager, agent_id: str | None = None) -> list[AgentView]:
    """Read the agents of the manager's session (or only ``agent_id``).

    Raises:
        CliError: ``agent_id`` is given and the session has no such agent.
        SessionCorruptError: An agent's log is corrupt or holds an invalid interrupt state.
    """
    store = _store(manager)
    known = [ref.owner_id for ref in store.list_logs(manager.session_id) if ref.kind == "agent"]
    if agent_id is not None:
        if agent_id not in known:
            listing = ", ".join(known) or "none"
            raise CliError(f"session {manager.session_id!r} has no agent {agent_id!r} (agents: {listing})")
        known = [agent_id]
    views = []
    for name in known:
        stored = store.load_agent(manager.session_id, name)  # one read of the log
        if stored is None or (stored.agent is None and not stored.messages and not stored.repairs):
            continue  # a directory whose log was never written
        agent, messages = stored.agent, stored.messages
        view = AgentView(name, agent, messages, repairs=stored.repairs)
        if agent is not None:
            state = _interrupt_state(store.describe_log(LogRef(manager.session_id, "agent", name)), agent)
            view.interrupted = state.activated
            view.open_interrupts = state.unanswered() if state.activated else []
        views.append(view)
    return views


def _interrupt_state(where: str, agent: SessionAgent) -> _InterruptState:
    data = agent._internal_state.get("interrupt_state")
    if data is None:
        return _InterruptState()
    try:
        if not isinstance(data, dict):
            raise SessionException(f"interrupt_state is a {type(data).__name__}, not an object")
        return _InterruptState.from_dict(data)
    except SessionException as exc:
        raise SessionCorruptError(where, f"holds an invalid interrupt state ({exc})") from None


@dataclass
class MultiAgentView:
    """What a stored orchestrator (Graph or Swarm) holds, as the commands show it.

    Attributes:
        multi_agent_id: The orchestrator's id.
        kind: ``graph``, ``swarm``, or what the stored state says it is.
        state: Its stored state (`serialize_state` output).
    """

    multi_agent_id: str
    kind: str
    state: dict[str, Any]

    @property
    def audit(self) -> list[dict[str, Any]]:
        """The orchestrator's interrupt audit trail, oldest first (each entry names its ``node_id``)."""
        internal = self.state.get("_internal_state")
        interrupt_state = internal.get("interrupt_state") if isinstance(internal, dict) else None
        audit = interrupt_state.get("audit") if isinstance(interrupt_state, dict) else None
        return [dict(entry) for entry in audit if isinstance(entry, dict)] if isinstance(audit, list) else []


def read_multi_agents(manager: RepositorySessionManager) -> list[MultiAgentView]:
    """Read the orchestrators of the manager's session, without writing anything.

    Raises:
        SessionCorruptError: An orchestrator's state cannot be read.
    """
    views = []
    for multi_agent_id in multi_agent_ids(manager):
        try:
            validate_id(multi_agent_id, "multi_agent")
        except ValueError as exc:
            raise SessionCorruptError(f"multi-agent {multi_agent_id!r}", str(exc)) from None
        state = _store(manager).read_multi_agent(manager.session_id, multi_agent_id)
        if state is None:
            continue
        kind = state.get("type")
        views.append(MultiAgentView(multi_agent_id, kind if isinstance(kind, str) else "multi-agent", state))
    return views


def multi_agent_ids(manager: RepositorySessionManager) -> list[str]:
    """Return the ids of the orchestrators whose state the session stores."""
    return [ref.owner_id for ref in _store(manager).list_logs(manager.session_id) if ref.kind == "multi_agent"]


def read_session(manager: RepositorySessionManager) -> Session:
    """Return the manager's session record.

    Raises:
        CliError: The session disappeared since it was opened.
    """
    session = manager.session_repository.read_session(manager.session_id)
    if session is None:
        raise CliError(f"session {manager.session_id!r} was deleted while it was being read")
    return session
