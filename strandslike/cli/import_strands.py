"""``python -m strandslike sessions import-strands``: move sessions from strands-agents to strandslike.

Every source session is read and checked first; then each is written through `FileSessionManager`'s repository
methods (so the session module keeps owning the format) into a staging directory inside the target, flushed to
disk, and renamed into place. An import that fails leaves the target as it was.

A fresh ``Agent(session_manager=FileSessionManager(id, storage_dir=DIR), agent_id=...)`` then restores the same
messages, ``agent.state``, conversation manager state and interrupt state, so an agent that was waiting on an
interrupt under Strands can be resumed under strandslike.
"""

import argparse
import fcntl
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from ..session._files import ensure_dir, fsync_dir
from ..session.file_session_manager import SESSION_PREFIX, FileSessionManager
from ..types.session import SessionMessage
from ._common import CliError, err, out
from ._render import plural
from ._strands_source import StrandsSession, find_sessions, read_session

DESCRIPTION = """\
Copy sessions written by strands-agents' FileSessionManager into a strandslike
storage directory: messages (in numeric order), redactions, agent.state, the
conversation manager's state, interrupt state and multi-agent state.

Every source session is read and checked first, then written into a staging
directory and renamed into place, so a failed import changes nothing. Sessions
that already exist in DIR are kept unless --overwrite is given. An agent that
was waiting on an interrupt under strands-agents resumes under strandslike with
the same interrupt id.
"""


def add_parser(subparsers: Any, storage: argparse.ArgumentParser) -> None:
    """Register ``import-strands`` under ``sessions``.

    Args:
        subparsers: The ``sessions`` parser's subparsers.
        storage: A parent parser holding ``--storage-dir`` (here: where to import to).
    """
    parser = subparsers.add_parser(
        "import-strands",
        parents=[storage],
        help="import sessions written by strands-agents' FileSessionManager",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("source", metavar="SRC_DIR", help="a strands storage directory, or one session_<id> in it")
    parser.add_argument("--overwrite", action="store_true", help="replace sessions that already exist in DIR")
    parser.set_defaults(handler=import_strands)


class _MultiAgentState:
    """An orchestrator's stored state, in the shape `update_multi_agent` takes."""

    def __init__(self, multi_agent_id: str, state: dict[str, Any]) -> None:
        self.id = multi_agent_id
        self._state = state

    def serialize_state(self) -> dict[str, Any]:
        return self._state


def import_strands(args: argparse.Namespace) -> int:
    """Import every session of ``SRC_DIR`` into ``--storage-dir``."""
    try:
        sources = [read_session(path) for path in find_sessions(Path(args.source))]
    except FileNotFoundError as exc:
        raise CliError(str(exc)) from None
    storage = Path(args.storage_dir)
    ensure_dir(storage)
    existing = [s.session.session_id for s in sources if (storage / f"{SESSION_PREFIX}{s.session.session_id}").exists()]
    if existing and not args.overwrite:
        raise CliError(
            f"{plural(len(existing), 'session')} already exist in {args.storage_dir}: {', '.join(existing)}. "
            "Nothing was imported; pass --overwrite to replace them (their current contents are deleted)."
        )
    for source in sources:
        _refuse_if_running(storage / f"{SESSION_PREFIX}{source.session.session_id}")
    for source in sources:
        for warning in source.warnings:
            err(f"warning: {warning}")
        replaced = _import(source, storage)
        out(("replaced " if replaced else "imported ") + _describe(source))
    out(f"{plural(len(sources), 'session')} imported from {args.source} into {args.storage_dir}")
    return 0


def _describe(source: StrandsSession) -> str:
    parts = []
    for imported in source.agents:
        detail = plural(len(imported.messages), "message")
        state = imported.agent._internal_state.get("interrupt_state") or {}
        if state.get("activated"):
            names = [raw.get("name") for raw in state.get("interrupts", {}).values() if raw.get("response") is None]
            detail += f", waiting on {plural(len(names), 'interrupt')}: {', '.join(map(str, names))}"
        parts.append(f"agent {imported.agent.agent_id} ({detail})")
    parts += [f"multi-agent {multi_agent_id}" for multi_agent_id in source.multi_agents]
    return f"session {source.session.session_id}: {'; '.join(parts) or 'empty'}"


def _refuse_if_running(target: Path) -> None:
    for lock in sorted(target.glob("agents/*/lock")):
        fd = os.open(lock, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            raise CliError(
                f"{target} is in use by a running agent ({lock} is locked); nothing was imported. "
                "Retry once it has finished."
            ) from None
        finally:
            os.close(fd)


def _import(source: StrandsSession, storage: Path) -> bool:
    """Write ``source`` into ``storage``; return whether it replaced an existing session."""
    session_id = source.session.session_id
    name = f"{SESSION_PREFIX}{session_id}"
    staging = Path(tempfile.mkdtemp(prefix=".import-", dir=storage))
    try:
        manager = FileSessionManager(session_id, storage_dir=staging)
        try:
            _write(manager, source)
        finally:
            manager.close()
        _fsync_tree(staging / name)
        return _swap(staging / name, storage / name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _write(manager: FileSessionManager, source: StrandsSession) -> None:
    session_id = source.session.session_id
    manager.delete_session(session_id)  # the record the constructor wrote: keep Strands' timestamps instead
    manager.create_session(source.session)
    for imported in source.agents:
        agent_id = imported.agent.agent_id
        manager.create_agent(session_id, imported.agent)
        for message in imported.messages:
            record = SessionMessage(message.message, message.message_id, None, message.created_at, message.created_at)
            manager.create_message(session_id, agent_id, record)
            if message.redact_message is not None:
                manager.update_message(session_id, agent_id, message)
        # The agent record is written again after the messages: a restore treats messages that follow the
        # latest record as progress made after it, and would drop an interrupt state written before them.
        manager.update_agent(session_id, imported.agent)
    for multi_agent_id, state in source.multi_agents.items():
        manager.create_multi_agent(session_id, _MultiAgentState(multi_agent_id, state))


def _fsync_tree(root: Path) -> None:
    for directory, _, files in os.walk(root):
        for file_name in files:
            fd = os.open(os.path.join(directory, file_name), os.O_RDONLY | os.O_CLOEXEC)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        fsync_dir(Path(directory))


def _swap(new: Path, target: Path) -> bool:
    """Rename ``new`` to ``target``, moving an existing ``target`` into ``new``'s (staging) directory first."""
    old = new.parent / f"replaced-{target.name}"
    replaced = target.exists()
    if replaced:
        os.rename(target, old)
    try:
        os.rename(new, target)
    except OSError:
        if replaced:
            os.rename(old, target)
        raise
    fsync_dir(target.parent)
    return replaced
