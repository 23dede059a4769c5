"""Every code block of README.md runs as written, so an example can never break silently.

A small extractor rather than pytest-examples: the rule is ours (only a block preceded by one of two exact
``<!-- readme-test: skip (...) -->`` lines is skipped; a block defining ``test_`` functions runs under pytest, as
in a user's project; ``bash`` blocks run too), each block runs in a fresh interpreter in an empty directory, as a
reader would paste it, and pytest-examples would add a dependency whose formatting and print checks we do not
want.
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

README = Path(__file__).parent.parent / "README.md"
SKIP_MARKERS = {
    "<!-- readme-test: skip (needs a server) -->": "needs a server",
    "<!-- readme-test: skip (needs the network) -->": "needs the network",
}
FENCE = re.compile(r"^```(\S*)\s*$")
BIN = Path(sys.executable).parent  # this environment's python and strandslike console script


@dataclass(frozen=True)
class Block:
    language: str
    code: str
    line: int  # 1-based line of the opening fence
    skip: str | None  # why it is not run, from its marker line


def read_blocks(text: str) -> list[Block]:
    lines = text.splitlines()
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        match = FENCE.match(lines[index])
        if not match:
            index += 1
            continue
        end = index + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        if end == len(lines):
            raise AssertionError(f"README.md:{index + 1}: a code block is never closed")
        marker = lines[index - 1].strip() if index else ""
        skip = SKIP_MARKERS.get(marker)
        if marker.startswith("<!-- readme-test") and skip is None:
            raise AssertionError(f"README.md:{index}: unknown marker {marker!r}; use one of {sorted(SKIP_MARKERS)}")
        blocks.append(Block(match.group(1), "\n".join(lines[index + 1 : end]) + "\n", index + 1, skip))
        index = end + 1
    return blocks


BLOCKS = read_blocks(README.read_text())


def runnable(language: str) -> list[Block]:
    return [block for block in BLOCKS if block.language == language and block.skip is None]


def clean_env(home: Path) -> dict[str, str]:
    environ = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("STRANDSLIKE_", "OTEL_", "PYTEST_")) and key != "PYTHONPATH"
    }
    return {**environ, "HOME": str(home), "PATH": f"{BIN}{os.pathsep}{environ.get('PATH', '')}"}


@pytest.mark.parametrize("block", runnable("python"), ids=lambda block: f"line-{block.line}")
def test_python_block_runs(block: Block, tmp_path: Path):
    env = clean_env(tmp_path)
    if re.search(r"^def test_", block.code, re.MULTILINE):
        (tmp_path / "test_readme_block.py").write_text(block.code)
        (tmp_path / "pytest.ini").write_text(
            "[pytest]\nfilterwarnings = error\nasyncio_default_fixture_loop_scope = function\n"
        )
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_readme_block.py"]
    else:
        (tmp_path / "block.py").write_text(block.code)
        command = [sys.executable, "-W", "error", "block.py"]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"README.md:{block.line} failed:\n{done.stdout}\n{done.stderr}"


@pytest.mark.parametrize("block", runnable("bash"), ids=lambda block: f"line-{block.line}")
def test_bash_block_runs(block: Block, tmp_path: Path):
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.code],
        cwd=tmp_path,
        env=clean_env(tmp_path),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"README.md:{block.line} failed:\n{done.stdout}\n{done.stderr}"


def test_only_marked_blocks_are_skipped_and_every_runnable_language_is_run():
    assert {block.language for block in BLOCKS} <= {"python", "bash", "text", ""}
    assert len(runnable("python")) >= 6
    assert runnable("bash"), "the command-line examples must run"


def test_the_cli_examples_resume_the_demo_with_the_id_it_prints(tmp_path: Path):
    """The id in the README's resume example is the one the demo really raises (ids are deterministic)."""
    [block] = [block for block in runnable("bash") if "strandslike resume" in block.code]
    [interrupt_id] = re.findall(r"--response (\S+)='\"y\"'", block.code)
    stopped = subprocess.run(
        [sys.executable, "-m", "strandslike", "demo", "--storage-dir", "s", "--stop-at-prompt"],
        cwd=tmp_path,
        env=clean_env(tmp_path),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=True,
    )
    assert f"--response {interrupt_id}=" in stopped.stdout


def test_the_trust_example_asks_once_remembers_across_processes_and_asks_again_after_revoking(tmp_path: Path):
    """Each command of the README's trust example, run as its own process, does what its comment says."""
    [block] = [block for block in runnable("bash") if "sessions trust revoke" in block.code]
    commands = [line.split("#")[0].split() for line in block.code.splitlines() if line.strip()]
    assert [command[:4] for command in commands] == [
        ["python", "-m", "strandslike", word] for word in ["demo", "demo", "sessions", "sessions", "demo"]
    ]
    said = [
        subprocess.run(
            [sys.executable, *command[1:]],
            cwd=tmp_path,
            env=clean_env(tmp_path),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for command in commands
    ]
    question = "Do you want to delete ['a/b/c.txt', 'd/e/f.txt'] (t/y/N): "
    trusted, again, listed, revoked, asked = said
    assert question + "t" in trusted
    assert "trust granted" in trusted
    assert question not in again
    assert "trust used, granted by you" in again
    assert "Files left: none." in again
    assert "delete_files (any arguments)" in listed
    assert "revoked trust in delete_files" in revoked
    assert question + "N" in asked
    assert "Files left: a/b/c.txt, d/e/f.txt." in asked


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_curl_quick_start_against_a_real_server(tmp_path: Path):
    if shutil.which("curl") is None:
        if os.environ.get("CI"):
            pytest.fail("curl is required in CI to run the README's quick start (.ci/run installs it)")
        pytest.skip("curl is not installed")
    [serve_block] = [block for block in BLOCKS if block.code.startswith("python -m strandslike serve --storage-dir")]
    [curl_block] = [block for block in BLOCKS if "curl -sN" in block.code]
    assert serve_block.skip == curl_block.skip == "needs a server"
    port = free_port()
    serve = [*serve_block.code.split("#")[0].split(), "--port", str(port), "--log-level", "warning"]
    env = clean_env(tmp_path)
    server = subprocess.Popen(
        [sys.executable, *serve[1:]], cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            assert server.poll() is None, f"the server exited: {server.communicate()}"
            assert time.monotonic() < deadline, "the server did not start"
            try:
                if httpx.get(f"http://127.0.0.1:{port}/capabilities", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        code = curl_block.code.replace("127.0.0.1:8000", f"127.0.0.1:{port}")
        first, second = code.split("\n\ncurl ")
        bash = ["bash", "-euo", "pipefail", "-c"]
        ran = [
            subprocess.run([*bash, part], env=env, capture_output=True, text=True, timeout=60)
            for part in (first, "curl " + second)
        ]
    finally:
        server.send_signal(signal.SIGINT)
        _, server_err = server.communicate(timeout=30)
    assert server.returncode == 0, server_err
    asked, answered = ran
    assert asked.returncode == answered.returncode == 0, (asked.stderr, answered.stderr)
    assert '"outcome":{"type":"interrupt","interrupts":[{"id":"v1:before_tool_call:tooluse_2:' in asked.stdout
    [interrupt_id] = re.findall(r'"interruptId": "([^"]+)"', curl_block.code)
    assert f'"id":"{interrupt_id}"' in asked.stdout  # the README shows the id the server really sends
    assert '"type":"TOOL_CALL_RESULT"' in answered.stdout
    assert "I deleted a/b/c.txt and d/e/f.txt." in answered.stdout
    assert answered.stdout.rstrip().endswith('"outcome":{"type":"success"}}')
    assert (tmp_path / "quickstart-threads" / "session_t1").is_dir()  # the thread is a session in --storage-dir


def test_the_readme_holds_the_ci_test_command():
    ci = (README.parent / ".ci" / "run").read_text()
    [command] = re.findall(r'^test_command="(.+)"$', ci, re.MULTILINE)
    assert command in README.read_text()
