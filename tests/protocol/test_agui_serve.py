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


def start(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(Path(__file__).parent)])}
    return subprocess.Popen(
        [sys.executable, "-c", SERVE, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def wait_until_up(url: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server exited: {process.communicate()}")
        try:
            if httpx.get(url + "/capabilities", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.05)
    raise AssertionError("the server did not start")


def test_help_describes_the_command(capsys):
    assert serve(["--help"]) == 0
    out = capsys.readouterr().out
    for option in ("--agent", "--storage-dir", "--host", "--port"):
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
        assert interrupt["metadata"]["name"] == "myapp-approval"
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
