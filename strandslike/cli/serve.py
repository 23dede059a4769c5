"""``python -m strandslike serve``: serve an agent to AG-UI clients over HTTP (server-sent events).

The factory is your own code (``module:function``), called as ``factory(session_manager=...)`` for every
request, exactly as ``python -m strandslike resume --agent`` calls it; the default is the demo's approval agent.
Each AG-UI ``threadId`` is a session in ``--storage-dir``; several servers may share one storage directory.

Security: anyone who can reach the server can run the agent and answer its interrupts, unless it requires a
bearer token (``--token``, or better the STRANDSLIKE_SERVE_TOKEN environment variable, which other users cannot
read from the process list). The server listens on the loopback interface unless ``--host`` says otherwise, and
refuses a non-loopback host without a token unless ``--allow-unauthenticated`` says that something in front of
it (a proxy) authenticates. Browser pages on other origins need ``--cors-origin``.
"""

import argparse
import ipaddress
import os
from typing import Any

from ..session.file_session_manager import default_storage_dir
from ._common import EXIT_OK, EXIT_USAGE, CliError, err
from ._model_option import ModelOptionError, add_model_option, build_model, with_model
from .resume import load_factory

DEFAULT_AGENT = "strandslike._demo:session_agent"
TOKEN_ENV = "STRANDSLIKE_SERVE_TOKEN"


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
        "--token",
        default=None,
        help=f"require 'Authorization: Bearer TOKEN' on every request (default: ${TOKEN_ENV}, if set)",
    )
    parser.add_argument(
        "--allow-unauthenticated",
        action="store_true",
        help="listen on a non-loopback --host without a token (only behind something that authenticates)",
    )
    parser.add_argument(
        "--cors-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="let browser pages from ORIGIN (scheme://host[:port], or '*') call the server; repeat for more "
        "(default: none, CORS off)",
    )
    parser.add_argument(
        "--max-body-bytes",
        type=int,
        default=None,
        metavar="N",
        help="refuse request bodies larger than N bytes with 413 (default: 10 MiB)",
    )
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

        from ..protocol.agui import ServerConfigError, create_app
    except ImportError as exc:
        err(f"error: {exc}")
        return EXIT_USAGE
    token = _token(args.token)
    if token == "":
        err(f"error: {TOKEN_ENV} is set but empty; set it to the token, or unset it.")
        return EXIT_USAGE
    if token is None and not _is_loopback(args.host):
        if not args.allow_unauthenticated:
            err(
                f"error: refusing to listen on {args.host} without authentication: anyone who can reach this address "
                "could run the agent and answer its interrupts. Set a token (--token, or the "
                f"{TOKEN_ENV} environment variable) that clients send as 'Authorization: Bearer TOKEN', or pass "
                "--allow-unauthenticated if a proxy in front of the server authenticates."
            )
            return EXIT_USAGE
        err(
            f"warning: listening on {args.host}, not on the loopback interface, without authentication "
            "(--allow-unauthenticated): anyone who can reach this address can run the agent and answer its interrupts."
        )
    limits = {} if args.max_body_bytes is None else {"max_body_bytes": args.max_body_bytes}
    try:
        app = create_app(factory, storage_dir=args.storage_dir, token=token, cors_origins=args.cors_origin, **limits)
    except ServerConfigError as exc:
        err(f"error: {exc}")
        return EXIT_USAGE
    auth = "bearer token required" if token is not None else "no authentication"
    cors = ", ".join(args.cors_origin) if args.cors_origin else "off"
    size = "10 MiB" if args.max_body_bytes is None else f"{args.max_body_bytes} bytes"
    err(
        f"AG-UI server for {args.agent}, sessions in {args.storage_dir}: POST http://{args.host}:{args.port}/ "
        f"({auth}; CORS {cors}; bodies up to {size})"
    )
    try:
        uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    except SystemExit as exc:  # uvicorn exits when it cannot bind
        return _exit_code(exc.code)
    return EXIT_OK


def _token(option: str | None) -> str | None:
    """Return the token from ``--token``, else from the environment ("" if the variable is set but empty)."""
    if option is not None:
        return option
    return os.environ.get(TOKEN_ENV)


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


__all__ = ["DEFAULT_AGENT", "TOKEN_ENV", "build_parser", "serve"]
