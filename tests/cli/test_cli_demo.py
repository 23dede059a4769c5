import json
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
from strandslike._demo import session_agent
from strandslike.session import FileSessionManager

FILES = ["a/b/c.txt", "d/e/f.txt"]


def files_left(storage, session_id="demo"):
    workdir = storage / "demo-files" / session_id
    return sorted(str(path.relative_to(workdir)) for path in workdir.rglob("*.txt"))


def resume_line(out):
    (line,) = [line.strip() for line in out.splitlines() if line.strip().startswith("python -m strandslike resume")]
    return line


INTERRUPT_ID = "v1:before_tool_call:tooluse_2:b9e6f0f7-048e-5f43-a7b0-2b41b64a57ec"
ASKED = [
    "The agent is asked to delete the files older than 5 days: a/b/c.txt, d/e/f.txt (in a temporary directory).",
    "It inspected them first with inspect_files: a/b/c.txt is 9 bytes, d/e/f.txt is 9 bytes.",
    "  (HumanInTheLoop let it run without asking: it is in allowed_tools.)",
    "Now it wants to run delete_files on a/b/c.txt, d/e/f.txt.",
    f'HumanInTheLoop paused it before that call to ask you (interrupt "strands:human-in-the-loop", id {INTERRUPT_ID}).',
]
QUESTION = "Do you want to delete ['a/b/c.txt', 'd/e/f.txt'] (t/y/N): "
DELETED = 'The model said: "I deleted a/b/c.txt and d/e/f.txt."'
KEPT = 'The model said: "You declined, so I left a/b/c.txt and d/e/f.txt in place."'


@pytest.mark.parametrize(
    ("flag", "said"),
    [
        (
            "--yes",
            [
                QUESTION + "y",
                'You answered "y": approved, this time only.',
                "delete_files ran and deleted a/b/c.txt, d/e/f.txt (approved by you).",
                DELETED,
                "Files left: none.",
            ],
        ),
        (
            "--trust",
            [
                QUESTION + "t",
                'You answered "t": approved, and trusted from now on: HumanInTheLoop keeps delete_files in '
                "agent.state (hitl:trusted_tools), so it will not ask again in this run (nothing is saved without "
                "--storage-dir: the next run asks).",
                "delete_files ran and deleted a/b/c.txt, d/e/f.txt (approved by you, and trust granted: delete_files "
                "is trusted from now on).",
                DELETED,
                "Files left: none.",
            ],
        ),
        (
            "--no",
            [
                QUESTION + "N",
                'You answered "N": denied.',
                "delete_files did not run (denied by you); HumanInTheLoop cancelled the call and told the model: "
                'CONFIRMATION_FAILED: Approve "delete_files"?',
                KEPT,
                "Files left: a/b/c.txt, d/e/f.txt.",
            ],
        ),
    ],
)
def test_the_demo_says_in_plain_words_what_was_asked_answered_run_and_said(capsys, flag, said):
    assert main(["demo", flag]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[: len(ASKED)] == ASKED
    assert lines[len(ASKED) :] == said
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
    agent = session_agent(manager)
    assert [interrupt.id for interrupt in agent.pending_interrupts] == [INTERRUPT_ID]  # ids are deterministic
    manager.close()
    expected = (
        f"python -m strandslike resume --agent strandslike._demo:session_agent --storage-dir {storage} demo "
        f"--response {INTERRUPT_ID}='\"y\"'"
    )
    assert resume_line(out) == expected
    assert files_left(storage) == FILES

    assert main(shlex.split(expected)[3:]) == 0
    assert "stop reason: end_turn" in capsys.readouterr().out
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


def demo(storage, *flags):
    """Run the demo in a child process on session ``demo`` of ``storage``, with no terminal (a question: N)."""
    done = run_cli("demo", "--storage-dir", str(storage), *flags, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    return done.stdout


def trust_list(storage):
    done = run_cli("sessions", "trust", "list", "--storage-dir", str(storage), "demo", "--json")
    assert done.returncode == 0, done.stderr
    [agent] = json.loads(done.stdout)["agents"]
    return agent["trust"]


def stored_agent(storage):
    manager = FileSessionManager("demo", storage_dir=storage)
    try:
        return session_agent(manager)
    finally:
        manager.close()


def decisions(agent, tool="delete_files"):
    return [
        entry["decision"] for entry in agent.interrupt_audit if entry["event"] == "decision" and entry["tool"] == tool
    ]


def test_trust_is_remembered_by_the_next_process_until_it_is_revoked(tmp_path):
    storage = tmp_path / "store"
    first = demo(storage, "--trust")
    assert QUESTION + "t" in first
    assert "saved with the session, so it will not ask about it again, in this process or the next" in first
    assert files_left(storage) == []
    agent = stored_agent(storage)
    assert agent.state.get("hitl:trusted_tools") == ["delete_files"]
    [grant] = agent.state.get("hitl:trust")
    assert (grant["tool"], grant["args"], grant["granted_by"]) == ("delete_files", None, "human")
    assert "myapp-approval" not in agent.state.get()

    # A new process on the same session: the old files are back, and delete_files runs without a question.
    second = demo(storage)
    lines = second.splitlines()
    assert "It did this task once before in this session: the old files are back." in lines
    assert QUESTION not in second
    assert "HumanInTheLoop trusts delete_files (any arguments) in this session, granted by you at " in second
    revoke = f"python -m strandslike sessions trust revoke --storage-dir {storage} demo delete_files"
    assert f"  To be asked again, revoke the trust: {revoke}" in lines
    [ran] = [line for line in lines if line.startswith("delete_files ran")]
    assert ran.startswith(
        "delete_files ran and deleted a/b/c.txt, d/e/f.txt (HumanInTheLoop ran it without asking: trust used, "
        "granted by you at "
    )
    assert lines[-2:] == [DELETED, "Files left: none."]
    assert files_left(storage) == []
    assert decisions(stored_agent(storage)) == ["approved", "trusted"]

    # The command line shows the grant, and revokes it; the next process asks again (and, with no terminal, no).
    [listed] = trust_list(storage)
    assert (listed["tool"], listed["args"], listed["granted_by"]) == ("delete_files", None, "human")
    revoked = run_cli(*shlex.split(revoke)[3:], "--by", "ops")
    assert revoked.returncode == 0, revoked.stderr
    assert "revoked trust in delete_files" in revoked.stdout
    assert trust_list(storage) == []
    third = demo(storage)
    assert "It did this task twice before in this session" in third
    assert "HumanInTheLoop trusts" not in third
    assert QUESTION + "N  (no terminal" in third
    assert "delete_files did not run (denied by you)" in third
    assert files_left(storage) == FILES
    agent = stored_agent(storage)
    assert agent.state.get("hitl:trusted_tools") is None
    assert decisions(agent) == ["approved", "trusted", "denied"]
    [revocation] = [entry for entry in agent.interrupt_audit if entry["event"] == "trust_revoked"]
    assert (revocation["tool"], revocation["by"]) == ("delete_files", "ops")


@pytest.mark.parametrize("flag", ["--yes", "--no"])
def test_without_trust_the_next_process_asks_again(tmp_path, flag):
    storage = tmp_path / "store"
    demo(storage, flag)
    again = demo(storage, "--yes")
    assert "It did this task once before in this session" in again
    assert QUESTION + "y" in again
    assert f"id {INTERRUPT_ID.replace('tooluse_2', 'tooluse_4')})" in again  # a new call, a new question
    assert files_left(storage) == []
    assert trust_list(storage) == []


def test_the_session_takes_the_task_again_and_again_past_the_conversation_window(tmp_path, capsys):
    # The default conversation manager keeps the last 40 messages: by the 8th round the first ones are gone, and
    # the scripted model must still find its place (and the demo count the rounds) from what is left.
    storage = tmp_path / "store"
    for number in range(1, 10):
        assert main(["demo", "--storage-dir", str(storage), "--yes"]) == 0
        out = capsys.readouterr().out
        assert f"id {INTERRUPT_ID.replace('tooluse_2', f'tooluse_{2 * number}')})" in out
        assert out.splitlines()[-2:] == [DELETED, "Files left: none."]
        if number > 1:
            assert f"It did this task {({2: 'once', 3: 'twice'}).get(number, f'{number - 1} times')} before" in out
    agent = stored_agent(storage)
    assert len(agent.messages) < 9 * 6  # trimmed
    assert decisions(agent) == ["approved"] * 9


def test_trust_granted_where_the_demo_stopped_is_remembered_too(tmp_path):
    # Stopped at the question, answered "t" from another process with `resume`: the next demo run does not ask.
    storage = tmp_path / "store"
    stopped = resume_line(demo(storage, "--stop-at-prompt"))
    assert stopped.endswith(f"--response {INTERRUPT_ID}='\"y\"'")
    command = shlex.split(stopped.removesuffix("'\"y\"'") + "'\"t\"'")
    resumed = run_cli(*command[3:])
    assert resumed.returncode == 0, resumed.stderr
    assert [grant["tool"] for grant in trust_list(storage)] == ["delete_files"]
    again = demo(storage, "--no")
    assert QUESTION not in again
    assert "trust used, granted by you" in again
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


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
@pytest.mark.parametrize(
    ("typed", "meaning", "trusted"),
    [
        ("y", "approved, this time only.", None),
        ("yes", "approved, this time only.", None),
        ("Trust", "approved, and trusted from now on", ["delete_files"]),
        ("t", "approved, and trusted from now on", ["delete_files"]),
        ("", "denied.", None),
        ("nope", "denied.", None),
    ],
)
def test_an_answer_typed_at_the_terminal_means_what_humanintheloop_says(tmp_path, typed, meaning, trusted):
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
        _read_until(process.stdout.fileno(), b"(t/y/N): ")
        os.write(controller, typed.encode() + b"\n")
        out, err = process.communicate(timeout=30)
    finally:
        os.close(controller)
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err
    assert f'You answered "{typed}": {meaning}' in out.decode()
    assert stored_agent(storage).state.get("hitl:trusted_tools") == trusted
    assert files_left(storage) == ([] if meaning.startswith("approved") else FILES)
