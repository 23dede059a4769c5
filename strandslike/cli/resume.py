"""``python -m strandslike resume``: rebuild an agent from its factory and answer its interrupts.

The factory is your own code (``module:function``); it is called as
``factory(session_manager=FileSessionManager(SESSION_ID, storage_dir=DIR))`` (with ``--dsn``,
``PostgresSessionManager(SESSION_ID, dsn=DSN)``) and must pass that manager to
the `Agent` it builds, with the same tools and hooks as the process that was interrupted, so the restored
agent finds its pending tool batch and re-raises the same interrupt ids.
"""

import argparse
import importlib
import json
import shlex
from typing import Any

from .._json import json_problem
from ..agent import Agent, AgentResult
from ..interrupt import InterruptError
from ..types.exceptions import SessionConflictError, safe_repr
from ..types.interrupt import InterruptResponseContent
from . import _common as common
from ._common import EXIT_USAGE, CliError, err, out
from ._model_option import ModelOptionError, add_model_option, build_model, with_model
from ._render import compact_json, interrupt_lines, resume_command, shown_dsn

DESCRIPTION = """\
Rebuild an interrupted agent from its stored session and answer its interrupts.

Your factory (MODULE:FACTORY) is called as factory(session_manager=...) with the
FileSessionManager of SESSION_ID in DIR (with --dsn, its PostgresSessionManager
in that database). It must pass that manager to the Agent
it builds, with the same tools and hooks as the process that was interrupted, so
the agent finds its paused tool calls and the same interrupt ids.

Each answer is JSON, so a string is quoted twice: --response ID='"y"'. The
result is printed with any new interrupts and the command that answers them.
Sending the same answers again runs nothing and says so.
"""


def add_parser(subparsers: Any, storage: argparse.ArgumentParser) -> None:
    """Register ``resume``.

    Args:
        subparsers: The top-level subparsers.
        storage: A parent parser holding ``--storage-dir``.
    """
    parser = subparsers.add_parser(
        "resume",
        parents=[storage],
        help="answer the interrupts of a stored agent and let it continue",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("session_id", metavar="SESSION_ID", help="the session whose agent waits on interrupts")
    parser.add_argument(
        "--agent", required=True, metavar="MODULE:FACTORY", help="function building the agent from a session_manager"
    )
    parser.add_argument(
        "--response",
        action="append",
        required=True,
        metavar="INTERRUPT_ID=JSON",
        help="""an answer, as JSON: --response ID='"y"' or ID='{"approve": true}' (repeatable)""",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument(
        "--dsn",
        default=None,
        help="the session is in this PostgreSQL database (postgresql://user@host/db), not in --storage-dir; the "
        "factory then gets a PostgresSessionManager (needs the postgres extra)",
    )
    add_model_option(parser)
    parser.set_defaults(handler=resume)


def parse_responses(values: list[str]) -> list[InterruptResponseContent]:
    """Turn ``ID=JSON`` arguments into ``interruptResponse`` blocks.

    Raises:
        CliError: An argument has no ``=``, or its value is not valid JSON or not storable (exit code 2).
    """
    blocks: list[InterruptResponseContent] = []
    for value in values:
        interrupt_id, separator, raw = value.partition("=")
        if not separator or not interrupt_id:
            raise CliError(f"--response {value!r}: expected INTERRUPT_ID=JSON, e.g. --response ID='\"y\"'", EXIT_USAGE)
        try:
            answer = json.loads(raw)
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, an over-long integer, deep nesting
            if isinstance(exc, json.JSONDecodeError) and len(raw) <= 200:
                hint = (
                    f" ({exc.msg}). Answers are JSON values: quote a string twice, once for JSON and once for the "
                    f"shell: --response {shlex.quote(interrupt_id)}={shlex.quote(json.dumps(raw))}"
                )
            else:
                hint = f" ({str(exc).split(':')[0]})"
            raise CliError(f"--response {_short(value)}: the answer is not valid JSON{hint}", EXIT_USAGE) from None
        problem = json_problem(answer)
        if problem is not None:
            raise CliError(
                f"--response {_short(value)}: the answer cannot be stored ({problem}); nothing was sent to the agent",
                EXIT_USAGE,
            )
        blocks.append({"interruptResponse": {"interruptId": interrupt_id, "response": answer}})
    return blocks


def _short(text: str) -> str:
    return safe_repr(text)


def load_factory(spec: str) -> Any:
    """Import the ``module:attribute`` named by ``spec`` (the attribute may be dotted).

    Raises:
        CliError: ``spec`` is malformed, or the module or attribute cannot be found (exit code 2).
    """
    module_name, separator, attribute = spec.partition(":")
    if not separator or not module_name or not attribute:
        raise CliError(f"--agent {spec!r}: expected MODULE:FACTORY, e.g. --agent myapp.agents:build", EXIT_USAGE)
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise CliError(f"--agent {spec!r}: cannot import {module_name!r} ({exc})", EXIT_USAGE) from None
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise CliError(f"--agent {spec!r}: {module_name!r} has no attribute {attribute!r}", EXIT_USAGE) from None
    if not callable(target):
        raise CliError(f"--agent {spec!r}: {attribute!r} is not callable", EXIT_USAGE)
    return target


def resume(args: argparse.Namespace) -> int:
    """Resume a session's agent with the given answers and print the result."""
    responses = parse_responses(args.response)
    try:
        model = build_model(args.model) if getattr(args, "model", None) else None
    except ModelOptionError as exc:
        raise CliError(str(exc), EXIT_USAGE) from exc
    factory = with_model(load_factory(args.agent), model)
    manager = common.open_existing(args, args.session_id)  # refuse, rather than create, an unknown session
    try:
        agent = factory(session_manager=manager)
        if not isinstance(agent, Agent):
            raise CliError(f"--agent {args.agent!r} returned {type(agent).__name__}, not an Agent", EXIT_USAGE)
        if agent.session_manager is not manager:
            raise CliError(
                f"--agent {args.agent!r} built an agent without the session manager it was given; "
                "pass it on: Agent(..., session_manager=session_manager)",
                EXIT_USAGE,
            )
        try:
            result = agent(responses)
        except (InterruptError, SessionConflictError) as exc:
            err(f"error: {exc}")
            pending = agent.pending_interrupts
            if pending and not isinstance(exc, SessionConflictError):
                err("The session was not changed. It waits on:")
                for line in interrupt_lines(pending):
                    err(line)
            else:
                where = f"--dsn {shown_dsn(args.dsn)}" if args.dsn else f"--storage-dir {args.storage_dir}"
                err(
                    f"The session was not changed. See what it waits on with: {args.program} sessions interrupts "
                    f"{where} {args.session_id}"
                )
            return common.EXIT_FAILURE
    finally:
        manager.close()
    _print_result(args, result)
    return common.EXIT_OK


def _print_result(args: argparse.Namespace, result: AgentResult) -> None:
    if args.json:
        interrupts = [interrupt.to_dict() for interrupt in result.interrupts or ()]
        out(common.to_json({**result.to_dict(), "interrupts": interrupts}))  # always listed, even when empty
        return
    if result.replayed:
        out("These answers were already applied and the agent went on: this was a replay, nothing ran again")
        out("(no tool, no model call). The agent's last message is below.")
    out(f"stop reason: {result.stop_reason}")
    content = result.message.get("content", []) if result.message else []
    text = "\n".join(block["text"] for block in content if "text" in block)
    if text:
        out(f"message: {text}")
    elif content:
        out(f"message: {compact_json(content)}")
    if result.interrupts:
        out("open interrupts:")
        for line in interrupt_lines(result.interrupts):
            out(line)
        out("Answer with:")
        pairs = [(interrupt.id, "JSON") for interrupt in result.interrupts]
        out("  " + resume_command(args.agent, args.storage_dir, args.session_id, pairs, args.program, dsn=args.dsn))
