"""Connections of the PostgreSQL session store: one pool per DSN (or the pool given), and this process's liveness.

**Pools.** Every `PostgresSessionRepository` (and so every `PostgresSessionManager`) of a process opened with the
same DSN shares one `psycopg_pool.ConnectionPool`, so a server that builds a session manager per request pays no
connection set-up per request. A pool passed in (``pool=``) is used as it is and never closed here.

**Liveness.** A claim is a row update (``claim_owner``, ``claim_token``), not a lock held on a connection, so a
claim costs no connection while the agent runs (an invocation may wait on a model for minutes). What makes a claim
die with its process is the *owner*: each process (per pool) holds a session-level advisory lock on a random
63-bit key on one dedicated connection, for its whole life, and writes that key into the rows it claims. A claim
whose owner's lock is free belongs to a dead process (its connection closed, so PostgreSQL released the lock) and
may be taken over; appends check the claim token in the same statement (fencing), so a process that lost its
claim can never append. The dedicated connection sets server-side TCP keepalives, so PostgreSQL also notices a
machine that vanished without closing its connections within about `KEEPALIVE_SECONDS`.

The advisory lock needs a real session: point the store at PostgreSQL directly or through a pooler in *session*
mode (PgBouncer's transaction mode would let another client inherit the lock).

**Forks.** A child forked without ``exec`` must not share the parent's connections: after a fork the child's copies
of every socket this module opened are pointed at ``/dev/null`` (so nothing the child does can reach or close the
parent's sessions), and the child opens its own pools and owner when it uses the store.
"""

import atexit
import contextlib
import logging
import os
import secrets
import select
import threading
import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ...types.exceptions import MissingExtraError
from ._errors import PostgresConfigError, PostgresStoreError, PostgresUnavailableError
from ._schema import ensure

if TYPE_CHECKING:
    import psycopg

logger = logging.getLogger(__name__)

DSN_VARIABLE = "STRANDSLIKE_SESSION_DSN"
KEEPALIVE_SECONDS = 30  # idle 15 s, then 3 probes 5 s apart
DEFAULT_POOL_SIZE = 8
CONNECT_TIMEOUT = 10  # seconds to establish a connection
POOL_TIMEOUT = 10.0  # seconds an operation waits for a pooled connection before PostgresUnavailableError


def import_psycopg() -> tuple[Any, Any]:
    """Return the ``psycopg`` and ``psycopg_pool`` modules.

    Raises:
        MissingExtraError: They are not installed (``pip install 'strandslike[postgres]'``).
    """
    try:
        import psycopg
        import psycopg_pool
    except ImportError as exc:
        raise MissingExtraError("The PostgreSQL session store", "postgres", exc.name) from exc
    return psycopg, psycopg_pool


def describe_dsn(dsn: str) -> str:
    """Return where a DSN points (host, port, database, user), without its password, for messages."""
    psycopg, _ = import_psycopg()
    try:
        params = psycopg.conninfo.conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "an invalid DSN"
    host = params.get("host") or params.get("hostaddr") or "the default host"
    port = f":{params['port']}" if params.get("port") else ""
    database = params.get("dbname") or "the default database"
    user = f" as {params['user']}" if params.get("user") else ""
    return f"PostgreSQL at {host}{port}, database {database}{user}"


def _neutralize(fd: int) -> None:
    """Point a descriptor inherited through ``fork`` at /dev/null.

    The child drops its reference to the socket (the parent's connection lives on), and whatever it writes there
    later (a Terminate message) goes nowhere.
    """
    if fd < 0:
        return
    null = os.open(os.devnull, os.O_RDWR)
    try:
        os.dup2(null, fd)
    except OSError:
        pass
    finally:
        os.close(null)


class Backend:
    """A pool and this process's owner key (with the connection holding its lock) for one database."""

    def __init__(self, pool: Any, where: str, *, owned: bool) -> None:
        self.pool = pool
        self.where = where
        self.owned = owned  # the pool was opened here (closed at exit) rather than passed in
        self.pid = os.getpid()
        self.forked = False
        self._lock = threading.Lock()
        self._owner: int | None = None
        self._liveness: psycopg.Connection[Any] | None = None
        self._schema_checked = False
        self.connections: weakref.WeakSet[Any] = weakref.WeakSet()  # sockets opened here, neutralized in a fork
        self.pending_releases: list[tuple[int, Any]] = []  # claims whose release failed: retried on next use

    # -- errors -------------------------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def errors(self, doing: str) -> Iterator[None]:
        """Turn psycopg's and the pool's errors into typed ones naming the database and what was being done."""
        psycopg, psycopg_pool = import_psycopg()
        if self.forked or os.getpid() != self.pid:
            raise PostgresStoreError(
                f"{doing}: this store's connections belong to the process that opened them (pid {self.pid}); this "
                "process was forked from it. Open a new PostgresSessionRepository or PostgresSessionManager here."
            )
        try:
            yield
        except (psycopg.OperationalError, psycopg.InterfaceError, psycopg_pool.PoolTimeout) as exc:
            raise PostgresUnavailableError(
                f"{doing}: {self.where} cannot be reached or lost the connection ({type(exc).__name__}: "
                f"{str(exc).strip()}). Check that the server is up and the DSN is right; a write that failed "
                "this way either committed whole or not at all, and a fresh restore shows which."
            ) from exc
        except psycopg.errors.UndefinedTable as exc:
            raise PostgresStoreError(
                f"{doing}: strandslike's tables are missing in {self.where} ({str(exc).strip()}); run "
                "`python -m strandslike db migrate --dsn DSN`."
            ) from exc
        except psycopg.errors.InsufficientPrivilege as exc:
            raise PostgresStoreError(
                f"{doing}: the database user lacks a privilege in {self.where} ({str(exc).strip()}); grant SELECT, "
                "INSERT, UPDATE and DELETE on the strandslike_* tables (and USAGE on their sequences)."
            ) from exc
        except psycopg.Error as exc:
            raise PostgresStoreError(f"{doing}: {self.where} refused it ({type(exc).__name__}: {exc})") from exc

    @contextlib.contextmanager
    def connection(self, doing: str) -> Iterator["psycopg.Connection[Any]"]:
        """Lend a pooled connection (autocommit) for one operation, with errors translated."""
        with self.errors(doing), self.pool.connection() as conn:
            if conn not in self.connections:
                self.connections.add(conn)
            if not conn.autocommit:
                conn.autocommit = True  # a pool passed in may lend connections in transaction mode
            yield conn

    # -- the schema ---------------------------------------------------------------------------------------------------

    def ensure_schema(self, *, create: bool) -> None:
        """Check the schema version once per pool; create or upgrade the tables if ``create``."""
        if self._schema_checked:
            return
        with self._lock:
            self._check_schema(create=create)

    def _check_schema(self, *, create: bool) -> None:
        if not self._schema_checked:
            with self.connection("checking strandslike's tables") as conn:
                ensure(conn, create=create)
                sync = conn.execute("SELECT current_setting('synchronous_commit')").fetchone()
            if sync is not None and sync[0] in ("off", b"off"):
                logger.warning(
                    "%s | synchronous_commit is off: durable appends (tool intents, interrupted runs) commit without "
                    "waiting for the WAL flush, so a crash of the database server may lose them; set it to on",
                    self.where,
                )
            self._schema_checked = True

    # -- the owner ----------------------------------------------------------------------------------------------------

    def owner(self) -> int:
        """Return this process's owner key, (re)connecting its liveness connection if it was lost."""
        self.flush_releases()
        with self._lock:
            if self._owner is not None and self._liveness is not None and self._alive(self._liveness):
                return self._owner
            self._close_liveness()
            with self.errors("taking this process's claim owner key"):
                self._owner, self._liveness = self._new_owner()
            return self._owner

    def _new_owner(self) -> "tuple[int, psycopg.Connection[Any]]":
        psycopg, _ = import_psycopg()
        conninfo, kwargs = pool_params(self.pool)
        conn = psycopg.Connection.connect(conninfo, **{**kwargs, "autocommit": True})
        self.connections.add(conn)
        try:
            for name, value in (
                ("tcp_keepalives_idle", "15"),
                ("tcp_keepalives_interval", "5"),
                ("tcp_keepalives_count", "3"),
                ("idle_session_timeout", "0"),
                ("statement_timeout", "0"),
            ):
                conn.execute("SELECT set_config(%s, %s, false)", (name, value))
            while True:
                owner = secrets.randbits(63)
                row = conn.execute("SELECT pg_try_advisory_lock(%s)", (owner,)).fetchone()
                if row is not None and row[0]:
                    return owner, conn
        except BaseException:
            conn.close()
            raise

    @staticmethod
    def _alive(conn: "psycopg.Connection[Any]") -> bool:
        """Whether the liveness connection still stands (its socket has nothing to read: no EOF, no error)."""
        if conn.closed or conn.broken:
            return False
        try:
            readable, _, _ = select.select([conn.fileno()], [], [], 0)
        except (OSError, ValueError):
            return False
        if not readable:
            return True
        try:  # a notice, or the end of the connection: find out which
            conn.execute("SELECT 1")
            return True
        except Exception:
            return False

    def _close_liveness(self) -> None:
        if self._liveness is not None:
            with contextlib.suppress(Exception):
                self._liveness.close()
        self._liveness, self._owner = None, None

    # -- releases that failed -----------------------------------------------------------------------------------------

    def retry_release(self, log_id: int, token: Any) -> None:
        """Remember a release that failed; it is retried before the next claim of this process."""
        logger.warning("%s | log_id=<%s> | releasing a claim failed; retried on the next claim", self.where, log_id)
        with self._lock:
            self.pending_releases.append((log_id, token))

    def flush_releases(self) -> None:
        """Retry the releases of claims that failed (a lost connection), so no log stays claimed by a live process."""
        if not self.pending_releases:
            return
        from ._sql import RELEASE

        with self._lock:
            pending, self.pending_releases = self.pending_releases, []
        for log_id, token in pending:
            try:
                with self.connection("releasing a claim") as conn:
                    conn.execute(RELEASE, {"log_id": log_id, "token": token})
            except PostgresStoreError:
                with self._lock:
                    self.pending_releases.append((log_id, token))

    # -- the end ------------------------------------------------------------------------------------------------------

    def close(self) -> None:
        """Close the liveness connection (releasing the owner key) and the pool if it was opened here."""
        with self._lock:
            self._close_liveness()
        if self.owned:
            with contextlib.suppress(Exception):
                self.pool.close()

    def after_fork(self) -> None:
        """In a forked child: forget every connection of the parent without touching it."""
        self.forked = True
        for conn in list(self.connections):
            with contextlib.suppress(Exception):
                _neutralize(conn.pgconn.socket)
        if self._liveness is not None:
            with contextlib.suppress(Exception):
                _neutralize(self._liveness.pgconn.socket)


def pool_params(pool: Any) -> tuple[str, dict[str, Any]]:
    """Return the connection string and keyword arguments a pool connects with (either may be a callable)."""
    conninfo = pool.conninfo() if callable(pool.conninfo) else pool.conninfo
    kwargs = pool.kwargs() if callable(pool.kwargs) else pool.kwargs
    return str(conninfo or ""), dict(kwargs or {})


_registry_lock = threading.Lock()
_by_dsn: dict[tuple[str, int], Backend] = {}
_by_pool: "weakref.WeakKeyDictionary[Any, Backend]" = weakref.WeakKeyDictionary()


def backend_for(dsn: str | None, pool: Any, pool_size: int) -> Backend:
    """Return the shared `Backend` of a DSN (opening its pool on first use) or of a pool passed in.

    Raises:
        MissingExtraError: psycopg is not installed.
        PostgresConfigError: Neither or both of ``dsn`` and ``pool`` were given, or either is of the wrong type.
    """
    _, psycopg_pool = import_psycopg()
    if pool is not None:
        if dsn is not None:
            raise PostgresConfigError("pass either dsn= or pool= to the PostgreSQL session store, not both")
        if isinstance(pool, psycopg_pool.AsyncConnectionPool):
            raise PostgresConfigError(
                "the PostgreSQL session store takes a psycopg_pool.ConnectionPool: session managers call their "
                "store from worker threads (never on the event loop), where a synchronous pool is the direct fit. "
                "Pass ConnectionPool(dsn) or simply dsn=..."
            )
        if not isinstance(pool, psycopg_pool.ConnectionPool):
            raise PostgresConfigError(f"pool must be a psycopg_pool.ConnectionPool, not {type(pool).__name__}")
        with _registry_lock:
            found = _by_pool.get(pool)
            if found is None or found.forked:
                found = _by_pool[pool] = Backend(pool, describe_dsn(pool_params(pool)[0]), owned=False)
        return found
    if dsn is None:
        dsn = os.environ.get(DSN_VARIABLE) or None
        if dsn is None:
            raise PostgresConfigError(
                f"the PostgreSQL session store needs a database: pass dsn='postgresql://user@host/db' or pool=..., "
                f"or set the {DSN_VARIABLE} environment variable"
            )
    if not isinstance(dsn, str):
        raise PostgresConfigError(f"dsn must be a string (a PostgreSQL connection string), not {type(dsn).__name__}")
    key = (dsn, pool_size)
    with _registry_lock:
        found = _by_dsn.get(key)
        if found is not None and not found.forked:
            return found
        where = describe_dsn(dsn)
        probe = Backend(None, where, owned=False)
        with probe.errors("connecting"):  # at once, with libpq's own words, rather than after the pool's timeout
            psycopg, _ = import_psycopg()
            psycopg.Connection.connect(dsn, connect_timeout=CONNECT_TIMEOUT).close()
        opened = psycopg_pool.ConnectionPool(
            dsn,
            min_size=1,
            max_size=pool_size,
            kwargs={"autocommit": True},
            name=f"strandslike {where}",
            timeout=POOL_TIMEOUT,
            open=False,
        )
        backend = Backend(opened, where, owned=True)
        with backend.errors("opening a connection pool"):
            opened.open(wait=False)
        _by_dsn[key] = backend
        return backend


def close_all() -> None:
    """Close every pool this module opened and every owner connection (at exit, or in tests)."""
    with _registry_lock:
        backends = [*_by_dsn.values(), *_by_pool.values()]
        _by_dsn.clear()
        _by_pool.clear()
    for backend in backends:
        if not backend.forked and backend.pid == os.getpid():
            backend.close()


def _after_fork_in_child() -> None:
    backends = [*_by_dsn.values(), *_by_pool.values()]
    _by_dsn.clear()
    _by_pool.clear()
    for backend in backends:
        backend.after_fork()


atexit.register(close_all)
os.register_at_fork(after_in_child=_after_fork_in_child)
