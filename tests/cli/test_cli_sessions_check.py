"""``python -m strandslike sessions check``: verify a storage dir, say what it would repair, repair under the claim."""

import json
import os
from pathlib import Path
from typing import Any

import pytest

from strandslike import Agent
from strandslike.cli import main
from strandslike.models import ScriptedModel, text
from strandslike.session import FileSessionManager, LogRef


def session(storage: Path, session_id: str, turns: int = 2) -> Path:
    for number in range(turns):
        agent = Agent(
            model=ScriptedModel([text(f"answer {number}")]),
            session_manager=FileSessionManager(session_id, storage_dir=storage),
        )
        agent(f"question {number}")
        agent.session_manager.close()
    return storage / f"session_{session_id}" / "agents" / "agent_default" / "agent.jsonl"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["sessions", "check", *argv])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_a_healthy_storage_dir_checks_ok(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    session(tmp_path, "alpha")
    session(tmp_path, "beta")
    code, output = run(capsys, "--storage-dir", str(tmp_path))
    assert code == 0
    assert output.splitlines() == ["session alpha: ok", "session beta: ok", "2 checked: 2 ok"]


def test_a_torn_tail_is_reported_then_repaired_under_the_claim(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = session(tmp_path, "alpha")
    healthy = log.read_bytes()
    log.write_bytes(healthy + b'{"k":"m","i":4,"t":"x","m":{"role":"user","con')

    code, output = run(capsys, "--storage-dir", str(tmp_path))
    assert code == 1
    assert "session alpha: needs repair" in output
    assert "would repair: agent default: line 7: a torn record of 46 bytes at the end was dropped" in output
    assert "Run again with --repair" in output
    assert log.read_bytes().endswith(b'"con')  # checking changed nothing

    code, output = run(capsys, "--storage-dir", str(tmp_path), "alpha", "--repair")
    assert code == 0
    assert "repaired: agent default: line 7" in output
    assert log.read_bytes() == healthy
    assert run(capsys, "--storage-dir", str(tmp_path))[0] == 0


def test_a_log_in_use_is_not_repaired_and_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = session(tmp_path, "alpha")
    log.write_bytes(log.read_bytes()[:-1])  # the final newline lost
    holder = FileSessionManager("alpha", storage_dir=tmp_path)
    ref = LogRef("alpha", "agent", "default")
    claim = holder.claim_log(ref, holder.read_log(ref).version)
    try:
        code, output = run(capsys, "--storage-dir", str(tmp_path), "--repair")
        assert code == 1
        assert "busy: agent default: in use by a running process" in output
    finally:
        holder.release_log(claim)
    assert run(capsys, "--storage-dir", str(tmp_path), "--repair")[0] == 0
    assert log.read_bytes().endswith(b"}\n")


def test_damage_is_reported_with_file_and_line_and_never_repaired(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = session(tmp_path, "alpha")
    session(tmp_path, "beta")
    lines = log.read_text().splitlines()
    lines[2] = lines[2].replace("question", "QUESTION")
    log.write_text("\n".join(lines) + "\n")
    before = log.read_bytes()
    code, output = run(capsys, "--storage-dir", str(tmp_path), "--repair")
    assert code == 2
    assert "session alpha: damaged" in output
    assert f"DAMAGED: agent default: {log}: line 3 is not a valid record (its checksum does not match" in output
    assert "session beta: ok" in output
    assert log.read_bytes() == before


def test_planted_files_are_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = session(tmp_path, "alpha")
    os.mkfifo(log.parent / "planted-fifo")
    (log.parent / "link").symlink_to("/etc/passwd")
    (tmp_path / "session_beta").symlink_to(tmp_path / "session_alpha", target_is_directory=True)
    code, output = run(capsys, "--storage-dir", str(tmp_path))
    assert code == 2
    assert f"{log.parent / 'planted-fifo'}: is not a regular file" in output
    assert f"{log.parent / 'link'}: is a symbolic link" in output
    assert f"{tmp_path / 'session_beta'}: is a symbolic link" in output


def test_an_earlier_format_and_a_leftover_temporary_file_are_repaired(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = session(tmp_path, "alpha")
    records = [json.loads(line[: line.rindex(',"c":')] + "}") for line in log.read_text().splitlines()]
    records[0]["format"] = "strandslike-agent-log/1"
    log.write_text("".join(json.dumps(record) + "\n" for record in records))  # format 1: no checksums
    leftover = log.parent.parent.parent / ".session.json.0123abcd.tmp"
    leftover.write_text("{}")
    code, output = run(capsys, "--storage-dir", str(tmp_path), "--json")
    assert code == 1
    [report] = json.loads(output)
    assert report["status"] == "needs repair"
    assert "agent default: the log is in format 1 (no checksums); it is rewritten in format 2" in report["repairs"]
    assert f"{leftover}: a temporary file of an interrupted write; it is removed" in report["repairs"]

    assert run(capsys, "--storage-dir", str(tmp_path), "--repair")[0] == 0
    assert not leftover.exists()
    assert all(line.endswith('"}') and ',"c":"' in line for line in log.read_text().splitlines())
    restored = Agent(model=ScriptedModel([]), session_manager=FileSessionManager("alpha", storage_dir=tmp_path))
    assert [m["content"][0]["text"] for m in restored.messages] == [
        "question 0",
        "answer 0",
        "question 1",
        "answer 1",
    ]


def test_show_displays_the_repairs_a_read_made(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = session(tmp_path, "alpha")
    log.write_bytes(log.read_bytes() + b'{"k":"m","torn')
    assert main(["sessions", "show", "--storage-dir", str(tmp_path), "alpha"]) == 0
    output = capsys.readouterr().out
    assert "repaired on read: line 7: a torn record of 14 bytes at the end was dropped" in output
    assert main(["sessions", "show", "--storage-dir", str(tmp_path), "alpha", "--json"]) == 0
    shown: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert shown["agents"][0]["repairs"] == ["line 7: a torn record of 14 bytes at the end was dropped"]


def test_checking_an_unknown_session_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    session(tmp_path, "alpha")
    code, output = run(capsys, "--storage-dir", str(tmp_path), "nope")
    assert code == 2
    assert "no session 'nope'" in output
