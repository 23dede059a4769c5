"""Schema administration for operators: migrate and inspect the tables (also ``python -m strandslike db``)."""

from typing import Any

from ._backend import backend_for
from ._schema import migrate as _migrate
from ._schema import read_version


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
