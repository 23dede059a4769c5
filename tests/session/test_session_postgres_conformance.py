"""The session store contract (`strandslike.testing.session_conformance`) on PostgreSQL, unchanged."""

from typing import Any

import pytest
from pg_cluster import new_database
from pg_support import damage_record

from strandslike.session import LogRef, SessionRepository
from strandslike.session.postgres import PostgresSessionRepository
from strandslike.testing.session_conformance import SessionRepositoryContract


@pytest.fixture(scope="module")
def conformance_dsn(postgres_server: str) -> str:
    return new_database(postgres_server, "conformance")


class TestPostgresStore(SessionRepositoryContract):
    @pytest.fixture
    def repository(self, conformance_dsn: str) -> SessionRepository:
        return PostgresSessionRepository(conformance_dsn)

    def open_again(self, repository: SessionRepository) -> SessionRepository:
        # Another handle on the same database, as another process opens it: its own pool and claim owner.
        assert isinstance(repository, PostgresSessionRepository)
        return PostgresSessionRepository(repository.pool.conninfo, pool_size=3)

    def child_store(self, repository: SessionRepository) -> tuple[str, Any]:
        assert isinstance(repository, PostgresSessionRepository)
        return "pg_support:open_store", {"dsn": repository.pool.conninfo}

    def damage(self, repository: SessionRepository, ref: LogRef) -> bool:
        assert isinstance(repository, PostgresSessionRepository)
        damage_record(repository.pool.conninfo, ref.session_id, ref.owner_id, 1)
        return True
