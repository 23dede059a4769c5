"""Fixtures shared by the whole test suite."""

import os
from collections.abc import Iterator

import pytest
from pg_cluster import ClusterUnavailable, postgres_dsn


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The DSN of a PostgreSQL server: a throwaway cluster started once per test session (see `pg_cluster`).

    Outside CI, tests that use it are skipped with the reason when no server can be started; inside CI (``CI``
    set) that fails them instead, so PostgreSQL tests can never silently stop running.
    """
    try:
        with postgres_dsn() as dsn:
            yield dsn
    except ClusterUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"PostgreSQL is required in CI but could not be started: {exc}")
        pytest.skip(f"no PostgreSQL server could be started: {exc}")
