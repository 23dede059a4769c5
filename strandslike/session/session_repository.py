"""`SessionRepository`: the storage protocol session managers persist through.

A repository has two layers:

1. **Strands' record API** (`create_session`, `read_agent`, `create_message`, `list_messages`, ...). A custom
   Strands repository works unchanged through it, but it cannot keep the exactly-once promise: Strands' API has
   no way to claim a session or to read an agent in one consistent snapshot. `RepositorySessionManager` says so
   when it is built over such a repository (an `UnclaimedSessionWarning`).

2. **The durable log contract** (strandslike). Every agent, and every orchestrator, of a session is one
   append-only *log* of JSON records. A repository that implements the contract sets ``supports_claims = True``
   and implements `read_log`, `claim_log`, `append_log`, `release_log`, `list_logs` and `list_sessions`; the
   session manager then builds everything else (messages, agent snapshots, the interrupt audit trail, tool
   intents and outcomes, orchestrator state) from records, the same way for every store. The store knows nothing
   of what records mean; it keeps them safe, in order, and claims logs exclusively. The rules, which
   `strandslike.testing.session_conformance` checks for any store:

   - **Records** are JSON objects (``dict`` with string keys; the key ``"k"`` names the kind). A store returns
     every record it accepted, in append order, equal to what was appended. Values passed to a store have been
     checked by the manager with `strandslike._json.ensure_json_serializable` (bytes already encoded), so a store
     may assume strict JSON.
   - **One consistent read.** `read_log` returns the records *and the version of exactly those records*, from one
     snapshot: an append running at the same time is either wholly in it or wholly absent.
   - **Versions** are opaque strings. Two reads return the same version if and only if nothing was appended in
     between; every append changes the version.
   - **Claim before acting.** `claim_log(ref, version)` succeeds only if no one else holds a claim on the log and
     the log is still exactly at ``version`` (``None``: the log must not exist yet; the first append creates it).
     Otherwise it raises `SessionConflictError` at once (it never waits). A claim is released by `release_log`,
     and also when its holder dies (a killed process must not lock a session forever: a file lock dies with its
     process, a database lease expires).
   - **Appends** happen only under a held claim, are all-or-nothing per call (a crash during an append leaves
     all of its records or none of them), and keep their order. When `append_log` returns, the records survive
     the death of the process; with ``durable=True`` they also survive a crash of the machine (``fsync``, a
     committed transaction). After an append, ``claim.version`` is the log's new version. An append under a
     claim that was lost (expired, stolen) raises `SessionConflictError` and writes nothing. An append of no
     records changes nothing (not even the version).
   - **Integrity.** A record that was damaged at rest is never returned as if it were good: `read_log` raises
     `SessionCorruptError` naming where, or, for damage a crash can cause (a torn last record), drops it and says
     so in `StoredLog.repairs`.
"""

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from ..types.session import Session, SessionAgent, SessionMessage

LogKind = Literal["agent", "multi_agent"]


@dataclass(frozen=True)
class LogRef:
    """Names one log: an agent or an orchestrator of a session.

    Attributes:
        session_id: The session.
        kind: ``"agent"`` or ``"multi_agent"``.
        owner_id: The agent's ``agent_id`` or the orchestrator's ``id``.
    """

    session_id: str
    kind: LogKind
    owner_id: str


@dataclass
class StoredLog:
    """Every record of a log, read in one consistent snapshot.

    Attributes:
        records: The records in append order.
        version: The version of exactly these records (see `SessionRepository.claim_log`).
        repairs: What the store dropped or fixed while reading (a torn last record, ...), in words, for operators.
        location: Where the log is stored (a file path, a table and key), for error messages; None: the store
            does not say, and messages name the session and owner instead.
        unit: What a record is called at that location, for error messages (``"line"`` in a file).
    """

    records: list[dict[str, Any]]
    version: str
    repairs: list[str] = field(default_factory=list)
    location: str | None = None
    unit: str = "record"


@dataclass
class LogClaim:
    """An exclusive right to append to one log, from `SessionRepository.claim_log` until `release_log`.

    Attributes:
        ref: The claimed log.
        version: The log's version: as claimed, then after each append.
        handle: Whatever the store needs to keep and check the claim (a lock file descriptor, a lease token).
    """

    ref: LogRef
    version: str | None
    handle: Any = None


class SessionRepository(ABC):
    """Stores sessions, their agents, messages and multi-agent states.

    A custom Strands repository works unchanged (layer 1 above). Set ``blocking_io = False`` on repositories that
    never block (in-memory ones) so the session manager calls them on the event loop instead of in a worker
    thread. Set ``supports_claims = True`` on repositories that implement the durable log contract (layer 2).
    """

    blocking_io: ClassVar[bool] = True
    supports_claims: ClassVar[bool] = False

    # -- layer 1: Strands' record API ---------------------------------------------------------------------------------

    @abstractmethod
    def create_session(self, session: Session, **kwargs: Any) -> Session:
        """Create a new session."""

    @abstractmethod
    def read_session(self, session_id: str, **kwargs: Any) -> Session | None:
        """Read a session, or return None if there is none under this id."""

    @abstractmethod
    def create_agent(self, session_id: str, session_agent: SessionAgent, **kwargs: Any) -> None:
        """Create an agent in a session."""

    @abstractmethod
    def read_agent(self, session_id: str, agent_id: str, **kwargs: Any) -> SessionAgent | None:
        """Read an agent, or return None if the session has none under this id."""

    @abstractmethod
    def update_agent(self, session_id: str, session_agent: SessionAgent, **kwargs: Any) -> None:
        """Replace an agent's persisted state."""

    @abstractmethod
    def create_message(self, session_id: str, agent_id: str, session_message: SessionMessage, **kwargs: Any) -> None:
        """Append a message to an agent's conversation."""

    @abstractmethod
    def read_message(self, session_id: str, agent_id: str, message_id: int, **kwargs: Any) -> SessionMessage | None:
        """Read one message by index."""

    @abstractmethod
    def update_message(self, session_id: str, agent_id: str, session_message: SessionMessage, **kwargs: Any) -> None:
        """Replace a message (used for redaction)."""

    @abstractmethod
    def list_messages(
        self, session_id: str, agent_id: str, limit: int | None = None, offset: int = 0, **kwargs: Any
    ) -> list[SessionMessage]:
        """List an agent's messages in order, skipping ``offset`` and returning at most ``limit``."""

    def create_multi_agent(self, session_id: str, multi_agent: Any, **kwargs: Any) -> None:
        """Create the persisted state of an orchestrator."""
        raise NotImplementedError(f"{type(self).__name__} does not store multi-agent state")

    def read_multi_agent(self, session_id: str, multi_agent_id: str, **kwargs: Any) -> dict[str, Any] | None:
        """Read an orchestrator's persisted state."""
        raise NotImplementedError(f"{type(self).__name__} does not store multi-agent state")

    def update_multi_agent(self, session_id: str, multi_agent: Any, **kwargs: Any) -> None:
        """Replace an orchestrator's persisted state."""
        raise NotImplementedError(f"{type(self).__name__} does not store multi-agent state")

    # -- layer 2: the durable log contract (strandslike) --------------------------------------------------------------

    def read_log(self, ref: LogRef, **kwargs: Any) -> StoredLog | None:
        """Read every record of a log in one consistent snapshot, or return None if the log does not exist.

        Raises:
            SessionCorruptError: A stored record is damaged (named by file and line, or row).
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement the durable log contract")

    def claim_log(self, ref: LogRef, version: str | None, **kwargs: Any) -> LogClaim:
        """Claim a log for exclusive appending, if it is still exactly at ``version``.

        Args:
            ref: The log.
            version: The version of the read the caller acts on (``StoredLog.version``), or None if the caller
                saw no log and will create it with its first append.
            **kwargs: Reserved for future arguments.

        Raises:
            SessionConflictError: Another claim is held, or the log changed since ``version`` was read.
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement the durable log contract")

    def append_log(self, claim: LogClaim, records: Sequence[dict[str, Any]], *, durable: bool, **kwargs: Any) -> None:
        """Append ``records`` (all or none, in order) under ``claim``; update ``claim.version``.

        Args:
            claim: A claim from `claim_log`, not yet released.
            records: JSON objects, each with a string ``"k"``.
            durable: Return only once the records survive a machine crash, not just a process crash.
            **kwargs: Reserved for future arguments.

        Raises:
            SessionConflictError: The claim was lost; nothing was written.
        """
        raise NotImplementedError(f"{type(self).__name__} does not implement the durable log contract")

    def release_log(self, claim: LogClaim, **kwargs: Any) -> None:
        """Give up a claim (idempotent); its holder may not append with it again."""
        raise NotImplementedError(f"{type(self).__name__} does not implement the durable log contract")

    def list_logs(self, session_id: str, **kwargs: Any) -> list[LogRef]:
        """Return the logs of a session (agents, then orchestrators, each sorted by owner id)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement the durable log contract")

    def list_sessions(self, **kwargs: Any) -> list[str]:
        """Return the ids of every stored session, sorted."""
        raise NotImplementedError(f"{type(self).__name__} does not list its sessions")
