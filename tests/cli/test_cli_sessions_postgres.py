"""``sessions list/show/interrupts/audit --dsn`` and ``resume --dsn``: the same views and resumes on PostgreSQL."""

import json
from pathlib import Path

import pytest
from cli_support import PATHS, build, deleted, run_cli
from pg_cluster import new_database

from strandslike.session.postgres import PostgresSessionManager


@pytest.fixture
def dsn(postgres_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("STRANDSLIKE_TEST_EFFECTS", str(tmp_path))
    return new_database(postgres_server, "cli")


def paused_session(dsn: str, session_id: str) -> str:
    agent = build(PostgresSessionManager(session_id, dsn=dsn))
    agent.state.set("owner", "alice")
    result = agent("clean up")
    agent.session_manager.close()
    assert result.stop_reason == "interrupt"
    return result.interrupts[0].id


def test_the_views_read_a_postgres_database(dsn: str) -> None:
    interrupt_id = paused_session(dsn, "support-7")
    listing = run_cli("sessions", "list", "--dsn", dsn)
    assert listing.returncode == 0, listing.stderr
    assert "support-7" in listing.stdout
    assert "interrupted (1 open)" in listing.stdout
    as_json = json.loads(run_cli("sessions", "list", "--dsn", dsn, "--json").stdout)
    assert [(s["session_id"], s["interrupted"]) for s in as_json] == [("support-7", True)]

    show = run_cli("sessions", "show", "support-7", "--dsn", dsn)
    assert show.returncode == 0, show.stderr
    assert "agent default" in show.stdout
    assert '"owner": "alice"' in show.stdout or "owner" in show.stdout

    interrupts = run_cli("sessions", "interrupts", "support-7", "--dsn", dsn)
    assert interrupts.returncode == 0, interrupts.stderr
    assert interrupt_id in interrupts.stdout
    assert f"resume --agent MODULE:FACTORY --dsn '{dsn}' support-7" in interrupts.stdout

    audit = json.loads(run_cli("sessions", "audit", "support-7", "--dsn", dsn, "--json").stdout)
    assert [entry["event"] for entry in audit["agents"][0]["audit"]] == ["raised"]

    missing = run_cli("sessions", "show", "nope", "--dsn", dsn)
    assert missing.returncode == 1
    assert "no session 'nope' in PostgreSQL at" in missing.stderr
    assert "sessions there: support-7" in missing.stderr


def test_resume_dsn_answers_an_interrupt_in_the_database(dsn: str, tmp_path: Path) -> None:
    interrupt_id = paused_session(dsn, "support-8")
    answer = f"{interrupt_id}=" + json.dumps("y")
    done = run_cli("resume", "--agent", "cli_support:build", "--dsn", dsn, "support-8", "--response", answer)
    assert done.returncode == 0, done.stderr
    assert "stop reason: end_turn" in done.stdout
    assert deleted(tmp_path) == PATHS
    again = run_cli("resume", "--agent", "cli_support:build", "--dsn", dsn, "support-8", "--response", answer)
    assert again.returncode == 0, again.stderr
    assert "replay" in again.stdout
    assert deleted(tmp_path) == PATHS  # not run again
    audit = json.loads(run_cli("sessions", "audit", "support-8", "--dsn", dsn, "--json").stdout)
    assert [entry["event"] for entry in audit["agents"][0]["audit"]] == ["raised", "answered", "outcome"]


def test_a_dsn_that_cannot_be_reached_is_one_line_and_exit_code_1() -> None:
    down = run_cli("sessions", "list", "--dsn", "postgresql://nobody@127.0.0.1:1/none")
    assert down.returncode == 1
    assert "cannot be reached" in down.stderr
    assert "Traceback" not in down.stderr


def test_serve_checks_its_session_database_before_it_listens(dsn: str) -> None:
    down = run_cli("serve", "--session-dsn", "postgresql://nobody@127.0.0.1:1/none", "--port", "1")
    assert down.returncode == 1
    assert "cannot be reached" in down.stderr
    assert "Traceback" not in down.stderr
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE strandslike_schema (version integer NOT NULL)")
        conn.execute("INSERT INTO strandslike_schema VALUES (42)")
    newer = run_cli("serve", "--session-dsn", dsn, "--port", "1")
    assert newer.returncode == 2
    assert "schema version 42, newer than this strandslike" in newer.stderr
