"""The errors of the PostgreSQL session store: typed, with a stable code, saying what was wrong and how to fix it."""

from ...types.exceptions import SessionException, StrandslikeError


class PostgresStoreError(StrandslikeError, SessionException):
    """The PostgreSQL session store could not do what was asked; the message says why and what to do.

    A `SessionException`, as every session failure is, so code that catches Strands' session errors catches it.
    """

    code = "POSTGRES_STORE_ERROR"


class PostgresUnavailableError(PostgresStoreError):
    """The database cannot be reached (it is down, refuses the connection, or the pool timed out).

    Nothing was written by the call that raised it, unless the connection was lost while a write committed:
    writes are transactions, so a write either happened whole or not at all, and a retry after a fresh restore
    sees which.
    """

    code = "POSTGRES_UNAVAILABLE"


class PostgresSchemaError(PostgresStoreError):
    """The database's schema cannot be used: newer than this strandslike, missing, or the database is not UTF-8."""

    code = "POSTGRES_SCHEMA"


class PostgresConfigError(StrandslikeError, TypeError, ValueError):
    """The store was opened with invalid arguments (no database named, both a DSN and a pool, a wrong pool type...).

    A `ValueError` and a `TypeError`, as Python raises either for a bad argument; nothing was opened.
    """

    code = "POSTGRES_CONFIG"


__all__ = ["PostgresConfigError", "PostgresSchemaError", "PostgresStoreError", "PostgresUnavailableError"]
