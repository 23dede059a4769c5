"""Operator logs: quiet by default, ``key=<value> | message`` records at the points an operator needs."""

import logging
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from strandslike import Agent, ToolContext, tool
from strandslike.hooks import AfterModelCallEvent, AfterToolCallEvent, BeforeToolCallEvent
from strandslike.interrupt import UnknownInterruptError
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.session import FileSessionManager
from strandslike.types.exceptions import SessionConflictError


@tool
def explode(reason: str) -> str:
    """Fail.

    Args:
        reason: Why.
    """
    raise RuntimeError(reason)


@tool(context=True)
def ask(tool_context: ToolContext) -> str:
    """Ask the user."""
    return str(tool_context.interrupt("question", reason="which one?"))


def records(caplog: pytest.LogCaptureFixture, logger: str) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.name == logger]


def test_nothing_is_printed_unless_the_application_configures_logging(tmp_path: Path):
    program = textwrap.dedent(
        f"""
        from strandslike import Agent, tool
        from strandslike.hooks import BeforeToolCallEvent
        from strandslike.models import ScriptedModel, text, tool_call
        from strandslike.session import FileSessionManager

        @tool
        def explode() -> str:
            '''Fail.'''
            raise RuntimeError("boom")

        def approve(event: BeforeToolCallEvent) -> None:
            event.interrupt("approval")

        model = ScriptedModel([tool_call("explode"), text("done")])
        manager = FileSessionManager("quiet", storage_dir={str(tmp_path)!r})
        agent = Agent(model=model, tools=[explode], hooks=[approve], session_manager=manager)
        paused = agent("go")
        try:
            agent([{{"interruptResponse": {{"interruptId": "nope", "response": "y"}}}}])
        except KeyError:
            pass
        agent([{{"interruptResponse": {{"interruptId": paused.interrupts[0].id, "response": "y"}}}}])
        print("ran")
        """
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    assert done.stdout == "ran\n"
    assert done.stderr == ""  # warnings were logged (tool failure, refused resume) but nobody asked for them


def test_interrupts_raised_answered_and_refused_are_logged(caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.INFO, logger="strandslike")
    agent = Agent(model=ScriptedModel([tool_call("ask", tool_use_id="t1"), text("ok")]), tools=[ask])
    [interrupt] = agent("go").interrupts
    with pytest.raises(UnknownInterruptError):
        agent([{"interruptResponse": {"interruptId": "nope", "response": 1}}])
    agent([interrupt.resume("the blue one")])

    messages = records(caplog, "strandslike.interrupt._state")
    assert messages == [
        f"interrupt_id=<{interrupt.id}>, name=<question>, by=<tool ask> | interrupt raised",
        "code=<UNKNOWN_INTERRUPT_ID> | resume refused, nothing was applied: interrupt_id=<nope> | no interrupt found",
        f"interrupt_id=<{interrupt.id}>, name=<question>, action=<resume> | interrupt answered",
    ]
    refused = next(r for r in caplog.records if "refused" in r.getMessage())
    assert refused.levelno == logging.WARNING


def test_a_tool_failure_is_a_warning_with_its_traceback(caplog: pytest.LogCaptureFixture):
    agent = Agent(model=ScriptedModel([tool_call("explode", reason="disk full", tool_use_id="t9"), text("ok")]))
    agent.tool_registry.process_tools([explode])
    agent("go")
    [record] = [r for r in caplog.records if r.name == "strandslike.tools.executors._executor"]
    assert record.levelno == logging.WARNING
    assert record.getMessage() == (
        "tool_name=<explode>, tool_use_id=<t9> | the tool raised RuntimeError: disk full; "
        "the model gets an error result"
    )
    assert record.exc_info is not None
    assert isinstance(record.exc_info[1], RuntimeError)


def test_retries_are_logged(caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.INFO, logger="strandslike")
    attempts = {"model": 0, "tool": 0}

    def retry_model_once(event: AfterModelCallEvent) -> None:
        if event.exception is not None and attempts["model"] == 0:
            attempts["model"] += 1
            event.retry = True

    def retry_tool_once(event: AfterToolCallEvent) -> None:
        if attempts["tool"] == 0:
            attempts["tool"] += 1
            event.retry = True

    model = ScriptedModel([RuntimeError("throttled"), tool_call("explode", reason="x", tool_use_id="t1"), text("ok")])
    agent = Agent(model=model, tools=[explode], hooks=[retry_model_once, retry_tool_once])
    agent("go")
    loop = records(caplog, "strandslike._event_loop")
    assert loop == ["error=<RuntimeError: throttled> | the model call failed; a hook asked to retry it"]
    executor = records(caplog, "strandslike.tools.executors._executor")
    assert "tool_name=<explode>, tool_use_id=<t1> | a hook asked to retry the tool call" in executor


def test_a_refused_concurrent_session_and_a_repaired_session_are_warnings(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    def build() -> Agent:
        return Agent(
            model=ScriptedModel([text("hi"), text("again")], mode="conversation"),
            session_manager=FileSessionManager("s", storage_dir=tmp_path),
        )

    holder = build()
    other = build()
    holder.session_manager.begin_invocation(holder)
    try:
        with pytest.raises(SessionConflictError):
            other("hello")
    finally:
        holder.session_manager.close()
        other.session_manager.close()
    [conflict] = records(caplog, "strandslike.session.file_session_manager")
    assert conflict == (
        "session_id=<s>, agent_id=<default> | refused to run the agent: another process is running this agent"
    )

    crashed = Agent(
        model=ScriptedModel([text("ok")]),
        messages=[
            {"role": "user", "content": [{"text": "go"}]},
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "x", "input": {}}}]},
        ],
    )
    crashed("next")
    [repair] = records(caplog, "strandslike.agent._prompt")
    assert repair.startswith("tool_use_ids=<t1> | the last tool calls never got a result")


def test_an_interrupt_from_a_hook_names_the_hook(caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.INFO, logger="strandslike.interrupt")

    def guard(event: BeforeToolCallEvent) -> None:
        event.interrupt("approval")

    agent = Agent(model=ScriptedModel([tool_call("ask", tool_use_id="t1"), text("ok")]), tools=[ask], hooks=[guard])
    agent("go")
    [raised] = records(caplog, "strandslike.interrupt._state")
    assert "name=<approval>, by=<hook " in raised
    assert "guard' on BeforeToolCallEvent>" in raised
