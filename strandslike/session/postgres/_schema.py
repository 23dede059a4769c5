"""The tables of the PostgreSQL session store, their version, and the migrations that create and upgrade them.

Tables (the names are unqualified: choose a schema with the connection's ``search_path``, e.g.
``postgresql://.../db?options=-csearch_path%3Dagents``):

- ``strandslike_schema (version integer)``: one row, the version of the tables below (`SCHEMA_VERSION`).
- ``strandslike_sessions``: one row per session, its record (`Session.to_dict()`) as JSON text.
- ``strandslike_logs``: one row per log (an agent or an orchestrator of a session): ``log_id`` (never reused, so a
  deleted and recreated log never matches a version read before), ``next_seq`` (how many records it holds; with
  ``log_id`` it is the log's version), and the claim: ``claim_owner`` (the process holding it, see `_backend`),
  ``claim_token`` (this claim; every append checks it: fencing) and ``claimed_at``.
- ``strandslike_records``: ``(log_id, seq)`` → the record as the compact JSON text it was encoded to, and its
  CRC-32. Text, not ``jsonb``: ``jsonb`` reorders keys and refuses NUL characters, and records must read back equal.

Indexes fit the queries: a log is found by ``(session_id, kind, owner_id)`` (unique; also lists a session's logs),
its records are read in one index range scan of the primary key ``(log_id, seq)``, sessions are listed by their
primary key. ``strandslike_logs`` leaves room in its pages (``fillfactor``) so the frequent updates of a log's
row (claims, appends) stay on the same page and touch no index (HOT updates).

Migrations run in one transaction under a transaction-level advisory lock, so two replicas starting together
never both apply one, and a failed migration leaves the database as it was.
"""

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._errors import PostgresSchemaError

if TYPE_CHECKING:
    import psycopg

SCHEMA_VERSION = 1
MIGRATION_LOCK = 0x73746C6B6D696772  # "stlkmigr": the advisory lock key migrations serialize on

_VERSION_1 = """
CREATE TABLE strandslike_sessions (
    session_id text PRIMARY KEY,
    record text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE strandslike_logs (
    log_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('agent', 'multi_agent')),
    owner_id text NOT NULL,
    next_seq bigint NOT NULL DEFAULT 0 CHECK (next_seq >= 0),
    claim_owner bigint,
    claim_token uuid,
    claimed_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT strandslike_logs_key UNIQUE (session_id, kind, owner_id)
) WITH (fillfactor = 70);
CREATE TABLE strandslike_records (
    log_id bigint NOT NULL REFERENCES strandslike_logs (log_id) ON DELETE CASCADE,
    seq bigint NOT NULL,
    record text NOT NULL,
    crc bigint NOT NULL,
    PRIMARY KEY (log_id, seq)
);
"""

# Migration n (1-based) brings the tables from version n-1 to version n.
MIGRATIONS: tuple[str, ...] = (_VERSION_1,)
assert len(MIGRATIONS) == SCHEMA_VERSION


def _too_new(found: int) -> PostgresSchemaError:
    return PostgresSchemaError(
        f"the database's strandslike tables are at schema version {found}, newer than this strandslike knows "
        f"(version {SCHEMA_VERSION}): a newer strandslike migrated it. Upgrade strandslike on this machine to the "
        "version the other replicas run; nothing was read or written."
    )


def read_version(conn: "psycopg.Connection[Any]") -> int | None:
    """Return the schema version the database holds, or None if strandslike's tables were never created."""
    row = conn.execute("SELECT to_regclass('strandslike_schema') IS NOT NULL").fetchone()
    if row is None or not row[0]:
        return None
    found = conn.execute("SELECT max(version) FROM strandslike_schema").fetchone()
    return None if found is None or found[0] is None else int(found[0])


def check_encoding(conn: "psycopg.Connection[Any]") -> None:
    """Refuse a database that does not store text as UTF-8 (records and ids are Unicode text).

    Raises:
        PostgresSchemaError: The database's encoding is not UTF8.
    """
    row = conn.execute("SELECT pg_encoding_to_char(encoding) FROM pg_database WHERE datname = current_database()")
    found = row.fetchone()
    encoding = found[0] if found else None
    if isinstance(encoding, bytes):
        encoding = encoding.decode("ascii", "replace")
    if encoding != "UTF8":
        raise PostgresSchemaError(
            f"the database's encoding is {encoding}, but sessions hold Unicode text: use a database created with "
            "ENCODING 'UTF8' (CREATE DATABASE agents ENCODING 'UTF8' TEMPLATE template0); nothing was written."
        )


def migrate(conn: "psycopg.Connection[Any]", *, log: Callable[[str], None] | None = None) -> tuple[int | None, int]:
    """Create or upgrade strandslike's tables to `SCHEMA_VERSION`, in one transaction; return (before, after).

    Safe to run from several processes at once: they serialize on an advisory lock, and the later ones find the
    work done. ``conn`` must be in autocommit mode (the migration opens its own transaction).

    Raises:
        PostgresSchemaError: The database is newer than this code, or not UTF-8.
    """
    check_encoding(conn)
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        conn.execute("CREATE TABLE IF NOT EXISTS strandslike_schema (version integer NOT NULL)")
        row = conn.execute("SELECT max(version) FROM strandslike_schema").fetchone()
        before = None if row is None or row[0] is None else int(row[0])
        current = before or 0
        if current > SCHEMA_VERSION:
            raise _too_new(current)
        for number in range(current + 1, SCHEMA_VERSION + 1):
            conn.execute(MIGRATIONS[number - 1].encode())  # several statements: the simple query protocol
            if log is not None:
                log(f"applied migration {number}")
        if before is None:
            conn.execute("INSERT INTO strandslike_schema (version) VALUES (%s)", (SCHEMA_VERSION,))
        elif before < SCHEMA_VERSION:
            conn.execute("UPDATE strandslike_schema SET version = %s", (SCHEMA_VERSION,))
    return before, SCHEMA_VERSION


def ensure(conn: "psycopg.Connection[Any]", *, create: bool) -> None:
    """Check that the tables are at `SCHEMA_VERSION`; create or upgrade them if ``create``, else refuse.

    Raises:
        PostgresSchemaError: The schema is newer than this code, or older (or missing) and ``create`` is False,
            or the database is not UTF-8.
    """
    found = read_version(conn)
    if found == SCHEMA_VERSION:
        return
    if found is not None and found > SCHEMA_VERSION:
        raise _too_new(found)
    if not create:
        state = "do not exist" if found is None else f"are at schema version {found}"
        raise PostgresSchemaError(
            f"strandslike's tables {state}, and this store was opened with create_schema=False; run "
            f"`python -m strandslike db migrate --dsn DSN` (version {SCHEMA_VERSION}) first."
        )
    migrate(conn)
