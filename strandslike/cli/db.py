"""``python -m strandslike db migrate|version``: create, upgrade and inspect the PostgreSQL session tables.

Replicas create the tables on first use; an operator runs ``db migrate`` instead when the replicas' database user
may not change the schema (they then open their store with ``create_schema=False``), or to upgrade before rolling
out a new strandslike. Migrations are transactional and take a lock, so running one while replicas start is safe.
"""

import argparse
import os
from typing import Any

from ..types.exceptions import MissingExtraError
from ._common import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, CliError, out

DSN_VARIABLE = "STRANDSLIKE_SESSION_DSN"

DESCRIPTION = f"""\
Manage the tables of the PostgreSQL session store (needs the postgres extra:
pip install 'strandslike[postgres]').

  migrate   create the tables, or upgrade them to this strandslike's schema
            version, in one transaction (safe while replicas run)
  version   print the schema version the database holds and the one this
            strandslike writes

The database is --dsn DSN, or the {DSN_VARIABLE} environment variable.
A database migrated by a newer strandslike is refused, never downgraded.
"""

EPILOG = """\
exit codes: 0 done; 1 the database cannot be reached; 2 bad input, a schema
newer than this strandslike, or the postgres extra is missing
"""


def add_parser(subparsers: Any, storage: argparse.ArgumentParser) -> None:
    """Register ``db`` and its subcommands.

    Args:
        subparsers: The top-level subparsers.
        storage: A parent parser holding ``--storage-dir`` (unused: the database is named by ``--dsn``).
    """
    parser = subparsers.add_parser(
        "db",
        help="create or upgrade the PostgreSQL session tables (needs the postgres extra)",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="db_command", metavar="SUBCOMMAND", required=True, title="subcommands")
    dsn = argparse.ArgumentParser(add_help=False)
    dsn.add_argument("--dsn", default=None, help=f"the PostgreSQL connection string (default: ${DSN_VARIABLE})")
    migrate = commands.add_parser(
        "migrate",
        parents=[dsn],
        help="create or upgrade the tables (one transaction)",
        description="Create strandslike's session tables, or upgrade them to this version's schema, in one "
        "transaction under a lock (safe while replicas start or run).",
        epilog=EPILOG,
    )
    migrate.set_defaults(handler=run_migrate)
    version = commands.add_parser(
        "version",
        parents=[dsn],
        help="print the schema version of the database and of this strandslike",
        description="Print the schema version the database holds and the one this strandslike writes.",
        epilog=EPILOG,
    )
    version.set_defaults(handler=run_version)


def database(args: argparse.Namespace) -> str:
    """Return the DSN from ``--dsn`` or the environment.

    Raises:
        CliError: Neither names a database (exit code 2).
    """
    dsn = args.dsn if args.dsn is not None else os.environ.get(DSN_VARIABLE)
    if not dsn:
        raise CliError(f"name the database: --dsn postgresql://user@host/db, or set {DSN_VARIABLE}", EXIT_USAGE)
    return str(dsn)


def postgres() -> Any:
    """Return the `strandslike.session.postgres` package.

    Raises:
        CliError: The postgres extra is not installed (exit code 2).
    """
    from ..session import postgres as package  # imports psycopg only when used

    try:
        package.import_psycopg()
    except MissingExtraError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    return package


def run_migrate(args: argparse.Namespace) -> int:
    """Create or upgrade the tables; print what was done."""
    dsn = database(args)
    package = postgres()
    try:
        before, after = package.migrate(dsn)
        where = package.PostgresSessionRepository(dsn, create_schema=False).where
    except package.PostgresSchemaError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    except package.PostgresStoreError as exc:
        raise CliError(str(exc), EXIT_FAILURE) from None
    finally:
        package.close_all()
    if before is None:
        out(f"created strandslike's session tables (schema version {after}) in {where}")
    elif before == after:
        out(f"strandslike's session tables in {where} are at schema version {after}: nothing to do")
    else:
        out(f"upgraded strandslike's session tables in {where} from schema version {before} to {after}")
    return EXIT_OK


def run_version(args: argparse.Namespace) -> int:
    """Print the database's schema version and this code's."""
    dsn = database(args)
    package = postgres()
    try:
        found = package.schema_version(dsn)
    except package.PostgresStoreError as exc:
        raise CliError(str(exc), EXIT_FAILURE) from None
    finally:
        package.close_all()
    out(f"database: {'no strandslike tables' if found is None else f'schema version {found}'}")
    out(f"this strandslike: schema version {package.SCHEMA_VERSION}")
    return EXIT_OK


__all__ = ["DESCRIPTION", "add_parser", "run_migrate", "run_version"]
