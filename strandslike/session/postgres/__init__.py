"""Sessions in PostgreSQL, for many server replicas: ``pip install 'strandslike[postgres]'`` (psycopg 3).

```python
from strandslike import Agent
from strandslike.session.postgres import PostgresSessionManager

agent = Agent(model=..., session_manager=PostgresSessionManager("thread-42", dsn="postgresql://app@db/agents"))
```

- `PostgresSessionManager(session_id, *, dsn=None, pool=None, **kwargs)`: a `RepositorySessionManager` over
- `PostgresSessionRepository(dsn=None, *, pool=None, ...)`: the durable log contract on PostgreSQL (claims that
  die with their process, fenced appends, one-statement restores; see its module).
- `migrate(dsn)`: create or upgrade the tables (also ``python -m strandslike db migrate --dsn DSN``; otherwise the
  first use does it); `SCHEMA_VERSION` is the version this code writes, and a database migrated by a newer
  strandslike is refused with `PostgresSchemaError`.

Importing this package does not import psycopg; using it without psycopg raises `MissingExtraError` naming the
extra. The design, and which side of the durable line each step of a run falls on, are in
``docs/exactly-once.md``.
"""

from typing import Any

from ._backend import DSN_VARIABLE, backend_for, close_all, import_psycopg
from ._errors import PostgresSchemaError, PostgresStoreError, PostgresUnavailableError
from ._schema import SCHEMA_VERSION, read_version
from ._schema import migrate as _migrate
from .manager import PostgresSessionManager
from .repository import PostgresSessionRepository


def migrate(dsn: str | None = None, *, pool: Any = None) -> tuple[int | None, int]:
    """Create or upgrade strandslike's tables in one transaction; return the schema version before and after.

    Safe to run while replicas start or run (migrations take a lock and are transactional).

    Args:
        dsn: A PostgreSQL connection string (default: ``STRANDSLIKE_SESSION_DSN``).
        pool: A `psycopg_pool.ConnectionPool` instead.

    Raises:
        PostgresSchemaError: The database holds a newer schema than this strandslike knows, or is not UTF-8.
        PostgresUnavailableError: The database cannot be reached.
    """
    backend = backend_for(dsn, pool, 2)
    with backend.connection("migrating strandslike's tables") as conn:
        return _migrate(conn)


def schema_version(dsn: str | None = None, *, pool: Any = None) -> int | None:
    """Return the schema version the database holds (None: strandslike's tables do not exist there)."""
    backend = backend_for(dsn, pool, 2)
    with backend.connection("reading strandslike's schema version") as conn:
        return read_version(conn)


__all__ = [
    "DSN_VARIABLE",
    "SCHEMA_VERSION",
    "PostgresSchemaError",
    "PostgresSessionManager",
    "PostgresSessionRepository",
    "PostgresStoreError",
    "PostgresUnavailableError",
    "close_all",
    "import_psycopg",
    "migrate",
    "schema_version",
]
