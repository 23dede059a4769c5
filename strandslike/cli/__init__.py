"""The command line: ``strandslike`` (the console script) or ``python -m strandslike``.

One argparse tree. Each command lives in its own module with an ``add_parser(subparsers, storage)`` function that
adds its parser and sets ``handler``, a function of the parsed arguments returning the exit code; `build_parser`
registers them, one line each. Help texts are plain text for a terminal.

Exit codes: 0 success; 1 refused (unknown session, existing import target, a resume the agent rejected);
2 bad input or unreadable data (usage errors, invalid JSON answers or ids, corrupt session files, a missing extra).
"""

import argparse
import os
import sys

from .._version import __version__
from ..session.file_session_manager import default_storage_dir
from ..types.exceptions import InvalidIdError, SessionCorruptError, StrandslikeError
from . import check, db, demo, import_strands, resume, serve, sessions, trust
from ._common import EXIT_FAILURE, EXIT_USAGE, CliError, err

DEFAULT_PROGRAM = "python -m strandslike"

DESCRIPTION = """\
strandslike: AI agents with human-in-the-loop interrupts and durable sessions.

Run the approval demo, serve an agent to AG-UI clients, answer the interrupts of a
stored session, or look at what a storage directory holds. Add --help after a
command for its options.
"""

EPILOG = """\
exit codes: 0 done; 1 refused (unknown session, a resume the agent rejected,
a session another process is running); 2 bad input or unreadable data (usage
errors, invalid JSON, corrupt files, a missing optional extra)
"""


def program_name(argv0: str | None = None) -> str:
    """Return how the user started the command line: ``strandslike`` (console script) or ``python -m strandslike``."""
    name = os.path.basename(argv0 if argv0 is not None else (sys.argv[0] if sys.argv else ""))
    stem = name[:-4] if name.lower().endswith(".exe") else name
    return stem if stem == "strandslike" else DEFAULT_PROGRAM


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    """Return the parser of every command.

    Args:
        prog: The program name shown in usage lines and printed commands (default: `program_name`).
    """
    prog = prog or program_name()
    parser = argparse.ArgumentParser(
        prog=prog, description=DESCRIPTION, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"strandslike {__version__}")
    parser.set_defaults(program=prog)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, title="commands")

    storage = argparse.ArgumentParser(add_help=False)
    storage.add_argument(
        "--storage-dir",
        metavar="DIR",
        default=str(default_storage_dir()),
        help="the FileSessionManager storage directory (default: %(default)s)",
    )
    # One line per command module; a module with subcommands returns its subparsers for others to extend.
    demo.add_parser(commands, storage)
    serve.add_parser(commands, storage)
    resume.add_parser(commands, storage)
    session_commands = sessions.add_parser(commands, storage)
    import_strands.add_parser(session_commands, storage)
    trust.add_parser(session_commands, storage)
    check.add_parser(session_commands, storage)
    db.add_parser(commands, storage)
    return parser


def main(argv: list[str] | None = None, *, prog: str | None = None) -> int:
    """Run a command; return its exit code.

    Args:
        argv: The arguments after the program name (default: ``sys.argv[1:]``).
        prog: The program name (default: `program_name`).
    """
    args = sys.argv[1:] if argv is None else list(argv)
    try:
        namespace = build_parser(prog).parse_args(args)
    except SystemExit as exc:  # --help, --version, or a usage error argparse already printed
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


__all__ = ["DEFAULT_PROGRAM", "build_parser", "main", "program_name"]
