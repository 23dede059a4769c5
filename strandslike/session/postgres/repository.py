"""`PostgresSessionRepository`: the durable log contract on PostgreSQL, shared safely by many processes and machines.

Every agent and orchestrator of a session is a row of ``strandslike_logs`` and its records are rows of
``strandslike_records`` (see `strandslike.session.postgres._schema`); the session manager builds everything else
from records, exactly as for the file store. How each rule of the contract is kept:

- **One consistent read**: `read_log` is one statement (one snapshot, one round trip, one index range scan),
  returning the log's version and every record; no N+1 queries, however long the history.
- **Versions** are ``"<log_id>:<records>"``: every append adds records, and a deleted and recreated log gets a
  new ``log_id``, so a version read before never matches again.
- **Claims** are a compare-and-set on the log's row: it succeeds only if the row is still at the version read and
  unclaimed, or claimed by a process that died; otherwise `SessionConflictError`, at once. A claim holds no
  connection and no lock while the agent runs. It dies with its process through the process's *owner key* (a
  session advisory lock on a dedicated connection, see `_backend`), which PostgreSQL releases when the connection
  ends, so a killed replica never locks a session. Right after a holder dies, PostgreSQL may need a moment to
  notice that its connection closed: a claimant that finds the log held by another process waits up to
  ``claim_grace`` seconds (0.25 by default) for that process's key before it gives up with a conflict.
- **Appends** are one statement: it checks the claim token and the version (fencing: a process that lost its
  claim, to a takeover after its connection died, can never append), moves the version on and inserts the
  records, all or nothing. ``durable=True`` waits for the WAL flush (``synchronous_commit``); ``durable=False``
  does not, and still survives the death of the calling process.
- **Integrity**: every record carries the CRC-32 of its text; a record changed at rest (a manual edit, damage) is
  reported as `SessionCorruptError` naming the row, never returned.
"""

import json
import uuid
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from ...types.exceptions import NotJSONSerializableError, SessionConflictError, SessionCorruptError, SessionException
from ...types.session import Session
from .._ids import validate_id
from ..log_session_repository import LogSessionRepository
from ..session_repository import LogClaim, LogRef, StoredLog
from . import _sql
from ._backend import DEFAULT_POOL_SIZE, Backend, backend_for, import_psycopg
from ._errors import PostgresConfigError, PostgresStoreError, PostgresUnavailableError

_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
_HELD = "another process is running it right now"
_HELD_HERE = "another agent in this process is running it right now"
_STALE = "it was changed by another writer since this agent read it"
_LOST = "this claim was released or lost (another process took the log over after this one's connection died?)"
_KINDS = ("agent", "multi_agent")
T = TypeVar("T")


@dataclass
class _Claim:
    """What a `LogClaim` of this store holds: the log's row, this claim's token, whether it was released."""

    log_id: int
    token: uuid.UUID
    released: bool = False


class PostgresSessionRepository(LogSessionRepository):
    """Sessions and their logs in PostgreSQL (psycopg 3, psycopg_pool); implements the durable log contract.

    Many processes on many machines may open the same database: claims keep any log to one writer at a time, and
    a killed process's claims die with it. The session manager calls a repository synchronously from a worker
    thread (``blocking_io``), so a synchronous `psycopg_pool.ConnectionPool` serves it without ever blocking an
    event loop; repositories opened with the same DSN in one process share one pool.

    Args:
        dsn: A PostgreSQL connection string (``postgresql://user:password@host:5432/db``, or key=value form).
            Default: the ``STRANDSLIKE_SESSION_DSN`` environment variable.
        pool: A `psycopg_pool.ConnectionPool` to use instead of a DSN (it is never closed here).
        create_schema: Create (or upgrade) strandslike's tables on first use if they are missing (or older). False:
            refuse with `PostgresSchemaError` until ``python -m strandslike db migrate`` has run; for replicas
            whose database user may not change the schema.
        claim_grace: How long a claimant waits, at most, for a process holding the log to be seen dead before it
            raises `SessionConflictError` (a live holder makes the claim fail after this long, a dead one's claim
            is taken over as soon as PostgreSQL notices).
        pool_size: The most connections the pool opened for ``dsn`` keeps (ignored with ``pool``).

    Raises:
        MissingExtraError: psycopg is not installed (``pip install 'strandslike[postgres]'``).
        PostgresConfigError: Neither ``dsn``, ``pool`` nor the environment variable, both ``dsn`` and ``pool``,
            ``pool`` not a ``psycopg_pool.ConnectionPool``, or a bad ``claim_grace``/``pool_size`` (a `ValueError`
            and a `TypeError`).
    """

    blocking_io: ClassVar[bool] = True

    def __init__(
        self,
        dsn: str | None = None,
        *,
        pool: Any = None,
        create_schema: bool = True,
        claim_grace: float = 0.25,
        pool_size: int = DEFAULT_POOL_SIZE,
    ) -> None:
        super().__init__()
        if isinstance(claim_grace, bool) or not isinstance(claim_grace, int | float) or not 0 <= claim_grace <= 60:
            raise PostgresConfigError(f"claim_grace={claim_grace!r} must be a number of seconds from 0 to 60")
        if isinstance(pool_size, bool) or not isinstance(pool_size, int) or pool_size < 1:
            raise PostgresConfigError(f"pool_size={pool_size!r} must be a positive integer")
        self._backend: Backend = backend_for(dsn, pool, pool_size)
        self.create_schema = create_schema
        self.claim_grace = float(claim_grace)

    @property
    def where(self) -> str:
        """Where the sessions are stored (server, database, user; never the password)."""
        return self._backend.where

    @property
    def pool(self) -> Any:
        """The `psycopg_pool.ConnectionPool` this repository uses."""
        return self._backend.pool

    def check(self) -> None:
        """Connect and check the tables' schema version (creating or upgrading them if ``create_schema``).

        A server calls it at start, so that a wrong DSN or an incompatible database stops it at once rather than
        failing its first request.

        Raises:
            PostgresUnavailableError: The database cannot be reached.
            PostgresSchemaError: The schema is newer than this strandslike, missing (with ``create_schema=False``),
                or the database is not UTF-8.
        """
        self._backend.ensure_schema(create=self.create_schema)

    def _connection(self, doing: str) -> Any:
        self._backend.ensure_schema(create=self.create_schema)
        return self._backend.connection(doing)

    def _retried(self, doing: str, operation: Callable[[Any], T]) -> T:
        """Run an operation that is safe to repeat; once more on a fresh connection if its connection broke.

        A pooled connection may have died since its last use (the server restarted, a proxy dropped it); the pool
        finds out only by using it. Then the pool's idle connections are checked (the dead ones replaced) and the
        operation runs once more. Reads, claims (idempotent by their token) and releases are retried; appends are
        not (a lost answer leaves unknown whether they committed). A server that cannot be reached at all is
        reported at once.
        """
        psycopg, _ = import_psycopg()
        try:
            with self._connection(doing) as conn:
                return operation(conn)
        except PostgresUnavailableError as exc:
            if not isinstance(exc.__cause__, psycopg.OperationalError):
                raise
        with self._backend.errors(doing):
            self._backend.pool.check()  # drops every idle connection that died with this one
        with self._connection(doing) as conn:
            return operation(conn)

    def describe_log(self, ref: LogRef) -> str:
        """Return where a log is stored, for error messages."""
        return f"{self.where}, session {ref.session_id!r}, {ref.kind.replace('_', '-')} {ref.owner_id!r}"

    @staticmethod
    def _check_ref(ref: LogRef) -> None:
        if not isinstance(ref, LogRef) or ref.kind not in _KINDS:
            raise ValueError(f"{ref!r} is not a LogRef of an agent or multi_agent log")
        validate_id(ref.session_id, "session")
        validate_id(ref.owner_id, ref.kind)

    # -- sessions -----------------------------------------------------------------------------------------------------

    def create_session(self, session: Session, **kwargs: Any) -> Session:
        """Create the session; a session that already exists (a concurrent creator) is kept and returned."""
        session_id = validate_id(session.session_id, "session")
        record = _ENCODER.encode(session.to_dict())
        with self._connection(f"creating session {session_id!r}") as conn:
            created = conn.execute(_sql.CREATE_SESSION, {"session_id": session_id, "record": record}).fetchone()
        if created is not None:
            return session
        existing = self.read_session(session_id)
        return existing if existing is not None else session

    def read_session(self, session_id: str, **kwargs: Any) -> Session | None:
        """Read a session, or return None if there is none under this id.

        Raises:
            SessionCorruptError: The stored record is not a session record.
        """
        validate_id(session_id, "session")
        row = self._retried(
            f"reading session {session_id!r}",
            lambda conn: conn.execute(_sql.READ_SESSION, {"session_id": session_id}).fetchone(),
        )
        if row is None:
            return None
        where = f"{self.where}, strandslike_sessions row {session_id!r}"
        try:
            data = json.loads(row[0])
            if not isinstance(data, dict):
                raise TypeError(f"a {type(data).__name__}, not an object")
            return Session.from_dict(data)
        except (TypeError, ValueError, KeyError, RecursionError) as exc:
            raise SessionCorruptError(where, f"is not a session record ({exc})") from None

    def delete_session(self, session_id: str, **kwargs: Any) -> None:
        """Delete a session and every log in it, in one transaction (held claims become invalid).

        Raises:
            SessionException: The session does not exist.
        """
        validate_id(session_id, "session")
        with self._connection(f"deleting session {session_id!r}") as conn, conn.transaction():
            logs = conn.execute(_sql.DELETE_LOGS, {"session_id": session_id}).rowcount
            sessions = conn.execute(_sql.DELETE_SESSION, {"session_id": session_id}).rowcount
        if not logs and not sessions:
            raise SessionException(f"Session {session_id} does not exist")
        with self._seen_lock:
            for ref in [ref for ref in self._seen if ref.session_id == session_id]:
                del self._seen[ref]

    def list_sessions(self, **kwargs: Any) -> list[str]:
        """Return the ids of every stored session, sorted."""
        return self._retried("listing sessions", lambda conn: [row[0] for row in conn.execute(_sql.LIST_SESSIONS)])

    def list_logs(self, session_id: str, **kwargs: Any) -> list[LogRef]:
        """Return the logs of a session that hold records: agents, then orchestrators, each sorted by owner id."""
        validate_id(session_id, "session")
        rows = self._retried(
            f"listing the logs of session {session_id!r}",
            lambda conn: conn.execute(_sql.LIST_LOGS, {"session_id": session_id}).fetchall(),
        )
        refs = [LogRef(session_id, kind, owner) for kind, owner in rows]
        return sorted(refs, key=lambda ref: (ref.kind != "agent", ref.owner_id))

    # -- the log contract ---------------------------------------------------------------------------------------------

    def read_log(self, ref: LogRef, **kwargs: Any) -> StoredLog | None:
        """Read every record of a log and its version in one statement, or return None if it holds no records.

        Raises:
            SessionCorruptError: A record's checksum does not match its text, a record is missing, or a record is
                not a JSON object with a string ``"k"``.
        """
        self._check_ref(ref)
        params = {"session_id": ref.session_id, "kind": ref.kind, "owner_id": ref.owner_id}
        rows = self._retried(
            f"reading {self.describe_log(ref)}", lambda conn: conn.execute(_sql.READ_LOG, params).fetchall()
        )
        if not rows or rows[0][1] == 0:
            return None
        log_id, count = rows[0][0], rows[0][1]
        location = f"{self.where}, strandslike_records log_id={log_id}"
        texts = []
        for expected, (_, _, seq, text, crc) in enumerate(rows):
            if seq != expected or text is None:
                raise SessionCorruptError(
                    f"{location} ({self.describe_log(ref)})", f"record {expected} is missing (found seq {seq})"
                )
            if zlib.crc32(text.encode("utf-8")) != crc:
                raise SessionCorruptError(
                    f"{location}, seq={seq} ({self.describe_log(ref)})",
                    "the record does not match its checksum: it was changed or damaged after it was written",
                )
            texts.append(text)
        if len(texts) != count:
            raise SessionCorruptError(
                f"{location} ({self.describe_log(ref)})", f"holds {len(texts)} records, the log says {count}"
            )
        try:
            records = json.loads("[" + ",".join(texts) + "]")
        except (ValueError, RecursionError) as exc:
            raise SessionCorruptError(f"{location} ({self.describe_log(ref)})", f"holds invalid JSON ({exc})") from None
        for seq, record in enumerate(records):
            if type(record) is not dict or not isinstance(record.get("k"), str):
                raise SessionCorruptError(
                    f"{location}, seq={seq} ({self.describe_log(ref)})", "is not a log record (an object with a 'k')"
                )
        return StoredLog(records, f"{log_id}:{count}", location=location, unit="record")

    def claim_log(self, ref: LogRef, version: str | None, **kwargs: Any) -> LogClaim:
        """Claim a log if nobody (alive) holds it and it is still exactly at ``version``; never waits for a holder.

        Raises:
            SessionConflictError: Another process or agent holds the claim, or the log changed since ``version``.
        """
        self._check_ref(ref)
        parsed = _parse_version(ref, version)
        owner = self._backend.owner()
        token = uuid.uuid4()
        params = {
            "session_id": ref.session_id,
            "kind": ref.kind,
            "owner_id": ref.owner_id,
            "owner": owner,
            "token": token,
            "log_id": parsed[0] if parsed else None,
            "next_seq": parsed[1] if parsed else 0,
        }
        statement = _sql.CLAIM if parsed else _sql.CLAIM_NEW

        def claim(conn: Any) -> Any:
            row = conn.execute(statement, params).fetchone()
            return row if row is not None else self._claim_slowly(conn, ref, parsed, statement, params)

        row = self._retried(f"claiming {self.describe_log(ref)}", claim)
        return LogClaim(ref, version, _Claim(int(row[0]), token))

    def _claim_slowly(self, conn: Any, ref: LogRef, parsed: tuple[int, int] | None, statement: str, params: Any) -> Any:
        """Say why the claim failed, or take it over from a holder that died moments ago."""
        psycopg, _ = import_psycopg()
        state = conn.execute(_sql.CLAIM_STATE, params).fetchone()
        if state is None:
            raise _conflict(ref, _STALE)  # the log was deleted since it was read
        log_id, next_seq, holder = state
        if (parsed is None and next_seq != 0) or (parsed is not None and (log_id, next_seq) != parsed):
            raise _conflict(ref, _STALE)
        if holder == params["owner"]:
            raise _conflict(ref, _HELD_HERE)
        if holder is not None:
            try:
                with conn.transaction():
                    conn.execute("SELECT set_config('lock_timeout', %s, true)", (f"{int(self.claim_grace * 1000)}ms",))
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (holder,))  # the holder's key: free if it died
                    row = conn.execute(statement, params).fetchone()
            except psycopg.errors.LockNotAvailable:
                raise _conflict(ref, _HELD) from None
        else:
            row = conn.execute(statement, params).fetchone()  # released between the two statements
        if row is None:
            raise _conflict(ref, _HELD)
        return row

    def append_log(self, claim: LogClaim, records: Sequence[dict[str, Any]], *, durable: bool, **kwargs: Any) -> None:
        """Append records (all or none, in order) in one statement that checks the claim; update ``claim.version``.

        Raises:
            SessionConflictError: The claim was released or lost, or the log changed under it; nothing was written.
            NotJSONSerializableError: A record cannot be stored; nothing was written.
            ValueError: A record is not a JSON object with a string ``"k"``.
        """
        if not records:
            return
        texts, crcs = _encode_all(records)
        handle = claim.handle
        ref = claim.ref
        if not isinstance(handle, _Claim) or handle.released:
            raise _conflict(ref, _LOST)
        parsed = _parse_version(ref, claim.version)
        next_seq = parsed[1] if parsed else 0
        params = {
            "log_id": handle.log_id,
            "token": handle.token,
            "next_seq": next_seq,
            "count": len(texts),
            "records": texts,
            "crcs": crcs,
        }
        with self._connection(f"appending to {self.describe_log(ref)}") as conn:
            inserted = conn.execute(_sql.APPEND_DURABLE if durable else _sql.APPEND, params).rowcount
        if inserted != len(texts):
            raise _conflict(ref, _LOST)
        claim.version = f"{handle.log_id}:{next_seq + len(texts)}"

    def release_log(self, claim: LogClaim, **kwargs: Any) -> None:
        """Give the claim up (idempotent). If the database cannot be reached, the release is retried later."""
        handle = claim.handle
        if not isinstance(handle, _Claim) or handle.released:
            return
        handle.released = True
        try:
            self._retried(
                f"releasing {self.describe_log(claim.ref)}",
                lambda conn: conn.execute(_sql.RELEASE, {"log_id": handle.log_id, "token": handle.token}),
            )
        except PostgresStoreError:
            # The row still names this live process: retry on the next use of the store, so that the log does
            # not stay claimed until the process exits.
            self._backend.retry_release(handle.log_id, handle.token)


def _parse_version(ref: LogRef, version: str | None) -> tuple[int, int] | None:
    if version is None:
        return None
    log_id, sep, count = version.partition(":") if isinstance(version, str) else ("", "", "")
    if not sep or not log_id.isdigit() or not count.isdigit():
        raise _conflict(ref, f"version {version!r} is not a version of this store")
    return int(log_id), int(count)


def _encode_all(records: Sequence[dict[str, Any]]) -> tuple[list[str], list[int]]:
    texts: list[str] = []
    crcs: list[int] = []
    for record in records:
        if type(record) is not dict or not isinstance(record.get("k"), str):
            raise ValueError(f"{record!r:.80} is not a log record: a record must be a JSON object with a string 'k'")
        try:
            text = _ENCODER.encode(record)
            crcs.append(zlib.crc32(text.encode("utf-8")))
        except (TypeError, ValueError, UnicodeEncodeError, RecursionError) as exc:
            raise NotJSONSerializableError("A session record", record, f"{type(exc).__name__}: {exc}") from None
        texts.append(text)
    return texts, crcs


def _conflict(ref: LogRef, detail: str) -> SessionConflictError:
    return SessionConflictError(
        ref.session_id, ref.owner_id, f"the {ref.kind.replace('_', '-')} log cannot be claimed: {detail}"
    )
