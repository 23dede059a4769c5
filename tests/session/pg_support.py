"""What the PostgreSQL session tests share: a fresh database per module, stores built in child processes."""

from typing import Any

from strandslike.session.postgres import PostgresSessionRepository


def open_store(argument: dict[str, Any]) -> PostgresSessionRepository:
    """Build the store a test uses, in a child process (``SessionRepositoryContract.child_store``)."""
    return PostgresSessionRepository(argument["dsn"])


def damage_record(dsn: str, session_id: str, owner_id: str, seq: int) -> None:
    """Change one character of a stored record in place, as a careless manual edit or damage would."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        done = conn.execute(
            """
            UPDATE strandslike_records AS r SET record = replace(r.record, 'record', 'recorD')
            FROM strandslike_logs AS l
            WHERE r.log_id = l.log_id AND l.session_id = %s AND l.owner_id = %s AND r.seq = %s
            """,
            (session_id, owner_id, seq),
        )
        assert done.rowcount == 1


def schema_dsn(dsn: str, schema: str) -> str:
    """Return a DSN whose tables live in their own PostgreSQL schema (created here), for one trial of a test."""
    import psycopg
    from psycopg.conninfo import make_conninfo

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')  # type: ignore[arg-type]
    return make_conninfo(dsn, options=f"-c search_path={schema}")
