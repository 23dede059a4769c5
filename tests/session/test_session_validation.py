"""Id validation and corrupt or foreign session files: clear, typed errors that name what is wrong."""

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from log_lines import checksummed

from strandslike import Agent
from strandslike.models import ScriptedModel, text
from strandslike.session import FileSessionManager, InMemorySessionRepository, RepositorySessionManager
from strandslike.types.exceptions import InvalidStorageDirError, SessionCorruptError, SessionException

SESSION = "s1"

# (bad id, what the message must say)
BAD_IDS: list[tuple[Any, str]] = [
    ("", "cannot be empty"),
    ("a" * 129, "129 characters long; the limit is 128"),
    ("a/b", "path separators"),
    ("a\\b", "path separators"),
    ("/abs", "path separators"),
    ("..", "'..'"),
    ("a/../b", "path separators"),
    ("a..b", "'..'"),
    ("a\x00b", "control characters"),
    ("a\nb", "control characters"),
    ("a\x7fb", "control characters"),
    ("a\tb", "control characters"),
    (" a", "whitespace"),
    ("a ", "whitespace"),
    ("\u3000a", "whitespace"),
    (5, "must be a string, got int"),
    (None, "must be a string, got NoneType"),
    (b"abc", "must be a string, got bytes"),
    (["a"], "must be a string, got list"),
]
GOOD_IDS = ["a" * 128, "my-app_1.2", "ünïcödé", "a.b", "A", "x" * 64 + "-" + "y" * 63]


def ids(cases: list[tuple[Any, str]]) -> list[str]:
    return [repr(value)[:20] for value, _ in cases]


def agent_on(manager: Any, **kwargs: Any) -> Agent:
    return Agent(model=ScriptedModel([text("ok")]), session_manager=manager, **kwargs)


def nothing_outside(storage: Path) -> None:
    assert {p.name for p in storage.parent.iterdir()} <= {storage.name}, "a file was created outside storage"


# -- ids ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("bad", "problem"), BAD_IDS, ids=ids(BAD_IDS))
def test_file_session_manager_rejects_a_bad_session_id(tmp_path: Path, bad: Any, problem: str) -> None:
    storage = tmp_path / "storage"
    with pytest.raises(ValueError, match="session_id=") as caught:
        FileSessionManager(session_id=bad, storage_dir=storage)
    assert problem in str(caught.value)
    assert not storage.exists() or list(storage.iterdir()) == []
    nothing_outside(storage)


@pytest.mark.parametrize(("bad", "problem"), BAD_IDS, ids=ids(BAD_IDS))
def test_repository_session_manager_rejects_a_bad_session_id(bad: Any, problem: str) -> None:
    repository = InMemorySessionRepository()
    with pytest.raises(ValueError, match="session_id=") as caught:
        RepositorySessionManager(bad, repository)
    assert problem in str(caught.value)
    assert repository.read_session("s1") is None


AGENT_IDS = [(value, problem) for value, problem in BAD_IDS if value not in ("", None)]


@pytest.mark.parametrize(("bad", "problem"), AGENT_IDS, ids=ids(AGENT_IDS))
@pytest.mark.parametrize("kind", ["file", "memory"])
def test_an_agent_with_a_bad_agent_id_is_refused_by_its_session_manager(
    tmp_path: Path, bad: Any, problem: str, kind: str
) -> None:
    storage = tmp_path / "storage"
    repository = InMemorySessionRepository()
    manager = (
        FileSessionManager(SESSION, storage_dir=storage)
        if kind == "file"
        else RepositorySessionManager(SESSION, repository)
    )
    with pytest.raises(ValueError, match="agent_id=") as caught:
        agent_on(manager, agent_id=bad)
    assert problem in str(caught.value)
    nothing_outside(storage)
    if kind == "file":
        assert not (storage / f"session_{SESSION}" / "agents").exists() or not any(
            (storage / f"session_{SESSION}" / "agents").iterdir()
        )


def test_no_agent_id_means_the_default_agent_as_in_strands(tmp_path: Path) -> None:
    agent = agent_on(FileSessionManager(SESSION, storage_dir=tmp_path), agent_id=None)
    assert agent.agent_id == "default"


def test_an_empty_agent_id_is_refused_not_silently_the_default(tmp_path: Path) -> None:
    """Strands turns agent_id="" into "default", so two agents meant to be apart would share one record."""
    storage = tmp_path / "storage"
    manager = FileSessionManager(SESSION, storage_dir=storage)
    with pytest.raises(ValueError, match=re.escape("agent_id='' | id cannot be empty")):
        agent_on(manager, agent_id="")
    assert not (storage / f"session_{SESSION}" / "agents").exists() or not any(
        (storage / f"session_{SESSION}" / "agents").iterdir()
    )


@pytest.mark.parametrize("good", GOOD_IDS)
def test_safe_ids_are_accepted_for_sessions_and_agents(tmp_path: Path, good: str) -> None:
    agent = agent_on(FileSessionManager(good, storage_dir=tmp_path), agent_id=good)
    assert agent("hi").stop_reason == "end_turn"
    log = tmp_path / f"session_{good}" / "agents" / f"agent_{good}" / "agent.jsonl"
    assert log.is_file()
    restored = agent_on(FileSessionManager(good, storage_dir=tmp_path), agent_id=good)
    assert restored.messages == agent.messages


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.read_session("../escape"),
        lambda m: m.read_agent(SESSION, "../escape"),
        lambda m: m.read_agent("../escape", "default"),
        lambda m: m.list_messages(SESSION, "a/b"),
        lambda m: m.read_message(SESSION, "a\x00", 0),
        lambda m: m.read_multi_agent(SESSION, ".."),
        lambda m: m.delete_session("../.."),
    ],
    ids=["read_session", "read_agent", "read_agent-session", "list_messages", "read_message", "multi", "delete"],
)
def test_repository_methods_validate_the_ids_they_turn_into_paths(tmp_path: Path, call: Any) -> None:
    storage = tmp_path / "storage"
    manager = FileSessionManager(SESSION, storage_dir=storage)
    with pytest.raises(ValueError, match="_id="):
        call(manager)
    nothing_outside(storage)


# -- corrupt and foreign files ------------------------------------------------------------------------------


def session_dir(storage: Path) -> Path:
    return storage / f"session_{SESSION}"


def agent_dir(storage: Path, agent_id: str = "default") -> Path:
    return session_dir(storage) / "agents" / f"agent_{agent_id}"


def log_of(storage: Path, agent_id: str = "default") -> Path:
    return agent_dir(storage, agent_id) / "agent.jsonl"


def written_session(storage: Path) -> list[str]:
    """Write a healthy two-message session and return its log's lines."""
    agent = agent_on(FileSessionManager(SESSION, storage_dir=storage))
    agent("hello")
    return log_of(storage).read_text().splitlines()


def open_again(storage: Path, agent_id: str = "default") -> Agent:
    return agent_on(FileSessionManager(SESSION, storage_dir=storage), agent_id=agent_id)


def check_corrupt(caught: pytest.ExceptionInfo[SessionCorruptError], path: Path, *fragments: str) -> None:
    error = caught.value
    assert isinstance(error, SessionException)  # ported `except SessionException` clauses still catch it
    assert error.path == str(path)
    assert str(path) in str(error)
    for fragment in fragments:
        assert fragment in str(error)
    # Raised cleanly: not a json/KeyError traceback with our error tacked on.
    assert error.__cause__ is None
    assert error.__context__ is None or error.__suppress_context__


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b'{"session_id": "s1", ', "is not valid JSON"),
        (b"\xff\xfe not even utf-8", "is not valid JSON"),
        (b"", "is not valid JSON"),
        (b"[1, 2]", "was not written by strandslike"),
        (b'"a string"', "was not written by strandslike"),
    ],
    ids=["truncated", "binary", "empty", "list", "string"],
)
def test_a_corrupt_session_json_is_reported_with_its_path(tmp_path: Path, content: bytes, fragment: str) -> None:
    written_session(tmp_path)
    path = session_dir(tmp_path) / "session.json"
    path.write_bytes(content)
    with pytest.raises(SessionCorruptError) as caught:
        FileSessionManager(SESSION, storage_dir=tmp_path)
    check_corrupt(caught, path, fragment)


def test_a_strands_agents_session_json_is_reported_with_the_import_command(tmp_path: Path) -> None:
    path = session_dir(tmp_path) / "session.json"
    path.parent.mkdir(parents=True)
    strands_record = {
        "session_id": SESSION,
        "session_type": "AGENT",
        "created_at": "2025-01-01T00:00:00+00:00",
        "updated_at": "2025-01-01T00:00:00+00:00",
    }
    path.write_text(json.dumps(strands_record))
    with pytest.raises(SessionCorruptError) as caught:
        FileSessionManager(SESSION, storage_dir=tmp_path)
    check_corrupt(caught, path, "was not written by strandslike", "import-strands")


@pytest.mark.parametrize(
    "record",
    [
        {"format": "strandslike-session/1"},
        {"format": "strandslike-session/1", "session_id": SESSION, "session_type": "SWARM_OF_BEES"},
    ],
    ids=["no-session-id", "bad-type"],
)
def test_a_session_json_with_our_format_but_bad_fields_is_corrupt(tmp_path: Path, record: dict[str, Any]) -> None:
    path = session_dir(tmp_path) / "session.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(record))
    with pytest.raises(SessionCorruptError) as caught:
        FileSessionManager(SESSION, storage_dir=tmp_path)
    check_corrupt(caught, path, "is not a session record")


@pytest.mark.parametrize(
    "first_line",
    [
        '{"k":"m","i":0,"t":"x","m":{"role":"user","content":[]}}',
        '{"k":"h","format":"strandslike-agent-log/999","session_id":"s1","agent_id":"default","t":"x"}',
        '{"k":"h","session_id":"s1","agent_id":"default","t":"x"}',
        '["k","h"]',
        '{"agent_id": "default", "state": {}, "conversation_manager_state": {}}',
    ],
    ids=["message-first", "future-format", "no-format", "list", "strands-agent-json"],
)
def test_an_agent_log_without_our_header_is_reported(tmp_path: Path, first_line: str) -> None:
    lines = written_session(tmp_path)
    log_of(tmp_path).write_text("\n".join([first_line, *lines[1:]]) + "\n")
    with pytest.raises(SessionCorruptError) as caught:
        open_again(tmp_path)
    check_corrupt(caught, log_of(tmp_path), "is not a strandslike agent log", "strandslike-agent-log/1")


@pytest.mark.parametrize(
    ("bad_line", "fragment"),
    [
        ('{"k":"m","i":2,"t":"x","m":{"role":"user"', "line 3 is not a valid record"),
        ("not json at all", "line 3 is not a valid record"),
        ("", "line 3 is not a valid record"),
        ('{"k":"m","i":2,"t":"x"}', "line 3 is not a valid record"),
        ('{"k":"r","i":77,"t":"x","m":{"role":"user","content":[]}}', "line 3 is not a valid record"),
        ('{"i":2}', "line 3 is not a valid record"),
        ("42", "line 3 is not a valid record"),
        ('{"k":"s","t":"x","a":{}}', "line 3 is not a valid record"),
    ],
    ids=[
        "truncated-json",
        "garbage",
        "blank",
        "message-without-body",
        "redact-unknown",
        "no-kind",
        "number",
        "empty-a",
    ],
)
def test_a_corrupt_complete_line_in_the_middle_of_the_log_is_reported_with_its_number(
    tmp_path: Path, bad_line: str, fragment: str
) -> None:
    lines = written_session(tmp_path)
    assert len(lines) >= 4
    log_of(tmp_path).write_text("\n".join([*lines[:2], bad_line, *lines[2:]]) + "\n")
    with pytest.raises(SessionCorruptError) as caught:
        open_again(tmp_path)
    check_corrupt(caught, log_of(tmp_path), fragment)


def test_invalid_utf8_in_a_complete_line_is_reported(tmp_path: Path) -> None:
    written_session(tmp_path)
    with open(log_of(tmp_path), "ab") as handle:
        handle.write(b'{"k":"m","i":2,"t":"x","m":{"role":"user","content":[{"text":"\xff\xfe"}]}}\n')
    with pytest.raises(SessionCorruptError) as caught:
        open_again(tmp_path)
    check_corrupt(caught, log_of(tmp_path), "is not a valid record")


def test_an_unknown_record_kind_is_reported_with_its_line_and_kind(tmp_path: Path) -> None:
    lines = written_session(tmp_path)
    log_of(tmp_path).write_text("\n".join([*lines, checksummed({"k": "z", "t": "x"})]) + "\n")
    with pytest.raises(SessionCorruptError) as caught:
        open_again(tmp_path)
    check_corrupt(caught, log_of(tmp_path), f"line {len(lines) + 1} is not a valid record", "unknown record kind 'z'")


def test_a_strands_agents_agent_directory_is_reported_with_the_import_command(tmp_path: Path) -> None:
    FileSessionManager(SESSION, storage_dir=tmp_path).close()
    directory = agent_dir(tmp_path, "agent_x")
    (directory / "messages").mkdir(parents=True)
    agent_json = directory / "agent.json"
    agent_json.write_text(
        json.dumps({"agent_id": "agent_x", "state": {}, "conversation_manager_state": {}, "_internal_state": {}})
    )
    (directory / "messages" / "message_0.json").write_text(
        json.dumps({"message": {"role": "user", "content": [{"text": "hi"}]}, "message_id": 0})
    )
    with pytest.raises(SessionCorruptError) as caught:
        open_again(tmp_path, agent_id="agent_x")
    check_corrupt(caught, agent_json, "strands-agents", "import-strands")
    assert not (directory / "agent.jsonl").exists()  # nothing written over the foreign session


@pytest.mark.parametrize("target_kind", ["valid-log", "outside-file", "dangling"])
def test_a_symlink_in_place_of_the_agent_log_is_an_error_and_is_not_followed(tmp_path: Path, target_kind: str) -> None:
    lines = written_session(tmp_path)
    target = tmp_path / "elsewhere.jsonl"
    if target_kind == "valid-log":
        target.write_text("\n".join(lines) + "\n")
    elif target_kind == "outside-file":
        target.write_text("precious data\n")
    before = target.read_bytes() if target.exists() else None
    log_of(tmp_path).unlink()
    log_of(tmp_path).symlink_to(target)
    with pytest.raises(SessionCorruptError) as caught:
        open_again(tmp_path)
    check_corrupt(caught, log_of(tmp_path), "must be regular files")
    assert (target.read_bytes() if target.exists() else None) == before


@pytest.mark.parametrize("target_kind", ["valid-record", "dangling"])
def test_a_symlink_in_place_of_session_json_is_an_error_and_is_not_followed(tmp_path: Path, target_kind: str) -> None:
    written_session(tmp_path)
    path = session_dir(tmp_path) / "session.json"
    target = tmp_path / "elsewhere.json"
    if target_kind == "valid-record":
        target.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(target)
    with pytest.raises(SessionCorruptError) as caught:
        FileSessionManager(SESSION, storage_dir=tmp_path)
    check_corrupt(caught, path, "must be regular files")


def test_a_corrupt_multi_agent_file_is_reported_with_its_path(tmp_path: Path) -> None:
    manager = FileSessionManager(SESSION, storage_dir=tmp_path)
    path = session_dir(tmp_path) / "multi_agents" / "multi_agent_graph.json"
    path.parent.mkdir(parents=True)
    path.write_text("{oops")
    with pytest.raises(SessionCorruptError) as caught:
        manager.read_multi_agent(SESSION, "graph")
    check_corrupt(caught, path, "is not valid JSON")
    path.write_text("[]")
    with pytest.raises(SessionCorruptError) as caught:
        manager.read_multi_agent(SESSION, "graph")
    check_corrupt(caught, path, "is not a JSON object")


def test_a_corrupt_file_leaves_the_session_untouched(tmp_path: Path) -> None:
    lines = written_session(tmp_path)
    corrupt = "\n".join([*lines[:2], "garbage", *lines[2:]]) + "\n"
    log_of(tmp_path).write_text(corrupt)
    for _ in range(2):
        with pytest.raises(SessionCorruptError):
            open_again(tmp_path)
    assert log_of(tmp_path).read_text() == corrupt


# -- records that are valid JSON but not valid content, and other non-regular files --------------------------


def append_record(storage: Path, record: Any) -> None:
    with open(log_of(storage), "a", encoding="utf-8") as handle:
        handle.write(checksummed(record) + "\n")


SNAPSHOT_BASE = {"agent_id": "default", "state": {}, "conversation_manager_state": {}, "_internal_state": {}}


@pytest.mark.parametrize(
    "record",
    [
        {"k": "s", "t": "x", "a": []},
        {"k": "s", "t": "x", "a": {**SNAPSHOT_BASE, "state": [1, 2]}},
        {"k": "m", "i": 2, "t": "x", "m": "hello"},
        {"k": "m", "i": 2, "t": "x", "m": {"content": [{"text": "no role"}]}},
        {"k": "m", "i": 2, "t": "x", "m": {"role": "user"}},
        {"k": "m", "i": "2", "t": "x", "m": {"role": "user", "content": [{"text": "string index"}]}},
    ],
    ids=["snapshot-list", "state-list", "message-string", "message-no-role", "message-no-content", "index-string"],
)
def test_a_record_of_the_wrong_shape_is_reported_as_corrupt(tmp_path: Path, record: dict[str, Any]) -> None:
    lines = written_session(tmp_path)
    append_record(tmp_path, record)
    with pytest.raises(SessionCorruptError) as caught:
        open_again(tmp_path)("one more turn")
    check_corrupt(caught, log_of(tmp_path), f"line {len(lines) + 1}")


def test_a_malformed_interrupt_state_is_reported_with_the_file(tmp_path: Path) -> None:
    lines = written_session(tmp_path)
    bad_state = {"interrupts": {"x": {"name": "no id"}}, "activated": True}
    append_record(
        tmp_path, {"k": "s", "t": "x", "a": {**SNAPSHOT_BASE, "_internal_state": {"interrupt_state": bad_state}}}
    )
    with pytest.raises(SessionCorruptError) as caught:
        open_again(tmp_path)
    check_corrupt(caught, log_of(tmp_path), f"line {len(lines) + 1}")


def test_a_malformed_conversation_manager_state_is_reported_with_the_file(tmp_path: Path) -> None:
    written_session(tmp_path)
    state = {"__name__": "SlidingWindowConversationManager", "removed_message_count": -1}
    append_record(tmp_path, {"k": "s", "t": "x", "a": {**SNAPSHOT_BASE, "conversation_manager_state": state}})
    with pytest.raises(SessionCorruptError) as caught:
        open_again(tmp_path)
    check_corrupt(caught, log_of(tmp_path))


@pytest.mark.parametrize("which", ["session.json", "agent.jsonl"])
def test_a_directory_in_place_of_a_session_file_is_reported(tmp_path: Path, which: str) -> None:
    written_session(tmp_path)
    path = session_dir(tmp_path) / "session.json" if which == "session.json" else log_of(tmp_path)
    path.unlink()
    path.mkdir()
    with pytest.raises(SessionCorruptError) as caught:
        open_again(tmp_path)
    check_corrupt(caught, path)


def test_a_symlink_in_place_of_the_lock_file_is_reported(tmp_path: Path) -> None:
    written_session(tmp_path)
    lock = agent_dir(tmp_path) / "lock"
    lock.unlink(missing_ok=True)
    lock.symlink_to(tmp_path / "elsewhere")
    agent = open_again(tmp_path)
    with pytest.raises(SessionCorruptError) as caught:
        agent("hello again")
    check_corrupt(caught, lock)
    assert not (tmp_path / "elsewhere").exists()


def test_an_empty_agent_log_is_a_new_agent(tmp_path: Path) -> None:
    written_session(tmp_path)
    log_of(tmp_path).write_bytes(b"")
    agent = open_again(tmp_path)
    assert agent.messages == []
    assert agent("hello").stop_reason == "end_turn"
    lines = log_of(tmp_path).read_text().splitlines()
    assert json.loads(lines[0])["k"] == "h"
    assert open_again(tmp_path).messages == agent.messages


def test_an_unreadable_log_is_reported(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads files whatever their mode")
    written_session(tmp_path)
    log_of(tmp_path).chmod(0)
    with pytest.raises(SessionCorruptError) as caught:
        open_again(tmp_path)
    check_corrupt(caught, log_of(tmp_path))


@pytest.mark.parametrize(
    "dsn",
    [
        "postgresql://strandslike@127.0.0.1:5432/agents",
        "postgres://localhost/agents",
        "user=strandslike dbname=agents host=127.0.0.1 port=5432 options='-c search_path=trial_0'",
        "dbname=agents",
        "  host=db.internal dbname=agents",
        "",
    ],
)
def test_a_dsn_given_as_a_storage_directory_is_refused_and_creates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dsn: str
) -> None:
    monkeypatch.chdir(tmp_path)  # a relative "directory" would be created here
    with pytest.raises(InvalidStorageDirError) as caught:
        FileSessionManager(SESSION, storage_dir=dsn)
    assert isinstance(caught.value, ValueError)
    assert caught.value.code == "INVALID_STORAGE_DIR"
    if dsn:
        assert "PostgresSessionManager" in str(caught.value)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("name", ["dbname-notes", "sessions", "a=b"])
def test_directories_whose_names_only_resemble_a_dsn_are_accepted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.chdir(tmp_path)
    agent = Agent(model=ScriptedModel([text("hi")]), session_manager=FileSessionManager(SESSION, storage_dir=name))
    agent("hello")
    assert (tmp_path / name / f"session_{SESSION}").is_dir()


def test_a_directory_named_like_a_dsn_is_reachable_by_its_absolute_path(tmp_path: Path) -> None:
    storage = tmp_path / "host=x dbname=y"
    agent = Agent(model=ScriptedModel([text("hi")]), session_manager=FileSessionManager(SESSION, storage_dir=storage))
    agent("hello")
    assert (storage / f"session_{SESSION}").is_dir()
