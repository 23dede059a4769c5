"""``python -m strandslike serve``: serve an agent to AG-UI clients over HTTP (server-sent events).

The factory is your own code (``module:function``), called as ``factory(session_manager=...)`` for every
request, exactly as ``python -m strandslike resume --agent`` calls it; the default is the demo's approval agent.
Each AG-UI ``threadId`` is a session in ``--storage-dir``. The server listens on the loopback interface unless
``--host`` says otherwise: anyone who can reach it can run the agent and answer its interrupts.
"""

import argparse
import ipaddress
from typing import Any

from ..session.file_session_manager import default_storage_dir
from ._common import EXIT_OK, EXIT_USAGE, CliError, err
from ._model_option import ModelOptionError, add_model_option, build_model, with_model
from .resume import load_factory

DEFAULT_AGENT = "strandslike._demo:session_agent"


def build_parser() -> argparse.ArgumentParser:
    """Return the parser of ``serve``."""
    parser = argparse.ArgumentParser(
        prog="python -m strandslike serve", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--agent",
        default=DEFAULT_AGENT,
        metavar="MODULE:FACTORY",
        help="function building the agent from a session_manager (default: %(default)s)",
    )
    parser.add_argument(
        "--storage-dir",
        metavar="DIR",
        default=str(default_storage_dir()),
        help="where the threads' sessions are stored (default: %(default)s)",
    )
    add_model_option(parser)
    parser.add_argument("--host", default="127.0.0.1", help="interface to listen on (default: %(default)s)")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (default: %(default)s)")
    parser.add_argument(
        "--log-level",
        default="info",
        choices=["critical", "error", "warning", "info", "debug"],
        help="uvicorn's log level (default: %(default)s)",
    )
    return parser


def serve(argv: list[str]) -> int:
    """Run the AG-UI server until interrupted; return the process exit code.

    Args:
        argv: The arguments after ``serve``.

    Returns:
        0 once the server stopped; 2 for bad arguments, a factory that cannot be imported, or a missing
        ``agui`` extra; uvicorn's exit code if it could not start (e.g. the port is taken).
    """
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help, or a usage error argparse already printed
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    try:
        factory = with_model(load_factory(args.agent), build_model(args.model) if args.model else None)
    except CliError as exc:
        err(f"error: {exc}")
        return exc.exit_code
    except ModelOptionError as exc:
        err(f"error: {exc}")
        return EXIT_USAGE
    try:
        import uvicorn

        from ..protocol.agui import create_app
    except ImportError as exc:
        err(f"error: {exc}")
        return EXIT_USAGE
    if not _is_loopback(args.host):
        err(
            f"warning: listening on {args.host}, not on the loopback interface: anyone who can reach this address "
            "can run the agent and answer its interrupts; there is no authentication."
        )
    app = create_app(factory, storage_dir=args.storage_dir)
    err(f"AG-UI server for {args.agent}, sessions in {args.storage_dir}: POST http://{args.host}:{args.port}/")
    try:
        uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    except SystemExit as exc:  # uvicorn exits when it cannot bind
        return _exit_code(exc.code)
    return EXIT_OK


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _exit_code(code: Any) -> int:
    if isinstance(code, int):
        return code
    return EXIT_OK if code is None else 1


__all__ = ["DEFAULT_AGENT", "build_parser", "serve"]
