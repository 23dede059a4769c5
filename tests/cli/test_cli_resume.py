import json
import shlex

import cli_support
import pytest
from cli_support import build, build_two_steps, deleted, make_session, run_cli, tree

from strandslike.__main__ import main
from strandslike.session import FileSessionManager


@pytest.fixture
def paused(tmp_path):
    """An interrupted session ``work``: its ``delete_files`` call waits for approval."""
    storage = tmp_path / "store"
    result = make_session(storage, "work")
    (interrupt,) = result.interrupts
    return storage, interrupt.id


def resume(storage, *responses, factory="cli_support:build", session_id="work", extra=()):
    args = ["resume", "--agent", factory, "--storage-dir", str(storage), session_id, *extra]
    for response in responses:
        args += ["--response", response]
    return main(args)


def open_interrupts(storage, capsys, session_id="work"):
    assert main(["sessions", "interrupts", "--storage-dir", str(storage), session_id, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    return [interrupt["id"] for agent in data["agents"] for interrupt in agent["interrupts"]]


def test_resume_answers_the_interrupt(paused, capsys):
    storage, interrupt_id = paused
    assert resume(storage, f'{interrupt_id}="y"') == 0
    out = capsys.readouterr().out
    assert out.splitlines() == ["stop reason: end_turn", "message: Done."]
    assert deleted(storage) == ["a.txt", "b.txt"]
    assert open_interrupts(storage, capsys) == []


def test_resume_json_output(paused, capsys):
    storage, interrupt_id = paused
    assert resume(storage, f'{interrupt_id}="no"', extra=["--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["stop_reason"] == "end_turn"
    assert result["interrupts"] == []
    assert deleted(storage) == []  # denied


def test_resume_prints_new_interrupts(tmp_path, capsys):
    storage = tmp_path / "store"
    (first,) = make_session(storage, "work", factory=build_two_steps).interrupts
    assert resume(storage, f'{first.id}="y"', factory="cli_support:build_two_steps") == 0
    out = capsys.readouterr().out
    (second,) = open_interrupts(storage, capsys)
    assert second != first.id
    assert "t_second" in second
    assert out.startswith("stop reason: interrupt\n")
    assert "  name:   approval" in out
    assert f"  id:     {second}" in out
    assert '  reason: {"paths": ["b.txt"]}' in out
    assert f"--agent cli_support:build_two_steps --storage-dir {storage} work --response {second}=JSON" in out
    assert deleted(storage) == ["a.txt"]


@pytest.mark.parametrize(
    ("response", "message"),
    [
        ("ID=y", "is not valid JSON"),
        ("ID={'a': 1}", "is not valid JSON"),
        ("no-equals-sign", "expected INTERRUPT_ID=JSON"),
        ("=1", "expected INTERRUPT_ID=JSON"),
    ],
)
def test_bad_response_is_exit_2_and_changes_nothing(paused, capsys, response, message):
    storage, interrupt_id = paused
    before = tree(storage)
    assert resume(storage, response.replace("ID", interrupt_id)) == 2
    err = capsys.readouterr().err
    assert message in err
    assert tree(storage) == before


def test_bad_json_suggests_quoting(paused, capsys):
    storage, interrupt_id = paused
    assert resume(storage, f"{interrupt_id}=y") == 2
    assert f"""--response {interrupt_id}='"y"'""" in capsys.readouterr().err


def test_unknown_interrupt_id_is_exit_1_and_the_session_stays_resumable(paused, capsys):
    storage, interrupt_id = paused
    assert resume(storage, 'nope="y"') == 1
    err = capsys.readouterr().err
    assert "interrupt_id=<nope> | no interrupt found" in err
    assert "was not changed. It waits on:" in err
    assert f"id:     {interrupt_id}" in err  # from agent.pending_interrupts
    assert open_interrupts(storage, capsys) == [interrupt_id]
    assert deleted(storage) == []
    assert resume(storage, f'{interrupt_id}="y"') == 0
    assert deleted(storage) == ["a.txt", "b.txt"]


def test_answering_twice_is_refused(paused, capsys):
    storage, interrupt_id = paused
    assert resume(storage, f'{interrupt_id}="y"', f'{interrupt_id}="n"') == 1
    assert "answered more than once" in capsys.readouterr().err
    assert resume(storage, f'{interrupt_id}="y"') == 0


def test_a_session_that_is_not_interrupted(paused, capsys):
    storage, interrupt_id = paused
    assert resume(storage, f'{interrupt_id}="y"') == 0
    capsys.readouterr()
    assert resume(storage, 'other-id="y"') == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    assert "was not changed" in err
    assert deleted(storage) == ["a.txt", "b.txt"]


def test_a_running_session_is_a_conflict(paused, capsys):
    storage, interrupt_id = paused
    holder = FileSessionManager("work", storage_dir=storage)
    agent = build(holder)
    holder.begin_invocation(agent)  # another "process" is running this agent: its lock is held
    try:
        assert resume(storage, f'{interrupt_id}="y"') == 1
        assert "another process is running this agent" in capsys.readouterr().err
    finally:
        holder.close()
    assert deleted(storage) == []
    assert resume(storage, f'{interrupt_id}="y"') == 0


def test_unknown_session_is_exit_1_and_not_created(paused, capsys):
    storage, interrupt_id = paused
    assert resume(storage, f'{interrupt_id}="y"', session_id="other") == 1
    assert "no session 'other'" in capsys.readouterr().err
    assert not (storage / "session_other").exists()


@pytest.mark.parametrize(
    ("factory", "message", "code"),
    [
        ("cli_support", "expected MODULE:FACTORY", 2),
        ("no_such_module_xyz:build", "cannot import 'no_such_module_xyz'", 2),
        ("cli_support:missing", "has no attribute 'missing'", 2),
        ("cli_support:PATHS", "is not callable", 2),
        ("cli_support:not_an_agent", "returned int, not an Agent", 2),
        ("cli_support:build_without_manager", "without the session manager it was given", 2),
    ],
)
def test_bad_factories(paused, capsys, factory, message, code):
    storage, interrupt_id = paused
    assert resume(storage, f'{interrupt_id}="y"', factory=factory) == code
    assert message in capsys.readouterr().err
    assert deleted(storage) == []
    assert open_interrupts(storage, capsys) == [interrupt_id]


def test_corrupt_session_is_exit_2(paused, capsys):
    storage, interrupt_id = paused
    log = storage / "session_work" / "agents" / "agent_default" / "agent.jsonl"
    with log.open("ab") as handle:
        handle.write(b"garbage\n")
    assert resume(storage, f'{interrupt_id}="y"') == 2
    assert str(log) in capsys.readouterr().err


def test_resume_in_a_child_process(paused):
    storage, interrupt_id = paused
    command = f"resume --agent cli_support:build --storage-dir {storage} work --response {interrupt_id}='\"y\"'"
    completed = run_cli(*shlex.split(command))
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.splitlines() == ["stop reason: end_turn", "message: Done."]
    assert deleted(storage) == ["a.txt", "b.txt"]
    assert cli_support.ONE_STEP[-1].content == [{"text": "Done."}]
