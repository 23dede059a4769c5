"""The pytest plugin as a user's project sees it: a fresh project that imports nothing from this test suite."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

USER_TESTS = '''
import asyncio

import pytest

from strandslike import Agent, tool
from strandslike.hooks import BeforeToolCallEvent
from strandslike.models import text, tool_call
from strandslike.multiagent import GraphBuilder, Status
from strandslike.testing import (
    EventRecorder,
    SessionStore,
    StillInterruptedError,
    answer_all,
    run_until_done,
    run_until_done_async,
)

DELETED = []


@tool
def delete_files(paths: list[str]) -> str:
    """Delete files.

    Args:
        paths: The files to delete.
    """
    DELETED.extend(paths)
    return f"deleted {len(paths)}"


def approve(event: BeforeToolCallEvent) -> None:
    if event.interrupt("approval", reason=event.tool_use["input"]) != "y":
        event.cancel_tool = "denied"


@pytest.fixture(autouse=True)
def _clean():
    DELETED.clear()


def test_the_fixtures_are_there_without_any_import_or_conftest(scripted_model, session_store, event_recorder):
    assert isinstance(session_store, SessionStore)
    assert isinstance(event_recorder, EventRecorder)
    assert scripted_model.models == []


def test_scripted_model_event_recorder_and_run_until_done(scripted_model, event_recorder):
    model = scripted_model(tool_call("delete_files", paths=["a.txt"]), text("Done."))
    agent = Agent(model=model, tools=[delete_files], hooks=[approve, event_recorder])

    result = run_until_done(agent, "clean up", "y")

    assert str(result) == "Done.\\n"
    assert DELETED == ["a.txt"]
    assert event_recorder.names.count("BeforeInvocationEvent") == 2  # paused once, resumed once
    assert len(event_recorder.of(BeforeToolCallEvent)) == 2  # asked, then ran
    scripted_model.assert_all_played()


def test_one_agent_per_request_on_a_session_store(scripted_model, session_store):
    script = [tool_call("delete_files", paths=["b.txt"], tool_use_id="t1"), text("Done.")]

    def handle(prompt):  # a stateless server: a new agent (and model) per request
        manager = session_store.manager("user-1")
        model = scripted_model(script, mode="conversation")
        return Agent(model=model, tools=[delete_files], hooks=[approve], session_manager=manager)(prompt)

    paused = handle("clean up b.txt")
    assert paused.stop_reason == "interrupt"
    done = handle(answer_all(paused, "y"))
    assert str(done) == "Done.\\n"
    assert DELETED == ["b.txt"]
    assert session_store.session_ids() == ["user-1"]


def test_answers_by_name_and_resume_actions(scripted_model):
    model = scripted_model(tool_call("delete_files", paths=["c.txt"]), text("Skipped."))
    agent = Agent(model=model, tools=[delete_files], hooks=[approve])
    result = run_until_done(agent, "clean up", by_name={"approval": lambda interrupt: interrupt.cancel()})
    assert str(result) == "Skipped.\\n"
    assert DELETED == []


def test_a_graph_until_done(scripted_model):
    builder = GraphBuilder()
    builder.add_node(Agent(model=scripted_model(tool_call("delete_files", paths=["d"]), text("ok")),
                           tools=[delete_files], hooks=[approve]), "cleaner")
    result = run_until_done(builder.build(), "go", "y")
    assert result.status == Status.COMPLETED
    assert DELETED == ["d"]


def test_async_twin(scripted_model):
    agent = Agent(model=scripted_model(tool_call("delete_files", paths=["e"]), text("ok")),
                  tools=[delete_files], hooks=[approve])
    result = asyncio.run(run_until_done_async(agent, "go", "y"))
    assert result.stop_reason == "end_turn"


def test_a_run_that_keeps_asking_gives_up(scripted_model):
    turns = [tool_call("delete_files", paths=[str(n)]) for n in range(5)] + [text("done")]
    agent = Agent(model=scripted_model(turns), tools=[delete_files], hooks=[approve])
    with pytest.raises(StillInterruptedError, match="still interrupted after 2 rounds"):
        run_until_done(agent, "go", "y", max_rounds=2)


def test_an_unanswered_interrupt_is_a_clear_error(scripted_model):
    agent = Agent(model=scripted_model(tool_call("delete_files", paths=["x"]), text("ok")),
                  tools=[delete_files], hooks=[approve])
    with pytest.raises(ValueError, match="No answer for interrupt 'approval'"):
        run_until_done(agent, "go")


def test_unplayed_turns_fail_the_test(scripted_model):  # this one is meant to fail
    scripted_model(text("never played"))
    scripted_model.assert_all_played()
'''


def test_a_users_project_gets_the_fixtures_from_the_installed_package(tmp_path: Path):
    project = tmp_path / "user_project"
    (project / "tests").mkdir(parents=True)
    (project / "tests" / "test_agent.py").write_text(textwrap.dedent(USER_TESTS))
    (project / "pyproject.toml").write_text(
        textwrap.dedent(
            """
            [project]
            name = "user-project"
            version = "1"

            [tool.pytest.ini_options]
            filterwarnings = ["error"]
            asyncio_default_fixture_loop_scope = "function"  # pytest-asyncio is installed here; say it explicitly
            """
        )
    )
    environ = {
        key: value
        for key, value in os.environ.items()
        if key not in ("PYTEST_ADDOPTS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD", "PYTHONPATH", "PYTEST_PLUGINS")
    }
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=project,
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )
    summary = done.stdout.strip().splitlines()[-1]
    assert "1 failed, 8 passed" in summary, done.stdout + done.stderr
    assert "FAILED tests/test_agent.py::test_unplayed_turns_fail_the_test" in done.stdout
    assert "Not every scripted turn was played (model 0: 1 turn(s) left)." in done.stdout
    assert "conftest" not in done.stdout  # nothing came from a conftest: the fixtures come from the plugin
