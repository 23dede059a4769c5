"""``python -m strandslike sessions list|show|interrupts|audit``: read-only views of a storage directory.

``audit`` shows the interrupt trail of every agent and every orchestrator (Graph, Swarm) of a session: each
interrupt raised (by which node, hook or tool), how it was answered, and what then ran.

These commands take no locks and write nothing, so they are safe to run next to live agents.
"""

import argparse
from typing import Any

from ..types.exceptions import SessionCorruptError
from . import _common as common
from ._common import AgentView, CliError, err, out
from ._render import (
    DEFAULT_WIDTH,
    compact_json,
    interrupt_lines,
    message_lines,
    plural,
    resume_command,
    shorten,
    when,
)

DESCRIPTION = """\
Look at the sessions of a storage directory: list them, print an agent's
messages, its open interrupts, or the audit trail of every interrupt.

These commands only read: they take no lock and create nothing, so they are safe
to run next to live agents. Add --json for output meant for scripts.
"""


def add_parser(subparsers: Any, storage: argparse.ArgumentParser) -> Any:
    """Register the ``sessions`` command and its subcommands; return its subparsers for other modules to extend.

    Args:
        subparsers: The top-level subparsers.
        storage: A parent parser holding ``--storage-dir``.
    """
    parser = subparsers.add_parser(
        "sessions",
        help="inspect stored sessions, or import strands-agents ones",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="sessions_command", metavar="SUBCOMMAND", required=True, title="subcommands")
    add_parsers(commands, storage)
    return commands


def add_parsers(subparsers: Any, storage: argparse.ArgumentParser) -> None:
    """Register ``list``, ``show`` and ``interrupts`` under ``sessions``.

    Args:
        subparsers: The ``sessions`` parser's subparsers.
        storage: A parent parser holding ``--storage-dir``.
    """
    json_flag = argparse.ArgumentParser(add_help=False)
    json_flag.add_argument("--json", action="store_true", help="print JSON for scripts instead of text")
    json_flag.add_argument(
        "--dsn",
        default=None,
        help="read the sessions from this PostgreSQL database (postgresql://user@host/db) instead of --storage-dir "
        "(needs the postgres extra)",
    )

    listing = subparsers.add_parser(
        "list",
        parents=[storage, json_flag],
        help="list sessions: agents, message counts, interrupts, last update",
        description="List the sessions of DIR: their agents, message counts, open interrupts and last update.",
    )
    listing.set_defaults(handler=list_sessions)

    show = subparsers.add_parser(
        "show",
        parents=[storage, json_flag],
        help="print a session's messages",
        description="Print the messages of a session's agents, one line per content block.",
    )
    show.add_argument("session_id", metavar="SESSION_ID", help="the session to show")
    show.add_argument("--agent-id", help="only this agent (default: every agent of the session)")
    show.add_argument("--full", action="store_true", help=f"do not cut lines at {DEFAULT_WIDTH} characters")
    show.set_defaults(handler=show_session)

    interrupts = subparsers.add_parser(
        "interrupts",
        parents=[storage, json_flag],
        help="print the open interrupts of a session, per agent",
        description="Print the interrupts a session's agents wait on (name, id, reason) and how to answer them.",
    )
    interrupts.add_argument("session_id", metavar="SESSION_ID", help="the session to look at")
    interrupts.set_defaults(handler=show_interrupts)

    audit = subparsers.add_parser(
        "audit",
        parents=[storage, json_flag],
        help="print every interrupt's life, for agents and orchestrators: raised, answered, what then ran",
        description="Print the audit trail of a session's interrupts, for agents and orchestrators: raised (by "
        "whom), answered (how), and what then ran.",
    )
    audit.add_argument("session_id", metavar="SESSION_ID", help="the session to look at")
    audit.add_argument("--full", action="store_true", help=f"do not cut lines at {DEFAULT_WIDTH} characters")
    audit.set_defaults(handler=show_audit)


def _summary(session_id: str, args: argparse.Namespace) -> dict[str, Any]:
    manager = common.open_existing(args, session_id)
    try:
        session = common.read_session(manager)
        agents = common.read_agents(manager)
        multi_agents = common.multi_agent_ids(manager)
    finally:
        manager.close()
    return {
        "session_id": session_id,
        "created_at": session.created_at,
        "updated_at": common.latest([session.updated_at, *(view.updated_at or "" for view in agents)]),
        "interrupted": any(view.interrupted for view in agents),
        "agents": [
            {
                "agent_id": view.agent_id,
                "messages": len(view.messages),
                "interrupted": view.interrupted,
                "open_interrupts": len(view.open_interrupts),
                "updated_at": view.updated_at,
            }
            for view in agents
        ],
        "multi_agents": multi_agents,
    }


def list_sessions(args: argparse.Namespace) -> int:
    """Print one line per session; a corrupt session is reported on stderr and makes the exit code 2."""
    summaries = []
    failed = False
    for session_id in common.stored_session_ids(args):
        try:
            summaries.append(_summary(session_id, args))
        except (SessionCorruptError, CliError) as exc:
            err(f"error: {exc}")
            failed = True
    if args.json:
        out(common.to_json(summaries))
    elif summaries:
        _print_table(summaries)
    elif not failed:
        out(f"no sessions in {common.where(args)}")
    return common.EXIT_USAGE if failed else common.EXIT_OK


def _print_table(summaries: list[dict[str, Any]]) -> None:
    rows = [("SESSION", "UPDATED", "STATUS", "AGENTS")]
    for summary in summaries:
        open_count = sum(agent["open_interrupts"] for agent in summary["agents"])
        status = f"interrupted ({open_count} open)" if summary["interrupted"] else "idle"
        agents = [
            f"{agent['agent_id']}: {plural(agent['messages'], 'message')}"
            + (f", {plural(agent['open_interrupts'], 'open interrupt')}" if agent["interrupted"] else "")
            for agent in summary["agents"]
        ]
        agents += [f"multi-agent {multi_agent}" for multi_agent in summary["multi_agents"]]
        rows.append((summary["session_id"], when(summary["updated_at"]), status, "; ".join(agents) or "-"))
    widths = [max(len(row[column]) for row in rows) for column in range(3)]
    for row in rows:
        out("  ".join(value.ljust(width) for value, width in zip(row, widths, strict=False)) + "  " + row[3])


def _read_views(args: argparse.Namespace, agent_id: str | None = None) -> list[AgentView]:
    """Read the session named on the command line (every agent, or ``agent_id``), without writing anything."""
    manager = common.open_existing(args, args.session_id)
    try:
        return common.read_agents(manager, agent_id)
    finally:
        manager.close()


def show_session(args: argparse.Namespace) -> int:
    """Print a session's messages, per agent."""
    views = _read_views(args, args.agent_id)
    if args.json:
        out(common.to_json({"session_id": args.session_id, "agents": [_agent_json(view) for view in views]}))
        return common.EXIT_OK
    if not views:
        out(f"session {args.session_id} has no agents")
    width = None if args.full else DEFAULT_WIDTH
    for number, view in enumerate(views):
        if number:
            out()
        status = f", waiting on {plural(len(view.open_interrupts), 'interrupt')}" if view.interrupted else ""
        out(f"session {args.session_id}, agent {view.agent_id}: {plural(len(view.messages), 'message')}{status}")
        for repair in view.repairs:
            out(f"repaired on read: {repair} (run `sessions check --repair` to fix the file)")
        if view.agent is not None and view.agent.state:
            out(shorten(f"state: {compact_json(view.agent.state)}", width))
        for session_message in view.messages:
            for line in message_lines(session_message, width):
                out(line)
        if view.audit:
            out("interrupt audit:")
            for line in audit_lines(view.audit, width):
                out(line)
    return common.EXIT_OK


def _agent_json(view: AgentView) -> dict[str, Any]:
    return {
        "agent_id": view.agent_id,
        "state": view.agent.state if view.agent is not None else {},
        "interrupted": view.interrupted,
        "messages": [session_message.to_message() for session_message in view.messages],
        "audit": view.audit,
        "repairs": view.repairs,
    }


def show_interrupts(args: argparse.Namespace) -> int:
    """Print the open interrupts of every agent of a session, with the command that answers them."""
    views = _read_views(args)
    if args.json:
        agents = [
            {
                "agent_id": view.agent_id,
                "interrupts": [
                    {"id": interrupt.id, "name": interrupt.name, "reason": interrupt.reason}
                    for interrupt in view.open_interrupts
                ],
            }
            for view in views
        ]
        out(common.to_json({"session_id": args.session_id, "agents": agents}))
        return common.EXIT_OK
    waiting = [view for view in views if view.open_interrupts]
    if not waiting:
        out(f"session {args.session_id} has no open interrupts")
        return common.EXIT_OK
    for view in waiting:
        out(f"session {args.session_id}, agent {view.agent_id}: {plural(len(view.open_interrupts), 'open interrupt')}")
        for number, interrupt in enumerate(view.open_interrupts):
            if number:
                out()
            for line in interrupt_lines([interrupt]):
                out(line)
    out()
    out("Answer with:")
    responses = [(interrupt.id, "JSON") for view in waiting for interrupt in view.open_interrupts]
    command = resume_command("MODULE:FACTORY", args.storage_dir, args.session_id, responses, args.program, dsn=args.dsn)
    out("  " + command)
    return common.EXIT_OK


def show_audit(args: argparse.Namespace) -> int:
    """Print the interrupt audit trail of every agent and every orchestrator (Graph, Swarm) of a session."""
    manager = common.open_existing(args, args.session_id)
    try:
        views = common.read_agents(manager)
        orchestrators = common.read_multi_agents(manager)
    finally:
        manager.close()
    if args.json:
        agents = [{"agent_id": view.agent_id, "audit": view.audit} for view in views]
        multi_agents = [
            {"multi_agent_id": view.multi_agent_id, "type": view.kind, "audit": view.audit} for view in orchestrators
        ]
        out(common.to_json({"session_id": args.session_id, "agents": agents, "multi_agents": multi_agents}))
        return common.EXIT_OK
    trails = [(f"agent {view.agent_id}", view.audit) for view in views if view.audit]
    trails += [(f"{view.kind} {view.multi_agent_id}", view.audit) for view in orchestrators if view.audit]
    if not trails:
        out(f"session {args.session_id} has no interrupt history")
        return common.EXIT_OK
    width = None if args.full else DEFAULT_WIDTH
    for number, (owner, audit) in enumerate(trails):
        if number:
            out()
        entries = "1 audit entry" if len(audit) == 1 else f"{len(audit)} audit entries"
        out(f"session {args.session_id}, {owner}: {entries}")
        for line in audit_lines(audit, width):
            out(line)
    return common.EXIT_OK


def audit_lines(entries: list[dict[str, Any]], width: int | None) -> list[str]:
    """Render audit entries, one line each: time, event, interrupt, and the event's details."""
    lines = []
    for entry in entries:
        details = {
            key: value
            for key, value in entry.items()
            if key not in ("time", "event", "interrupt_id", "name") and value is not None
        }
        event = entry.get("event", "?")
        head = f"  {when(entry.get('time'))}  {event:<8} {entry.get('name')}"
        if entry.get("interrupt_id") is not None:  # decisions by a rule or trust concern no interrupt
            head += f" ({entry['interrupt_id']})"
        lines.append(shorten(f"{head} {compact_json(details)}" if details else head, width))
    return lines
