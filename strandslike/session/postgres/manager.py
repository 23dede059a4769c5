"""`PostgresSessionManager`: a session manager whose sessions live in PostgreSQL, shared by any number of replicas."""

from typing import Any

from ..repository_session_manager import RepositorySessionManager
from ._errors import PostgresConfigError
from .repository import PostgresSessionRepository


class PostgresSessionManager(RepositorySessionManager):
    """Persist agents (and Graph/Swarm orchestrators) in PostgreSQL; any process on any machine can resume them.

    It keeps every guarantee `FileSessionManager` keeps (see ``docs/exactly-once.md``), across processes and
    machines: a resume claims the session before anything runs, so a second replica resuming the same interrupt
    at the same time gets `SessionConflictError` before any tool runs; a tool's intent is committed before its
    body starts; an interrupt is committed before the `AgentResult` that carries it is returned. Build one per
    request, as a stateless server does: managers with the same DSN share one connection pool per process.

    Example:
        ```python
        agent = Agent(model=..., session_manager=PostgresSessionManager("thread-42", dsn="postgresql://app@db/agents"))
        ```
    """

    def __init__(self, session_id: str, *, dsn: str | None = None, pool: Any = None, **kwargs: Any) -> None:
        """Open (or create) session ``session_id``.

        Args:
            session_id: The session.
            dsn: A PostgreSQL connection string; default: the ``STRANDSLIKE_SESSION_DSN`` environment variable.
            pool: A `psycopg_pool.ConnectionPool` to use instead of ``dsn``.
            **kwargs: ``session_repository``: a `PostgresSessionRepository` to use instead of ``dsn``/``pool``;
                ``create_schema``, ``claim_grace``, ``pool_size``: passed to the repository (see
                `PostgresSessionRepository`).

        Raises:
            ValueError: ``session_id`` is not a safe id.
            PostgresConfigError: No database was named, or conflicting arguments (a `ValueError`).
            MissingExtraError: psycopg is not installed (``pip install 'strandslike[postgres]'``).
            PostgresUnavailableError: The database cannot be reached.
            PostgresSchemaError: The database's schema is newer than this strandslike (or cannot be created).
        """
        repository = kwargs.pop("session_repository", None)
        options = {name: kwargs.pop(name) for name in ("create_schema", "claim_grace", "pool_size") if name in kwargs}
        if repository is None:
            repository = PostgresSessionRepository(dsn, pool=pool, **options)
        elif not isinstance(repository, PostgresSessionRepository):
            raise PostgresConfigError(
                f"session_repository must be a PostgresSessionRepository, not {type(repository).__name__}"
            )
        elif dsn is not None or pool is not None or options:
            raise PostgresConfigError("pass either session_repository= or dsn=/pool= (and their options), not both")
        super().__init__(session_id, repository, **kwargs)

    def describe_agent_storage(self, agent_id: str) -> str:
        """Return where an agent is stored, for error messages."""
        repository = self.session_repository
        assert isinstance(repository, PostgresSessionRepository)
        return f"{repository.where}, session {self.session_id!r}, agent {agent_id!r}"
