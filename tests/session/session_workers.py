"""Agents, tools and scripts shared by the session tests and the child processes they start.

The tests import this module directly (pytest puts ``tests/session`` on ``sys.path``); a child process runs
``python -c "<child_code(...)>"``, which puts this directory on its path, imports the module and calls `main`.
Every tool records its runs by appending one line to a file, so runs can be counted across processes.
"""

import json
import os
import select
import sys
import time
from pathlib import Path
from typing import Any

from strandslike import Agent, tool
from strandslike.hooks import AfterToolCallEvent, BeforeToolCallEvent, HookProvider, HookRegistry
from strandslike.models import ScriptedModel, text, tool_call, turn
from strandslike.models.scripted import ScriptedTurn
from strandslike.session import FileSessionManager
from strandslike.types.exceptions import SessionConflictError

HERE = Path(__file__).resolve().parent
SESSION_ID = "myapp"
APPROVAL = f"{SESSION_ID}-approval"


def child_code(command: str, **arguments: Any) -> str:
    """Return the ``python -c`` code that runs ``main(command, arguments)`` in a fresh interpreter."""
    return (
        f"import sys; sys.path.insert(0, {str(HERE)!r}); import session_workers; "
        f"session_workers.main({command!r}, {json.dumps(arguments)!r})"
    )


def child_argv(command: str, **arguments: Any) -> list[str]:
    """Return the argv of a child process running ``command``."""
    return [sys.executable, "-c", child_code(command, **arguments)]


def read_line(stream: Any, timeout: float) -> str:
    """Read one line from an unbuffered binary pipe, failing after ``timeout`` seconds instead of hanging."""
    deadline = time.monotonic() + timeout
    data = b""
    while not data.endswith(b"\n"):
        remaining = deadline - time.monotonic()
        ready, _, _ = select.select([stream], [], [], max(remaining, 0))
        if not ready:
            raise TimeoutError(f"no line from the child within {timeout}s (got {data!r})")
        chunk = os.read(stream.fileno(), 1)
        if not chunk:
            raise EOFError(f"the child closed its output (got {data!r})")
        data += chunk
    return data.decode().rstrip("\n")


def tool_runs(log: Path) -> list[dict[str, Any]]:
    """Return the tool runs recorded in ``log``, in order."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def make_tools(log: Path, *, tool_delay: float = 0.0) -> list[Any]:
    """Build the tools of the approval agent; each run appends ``{"tool": ..., "input": ...}`` to ``log``."""

    def record(name: str, value: Any) -> None:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"tool": name, "input": value, "pid": os.getpid()}) + "\n")

    @tool
    def delete_files(paths: list[str]) -> bool:
        """Delete files.

        Args:
            paths: The files to delete.
        """
        if tool_delay:
            time.sleep(tool_delay)
        record("delete_files", paths)
        return True

    @tool
    def inspect_files(paths: list[str]) -> dict[str, Any]:
        """Inspect files.

        Args:
            paths: The files to inspect.
        """
        record("inspect_files", paths)
        return {"inspected": paths}

    @tool
    def note(i: int) -> str:
        """Take a note.

        Args:
            i: The note's number.
        """
        record("note", i)
        return f"noted {i}"

    return [delete_files, inspect_files, note]


class ApprovalHook(HookProvider):
    """The interrupts guide's approval hook: ``t`` (trust) is remembered in ``agent.state``."""

    def __init__(self, app_name: str) -> None:
        self.app_name = app_name

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(BeforeToolCallEvent, self.approve)

    def approve(self, event: BeforeToolCallEvent) -> None:
        if event.tool_use["name"] != "delete_files":
            return
        if event.agent.state.get(f"{self.app_name}-approval") == "t":  # (t)rust
            return
        approval = event.interrupt(f"{self.app_name}-approval", reason={"paths": event.tool_use["input"]["paths"]})
        if approval.lower() not in ["y", "t"]:
            event.cancel_tool = "User denied permission to delete files"
        event.agent.state.set(f"{self.app_name}-approval", approval.lower())


def count_tools(event: AfterToolCallEvent) -> None:
    """Count completed tool calls in ``agent.state`` (so crash tests can check state against history)."""
    event.agent.state.set("tools_run", (event.agent.state.get("tools_run") or 0) + 1)


def build_agent(
    storage_dir: str | Path,
    turns: list[ScriptedTurn],
    log: str | Path,
    *,
    session_id: str = SESSION_ID,
    tool_delay: float = 0.0,
) -> tuple[Agent, ScriptedModel]:
    """Build a fresh agent on a file session, the way a stateless server does for every request."""
    model = ScriptedModel(turns)
    agent = Agent(
        model=model,
        tools=make_tools(Path(log), tool_delay=tool_delay),
        hooks=[ApprovalHook(SESSION_ID), count_tools],
        system_prompt="You delete files older than 5 days",
        session_manager=FileSessionManager(session_id=session_id, storage_dir=storage_dir),
        callback_handler=None,
    )
    return agent, model


# -- scripts ------------------------------------------------------------------------------------------------


def pause_turns(paths: list[str]) -> list[ScriptedTurn]:
    """The turns of a call that stops on the approval interrupt (only the tool call: the rest is a later call)."""
    return [tool_call("delete_files", tool_use_id="delete_1", paths=paths)]


def resume_turns() -> list[ScriptedTurn]:
    """The turns of a resume: the model is called once, after the approved tool ran."""
    return [text("Deleted.")]


def long_prompts(prompts: int, tools_per_prompt: int) -> list[str]:
    """The prompts of the crash test's conversation."""
    return [f"prompt {p}: take {tools_per_prompt} notes" for p in range(prompts)]


def long_script(prompts: int, tools_per_prompt: int, answer_size: int = 0) -> list[ScriptedTurn]:
    """The model turns of the crash test's conversation; every third turn is a batch of two concurrent tools.

    ``answer_size`` pads each final answer to that many characters, so that writing it takes long enough for a
    kill to land in the middle of the write (a torn record).
    """
    turns: list[ScriptedTurn] = []
    for p in range(prompts):
        for t in range(tools_per_prompt):
            n = p * tools_per_prompt + t
            if t % 3 == 2:
                turns.append(
                    turn(
                        text(f"two notes at step {n}"),
                        tool_call("note", tool_use_id=f"note_{n}_a", i=2 * n),
                        tool_call("note", tool_use_id=f"note_{n}_b", i=2 * n + 1),
                    )
                )
            else:
                turns.append(tool_call("note", tool_use_id=f"note_{n}", i=2 * n))
        padding = answer_size or (p % 7) * 50
        turns.append(text(f"Finished prompt {p}. " + "ü" * padding))
    return turns


PAUSE_PROMPT = "Take notes, then clean up"


def pause_script(notes: int, paths: list[str]) -> list[ScriptedTurn]:
    """Turns of a run that takes ``notes`` notes and then stops on the approval interrupt."""
    turns = [tool_call("note", tool_use_id=f"note_{n}", i=n) for n in range(notes)]
    turns.append(tool_call("delete_files", tool_use_id="delete_1", paths=paths))
    return turns


def run_long(agent: Agent, prompts: int, tools_per_prompt: int) -> None:
    """Play the crash test's conversation on ``agent``."""
    for prompt in long_prompts(prompts, tools_per_prompt):
        result = agent(prompt)
        if result.stop_reason != "end_turn":
            raise RuntimeError(f"unexpected stop reason {result.stop_reason}")


# -- child process commands ---------------------------------------------------------------------------------


def _emit(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _pause(args: dict[str, Any]) -> None:
    agent, _ = build_agent(args["storage_dir"], pause_turns(args["paths"]), args["log"])
    result = agent(args.get("prompt", "Clean up"))
    interrupts = [{"id": i.id, "name": i.name, "reason": i.reason} for i in result.interrupts]
    _emit(json.dumps({"stop_reason": result.stop_reason, "interrupts": interrupts}))


def _resume(args: dict[str, Any]) -> None:
    agent, model = build_agent(args["storage_dir"], resume_turns(), args["log"])
    restored = [i.id for i in agent._interrupt_state.unanswered()]
    result = agent([{"interruptResponse": {"interruptId": args["interrupt_id"], "response": args["response"]}}])
    _emit(
        json.dumps(
            {
                "restored_interrupts": restored,
                "stop_reason": result.stop_reason,
                "message": result.message,
                "state": agent.state.get(),
                "model_calls": model.calls,
            }
        )
    )


def _race(args: dict[str, Any]) -> None:
    agent, _ = build_agent(args["storage_dir"], resume_turns(), args["log"], tool_delay=args.get("tool_delay", 0.0))
    _emit("READY")
    with os.fdopen(args["barrier_fd"], "rb") as barrier:
        barrier.read()  # blocks until the parent closes the write end: both children start together
    try:
        result = agent([{"interruptResponse": {"interruptId": args["interrupt_id"], "response": "y"}}])
    except SessionConflictError as exc:
        _emit(json.dumps({"outcome": "conflict", "error": str(exc)}))
        return
    _emit(json.dumps({"outcome": "ok", "stop_reason": result.stop_reason}))


class PausingFileSessionManager(FileSessionManager):
    """A file session that stops after its first read of the agent's storage until a pipe is closed.

    Restoring reads the agent's log once (``read_log``); earlier versions read the agent record and then the
    messages (``read_agent``, ``list_messages``). Pausing after the first read, whichever it is, lets another
    process complete a resume in the middle of the restore.
    """

    def __init__(self, *args: Any, barrier_fd: int, **kwargs: Any) -> None:
        self._barrier_fd: int | None = barrier_fd
        super().__init__(*args, **kwargs)

    def _pause(self) -> None:
        if self._barrier_fd is None:
            return
        fd, self._barrier_fd = self._barrier_fd, None
        _emit("READ")
        with os.fdopen(fd, "rb") as barrier:
            barrier.read()  # until the parent closes the write end

    def read_log(self, *args: Any, **kwargs: Any) -> Any:
        found = super().read_log(*args, **kwargs)
        self._pause()
        return found

    def read_agent(self, *args: Any, **kwargs: Any) -> Any:
        found = super().read_agent(*args, **kwargs)
        self._pause()
        return found

    def list_messages(self, *args: Any, **kwargs: Any) -> Any:
        found = super().list_messages(*args, **kwargs)
        self._pause()
        return found


def _slow_restore(args: dict[str, Any]) -> None:
    """Restore with a pause (mid-restore, or after it), then resume the interrupt with "y"."""
    model = ScriptedModel(resume_turns())
    log = Path(args["log"])
    if args["pause"] == "mid-restore":
        manager = PausingFileSessionManager(SESSION_ID, storage_dir=args["storage_dir"], barrier_fd=args["barrier_fd"])
    else:
        manager = FileSessionManager(SESSION_ID, storage_dir=args["storage_dir"])
    agent = Agent(
        model=model,
        tools=make_tools(log),
        hooks=[ApprovalHook(SESSION_ID), count_tools],
        system_prompt="You delete files older than 5 days",
        session_manager=manager,
        callback_handler=None,
    )
    if args["pause"] == "after-restore":
        _emit("READ")
        with os.fdopen(args["barrier_fd"], "rb") as barrier:
            barrier.read()
    restored = [i.id for i in agent._interrupt_state.unanswered()]
    try:
        result = agent([{"interruptResponse": {"interruptId": args["interrupt_id"], "response": "y"}}])
    except SessionConflictError as exc:
        _emit(json.dumps({"outcome": "conflict", "error": str(exc), "restored_interrupts": restored}))
        return
    _emit(json.dumps({"outcome": "ok", "stop_reason": result.stop_reason, "restored_interrupts": restored}))


class SlowDisk:
    """Stands in for the ``os`` module of strandslike's log writer: a write writes at most ``chunk`` bytes (a
    short write, which POSIX allows), and pauses first when more remain, like a slow disk. A kill then often
    lands in the middle of a large record, leaving a torn last line."""

    def __init__(self, chunk: int, pause: float) -> None:
        self.chunk = chunk
        self.pause = pause

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    def write(self, fd: int, data: Any) -> int:
        if len(data) > self.chunk:
            time.sleep(self.pause)
        return os.write(fd, bytes(memoryview(data)[: self.chunk]))


def _crash_run(args: dict[str, Any]) -> None:
    if args.get("slow_disk"):
        from strandslike.session import _files

        _files.os = SlowDisk(**args["slow_disk"])  # type: ignore[assignment]
    prompts, tools_per_prompt = args["prompts"], args["tools_per_prompt"]
    script = long_script(prompts, tools_per_prompt, args.get("answer_size", 0))
    agent, _ = build_agent(args["storage_dir"], script, args["log"])
    _emit("START")
    run_long(agent, prompts, tools_per_prompt)
    _emit("DONE")


def _crash_pause(args: dict[str, Any]) -> None:
    agent, _ = build_agent(args["storage_dir"], pause_script(args["notes"], args["paths"]), args["log"])
    _emit("START")
    result = agent(PAUSE_PROMPT)
    interrupts = [{"id": i.id, "name": i.name, "reason": i.reason} for i in result.interrupts]
    _emit("PAUSED " + json.dumps({"stop_reason": result.stop_reason, "interrupts": interrupts}))
    time.sleep(60)  # the parent kills this process as soon as it reads PAUSED


COMMANDS = {
    "pause": _pause,
    "resume": _resume,
    "race": _race,
    "crash_run": _crash_run,
    "crash_pause": _crash_pause,
    "slow_restore": _slow_restore,
}


def main(command: str, arguments: str) -> None:
    """Run one child-process command with its JSON-encoded arguments."""
    COMMANDS[command](json.loads(arguments))
