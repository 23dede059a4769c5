import os
import pty
import selectors
import shlex
import signal
import subprocess
import sys
import time

import pytest
from cli_support import REPO, run_cli

from strandslike.__main__ import main
from strandslike.session import FileSessionManager

FILES = ["a/b/c.txt", "d/e/f.txt"]


def files_left(storage, session_id="demo"):
    workdir = storage / "demo-files" / session_id
    return sorted(str(path.relative_to(workdir)) for path in workdir.rglob("*.txt"))


def resume_line(out):
    (line,) = [line.strip() for line in out.splitlines() if line.strip().startswith("python -m strandslike resume")]
    return line


ASKED = [
    "The agent is asked to delete the files older than 5 days: a/b/c.txt, d/e/f.txt (in a temporary directory).",
    "It inspected them first with inspect_files: a/b/c.txt is 9 bytes, d/e/f.txt is 9 bytes.",
    "Now it wants to run delete_files on a/b/c.txt, d/e/f.txt.",
]
QUESTION = "Do you want to delete ['a/b/c.txt', 'd/e/f.txt'] (t/y/N): "


@pytest.mark.parametrize(
    ("flag", "said"),
    [
        (
            "--yes",
            [
                QUESTION + "y",
                'You answered "y": approved, this time only.',
                "delete_files ran and deleted a/b/c.txt, d/e/f.txt.",
                'The model said: "I deleted a/b/c.txt and d/e/f.txt."',
                "Files left: none.",
            ],
        ),
        (
            "--trust",
            [
                QUESTION + "t",
                'You answered "t": approved, and trusted from now on (remembered in agent.state as myapp-approval: '
                "this session will not ask again).",
                "delete_files ran and deleted a/b/c.txt, d/e/f.txt.",
                'The model said: "I deleted a/b/c.txt and d/e/f.txt."',
                "Files left: none.",
            ],
        ),
        (
            "--no",
            [
                QUESTION + "N",
                'You answered "N": denied.',
                'delete_files did not run: the hook cancelled it, and the model was told "User denied permission to '
                'delete files".',
                'The model said: "You declined, so I left a/b/c.txt and d/e/f.txt in place."',
                "Files left: a/b/c.txt, d/e/f.txt.",
            ],
        ),
    ],
)
def test_the_demo_says_in_plain_words_what_was_asked_answered_run_and_said(capsys, flag, said):
    assert main(["demo", flag]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == ASKED
    assert lines[3].startswith('The approval hook paused it before that call to ask you (interrupt "myapp-approval"')
    assert lines[4:] == said
    assert not any(line.lstrip().startswith(("{", "[", "MESSAGE")) for line in lines)  # no raw JSON dumps


def test_without_a_terminal_the_demo_denies_and_says_how_to_answer(capsys, monkeypatch):
    with open(os.devnull) as devnull:
        monkeypatch.setattr("sys.stdin", devnull)
        assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert QUESTION + "N  (no terminal: pass --yes, --trust or --no to answer)" in out
    assert "Files left: a/b/c.txt, d/e/f.txt." in out


def test_demo_stop_at_prompt_without_storage_saves_nothing(capsys):
    assert main(["demo", "--stop-at-prompt"]) == 0
    assert "nothing was saved" in capsys.readouterr().out


def test_session_id_needs_storage_dir(capsys):
    assert main(["demo", "--session-id", "x"]) == 2
    assert "error: --session-id needs --storage-dir" in capsys.readouterr().err


def test_stopped_demo_prints_the_resume_command(tmp_path, capsys):
    storage = tmp_path / "store"
    assert main(["demo", "--storage-dir", str(storage), "--stop-at-prompt"]) == 0
    out = capsys.readouterr().out
    manager = FileSessionManager("demo", storage_dir=storage)
    interrupt_id = next(iter(manager.read_agent("demo", "default")._internal_state["interrupt_state"]["interrupts"]))
    manager.close()
    expected = (
        f"python -m strandslike resume --agent strandslike._demo:session_agent --storage-dir {storage} demo "
        f"--response {interrupt_id}='\"y\"'"
    )
    assert resume_line(out) == expected
    assert files_left(storage) == FILES

    assert main(shlex.split(expected)[3:]) == 0
    assert "stop reason: end_turn" in capsys.readouterr().out
    assert files_left(storage) == []
    assert main(["demo", "--storage-dir", str(storage)]) == 0  # finished: says so, creates no new files
    assert "has finished" in capsys.readouterr().out
    assert files_left(storage) == []


def test_running_the_demo_again_picks_up_at_the_prompt(tmp_path, capsys):
    storage = tmp_path / "store"
    assert main(["demo", "--storage-dir", str(storage), "--session-id", "s2", "--stop-at-prompt"]) == 0
    capsys.readouterr()
    assert main(["demo", "--storage-dir", str(storage), "--session-id", "s2", "--no"]) == 0
    out = capsys.readouterr().out
    assert "is waiting at the question; picking up there." in out
    assert out.splitlines()[-1] == "Files left: a/b/c.txt, d/e/f.txt."
    assert files_left(storage, "s2") == FILES


def test_demo_stopped_then_resumed_in_child_processes(tmp_path):
    storage = tmp_path / "store"
    stopped = run_cli("demo", "--storage-dir", str(storage), "--stop-at-prompt", stdin=subprocess.DEVNULL)
    assert stopped.returncode == 0, stopped.stderr
    assert files_left(storage) == FILES
    command = shlex.split(resume_line(stopped.stdout))
    assert command[:3] == ["python", "-m", "strandslike"]
    resumed = run_cli(*command[3:])
    assert resumed.returncode == 0, resumed.stderr
    assert files_left(storage) == []


def _read_until(fd, marker, timeout=30.0):
    selector = selectors.DefaultSelector()
    selector.register(fd, selectors.EVENT_READ)
    seen = b""
    deadline = time.monotonic() + timeout
    while marker not in seen:
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"no {marker!r} in {seen!r}"
        if selector.select(remaining):
            chunk = os.read(fd, 4096)
            assert chunk, f"output ended before {marker!r}: {seen!r}"
            seen += chunk
    selector.close()
    return seen


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
@pytest.mark.parametrize(("stop", "code"), [("eof", 0), ("ctrl-c", 130)])
def test_demo_at_a_terminal_stops_on_eof_or_ctrl_c(tmp_path, stop, code):
    storage = tmp_path / "store"
    controller, terminal = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen(
        [sys.executable, "-m", "strandslike", "demo", "--storage-dir", str(storage)],
        stdin=terminal,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    os.close(terminal)
    try:
        seen = _read_until(process.stdout.fileno(), b"(t/y/N): ")
        if stop == "eof":
            os.write(controller, b"\x04")  # Ctrl-D at the start of a line: end of input
        else:
            # A SIGINT that lands between input() writing its prompt and blocking on the read is only seen once
            # the read returns: send it again until the process has stopped.
            for _ in range(30):
                process.send_signal(signal.SIGINT)
                try:
                    process.wait(timeout=1)
                    break
                except subprocess.TimeoutExpired:
                    continue
        out, err = process.communicate(timeout=30)
    finally:
        os.close(controller)
        if process.poll() is None:
            process.kill()
            process.communicate()  # reap it and close its pipes
    assert process.returncode == code, err
    assert "python -m strandslike resume --agent strandslike._demo:session_agent" in (seen + out).decode()
    assert files_left(storage) == FILES
