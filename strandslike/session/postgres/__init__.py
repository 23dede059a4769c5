"""Sessions in PostgreSQL, for many server replicas: ``pip install 'strandslike[postgres]'`` (psycopg 3).

```python
from strandslike import Agent
from strandslike.session.postgres import PostgresSessionManager

agent = Agent(model=..., session_manager=PostgresSessionManager("thread-42", dsn="postgresql://app@db/agents"))
```

- `PostgresSessionManager(session_id, *, dsn=None, pool=None, **kwargs)`: a `RepositorySessionManager` over
  `PostgresSessionRepository`.
- `PostgresSessionRepository(dsn=None, *, pool=None, ...)`: the durable log contract on PostgreSQL (claims that
  die with their process, fenced appends, one-statement restores; see its module).
- `migrate(dsn)`: create or upgrade the tables (also ``python -m strandslike db migrate --dsn DSN``; otherwise the
  first use does it); `SCHEMA_VERSION` is the version this code writes, and a database migrated by a newer
  strandslike is refused with `PostgresSchemaError`.

Importing this package does not import psycopg; using it without psycopg raises `MissingExtraError` naming the
extra. The design, and which side of the durable line each step of a run falls on, are in
``docs/exactly-once.md``.
"""

from ._admin import migrate, schema_version
from ._backend import DSN_VARIABLE, close_all, import_psycopg
from ._errors import PostgresConfigError, PostgresSchemaError, PostgresStoreError, PostgresUnavailableError
from ._schema import SCHEMA_VERSION
from .manager import PostgresSessionManager
from .repository import PostgresSessionRepository

__all__ = [  # noqa: RUF022 (plain sorted order, which tests/test_public_api.py checks)
    "DSN_VARIABLE",
    "PostgresConfigError",
    "PostgresSchemaError",
    "PostgresSessionManager",
    "PostgresSessionRepository",
    "PostgresStoreError",
    "PostgresUnavailableError",
    "SCHEMA_VERSION",
    "close_all",
    "import_psycopg",
    "migrate",
    "schema_version",
]
