"""The PostgreSQL store beyond the shared contract: schema management, exact records, errors, forks, deletes."""

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import ClassVar

import psycopg
import pytest
from pg_cluster import new_database
from pg_support import schema_dsn

from strandslike import Agent
from strandslike.agent.conversation_manager import NullConversationManager
from strandslike.models import ScriptedModel, text
from strandslike.session import LogRef
from strandslike.session.postgres import (
    SCHEMA_VERSION,
    PostgresConfigError,
    PostgresSchemaError,
    PostgresSessionManager,
    PostgresSessionRepository,
    PostgresStoreError,
    PostgresUnavailableError,
    migrate,
    schema_version,
)
from strandslike.types.exceptions import MissingExtraError, SessionConflictError, SessionException
from strandslike.types.session import Session, SessionType

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def database(postgres_server: str) -> str:
    return new_database(postgres_server, "store")


def tables(dsn: str) -> set[str]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        ).fetchall()
    return {row[0] for row in rows}


def append(repository: PostgresSessionRepository, ref: LogRef, records: list[dict]) -> str:
    stored = repository.read_log(ref)
    claim = repository.claim_log(ref, None if stored is None else stored.version)
    try:
        repository.append_log(claim, records, durable=True)
        return str(claim.version)
    finally:
        repository.release_log(claim)


# -- schema management ---------------------------------------------------------------------------------------------


def test_the_tables_are_created_on_first_use_with_their_version(database: str) -> None:
    dsn = schema_dsn(database, "first_use")
    assert schema_version(dsn) is None
    PostgresSessionRepository(dsn).create_session(Session("s", SessionType.AGENT))
    assert {"strandslike_schema", "strandslike_sessions", "strandslike_logs", "strandslike_records"} <= tables(dsn)
    with psycopg.connect(dsn) as conn:
        assert conn.execute("SELECT version FROM strandslike_schema").fetchall() == [(SCHEMA_VERSION,)]
    assert migrate(dsn) == (SCHEMA_VERSION, SCHEMA_VERSION)  # nothing more to do


def test_a_database_with_a_newer_schema_is_refused_before_anything_is_written(database: str) -> None:
    dsn = schema_dsn(database, "newer")
    migrate(dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("UPDATE strandslike_schema SET version = %s", (SCHEMA_VERSION + 1,))
    with pytest.raises(PostgresSchemaError, match=rf"schema version {SCHEMA_VERSION + 1}, newer than this") as caught:
        PostgresSessionManager("s", dsn=dsn, pool_size=2)
    assert caught.value.code == "POSTGRES_SCHEMA"
    assert isinstance(caught.value, SessionException)
    with pytest.raises(PostgresSchemaError, match="Upgrade strandslike"):
        migrate(dsn)  # a migration never downgrades either
    with psycopg.connect(dsn) as conn:
        assert conn.execute("SELECT count(*) FROM strandslike_sessions").fetchone() == (0,)


def test_create_schema_false_refuses_a_database_that_was_not_migrated(database: str) -> None:
    dsn = schema_dsn(database, "not_migrated")
    with pytest.raises(PostgresSchemaError, match="db migrate"):
        PostgresSessionRepository(dsn, create_schema=False).list_sessions()
    assert "strandslike_sessions" not in tables(dsn)


def test_replicas_starting_together_migrate_once_and_all_proceed(database: str) -> None:
    dsn = schema_dsn(database, "together")
    outcomes: list[object] = []
    barrier = threading.Barrier(6)

    def start(number: int) -> None:
        barrier.wait()
        try:
            outcomes.append(migrate(dsn))
        except Exception as exc:  # reported below
            outcomes.append(exc)

    threads = [threading.Thread(target=start, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(outcomes, key=str) == sorted([(None, SCHEMA_VERSION)] + [(SCHEMA_VERSION,) * 2] * 5, key=str)


def test_a_database_that_is_not_utf8_is_refused(postgres_server: str) -> None:
    name = f"latin_{os.getpid()}_{time.monotonic_ns()}"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0")  # type: ignore[arg-type]
    dsn = psycopg.conninfo.make_conninfo(postgres_server, dbname=name)
    with pytest.raises(PostgresSchemaError, match="encoding is LATIN1"):
        migrate(dsn)


def test_db_migrate_on_the_command_line(database: str) -> None:
    dsn = schema_dsn(database, "cli_migrate")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "strandslike", "db", *args], capture_output=True, text=True, timeout=60, check=False
        )

    assert "no strandslike tables" in run("version", "--dsn", dsn).stdout
    created = run("migrate", "--dsn", dsn)
    assert created.returncode == 0, created.stderr
    assert f"created strandslike's session tables (schema version {SCHEMA_VERSION})" in created.stdout
    again = run("migrate", "--dsn", dsn)
    assert (again.returncode, "nothing to do" in again.stdout) == (0, True)
    assert f"database: schema version {SCHEMA_VERSION}" in run("version", "--dsn", dsn).stdout
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("UPDATE strandslike_schema SET version = 99")
    newer = run("migrate", "--dsn", dsn)
    assert newer.returncode == 2
    assert "schema version 99, newer than this strandslike" in newer.stderr
    assert run("migrate").returncode == 2  # no database named
    down = run("migrate", "--dsn", "postgresql://nobody@127.0.0.1:1/none")
    assert down.returncode == 1
    assert "cannot be reached" in down.stderr
    assert "Traceback" not in down.stderr + newer.stderr


# -- records and logs ----------------------------------------------------------------------------------------------


def test_records_read_back_exactly_with_nul_characters_and_key_order(database: str) -> None:
    repository = PostgresSessionRepository(database)
    ref = LogRef("exact", "agent", "default")
    records = [
        {"k": "x", "z": 1, "a": 2, "m": {"b": [], "a": None}},  # key order kept (jsonb would sort it)
        {"k": "x", "nul": "a\u0000b", "\u0000key": "\x01\x1f"},  # jsonb and text refuse a raw NUL
        {"k": "x", "big": 10**40, "float": 0.1, "neg0": -0.0},
    ]
    append(repository, ref, records)
    stored = repository.read_log(ref)
    assert stored is not None
    assert stored.records == records
    assert [list(record) for record in stored.records] == [list(record) for record in records]


def test_a_record_that_cannot_be_stored_is_refused_and_nothing_is_written(database: str) -> None:
    repository = PostgresSessionRepository(database)
    ref = LogRef("refused", "agent", "default")
    version = append(repository, ref, [{"k": "x"}])
    claim = repository.claim_log(ref, version)
    try:
        for bad in ({"k": "x", "s": "\ud800"}, {"k": "x", "n": float("nan")}, {"no kind": 1}, ["k"]):
            with pytest.raises((TypeError, ValueError)):
                repository.append_log(claim, [{"k": "ok"}, bad], durable=True)  # type: ignore[list-item]
        assert claim.version == version
    finally:
        repository.release_log(claim)
    stored = repository.read_log(ref)
    assert stored is not None
    assert (stored.records, stored.version) == ([{"k": "x"}], version)


def test_a_deleted_and_recreated_log_never_matches_a_version_read_before(database: str) -> None:
    repository = PostgresSessionRepository(database)
    repository.create_session(Session("recreated", SessionType.AGENT))
    ref = LogRef("recreated", "agent", "default")
    old = append(repository, ref, [{"k": "x", "n": 1}])
    repository.delete_session("recreated")
    assert repository.read_log(ref) is None
    assert repository.read_session("recreated") is None
    repository.create_session(Session("recreated", SessionType.AGENT))
    new = append(repository, ref, [{"k": "x", "n": 2}])
    assert old != new  # same number of records, a new log
    with pytest.raises(SessionConflictError):
        repository.claim_log(ref, old)
    with pytest.raises(SessionException, match="does not exist"):
        repository.delete_session("never-was")


def test_a_deleted_session_voids_a_held_claim(database: str) -> None:
    repository = PostgresSessionRepository(database)
    repository.create_session(Session("voided", SessionType.AGENT))
    ref = LogRef("voided", "agent", "default")
    version = append(repository, ref, [{"k": "x"}])
    claim = repository.claim_log(ref, version)
    repository.delete_session("voided")
    with pytest.raises(SessionConflictError):
        repository.append_log(claim, [{"k": "x"}], durable=False)
    repository.release_log(claim)
    assert repository.read_log(ref) is None


def test_two_replicas_creating_one_session_both_get_it(database: str) -> None:
    first, second = PostgresSessionRepository(database), PostgresSessionRepository(database, pool_size=3)
    created = first.create_session(Session("shared", SessionType.AGENT))
    kept = second.create_session(Session("shared", SessionType.AGENT))
    assert kept.created_at == created.created_at


def test_a_long_history_restores_in_one_pass(database: str) -> None:
    session_id = "long-history"
    manager = PostgresSessionManager(session_id, dsn=database)
    turns = [text(f"answer {n} " + "ü" * (n % 50)) for n in range(300)]
    agent = Agent(
        model=ScriptedModel(turns),
        session_manager=manager,
        conversation_manager=NullConversationManager(),
        callback_handler=None,
    )
    for n in range(300):
        agent(f"question {n}")
    restored = Agent(
        model=ScriptedModel([]),
        session_manager=PostgresSessionManager(session_id, dsn=database),
        conversation_manager=NullConversationManager(),
    )
    assert restored.messages == agent.messages
    assert len(restored.messages) == 600


class CountingConnection(psycopg.Connection):  # type: ignore[type-arg]
    """A psycopg connection that records every statement it runs (the pool's ``connection_class``)."""

    statements: ClassVar[list[str]] = []

    def execute(self, query, params=None, **kwargs):  # type: ignore[no-untyped-def,override]
        text_ = query.decode() if isinstance(query, bytes) else str(query)
        CountingConnection.statements.append(" ".join(text_.split()))
        return super().execute(query, params, **kwargs)


def test_restoring_reads_each_log_with_one_statement_whatever_its_length(database: str) -> None:
    from psycopg_pool import ConnectionPool

    def write(session_id: str, prompts: int) -> None:
        agent = Agent(
            model=ScriptedModel([text(f"answer {n}") for n in range(prompts)]),
            session_manager=PostgresSessionManager(session_id, dsn=database),
            conversation_manager=NullConversationManager(),
            callback_handler=None,
        )
        for n in range(prompts):
            agent(f"question {n}")
        agent.session_manager.close()  # type: ignore[union-attr]

    write("round-trips-short", 2)
    write("round-trips-long", 150)
    counted: dict[str, list[str]] = {}
    with ConnectionPool(database, min_size=1, max_size=4, connection_class=CountingConnection, open=True) as pool:
        PostgresSessionRepository(pool=pool).check()  # the schema check: once per pool, off the count
        for session_id in ("round-trips-short", "round-trips-long"):
            CountingConnection.statements.clear()
            restored = Agent(
                model=ScriptedModel([]),
                session_manager=PostgresSessionManager(session_id, pool=pool),
                conversation_manager=NullConversationManager(),
                callback_handler=None,
            )
            counted[session_id] = list(CountingConnection.statements)
            assert len(restored.messages) == (4 if session_id.endswith("short") else 300)
            restored.session_manager.close()  # type: ignore[union-attr]
    short, long = counted["round-trips-short"], counted["round-trips-long"]
    reads = [statement for statement in long if "FROM strandslike_logs AS l LEFT JOIN strandslike_records" in statement]
    assert len(reads) == 1, long  # the agent's whole log, records and version, in one statement
    assert len(long) == len(short), (short, long)  # no statement per message: 300 messages cost what 4 do


# -- errors ----------------------------------------------------------------------------------------------------------


def test_bad_arguments_are_typed_errors(database: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from psycopg_pool import AsyncConnectionPool, ConnectionPool

    monkeypatch.delenv("STRANDSLIKE_SESSION_DSN", raising=False)
    with pytest.raises(PostgresConfigError, match="STRANDSLIKE_SESSION_DSN") as caught:
        PostgresSessionRepository()
    assert isinstance(caught.value, ValueError)
    assert caught.value.code == "POSTGRES_CONFIG"
    with pytest.raises(PostgresConfigError, match="STRANDSLIKE_SESSION_DSN"):
        PostgresSessionManager("s1")
    pool = ConnectionPool(database, min_size=1, max_size=2, open=True)
    try:
        with pytest.raises(ValueError, match="not both"):
            PostgresSessionRepository(database, pool=pool)
        assert PostgresSessionRepository(pool=pool).list_sessions() is not None  # a pool passed in works
    finally:
        pool.close()
    async_pool = AsyncConnectionPool(database, open=False)
    with pytest.raises(PostgresConfigError, match="ConnectionPool") as refused:
        PostgresSessionRepository(pool=async_pool)
    assert isinstance(refused.value, TypeError)
    with pytest.raises(ValueError, match="claim_grace"):
        PostgresSessionRepository(database, claim_grace=-1)
    with pytest.raises(ValueError, match="session_id"):
        PostgresSessionRepository(database).read_log(LogRef("../escape", "agent", "default"))
    monkeypatch.setenv("STRANDSLIKE_SESSION_DSN", database)
    assert PostgresSessionRepository().where == PostgresSessionRepository(database).where


def test_an_unreachable_database_is_a_typed_error_at_once() -> None:
    started = time.monotonic()
    with pytest.raises(PostgresUnavailableError, match="cannot be reached") as caught:
        PostgresSessionManager("s", dsn="postgresql://nobody@127.0.0.1:1/none")
    assert caught.value.code == "POSTGRES_UNAVAILABLE"
    assert "password" not in str(caught.value)
    assert time.monotonic() - started < 20  # libpq's answer, not the pool's 30 s timeout


def test_without_psycopg_the_error_names_the_extra() -> None:
    program = textwrap.dedent(
        """
        import sys
        sys.modules["psycopg"] = None
        sys.modules["psycopg_pool"] = None
        import strandslike.session.postgres as postgres  # importable without psycopg
        try:
            postgres.PostgresSessionManager("s", dsn="postgresql://x@127.0.0.1/db")
        except ImportError as exc:
            print(type(exc).__name__, exc.code, exc)
        """
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.startswith("MissingExtraError MISSING_EXTRA")
    assert "pip install 'strandslike[postgres]'" in done.stdout
    assert issubclass(MissingExtraError, ImportError)


# -- processes -------------------------------------------------------------------------------------------------------

_FORKER = """
import json, os, sys, time
from strandslike.session import LogRef
from strandslike.session.postgres import PostgresSessionRepository, PostgresStoreError
repository = PostgresSessionRepository(sys.argv[1])
ref = LogRef("forked", "agent", "default")
stored = repository.read_log(ref)
claim = repository.claim_log(ref, None if stored is None else stored.version)
child = os.fork()
if child == 0:
    try:
        repository.read_log(ref)
        print(json.dumps({"child": "used the parent's connections"}), flush=True)
    except PostgresStoreError as exc:
        print(json.dumps({"child": "refused", "error": str(exc)}), flush=True)
    fresh = PostgresSessionRepository(sys.argv[1])
    print(json.dumps({"child_fresh": fresh.read_log(ref) is not None}), flush=True)
    time.sleep(120)
    os._exit(0)
time.sleep(0.5)
repository.append_log(claim, [{"k": "x", "by": "parent"}], durable=True)  # the parent's connections still work
print(json.dumps({"parent": "appended", "child_pid": child}), flush=True)
time.sleep(120)
"""


def test_a_forked_child_never_uses_nor_keeps_the_parents_connections_and_claims(database: str) -> None:
    repository = PostgresSessionRepository(database)
    ref = LogRef("forked", "agent", "default")
    append(repository, ref, [{"k": "x", "by": "test"}])
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with subprocess.Popen(
        [sys.executable, "-c", _FORKER, database], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    ) as parent:
        assert parent.stdout is not None
        try:
            lines = [json.loads(parent.stdout.readline()) for _ in range(3)]
            merged = {key: value for line in lines for key, value in line.items()}
            assert merged["child"] == "refused", merged
            assert "forked" in merged["error"]
            assert merged["child_fresh"] is True
            assert merged["parent"] == "appended"
            parent.kill()  # the parent dies; its forked child lives on with copies of its sockets
            parent.wait(timeout=30)
            stored = repository.read_log(ref)
            assert stored is not None
            assert stored.records[-1] == {"k": "x", "by": "parent"}
            claim = repository.claim_log(ref, stored.version)  # the dead parent's claim died with it
            repository.release_log(claim)
        finally:
            if parent.poll() is None:
                parent.kill()
            child_pid = next((line.get("child_pid") for line in lines if "child_pid" in line), None)
            if child_pid:
                os.kill(child_pid, 9)


def test_every_postgres_error_is_a_session_exception() -> None:
    assert issubclass(PostgresUnavailableError, PostgresStoreError)
    assert issubclass(PostgresSchemaError, PostgresStoreError)
    assert issubclass(PostgresStoreError, SessionException)


def test_connections_the_server_killed_are_replaced_and_claims_go_on(database: str) -> None:
    repository = PostgresSessionRepository(database, pool_size=4)  # its own pool and owner, as a replica
    ref = LogRef("terminated", "agent", "default")
    append(repository, ref, [{"k": "x", "n": 1}])
    with psycopg.connect(database, autocommit=True) as admin:  # a restart, a failover, a proxy dropping them
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    stored = repository.read_log(ref)  # retried on a fresh connection
    assert stored is not None
    claim = repository.claim_log(ref, stored.version)  # a new owner key: the old connection died
    try:
        repository.append_log(claim, [{"k": "x", "n": 2}], durable=True)
    finally:
        repository.release_log(claim)
    again = repository.read_log(ref)
    assert again is not None
    assert [record["n"] for record in again.records] == [1, 2]
