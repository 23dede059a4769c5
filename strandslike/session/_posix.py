"""Sessions are POSIX-only: say so clearly where the platform lacks what they rely on.

The file store takes an advisory ``flock`` per agent (non-blocking, held for an invocation, paired with a check of
the log's version), relies on ``O_APPEND`` writes, atomic ``rename`` over files that may be open, ``fsync`` of
directories and owner-only modes. Windows has none of these in the same form, and making only the lock portable
(e.g. with the filelock library) would not make the rest safe, so strandslike declares sessions POSIX-only (Linux,
macOS) and refuses to import them elsewhere with a clear error instead of ``No module named 'fcntl'``.
"""

import sys

from ..types.exceptions import UnsupportedPlatformError


def require_posix() -> None:
    """Raise `UnsupportedPlatformError` unless this platform offers POSIX file locking.

    Raises:
        UnsupportedPlatformError: ``fcntl`` (POSIX advisory locks) is not available, e.g. on Windows.
    """
    try:
        import fcntl  # noqa: F401  (only its presence matters here)
    except ImportError:
        raise UnsupportedPlatformError(
            f"strandslike's sessions need POSIX file locking (fcntl.flock), atomic renames and directory fsync, "
            f"which this platform ({sys.platform}) does not offer: sessions, the command line and the AG-UI server "
            "run on Linux and macOS. On Windows, use WSL. Agents without a session manager work everywhere."
        ) from None


require_posix()  # on import: `strandslike.session` imports this module before the file store's `import fcntl`
