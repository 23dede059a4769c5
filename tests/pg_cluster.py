"""A throwaway PostgreSQL cluster for the tests: created in a temporary directory, owned by an unprivileged user.

`PostgresCluster` runs Debian's own server binaries (package ``postgresql``; `.ci/run` installs it): ``initdb`` into
a fresh directory, then ``postgres`` listening on a free loopback port and a private Unix socket directory, as
the ``postgres`` user (or ``nobody``) when the tests run as root, since the server refuses to run as root. The
cluster is stopped and deleted when the test session ends.

``STRANDSLIKE_TEST_POSTGRES_DSN`` points the tests at an existing server instead. Outside CI, tests that need
PostgreSQL are skipped with the reason when no server can be started; inside CI (``CI`` set) that is an error,
so a broken installation can never pass unnoticed.
"""

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

DSN_VARIABLE = "STRANDSLIKE_TEST_POSTGRES_DSN"
DATABASE_USER = "strandslike"


class ClusterUnavailable(RuntimeError):
    """No PostgreSQL server could be started here (the message says why)."""


def _server_binaries() -> Path:
    candidates = [shutil.which("initdb")]
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    for candidate in candidates:
        if candidate and Path(candidate).is_file():
            return Path(os.path.realpath(candidate)).parent
    raise ClusterUnavailable(
        "PostgreSQL's server binaries (initdb, postgres) were not found; install Debian's `postgresql` package "
        f"or set {DSN_VARIABLE} to a server's DSN"
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _unprivileged_user() -> pwd.struct_passwd | None:
    """Return the user to run the server as when we are root (None when we are not root)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            return pwd.getpwnam(name)
    raise ClusterUnavailable("running as root, and there is no `postgres` or `nobody` user to run the server as")


class PostgresCluster:
    """A private PostgreSQL server for one test session.

    Attributes:
        dsn: Connection string of the database ``postgres`` as the superuser ``strandslike`` (trust auth, loopback).
    """

    def __init__(self, settings: dict[str, str] | None = None) -> None:
        self.settings = dict(settings or {})  # more `-c name=value` server settings (the benchmark tunes some)
        self.binaries = _server_binaries()
        self.user = _unprivileged_user()
        self.root = Path(tempfile.mkdtemp(prefix="strandslike-pg-"))
        self.data = self.root / "data"
        self.sockets = self.root / "sockets"
        self.port = _free_port()
        self.dsn = f"postgresql://{DATABASE_USER}@127.0.0.1:{self.port}/postgres"
        self.process: subprocess.Popen[bytes] | None = None

    def _as_server_user(self, argv: list[str]) -> list[str]:
        if self.user is None:
            return argv
        return ["setpriv", f"--reuid={self.user.pw_uid}", f"--regid={self.user.pw_gid}", "--clear-groups", *argv]

    def start(self) -> None:
        """Create the cluster and start the server; raise `ClusterUnavailable` saying why if it cannot start."""
        self.sockets.mkdir(mode=0o700)
        if self.user is not None:
            os.chmod(self.root, 0o755)
            os.chown(self.sockets, self.user.pw_uid, self.user.pw_gid)
            os.chown(self.root, self.user.pw_uid, self.user.pw_gid)
        initdb = self._as_server_user(
            [
                str(self.binaries / "initdb"),
                *("-D", str(self.data), "-U", DATABASE_USER, "-A", "trust", "-E", "UTF8", "--no-sync"),
            ]
        )
        done = subprocess.run(initdb, capture_output=True, text=True, check=False, env={**os.environ, "LC_ALL": "C"})
        if done.returncode != 0:
            raise ClusterUnavailable(f"initdb failed: {done.stderr.strip() or done.stdout.strip()}")
        server = self._as_server_user(
            [
                str(self.binaries / "postgres"),
                "-D",
                str(self.data),
                "-p",
                str(self.port),
                "-k",
                str(self.sockets),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "max_connections=200",
                "-c",
                "shared_buffers=32MB",
                *(part for name, value in self.settings.items() for part in ("-c", f"{name}={value}")),
            ]
        )
        with (self.root / "server.log").open("wb") as log:  # the child keeps its own descriptor
            self.process = subprocess.Popen(server, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ClusterUnavailable(f"the server exited at start: {self.server_log()}")
            ready = subprocess.run(
                ["pg_isready", "-q", "-h", "127.0.0.1", "-p", str(self.port), "-U", DATABASE_USER], check=False
            )
            if ready.returncode == 0:
                return
            time.sleep(0.1)
        raise ClusterUnavailable(f"the server did not accept connections within 30 s: {self.server_log()}")

    def server_log(self) -> str:
        """Return the end of the server's log, for error messages."""
        path = self.root / "server.log"
        return path.read_text(errors="replace")[-2000:] if path.exists() else ""

    def stop(self) -> None:
        """Stop the server at once and delete the cluster."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()  # smart shutdown would wait for clients; SIGTERM is PostgreSQL's "fast" mode
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.root, ignore_errors=True)


def new_database(server_dsn: str, prefix: str = "t") -> str:
    """Create a fresh, empty UTF-8 database on the server of ``server_dsn``; return its DSN.

    Each test module that needs an empty store gets its own database instead of sharing tables with the others.
    """
    import uuid

    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_dsn, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name} ENCODING 'UTF8' TEMPLATE template0")  # type: ignore[arg-type]
    return make_conninfo(**{**conninfo_to_dict(server_dsn), "dbname": name})


@contextlib.contextmanager
def postgres_dsn() -> Iterator[str]:
    """Yield the DSN of a PostgreSQL server for the tests (an existing one, or a throwaway cluster)."""
    existing = os.environ.get(DSN_VARIABLE)
    if existing:
        yield existing
        return
    cluster = PostgresCluster()
    try:
        cluster.start()
        yield cluster.dsn
    finally:
        cluster.stop()
