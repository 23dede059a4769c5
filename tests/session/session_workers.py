"""Agents, tools and scripts shared by the session tests and the child processes they start.

The tests import this module directly (pytest puts ``tests/session`` on ``sys.path``); a child process runs
``python -c "<child_code(...)>"``, which puts this directory on its path, imports the module and calls `main`.
Every tool records its runs by appending one line to a file, so runs can be counted across processes.
"""

import json
import os
import random
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from strandslike import Agent, ToolContext, tool
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


def kill_approvals_child(
    storage_dir: str, log: Path, rng: random.Random, *, sessions: int, seed: int, timeout: float
) -> list[str]:
    """Run the ``approvals_run`` child on ``storage_dir`` and SIGKILL it at a random moment of a random session.

    Half the kills land anywhere in a session (prompt, interrupt, writes); half in its resume, mostly inside the
    approved tool (a session takes about 10-40 ms, most of it in that tool). Returns every line the child printed.
    """
    argv = child_argv("approvals_run", storage_dir=storage_dir, log=str(log), sessions=sessions, seed=seed)
    target = rng.randrange(sessions)
    marker = f"S {target} start" if rng.random() < 0.5 else f"S {target} paused"
    wait = rng.uniform(0, 0.04)
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0) as child:
        assert child.stdout is not None
        assert child.stderr is not None
        try:
            lines = [read_line(child.stdout, timeout=timeout)]
            assert lines[0] == "START", lines[0] + child.stderr.read().decode()
            while not lines[-1].startswith(marker) and lines[-1] != "DONE":
                lines.append(read_line(child.stdout, timeout=timeout))
            time.sleep(wait)
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=30)
            lines += child.stdout.read().decode().splitlines()
            errors = child.stderr.read().decode()
            assert child.returncode in (0, -signal.SIGKILL), errors
            assert "Traceback" not in errors, errors
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
    return lines


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


def run_long(agent: Agent, prompts: int, tools_per_prompt: int, progress: Any = None) -> None:
    """Play the crash test's conversation on ``agent``; call ``progress(n)`` after prompt ``n``."""
    for number, prompt in enumerate(long_prompts(prompts, tools_per_prompt)):
        result = agent(prompt)
        if result.stop_reason != "end_turn":
            raise RuntimeError(f"unexpected stop reason {result.stop_reason}")
        if progress is not None:
            progress(number)


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
    run_long(agent, prompts, tools_per_prompt, lambda number: _emit(f"P {number}"))
    _emit("DONE")


def _crash_pause(args: dict[str, Any]) -> None:
    agent, _ = build_agent(args["storage_dir"], pause_script(args["notes"], args["paths"]), args["log"])
    agent.add_hook(lambda event: _emit("T"), AfterToolCallEvent)  # progress: one line per tool call
    _emit("START")
    result = agent(PAUSE_PROMPT)
    interrupts = [{"id": i.id, "name": i.name, "reason": i.reason} for i in result.interrupts]
    _emit("PAUSED " + json.dumps({"stop_reason": result.stop_reason, "interrupts": interrupts}))
    time.sleep(60)  # the parent kills this process as soon as it reads PAUSED


# -- approved tools -----------------------------------------------------------------------------------------


def approval_agent(
    storage_dir: str | Path,
    session_id: str,
    turns: list[ScriptedTurn],
    log: str | Path,
    *,
    idempotent: bool = False,
    hang: bool = False,
    seed: int = 0,
) -> tuple[Agent, ScriptedModel]:
    """An agent whose approved tool records each run (session, tool-use id, idempotency key) before it works.

    The work is a sleep of a few milliseconds (different per tool use, from ``seed``), so a kill often lands
    inside the tool after its effect; ``hang`` prints ``IN TOOL <key>`` and sleeps until killed instead.
    """

    @tool(context=True, idempotent=idempotent)
    def delete_files(paths: list[str], tool_context: ToolContext) -> bool:
        """Delete files.

        Args:
            paths: The files to delete.
        """
        tool_use_id = tool_context.tool_use["toolUseId"]
        run = {"session": session_id, "id": tool_use_id, "key": tool_context.idempotency_key, "pid": os.getpid()}
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(run) + "\n")
        if hang:
            _emit(f"IN TOOL {tool_context.idempotency_key}")
            time.sleep(60)
        time.sleep(random.Random(f"{seed}:{session_id}:{tool_use_id}").uniform(0.005, 0.03))
        return True

    model = ScriptedModel(turns)
    agent = Agent(
        model=model,
        tools=[delete_files],
        hooks=[ApprovalHook(SESSION_ID), count_tools],
        session_manager=session_manager(storage_dir, session_id),
        callback_handler=None,
    )
    return agent, model


def is_dsn(where: str | Path) -> bool:
    """Whether ``where`` is a PostgreSQL DSN (a ``postgresql://`` URI or libpq's ``keyword=value`` form).

    The test helpers return both forms (`pg_cluster.new_database` returns ``user=... dbname=...``), so both are
    recognised; a ``Path`` is always a storage directory.
    """
    return isinstance(where, str) and (where.startswith(("postgresql://", "postgres://")) or "dbname=" in where)


def session_manager(where: str | Path, session_id: str) -> Any:
    """Open a session in ``where``: a storage directory, or a PostgreSQL database (a DSN, see `is_dsn`)."""
    if is_dsn(where):
        from strandslike.session.postgres import PostgresSessionManager

        return PostgresSessionManager(session_id, dsn=where)
    return FileSessionManager(session_id=session_id, storage_dir=where)


def approval_session(number: int) -> str:
    """The id of the ``number``-th session of the approvals crash scenario."""
    return f"approval-{number}"


def approval_call(number: int) -> ScriptedTurn:
    """The model's call of the approved tool in session ``number``."""
    return tool_call("delete_files", tool_use_id=f"delete_{number}", paths=[f"old/{number}.txt"])


def _approvals_run(args: dict[str, Any]) -> None:
    """Server-style requests for many sessions: a prompt that stops on the approval, then the approving resume."""
    storage, log, seed = args["storage_dir"], args["log"], args["seed"]
    _emit("START")
    for number in range(args["sessions"]):
        session_id = approval_session(number)
        _emit(f"S {number} start")
        agent, _ = approval_agent(storage, session_id, [approval_call(number)], log, seed=seed)
        paused = agent("Clean up")
        agent.session_manager.close()
        _emit(f"S {number} paused {paused.interrupts[0].id}")
        agent, _ = approval_agent(storage, session_id, [text("Deleted.")], log, seed=seed)
        answer = [{"interruptResponse": {"interruptId": paused.interrupts[0].id, "response": "y"}}]
        if agent(answer).stop_reason != "end_turn":
            raise RuntimeError("the resume did not finish")
        agent.session_manager.close()
        _emit(f"S {number} done")
    _emit("DONE")


def _approval_resume(args: dict[str, Any]) -> None:
    """Resume session ``approval-0`` with "y"; the approved tool prints IN TOOL and hangs (the parent kills us)."""
    agent, _ = approval_agent(
        args["storage_dir"],
        approval_session(0),
        [text("Deleted.")],
        args["log"],
        idempotent=args["idempotent"],
        hang=args["hang"],
    )
    result = agent([{"interruptResponse": {"interruptId": args["interrupt_id"], "response": "y"}}])
    last_results = [b["toolResult"] for b in agent.messages[-2]["content"] if "toolResult" in b]
    _emit(
        json.dumps(
            {
                "stop_reason": result.stop_reason,
                "tool_results": last_results,
                "audit": agent.interrupt_audit,
                "requests": [request.messages for request in agent.model.requests],  # type: ignore[attr-defined]
            }
        )
    )


def _resume_worker(args: dict[str, Any]) -> None:
    """Take resumes from the parent (one JSON line each on stdin) until STOP; report each outcome on stdout.

    Outcomes: ``ok`` (the run finished, or the resume repeats one that already finished), ``conflict`` (another
    worker holds or changed the session: the parent delivers the message again later), ``typed`` (a strandslike
    error), ``untyped`` (anything else: a bug).
    """
    from strandslike.types.exceptions import StrandslikeError

    _emit("READY")
    for line in sys.stdin:
        if line.strip() == "STOP":
            return
        message = json.loads(line)
        session_id = message["session"]
        report: dict[str, Any] = {"message": message["id"], "session": session_id, "pid": os.getpid()}
        try:
            agent, _ = approval_agent(
                args["storage_dir"], session_id, [text("Deleted.")], args["log"], seed=args["seed"]
            )
            try:
                answer = [{"interruptResponse": {"interruptId": message["interrupt_id"], "response": "y"}}]
                result = agent(answer)
                report.update(outcome="ok", stop_reason=result.stop_reason)
            finally:
                agent.session_manager.close()
        except SessionConflictError:
            report.update(outcome="conflict")
        except StrandslikeError as exc:
            report.update(outcome="typed", error=f"{type(exc).__name__}: {exc}")
        except Exception as exc:
            report.update(outcome="untyped", error=f"{type(exc).__name__}: {exc}")
        _emit(json.dumps(report))


COMMANDS = {
    "pause": _pause,
    "resume": _resume,
    "race": _race,
    "crash_run": _crash_run,
    "crash_pause": _crash_pause,
    "slow_restore": _slow_restore,
    "approvals_run": _approvals_run,
    "approval_resume": _approval_resume,
    "resume_worker": _resume_worker,
}


def main(command: str, arguments: str) -> None:
    """Run one child-process command with its JSON-encoded arguments."""
    COMMANDS[command](json.loads(arguments))
