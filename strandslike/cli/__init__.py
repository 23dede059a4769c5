"""The operator's command line: ``python -m strandslike sessions ...`` and ``python -m strandslike resume ...``.

Exit codes: 0 success; 1 refused (unknown session, existing import target, a resume the agent rejected);
2 bad input or unreadable data (usage errors, invalid JSON answers or ids, corrupt session files).
"""

import argparse
import sys

from ..session.file_session_manager import default_storage_dir
from ..types.exceptions import InvalidIdError, SessionCorruptError, StrandslikeError
from . import import_strands, resume, sessions, trust
from ._common import EXIT_FAILURE, EXIT_USAGE, CliError, err


def build_parser() -> argparse.ArgumentParser:
    """Return the parser of every subcommand (``demo`` only names itself: it parses its own options)."""
    parser = argparse.ArgumentParser(prog="python -m strandslike", description=__doc__)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    commands.add_parser("demo", add_help=False, help="the approval scenario on the scripted model (see demo --help)")

    storage = argparse.ArgumentParser(add_help=False)
    storage.add_argument(
        "--storage-dir",
        metavar="DIR",
        default=str(default_storage_dir()),
        help="the FileSessionManager storage directory (default: %(default)s)",
    )
    sessions_parser = commands.add_parser("sessions", help="inspect stored sessions, or import strands-agents ones")
    session_commands = sessions_parser.add_subparsers(dest="sessions_command", metavar="SUBCOMMAND", required=True)
    sessions.add_parsers(session_commands, storage)
    import_strands.add_parser(session_commands, storage)
    trust.add_parser(session_commands, storage)
    resume.add_parser(commands, storage)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run a command; return its exit code.

    Args:
        argv: The arguments after the program name (default: ``sys.argv[1:]``).
    """
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        if args[:1] == ["demo"]:
            from .._demo import run

            return run(args[1:])
        namespace = build_parser().parse_args(args)
    except SystemExit as exc:  # --help, or a usage error argparse already printed
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    try:
        code: int = namespace.handler(namespace)
    except CliError as exc:
        err(f"error: {exc}")
        return exc.exit_code
    except (SessionCorruptError, InvalidIdError) as exc:
        err(f"error: {exc}")
        return EXIT_USAGE
    except StrandslikeError as exc:  # any other typed refusal: one line, never a traceback
        err(f"error: {exc}")
        return EXIT_FAILURE
    return code


__all__ = ["build_parser", "main"]
