"""``python -m strandslike sessions trust list|revoke``: the trust `HumanInTheLoop` remembers in a session.

Trust lives in ``agent.state`` (``hitl:trusted_tools`` and ``hitl:trust``), so it is stored with each agent of a
session, and with each agent node of a Graph or Swarm in the orchestrator's state.

``list`` only reads: it takes no lock and writes nothing. ``revoke`` removes every grant for one tool (for any
arguments and scoped ones) and records who revoked it in the agent's interrupt audit trail. For an agent stored
in its own log, the new snapshot is appended under the agent's lock, and only if the log is exactly as it was
read: while a process runs the agent, or if it changed the agent in between, nothing is written and the command
says so (exit code 1). A process that keeps the agent in memory gets `SessionConflictError` on its next
invocation and must load it again, so it cannot overwrite the revocation with its stale copy. Orchestrator state
files have no cross-process lock; they are replaced atomically, after checking they did not change since they
were read. Revoke while the orchestrator is not running.
"""

import argparse
import copy
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..session.file_session_manager import FileSessionManager
from ..types.exceptions import SessionConflictError
from ..vended_interventions.hitl import HumanInTheLoop, TrustGrant
from . import _common as common
from ._common import CliError, out
from ._render import plural, when

_DEFAULT_BY = "python -m strandslike sessions trust revoke"
_DESCRIPTION = """\
List or revoke the tools HumanInTheLoop trusts in a session (kept in each
agent's state).

list reads only: it takes no lock and writes nothing. revoke removes every grant
for one tool and records it in the agent's audit trail; it writes only under the
agent's lock and only if nobody changed the agent since it was read (otherwise
nothing is written and the exit code is 1). A process holding the agent in
memory must load it again (its next invocation refuses with
SessionConflictError). Orchestrator (Graph/Swarm) state has no cross-process
lock: revoke trust of node agents while the orchestrator is not running.
"""


def add_parser(subparsers: Any, storage: argparse.ArgumentParser) -> None:
    """Register ``trust list`` and ``trust revoke`` under ``sessions``.

    Args:
        subparsers: The ``sessions`` parser's subparsers.
        storage: A parent parser holding ``--storage-dir``.
    """
    json_flag = argparse.ArgumentParser(add_help=False)
    json_flag.add_argument("--json", action="store_true", help="print JSON for scripts instead of text")
    agent_flag = argparse.ArgumentParser(add_help=False)
    agent_flag.add_argument("--agent-id", help="only this agent (or Graph/Swarm node id); default: every agent")

    parser = subparsers.add_parser(
        "trust",
        help="list or revoke the tools HumanInTheLoop trusts in a session",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="trust_command", metavar="ACTION", required=True)
    listing = actions.add_parser(
        "list",
        parents=[storage, json_flag, agent_flag],
        help="print every trust grant, per agent (read-only)",
        description="Print every trust grant HumanInTheLoop keeps in the session, per agent. Reads only.",
    )
    listing.add_argument("session_id", metavar="SESSION_ID", help="the session to look at")
    listing.set_defaults(handler=list_trust)

    revoke = actions.add_parser(
        "revoke",
        parents=[storage, json_flag, agent_flag],
        help="revoke every trust grant for a tool",
        description="Revoke every trust grant for TOOL in the session and record who did it in the audit trail.",
    )
    revoke.add_argument("session_id", metavar="SESSION_ID", help="the session to change")
    revoke.add_argument("tool", metavar="TOOL", help="the tool whose trust to revoke")
    revoke.add_argument("--by", default=_DEFAULT_BY, help="who revokes it, for the audit trail (default: %(default)s)")
    revoke.set_defaults(handler=revoke_trust)


@dataclass
class _Holder:
    """An agent whose state may hold trust: stored in its own log, or as a node in an orchestrator's state."""

    label: str  # "agent default" or "graph g, node n"
    agent_id: str
    state: dict[str, Any]
    orchestrator: str | None = None
    path: tuple[str, ...] = ()  # node ids from the orchestrator down to this node


def _holders(manager: FileSessionManager, agent_id: str | None) -> Iterator[tuple[_Holder, Any]]:
    """Yield every agent of the session with what holds it: its `SessionAgent`, or its orchestrator's state."""
    views = common.read_agents(manager) if agent_id is None else _agent_views(manager, agent_id)
    for view in views:
        if view.agent is not None:
            yield _Holder(f"agent {view.agent_id}", view.agent_id, view.agent.state), view.agent
    for orchestrator in common.multi_agent_ids(manager):
        payload = manager.read_multi_agent(manager.session_id, orchestrator)
        for path, node in _agent_nodes(payload or {}, ()):
            if agent_id is None or path[-1] == agent_id:
                label = f"orchestrator {orchestrator}, node {'/'.join(path)}"
                yield _Holder(label, path[-1], node.setdefault("state", {}), orchestrator, path), payload


def _agent_views(manager: FileSessionManager, agent_id: str) -> list[common.AgentView]:
    try:
        return common.read_agents(manager, agent_id)
    except CliError:
        return []  # it may be a node id: orchestrators are searched too


def _agent_nodes(payload: dict[str, Any], prefix: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], dict[str, Any]]]:
    nodes = payload.get("nodes")
    if not isinstance(nodes, dict):
        return
    for node_id, node in nodes.items():
        if not isinstance(node, dict):
            continue
        if node.get("type") == "agent":
            yield (*prefix, node_id), node
        elif node.get("type") == "multiagent" and isinstance(node.get("state"), dict):
            yield from _agent_nodes(node["state"], (*prefix, node_id))


def list_trust(args: argparse.Namespace) -> int:
    """Print every trust grant of a session's agents."""
    manager = common.open_session(common.storage_path(args.storage_dir), args.session_id)
    try:
        found = [(holder, HumanInTheLoop.list_trust(holder.state)) for holder, _ in _holders(manager, args.agent_id)]
    finally:
        manager.close()
    if args.agent_id is not None and not found:
        raise CliError(f"session {args.session_id!r} has no agent or node {args.agent_id!r}")
    if args.json:
        agents = [
            {
                "agent_id": holder.agent_id,
                "orchestrator": holder.orchestrator,
                "node": "/".join(holder.path) or None,
                "trust": [grant.to_dict() for grant in grants],
            }
            for holder, grants in found
        ]
        out(common.to_json({"session_id": args.session_id, "agents": agents}))
        return common.EXIT_OK
    trusting = [(holder, grants) for holder, grants in found if grants]
    if not trusting:
        out(f"session {args.session_id}: no agent trusts any tool")
        return common.EXIT_OK
    for number, (holder, grants) in enumerate(trusting):
        if number:
            out()
        out(f"session {args.session_id}, {holder.label}: {plural(len(grants), 'trust grant')}")
        for grant in grants:
            out("  " + _describe(grant))
    return common.EXIT_OK


def _describe(grant: TrustGrant) -> str:
    granted = f"granted {when(grant.granted_at)}" if grant.granted_at else "granted (time not recorded)"
    by = f" by {grant.granted_by}" if grant.granted_by else ""
    return f"{grant.describe()}  {granted}{by}"


def revoke_trust(args: argparse.Namespace) -> int:
    """Revoke every trust grant for a tool, in every agent of the session (or ``--agent-id``)."""
    manager = common.open_session(common.storage_path(args.storage_dir), args.session_id)
    revoked: list[tuple[_Holder, list[TrustGrant]]] = []
    try:
        holders = list(_holders(manager, args.agent_id))
        if args.agent_id is not None and not holders:
            raise CliError(f"session {args.session_id!r} has no agent or node {args.agent_id!r}")
        trusted = sorted({grant.tool for holder, _ in holders for grant in HumanInTheLoop.list_trust(holder.state)})
        if args.tool not in trusted:
            listing = ", ".join(trusted) if trusted else "none"
            raise CliError(f"no agent of session {args.session_id!r} trusts {args.tool!r} (trusted tools: {listing})")
        for orchestrator, group in _by_owner(holders):
            if orchestrator is None:
                for holder, stored in group:
                    removed = _revoke_in_log(manager, holder, stored, args.tool, args.by)
                    if removed:
                        revoked.append((holder, removed))
            else:
                revoked.extend(_revoke_in_orchestrator(manager, orchestrator, group, args.tool, args.by))
    finally:
        manager.close()
    if args.json:
        agents = [
            {"agent_id": h.agent_id, "node": "/".join(h.path) or None, "revoked": [g.to_dict() for g in grants]}
            for h, grants in revoked
        ]
        out(common.to_json({"session_id": args.session_id, "tool": args.tool, "agents": agents}))
        return common.EXIT_OK
    for holder, grants in revoked:
        out(f"revoked trust in {args.tool} for {holder.label} ({plural(len(grants), 'grant')})")
    return common.EXIT_OK


def _by_owner(holders: list[tuple[_Holder, Any]]) -> list[tuple[str | None, list[tuple[_Holder, Any]]]]:
    groups: dict[str | None, list[tuple[_Holder, Any]]] = {}
    for holder, owner in holders:
        groups.setdefault(holder.orchestrator, []).append((holder, owner))
    return list(groups.items())


def _audit_entry(tool: str, count: int, by: str) -> dict[str, Any]:
    return {
        "time": time.time(),
        "event": "trust_revoked",
        "interrupt_id": None,
        "name": HumanInTheLoop.name,
        "tool": tool,
        "revoked": count,
        "by": by,
    }


def _append_audit(internal: dict[str, Any], entry: dict[str, Any]) -> None:
    state = internal.setdefault("interrupt_state", {})
    if isinstance(state, dict):
        audit = state.setdefault("audit", [])
        if isinstance(audit, list):
            audit.append(entry)


def _revoke_in_log(manager: FileSessionManager, holder: _Holder, stored: Any, tool: str, by: str) -> list[TrustGrant]:
    """Revoke in an agent stored in its own log: append a snapshot under its lock, if the log did not change."""
    removed = HumanInTheLoop.revoke_trust(stored.state, tool)
    if not removed:
        return []
    _append_audit(stored._internal_state, _audit_entry(tool, len(removed), by))
    try:
        manager.update_agent(manager.session_id, stored)
    except SessionConflictError as exc:
        raise CliError(
            f"{exc}\nTrust in {tool!r} was not revoked for {holder.label}: retry when the agent is idle."
        ) from None
    return removed


def _revoke_in_orchestrator(
    manager: FileSessionManager, orchestrator: str, group: list[tuple[_Holder, Any]], tool: str, by: str
) -> list[tuple[_Holder, list[TrustGrant]]]:
    """Revoke in the agent nodes of one orchestrator's state file and replace it, if it did not change."""
    payload = group[0][1]
    original = copy.deepcopy(payload)
    revoked = []
    for holder, _ in group:
        removed = HumanInTheLoop.revoke_trust(holder.state, tool)
        if removed:
            node = _node(payload, holder.path)
            _append_audit(node, _audit_entry(tool, len(removed), by))
            revoked.append((holder, removed))
    if not revoked:
        return []
    if manager.read_multi_agent(manager.session_id, orchestrator) != original:
        raise CliError(
            f"orchestrator {orchestrator!r} of session {manager.session_id!r} changed while its trust was being "
            f"revoked; nothing was written. Retry when it is not running."
        )
    manager.update_multi_agent(manager.session_id, _StoredOrchestrator(orchestrator, payload))
    return revoked


def _node(payload: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    node: dict[str, Any] = payload
    for number, node_id in enumerate(path):
        node = node["nodes"][node_id]
        if number < len(path) - 1:
            node = node["state"]
    return node


class _StoredOrchestrator:
    """What `FileSessionManager.update_multi_agent` needs of an orchestrator: its id and its state."""

    def __init__(self, orchestrator_id: str, state: dict[str, Any]) -> None:
        self.id = orchestrator_id
        self._state = state

    def serialize_state(self) -> dict[str, Any]:
        return self._state


__all__ = ["add_parser", "list_trust", "revoke_trust"]
