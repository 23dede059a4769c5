"""`SessionStore`: a storage directory for file sessions in a test, with the managers it opened."""

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..session.file_session_manager import FileSessionManager


class SessionStore(os.PathLike[str]):
    """A storage directory for `FileSessionManager` sessions that closes what it opened.

    It is a path (``os.fspath(store)``, ``store / "x"``, ``FileSessionManager(id, storage_dir=store)`` all work),
    plus `manager`, which opens a session in it and remembers to close it, and `session_ids`.

    Args:
        path: The directory; created if missing.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self._managers: list[FileSessionManager] = []

    def __fspath__(self) -> str:
        return str(self.path)

    def __str__(self) -> str:
        return str(self.path)

    def __repr__(self) -> str:
        return f"SessionStore({str(self.path)!r})"

    def __truediv__(self, other: str | os.PathLike[str]) -> Path:
        return self.path / other

    def manager(self, session_id: str = "test", **kwargs: Any) -> "FileSessionManager":
        """Open (or create) session ``session_id`` here; it is closed by `close` (at the end of the test).

        A new manager per call, as a server builds one per request: build a new agent on it to restore the session.

        Args:
            session_id: The session to open.
            **kwargs: Passed to `FileSessionManager`.
        """
        from ..session.file_session_manager import FileSessionManager

        manager = FileSessionManager(session_id, storage_dir=self.path, **kwargs)
        self._managers.append(manager)
        return manager

    def session_ids(self) -> list[str]:
        """Return the ids of the sessions stored here, sorted."""
        from ..session.file_session_manager import SESSION_PREFIX

        return sorted(
            entry.name[len(SESSION_PREFIX) :]
            for entry in self.path.iterdir()
            if entry.name.startswith(SESSION_PREFIX) and (entry / "session.json").is_file()
        )

    def close(self) -> None:
        """Close every manager `manager` opened (releasing their file locks)."""
        managers, self._managers = self._managers, []
        for manager in managers:
            manager.close()


__all__ = ["SessionStore"]
