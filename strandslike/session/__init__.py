"""Session management: persist agents so a fresh process can resume them (POSIX only: Linux, macOS)."""

from . import _posix  # noqa: F401  (first: on a platform without POSIX file locking, a clear error)
from ._records import StoredAgent
from .file_session_manager import FileSessionManager
from .log_session_repository import LogSessionRepository
from .memory_session_repository import InMemorySessionRepository
from .repository_session_manager import RepositorySessionManager
from .session_manager import SessionManager
from .session_repository import LogClaim, LogKind, LogRef, SessionRepository, StoredLog

__all__ = [
    "FileSessionManager",
    "InMemorySessionRepository",
    "LogClaim",
    "LogKind",
    "LogRef",
    "LogSessionRepository",
    "RepositorySessionManager",
    "SessionManager",
    "SessionRepository",
    "StoredAgent",
    "StoredLog",
]
