"""Fixtures shared by the whole test suite."""

import os
from collections.abc import Iterator
from pathlib import Path

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


_REPOSITORY = Path(__file__).resolve().parent.parent
# Caches the tools themselves write (pytest's own cache is written after this check).
_TOOL_CACHES = {".pytest_cache", ".mypy_cache", ".ruff_cache", "__pycache__", ".coverage"}


def _entries(directory: Path) -> set[str]:
    return {name for name in os.listdir(directory) if name not in _TOOL_CACHES and not name.startswith(".coverage.")}


@pytest.fixture(scope="session", autouse=True)
def no_files_left_in_the_repository() -> Iterator[None]:
    """Fail the run if a test leaves files in the repository root or the current directory.

    Tests write under ``tmp_path`` only; something new here means a path went astray (a DSN used as a storage
    directory once made a directory per test database in the current directory).
    """
    places = {_REPOSITORY, Path.cwd().resolve()}
    before = {place: _entries(place) for place in places}
    yield
    for place, names in before.items():
        new = sorted(_entries(place) - names)
        assert not new, f"the tests left {len(new)} new entries in {place}: {new[:5]}"
