"""Hostile input on the command line (issue 9, items 4 and 6): one line on stderr, the right exit code, never a
traceback, and the session left exactly as it was."""

import os
import subprocess
import sys

import pytest
from cli_support import HERE, REPO, deleted, make_session, tree

from strandslike.__main__ import main


@pytest.fixture
def paused(tmp_path):
    storage = tmp_path / "store"
    (interrupt,) = make_session(storage, "work").interrupts
    return storage, interrupt.id


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ("[" * 100_000, "is not valid JSON (maximum recursion depth exceeded"),
        ("1" * 5000, "is not valid JSON (Exceeds the limit (4300 digits)"),
        ('"\\ud800"', "cannot be stored (the value is not valid Unicode text"),
        ("NaN", "cannot be stored (the value is nan"),
        ('{"a": Infinity}', "cannot be stored"),
        ("[" * 150 + "]" * 150, "cannot be stored (the value[...]"),
        ("1" + "0" * 4001, "cannot be stored (the value is an integer with more than 4000 digits)"),
    ],
    ids=["deep-json", "huge-int", "surrogate", "nan", "infinity", "deep-but-parseable", "int-past-store-limit"],
)
def test_a_hostile_answer_is_refused_in_one_line(paused, capsys, answer, message):
    storage, interrupt_id = paused
    before = tree(storage)
    code = main(["resume", "--agent", "cli_support:build", "--storage-dir", str(storage), "work", "--response",
                 f"{interrupt_id}={answer}"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1, err[:500]
    assert message in err
    assert len(err) < 1000
    assert tree(storage) == before
    assert deleted(storage) == []


def test_a_hostile_answer_through_a_real_process_prints_no_traceback(paused):
    storage, interrupt_id = paused
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(REPO)])}
    argv = [sys.executable, "-m", "strandslike", "resume", "--agent", "cli_support:build", "--storage-dir",
            str(storage), "work", "--response", f"{interrupt_id}={'[' * 100_000}"]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60, check=False)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("error: --response")


def test_an_agent_factory_with_a_hostile_agent_id_is_one_line(tmp_path, capsys):
    storage = tmp_path / "store"
    make_session(storage, "work")
    code = main(["resume", "--agent", "cli_support:build_with_bad_agent_id", "--storage-dir", str(storage), "work",
                 "--response", 'x="y"'])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: agent_id='a\\u202eb' | id contains U+202E")
    assert err.count("\n") == 1
