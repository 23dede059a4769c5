"""Read sessions written by strands-agents' FileSessionManager, without importing strands.

Strands' layout under a storage directory::

    session_<id>/session.json
    session_<id>/agents/agent_<id>/agent.json               state, conversation manager state, _internal_state
    session_<id>/agents/agent_<id>/messages/message_<n>.json  one file per message, n its index
    session_<id>/multi_agents/multi_agent_<id>/multi_agent.json

Everything is read and checked before anything is written, so an import that fails writes nothing.
"""

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..interrupt._state import _InterruptState
from ..session._files import read_json_path as read_json
from ..session._ids import validate_id
from ..types.exceptions import SessionCorruptError, SessionException
from ..types.session import Session, SessionAgent, SessionMessage

SESSION_PREFIX = "session_"
AGENT_PREFIX = "agent_"
MULTI_AGENT_PREFIX = "multi_agent_"
_MESSAGE_FILE = re.compile(r"message_(\d+)\.json")


@dataclass
class StrandsAgent:
    """One agent of a Strands session: its record and its messages in order."""

    agent: SessionAgent
    messages: list[SessionMessage]


@dataclass
class StrandsSession:
    """A Strands session read into memory.

    Attributes:
        path: The ``session_<id>`` directory it was read from.
        session: The session record.
        agents: Its agents.
        multi_agents: Orchestrator states by id, as Strands stored them.
        warnings: Files that were skipped, and why.
    """

    path: Path
    session: Session
    agents: list[StrandsAgent] = field(default_factory=list)
    multi_agents: dict[str, dict[str, Any]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def find_sessions(source: Path) -> list[Path]:
    """Return the ``session_<id>`` directories in ``source``, or ``[source]`` if it is one.

    Raises:
        FileNotFoundError: ``source`` is not a directory, or holds no Strands session.
    """
    if not source.is_dir():
        raise FileNotFoundError(f"{source} is not a directory")
    if source.name.startswith(SESSION_PREFIX) and (source / "session.json").is_file():
        return [source]
    found = sorted(
        entry
        for entry in source.iterdir()
        if entry.name.startswith(SESSION_PREFIX) and (entry / "session.json").is_file()
    )
    if not found:
        raise FileNotFoundError(
            f"{source} holds no strands-agents session: expected session_<id>/session.json inside it, "
            "or a session_<id> directory itself"
        )
    return found


def _object(path: Path) -> dict[str, Any]:
    data = read_json(path)
    if data is None:
        raise SessionCorruptError(str(path), "is missing")
    if not isinstance(data, dict):
        raise SessionCorruptError(str(path), f"holds a JSON {type(data).__name__}, not an object")
    return data


def _id_from(directory: Path, prefix: str, kind: str) -> str:
    try:
        return validate_id(directory.name[len(prefix) :], kind)
    except ValueError as exc:
        raise SessionCorruptError(str(directory), f"cannot be imported: {exc}") from None


def read_session(path: Path) -> StrandsSession:
    """Read one ``session_<id>`` directory.

    Raises:
        SessionCorruptError: A file is missing, not valid JSON, or not what Strands writes there; or an id is
            one strandslike refuses (path separators, ``..``, control characters, too long).
    """
    session_id = _id_from(path, SESSION_PREFIX, "session")
    record = _object(path / "session.json")
    if str(record.get("format", "")).startswith("strandslike"):
        raise SessionCorruptError(
            str(path / "session.json"), "belongs to a strandslike session, not a strands-agents one"
        )
    try:
        session = Session.from_dict({**record, "session_id": session_id})
    except (TypeError, ValueError) as exc:
        raise SessionCorruptError(str(path / "session.json"), f"is not a session record ({exc})") from None
    imported = StrandsSession(path, session)
    if record.get("session_id") != session_id:
        imported.warnings.append(
            f"{path / 'session.json'} names session {record.get('session_id')!r}; imported as {session_id!r}, "
            "its directory name, which is how strands-agents finds it"
        )
    agents_dir = path / "agents"
    for agent_dir in sorted(agents_dir.iterdir() if agents_dir.is_dir() else ()):
        if agent_dir.name.startswith(AGENT_PREFIX) and agent_dir.is_dir():
            imported.agents.append(_read_agent(agent_dir, imported.warnings))
    multi_dir = path / "multi_agents"
    for entry in sorted(multi_dir.iterdir() if multi_dir.is_dir() else ()):
        state_file = entry / "multi_agent.json"
        if entry.name.startswith(MULTI_AGENT_PREFIX) and state_file.is_file():
            imported.multi_agents[_id_from(entry, MULTI_AGENT_PREFIX, "multi_agent")] = _object(state_file)
    return imported


def _read_agent(agent_dir: Path, warnings: list[str]) -> StrandsAgent:
    agent_id = _id_from(agent_dir, AGENT_PREFIX, "agent")
    agent_file = agent_dir / "agent.json"
    record = _object(agent_file)
    try:
        agent = SessionAgent.from_dict({**record, "agent_id": agent_id})
        if not isinstance(agent.state, dict) or not isinstance(agent.conversation_manager_state, dict):
            raise TypeError("state and conversation_manager_state must be objects")
        interrupt_state = agent._internal_state.get("interrupt_state")
        if interrupt_state is not None:
            _InterruptState.from_dict(interrupt_state)  # check it restores before anything is written
    except (AttributeError, TypeError, ValueError, SessionException) as exc:
        raise SessionCorruptError(str(agent_file), f"is not a strands-agents agent record ({exc})") from None
    return StrandsAgent(agent, _read_messages(agent_dir / "messages", warnings))


def _read_messages(messages_dir: Path, warnings: list[str]) -> list[SessionMessage]:
    numbered: list[tuple[int, Path]] = []
    for entry in messages_dir.iterdir() if messages_dir.is_dir() else ():
        match = _MESSAGE_FILE.fullmatch(entry.name)
        if match is None or not entry.is_file():
            warnings.append(f"skipped {entry}: not a message_<number>.json file (strands-agents itself fails on it)")
            continue
        numbered.append((int(match.group(1)), entry))
    messages = []
    for index, path in sorted(numbered):  # numerically: message_10 comes after message_9
        record = _object(path)
        try:
            message = SessionMessage.from_dict({**record, "message_id": index})
            for candidate in (message.message, message.redact_message):
                if candidate is not None and (
                    not isinstance(candidate, dict) or "role" not in candidate or "content" not in candidate
                ):
                    raise TypeError("a message must be an object with 'role' and 'content'")
        except (TypeError, ValueError) as exc:
            raise SessionCorruptError(str(path), f"is not a strands-agents message record ({exc})") from None
        messages.append(message)
    return messages
