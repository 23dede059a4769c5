"""``serve(argv)``, the ``python -m strandslike serve`` command: options, refusals, and a real server process."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from agui_support import post

from strandslike.cli.serve import _is_loopback, serve

REPO = Path(__file__).parent.parent.parent
SERVE = "import sys; from strandslike.cli.serve import serve; sys.exit(serve(sys.argv[1:]))"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(*args: str, env_extra: dict[str, str] | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(Path(__file__).parent)])}
    env.pop("STRANDSLIKE_SERVE_TOKEN", None)
    env.update(env_extra or {})
    return subprocess.Popen(
        [sys.executable, "-c", SERVE, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def wait_until_up(url: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server exited: {process.communicate()}")
        try:
            if httpx.get(url + "/capabilities", timeout=1).status_code in (200, 401):
                return
        except httpx.TransportError:
            time.sleep(0.05)
    raise AssertionError("the server did not start")


def test_help_describes_the_command(capsys):
    assert serve(["--help"]) == 0
    out = capsys.readouterr().out
    options = ("--agent", "--storage-dir", "--host", "--port", "--token", "--cors-origin", "--max-body-bytes")
    for option in (*options, "--agent-cache-size"):
        assert option in out
    assert "strandslike._demo:session_agent" in out
    assert "127.0.0.1" in out


@pytest.mark.parametrize("agent", ["no-colon", "no_such_module_xyz:build", "strandslike._demo:no_such_factory"])
def test_a_factory_that_cannot_be_loaded_is_a_usage_error(capsys, agent):
    assert serve(["--agent", agent]) == 2
    assert "--agent" in capsys.readouterr().err


def test_a_bad_option_is_a_usage_error(capsys):
    assert serve(["--port", "eighty"]) == 2


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("localhost", True), ("::1", True), ("127.0.0.2", True), ("0.0.0.0", False), ("::", False)],
)
def test_loopback_hosts_are_recognised(host, loopback):
    assert _is_loopback(host) is loopback


async def test_serve_runs_the_demo_agent_on_loopback_until_interrupted(tmp_path):
    port = free_port()
    process = start("--storage-dir", str(tmp_path), "--port", str(port), "--log-level", "warning")
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url, process)
        body = {"threadId": "cli-thread", "runId": "r1", "messages": [{"id": "u1", "role": "user", "content": "go"}]}
        run = await post(url, body)
        [interrupt] = run.interrupts
        assert interrupt["metadata"]["name"] == "strands:human-in-the-loop"
        assert (tmp_path / "session_cli-thread").is_dir()
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=20)
    assert process.returncode == 0, err
    assert f"POST http://127.0.0.1:{port}/" in err
    assert "warning: listening" not in err


def test_serve_fails_cleanly_when_the_port_is_taken(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process = start("--storage-dir", str(tmp_path), "--port", str(port), "--log-level", "critical")
        process.communicate(timeout=30)
    assert process.returncode != 0


# -- security options -----------------------------------------------------------------------------------------


@pytest.fixture
def no_env_token(monkeypatch):
    monkeypatch.delenv("STRANDSLIKE_SERVE_TOKEN", raising=False)


@pytest.mark.usefixtures("no_env_token")
@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10"])
def test_a_non_loopback_host_without_a_token_is_refused(capsys, tmp_path, host):
    assert serve(["--storage-dir", str(tmp_path), "--host", host]) == 2
    err = capsys.readouterr().err
    assert f"refusing to listen on {host} without authentication" in err
    assert "--token" in err
    assert "STRANDSLIKE_SERVE_TOKEN" in err
    assert "--allow-unauthenticated" in err


def test_an_empty_token_variable_is_refused(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("STRANDSLIKE_SERVE_TOKEN", "")
    assert serve(["--storage-dir", str(tmp_path)]) == 2
    assert "STRANDSLIKE_SERVE_TOKEN is set but empty" in capsys.readouterr().err


@pytest.mark.usefixtures("no_env_token")
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--token", "two words"], "bearer token"),
        (["--cors-origin", "https://app.example.com/path"], "is not an origin"),
        (["--max-body-bytes", "0"], "max_body_bytes=0"),
        (["--agent-cache-size", "-1"], "agent_cache_size=-1"),
    ],
)
def test_unusable_security_options_are_usage_errors(capsys, tmp_path, args, message):
    assert serve(["--storage-dir", str(tmp_path), *args]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "two words" not in err


async def test_serve_with_a_token_from_the_environment_requires_it(tmp_path):
    port = free_port()
    token = "env-token-0123456789"
    process = start(
        "--storage-dir",
        str(tmp_path),
        "--port",
        str(port),
        "--log-level",
        "warning",
        env_extra={"STRANDSLIKE_SERVE_TOKEN": token},
    )
    url = f"http://127.0.0.1:{port}"
    body = {"threadId": "token-thread", "runId": "r1", "messages": [{"id": "u1", "role": "user", "content": "go"}]}
    try:
        wait_until_up(url, process)
        async with httpx.AsyncClient() as client:
            refused = await client.post(url + "/", json=body)
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"].startswith("Bearer")
        assert not (tmp_path / "session_token-thread").exists()
        run = await post(url, body, headers={"authorization": f"Bearer {token}"})
        assert run.interrupts
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=20)
    assert process.returncode == 0, err
    assert "bearer token required" in err
    assert token not in err


async def test_allow_unauthenticated_serves_a_non_loopback_host_with_a_warning(tmp_path):
    port = free_port()
    process = start("--storage-dir", str(tmp_path), "--host", "0.0.0.0", "--port", str(port), "--allow-unauthenticated")
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url, process)
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=20)
    assert process.returncode == 0, err
    assert "warning: listening on 0.0.0.0" in err
    assert "without authentication" in err
