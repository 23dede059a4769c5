"""The durable log contract's conformance suite, run on the stores strandslike ships."""

from pathlib import Path
from typing import Any

import pytest

from strandslike.session import FileSessionManager, InMemorySessionRepository, SessionRepository
from strandslike.session.session_repository import LogRef
from strandslike.testing.session_conformance import SessionRepositoryContract


def open_file_store(argument: dict[str, Any]) -> FileSessionManager:
    """Build the file store in a child process (for the holder-death test)."""
    return FileSessionManager("conformance-child", storage_dir=argument["storage_dir"])


class TestInMemoryStore(SessionRepositoryContract):
    @pytest.fixture
    def repository(self) -> SessionRepository:
        return InMemorySessionRepository()


class TestFileStore(SessionRepositoryContract):
    @pytest.fixture
    def repository(self, tmp_path: Path) -> SessionRepository:
        return FileSessionManager("conformance", storage_dir=tmp_path)

    def open_again(self, repository: SessionRepository) -> SessionRepository:
        assert isinstance(repository, FileSessionManager)
        return FileSessionManager("conformance", storage_dir=repository.storage_dir)

    def child_store(self, repository: SessionRepository) -> tuple[str, Any]:
        assert isinstance(repository, FileSessionManager)
        return "test_session_conformance:open_file_store", {"storage_dir": str(repository.storage_dir)}

    def damage(self, repository: SessionRepository, ref: LogRef) -> bool:
        assert isinstance(repository, FileSessionManager)
        path = repository.log_path(ref)
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0x04  # a flipped bit in a record in the middle
        path.write_bytes(bytes(data))
        return True
