"""``serve``: serve an agent to AG-UI clients over HTTP (server-sent events); see `DESCRIPTION`.

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

from ._common import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, CliError, err
from ._model_option import ModelOptionError, add_model_option, build_model, with_model
from .resume import load_factory

DEFAULT_AGENT = "strandslike._demo:session_agent"
TOKEN_ENV = "STRANDSLIKE_SERVE_TOKEN"
DSN_ENV = "STRANDSLIKE_SESSION_DSN"

DESCRIPTION = f"""\
Serve an agent to AG-UI clients over HTTP (server-sent events).

Your factory (MODULE:FACTORY) is called as factory(session_manager=...) for every
request, as the resume command calls it; the default is the demo's approval
agent. Each AG-UI threadId is a session in --storage-dir, so the server keeps
nothing in memory between requests, and several servers may share one directory.
With --session-dsn (or {DSN_ENV}) the sessions are in PostgreSQL
instead, so serve processes on many machines share them: a resume that reaches
two of them at once runs on one, the other answers SESSION_CONFLICT.

Anyone who can reach the server can run the agent and answer its interrupts,
unless it requires a bearer token (--token, or better the {TOKEN_ENV}
environment variable, which other users cannot read from the process list). It
listens on the loopback interface unless --host says otherwise, and refuses a
non-loopback host without a token unless --allow-unauthenticated says that a
proxy in front of it authenticates. Browser pages on other origins need
--cors-origin. Needs the agui extra: pip install 'strandslike[agui]'.
"""


def add_parser(subparsers: Any, storage: argparse.ArgumentParser) -> None:
    """Register ``serve``.

    Args:
        subparsers: The top-level subparsers.
        storage: A parent parser holding ``--storage-dir``.
    """
    parser = subparsers.add_parser(
        "serve",
        parents=[storage],
        help="serve an agent to AG-UI clients over HTTP (needs the agui extra)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--agent",
        default=DEFAULT_AGENT,
        metavar="MODULE:FACTORY",
        help="function building the agent from a session_manager (default: %(default)s)",
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
        "--session-dsn",
        default=None,
        metavar="DSN",
        help=f"keep the sessions in this PostgreSQL database instead of --storage-dir, so that several serve "
        f"processes (on one machine or many) share them (default: ${DSN_ENV}, if set; needs the postgres extra)",
    )
    parser.add_argument(
        "--agent-cache-size",
        type=int,
        default=None,
        metavar="N",
        help="keep the agents of the last N threads between requests, reused while their session is unchanged "
        "(default: 256; 0: rebuild every agent from its session for every request)",
    )
    parser.add_argument(
        "--log-level",
        default="info",
        choices=["critical", "error", "warning", "info", "debug"],
        help="log level of the server and of strandslike's own logs (default: %(default)s)",
    )
    parser.set_defaults(handler=run)


def serve(argv: list[str]) -> int:
    """Run ``serve`` with the arguments after it (the same as ``python -m strandslike serve ARGS``)."""
    from . import main

    return main(["serve", *argv])


def run(args: argparse.Namespace) -> int:
    """Run the AG-UI server until interrupted; return the process exit code.

    Returns:
        0 once the server stopped; uvicorn's exit code if it could not start (e.g. the port is taken).

    Raises:
        CliError: The factory cannot be imported, ``--model`` cannot be built, the agui extra is missing, or the
            security options are refused (exit code 2).
    """
    try:
        factory = with_model(load_factory(args.agent), build_model(args.model) if args.model else None)
    except ModelOptionError as exc:
        raise CliError(str(exc), EXIT_USAGE) from exc
    try:
        import uvicorn

        from ..protocol.agui import ServerConfigError, create_app
    except ImportError as exc:
        missing = f" (missing: {exc.name})" if exc.name else ""
        raise CliError(
            f"{args.program} serve needs the AG-UI extra, which is not installed{missing}. "
            "Install it with: pip install 'strandslike[agui]'",
            EXIT_USAGE,
        ) from None
    token = _token(args.token)
    if token == "":
        raise CliError(f"{TOKEN_ENV} is set but empty; set it to the token, or unset it.", EXIT_USAGE)
    if token is None and not _is_loopback(args.host):
        if not args.allow_unauthenticated:
            raise CliError(
                f"refusing to listen on {args.host} without authentication: anyone who can reach this address "
                "could run the agent and answer its interrupts. Set a token (--token, or the "
                f"{TOKEN_ENV} environment variable) that clients send as 'Authorization: Bearer TOKEN', or pass "
                "--allow-unauthenticated if a proxy in front of the server authenticates.",
                EXIT_USAGE,
            )
        err(
            f"warning: listening on {args.host}, not on the loopback interface, without authentication "
            "(--allow-unauthenticated): anyone who can reach this address can run the agent and answer its interrupts."
        )
    limits = {} if args.max_body_bytes is None else {"max_body_bytes": args.max_body_bytes}
    if args.agent_cache_size is not None:
        limits["agent_cache_size"] = args.agent_cache_size
    dsn = args.session_dsn if args.session_dsn is not None else os.environ.get(DSN_ENV) or None
    store = {"storage_dir": args.storage_dir} if dsn is None else {"session_dsn": dsn}
    where = args.storage_dir if dsn is None else _check_database(dsn)
    try:
        app = create_app(factory, token=token, cors_origins=args.cors_origin, **store, **limits)
    except ServerConfigError as exc:
        raise CliError(str(exc), EXIT_USAGE) from exc
    _show_logs(args.log_level)
    auth = "bearer token required" if token is not None else "no authentication"
    cors = ", ".join(args.cors_origin) if args.cors_origin else "off"
    size = "10 MiB" if args.max_body_bytes is None else f"{args.max_body_bytes} bytes"
    err(
        f"AG-UI server for {args.agent}, sessions in {where}: POST http://{args.host}:{args.port}/ "
        f"({auth}; CORS {cors}; bodies up to {size})"
    )
    try:
        uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    except SystemExit as exc:  # uvicorn exits when it cannot bind
        return _exit_code(exc.code)
    return EXIT_OK


def _check_database(dsn: str) -> str:
    """Connect to the session database and check (or create) its tables before serving; return where it is.

    Raises:
        CliError: The postgres extra is missing or the schema cannot be used (exit code 2), or the database cannot
            be reached (exit code 1).
    """
    from ..session import postgres
    from ..types.exceptions import MissingExtraError

    try:
        postgres.import_psycopg()
    except MissingExtraError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    try:
        repository = postgres.PostgresSessionRepository(dsn)
        repository.check()
    except (postgres.PostgresSchemaError, ValueError, TypeError) as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    except postgres.PostgresStoreError as exc:
        raise CliError(str(exc), EXIT_FAILURE) from None
    return str(repository.where)


def _show_logs(level: str) -> None:
    """Send strandslike's logs (interrupts, refusals, tool failures) to stderr, as uvicorn does with its own."""
    import logging

    logger = logging.getLogger("strandslike")
    if any(isinstance(handler, logging.StreamHandler) for handler in logger.handlers):
        return
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(levelname)s:     %(name)s %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(level.upper())


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


__all__ = ["DEFAULT_AGENT", "DESCRIPTION", "DSN_ENV", "TOKEN_ENV", "add_parser", "run", "serve"]
