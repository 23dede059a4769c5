"""Id validation (issue 9, item 6): one rule set for sessions, agents, orchestrators and threads, checked before
anything is written, with a clear `ValueError` (`InvalidIdError`, code ``INVALID_ID``) and never a stray file."""

import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from strandslike import Agent
from strandslike._identifier import MAX_ID_BYTES, Identifier, id_problem, validate, validate_id
from strandslike.models import ScriptedModel, text
from strandslike.multiagent import GraphBuilder, Swarm
from strandslike.session import FileSessionManager, InMemorySessionRepository, RepositorySessionManager
from strandslike.types.exceptions import InvalidIdError, StrandslikeError

# (bad id, what the message must say)
HOSTILE: list[tuple[str, str]] = [
    ("é" * 65, "130 bytes long in UTF-8 (65 characters); the limit is 128 bytes"),
    ("日本" * 22, "132 bytes long in UTF-8"),
    ("😀" * 33, "132 bytes long in UTF-8"),
    ("a\ud800b", "U+D800 (a lone surrogate (not valid Unicode)) at position 1"),
    ("\udfff", "U+DFFF (a lone surrogate"),
    ("a\x85b", "U+0085 (a control character)"),
    ("a\x9bb", "U+009B (a control character)"),
    ("a\u2028b", "U+2028 (a line separator)"),
    ("a\u2029b", "U+2029 (a paragraph separator)"),
    *[(f"a{chr(c)}b", f"U+{c:04X}") for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))],
    ("a\u200eb", "U+200E"),
    ("a\u200fb", "U+200F"),
    ("a\u061cb", "U+061C"),
    ("a\u200bb", "U+200B (an invisible format character"),
    ("a\ufeffb", "U+FEFF"),
    ("a\ue000b", "U+E000 (a private-use character)"),
    ("a\U0010fffdb", "private-use character"),
    ("a\u0378b", "U+0378 (an unassigned code point)"),
    ("a\ufffeb", "U+FFFE (an unassigned code point)"),
    ("a\x00b", "control characters"),
    ("", "cannot be empty"),
    ("a/b", "path separators"),
    ("..", "'..'"),
    (" a", "whitespace"),
]
GOOD = ["é" * 64, "日本" * 21 + "x", "😀" * 32, "a b", "Ünïcödé-1.2_x", "a" * MAX_ID_BYTES, "\u00e9t\u00e9"]


def ids(cases: list[tuple[str, str]]) -> list[str]:
    return [ascii(value)[:24] for value, _ in cases]


@pytest.mark.parametrize(("bad", "problem"), HOSTILE, ids=ids(HOSTILE))
def test_hostile_ids_are_refused_with_a_clear_value_error(bad: str, problem: str) -> None:
    with pytest.raises(InvalidIdError) as caught:
        validate_id(bad, "session")
    error = caught.value
    assert isinstance(error, ValueError)
    assert isinstance(error, StrandslikeError)
    assert error.code == "INVALID_ID"
    assert problem in str(error)
    assert str(error).startswith("session_id=")
    # The message itself is printable and encodable: no raw surrogate, control or bidi character in it.
    str(error).encode("utf-8")
    assert all(unicodedata.category(char) not in ("Cc", "Cf", "Cs", "Zl", "Zp") for char in str(error))


@pytest.mark.parametrize("good", GOOD, ids=[ascii(value)[:24] for value in GOOD])
def test_ids_within_128_utf8_bytes_are_accepted(good: str) -> None:
    assert len(good.encode("utf-8")) <= MAX_ID_BYTES
    assert validate_id(good, "agent") == good


def test_strands_signature_is_kept() -> None:
    assert validate("abc", Identifier.SESSION) == "abc"
    with pytest.raises(ValueError, match=r"agent_id=.* \| id cannot contain path separators"):
        validate("a/b", Identifier.AGENT)


def test_a_huge_id_is_refused_without_a_huge_message() -> None:
    with pytest.raises(InvalidIdError) as caught:
        validate_id("x" * 10_000_000, "session")
    assert len(str(caught.value)) < 400
    assert "10000000 characters long" in str(caught.value)


@pytest.mark.parametrize(("bad", "problem"), HOSTILE, ids=ids(HOSTILE))
def test_file_session_manager_refuses_before_writing_anything(tmp_path: Path, bad: str, problem: str) -> None:
    storage = tmp_path / "storage"
    with pytest.raises(InvalidIdError, match="session_id="):
        FileSessionManager(bad, storage_dir=storage)
    assert not storage.exists() or list(storage.iterdir()) == []
    assert [path.name for path in tmp_path.iterdir()] in ([], ["storage"])


@pytest.mark.parametrize(("bad", "problem"), HOSTILE, ids=ids(HOSTILE))
def test_repository_session_manager_refuses_the_same_ids(bad: str, problem: str) -> None:
    with pytest.raises(InvalidIdError, match=re.escape(problem)):
        RepositorySessionManager(bad, InMemorySessionRepository())


@pytest.mark.parametrize(("bad", "problem"), HOSTILE, ids=ids(HOSTILE))
def test_agent_ids_are_validated_at_construction_as_in_strands(tmp_path: Path, bad: str, problem: str) -> None:
    storage = tmp_path / "storage"
    manager = FileSessionManager("s", storage_dir=storage)
    with pytest.raises(InvalidIdError, match="agent_id="):
        Agent(model=ScriptedModel([text("ok")]), agent_id=bad, session_manager=manager)
    agents = storage / "session_s" / "agents"
    assert not agents.exists() or list(agents.iterdir()) == []


def test_an_empty_agent_id_is_refused_and_none_is_the_default() -> None:
    with pytest.raises(InvalidIdError, match=re.escape("agent_id='' | id cannot be empty")):
        Agent(agent_id="")
    assert Agent().agent_id == "default"
    assert Agent(agent_id=None).agent_id == "default"


@pytest.mark.parametrize("bad", [5, None, b"x", ["a"], True])
def test_ids_that_are_not_strings_are_refused(bad: Any) -> None:
    with pytest.raises(InvalidIdError, match="must be a string"):
        validate_id(bad, "session")


@pytest.mark.parametrize(("bad", "problem"), HOSTILE[:12], ids=ids(HOSTILE[:12]))
def test_orchestrator_ids_are_validated_at_construction(bad: str, problem: str) -> None:
    with pytest.raises(InvalidIdError, match="swarm_id="):
        Swarm([Agent(name="worker", model=ScriptedModel([text("ok")]))], id=bad)
    builder = GraphBuilder()
    builder.add_node(Agent(model=ScriptedModel([text("ok")])), "a")
    with pytest.raises(InvalidIdError, match="graph_id="):
        builder.set_graph_id(bad)


def test_every_accepted_id_names_a_session_file_that_restores(tmp_path: Path) -> None:
    """Whatever passes validation fits the file-name limit with its prefix, and round-trips through a session."""
    longest = "😀" * 32  # 128 bytes
    for session_id, agent_id in [(longest, longest), ("é" * 64, "日本" * 21 + "x")]:
        agent = Agent(
            model=ScriptedModel([text("ok")]),
            agent_id=agent_id,
            session_manager=FileSessionManager(session_id, storage_dir=tmp_path),
        )
        assert agent("hi").stop_reason == "end_turn"
        agent.session_manager.close()
        again = Agent(
            model=ScriptedModel([]),
            agent_id=agent_id,
            session_manager=FileSessionManager(session_id, storage_dir=tmp_path),
        )
        assert again.messages == agent.messages


@settings(max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(min_size=0, max_size=80))
def test_validation_never_raises_anything_but_invalid_id_error(value: str) -> None:
    try:
        validate_id(value, "session")
    except InvalidIdError:
        return
    encoded = value.encode("utf-8")  # an accepted id is valid Unicode...
    assert 0 < len(encoded) <= MAX_ID_BYTES  # ...fits the limit...
    assert len(f"session_{value}".encode()) <= 255
    assert len(f"multi_agent_{value}.json".encode()) <= 255
    refused = ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")  # ...and holds nothing invisible or control-like
    assert not any(unicodedata.category(char) in refused for char in value)
    assert id_problem(value) is None


@pytest.mark.parametrize(
    "session_id",
    ["a\udced\udca0\udc80", "é" * 100, "a\u202eb", "a\u2028b", "a\x85b", "../x", ""],
    ids=["surrogates", "too-many-bytes", "bidi", "line-separator", "c1", "traversal", "empty"],
)
@pytest.mark.parametrize("command", ["show", "interrupts"])
def test_the_cli_prints_one_line_and_no_traceback(tmp_path: Path, session_id: str, command: str) -> None:
    storage = tmp_path / "storage"
    storage.mkdir()
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    argv = [sys.executable, "-m", "strandslike", "sessions", command, "--storage-dir", str(storage), session_id]
    # A surrogate in argv is how Python decodes undecodable bytes (surrogateescape); pass the bytes themselves.
    raw_argv = [os.fsencode(arg) for arg in argv]
    done = subprocess.run(raw_argv, capture_output=True, env=env, timeout=60, check=False)
    stderr = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 2, stderr
    assert "Traceback" not in stderr
    assert stderr.count("\n") == 1, stderr
    assert stderr.startswith("error: session_id="), stderr
    assert list(storage.iterdir()) == []
