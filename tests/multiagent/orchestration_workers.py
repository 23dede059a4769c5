"""Graph and Swarm orchestrations on file sessions, shared by the crash tests and the child processes they start.

Each session pays an invoice: a ``research`` node finds it (in a swarm it hands over to ``payer``), then the
``payer`` node calls ``pay``, which its agent's approval hook lets run only once a human said "y". The models
are `ScriptedModel`s in conversation mode, so an orchestrator restored in any process continues the same script.
``pay`` appends one JSON line per run to a side file (session, node path, tool-use id, idempotency key, pid)
before it works for a few milliseconds, so runs are counted across processes.

Run as ``python -c "<child_code(...)>"``, this module runs one child command (see `COMMANDS`).
"""

import json
import os
import random
import select
import sys
import time
from pathlib import Path
from typing import Any

from strandslike import Agent, ToolContext, tool
from strandslike.hooks import BeforeToolCallEvent
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.multiagent import GraphBuilder, MultiAgentBase, Status, Swarm
from strandslike.session import FileSessionManager
from strandslike.types.exceptions import SessionConflictError

HERE = Path(__file__).resolve().parent
TASK = "Pay the open invoice"
PAID = {"role": "assistant", "content": [{"text": "Paid."}]}
KINDS = ("graph", "swarm", "nested")


def child_argv(command: str, **arguments: Any) -> list[str]:
    """Return the argv of a child process running ``command`` with ``arguments``."""
    code = (
        f"import sys; sys.path.insert(0, {str(HERE)!r}); import orchestration_workers; "
        f"orchestration_workers.main({command!r}, {json.dumps(arguments)!r})"
    )
    return [sys.executable, "-c", code]


def read_line(stream: Any, timeout: float) -> str:
    """Read one line from an unbuffered binary pipe, failing after ``timeout`` seconds instead of hanging."""
    deadline = time.monotonic() + timeout
    data = b""
    while not data.endswith(b"\n"):
        ready, _, _ = select.select([stream], [], [], max(deadline - time.monotonic(), 0))
        if not ready:
            raise TimeoutError(f"no line from the child within {timeout}s (got {data!r})")
        chunk = os.read(stream.fileno(), 1)
        if not chunk:
            raise EOFError(f"the child closed its output (got {data!r})")
        data += chunk
    return data.decode().rstrip("\n")


def tool_runs(log: str | Path) -> list[dict[str, Any]]:
    """Return the runs of ``pay`` recorded in ``log``, in order."""
    path = Path(log)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def session_id(number: int) -> str:
    """The id of the ``number``-th session of a scenario."""
    return f"order-{number}"


def kind_of(number: int) -> str:
    """The orchestration a session runs: graphs, swarms and nested graphs in turn."""
    return KINDS[number % len(KINDS)]


def _emit(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def approve(event: BeforeToolCallEvent) -> None:
    """The payer's approval hook: ``pay`` runs only once a human said "y"."""
    if event.tool_use["name"] == "pay" and event.interrupt("approval", reason=event.tool_use["input"]) != "y":
        event.cancel_tool = "denied"


def is_dsn(where: str | Path) -> bool:
    """Whether ``where`` names a PostgreSQL database (a ``postgresql://`` URI or libpq's ``keyword=value`` form)."""
    return isinstance(where, str) and (where.startswith(("postgresql://", "postgres://")) or "dbname=" in where)


def open_session(session_id: str, where: str | Path) -> Any:
    """The session manager of an orchestrator: on files in ``where``, or in the PostgreSQL database it names."""
    if is_dsn(where):
        from strandslike.session.postgres import PostgresSessionManager

        return PostgresSessionManager(session_id, dsn=str(where))
    return FileSessionManager(session_id, storage_dir=where)


def build(
    kind: str,
    storage_dir: str | Path,
    number: int,
    log: str | Path,
    *,
    seed: int = 0,
    hang: bool = False,
    idempotent: bool = False,
    padding: int = 0,
    progress: bool = False,
) -> MultiAgentBase:
    """Build a fresh orchestrator of session ``number`` on its session (files in ``storage_dir``, or the PostgreSQL
    database ``storage_dir`` names), as a stateless server does."""
    sid = session_id(number)

    @tool(context=True, idempotent=idempotent)
    def pay(amount: int, tool_context: ToolContext) -> str:
        """Pay an invoice.

        Args:
            amount: How much.
        """
        run = {
            "session": sid,
            "id": tool_context.tool_use["toolUseId"],
            "key": tool_context.idempotency_key,
            "pid": os.getpid(),
        }
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(run) + "\n")
        if progress:
            _emit(f"T {number} in tool")  # for the parent: a kill now lands inside the approved tool
        if hang:
            _emit(f"IN TOOL {tool_context.idempotency_key}")
            time.sleep(60)
        time.sleep(random.Random(f"{seed}:{sid}").uniform(0.005, 0.03))
        return "paid"

    pay_turns = [tool_call("pay", tool_use_id=f"pay_{number}", amount=number + 1), text("Paid.")]
    payer = Agent(
        name="payer",
        model=ScriptedModel(pay_turns, mode="conversation"),
        tools=[pay],
        hooks=[approve],
        callback_handler=None,
    )
    found = "Invoice found. " + "ü" * padding
    if kind == "swarm":
        handoff = tool_call("handoff_to_agent", tool_use_id=f"h_{number}", agent_name="payer", message="pay it")
        research_turns = [handoff, text(found)]
    else:
        research_turns = [text(found)] * 8  # a rerun of a crashed graph asks again
    research = Agent(name="research", model=ScriptedModel(research_turns, mode="conversation"), callback_handler=None)
    session = open_session(sid, storage_dir)
    if kind == "swarm":
        return Swarm([research, payer], session_manager=session, id="team")
    builder = GraphBuilder()
    builder.add_node(research, "research")
    if kind == "nested":
        inner = GraphBuilder()
        inner.add_node(payer, "payer")
        inner.set_graph_id("billing")
        builder.add_node(inner.build(), "billing")
        builder.add_edge("research", "billing")
    else:
        builder.add_node(payer, "payer")
        builder.add_edge("research", "payer")
    builder.set_graph_id("flow")
    builder.set_session_manager(session)
    return builder.build()


def payer_of(orchestrator: Any) -> Agent:
    """The payer agent of an orchestrator built by `build` (inside the nested graph for ``nested``)."""
    node = orchestrator.nodes.get("payer") or orchestrator.nodes["billing"].executor.nodes["payer"]
    agent: Agent = node.executor
    return agent


def payer_path(kind: str) -> str:
    return "billing/payer" if kind == "nested" else "payer"


def owner_of(kind: str) -> str:
    return "team" if kind == "swarm" else "flow"


# -- child process commands ---------------------------------------------------------------------------------


def _approvals_run(args: dict[str, Any]) -> None:
    """Server-style requests for many sessions: the task, which stops on the approval, then the approving resume."""
    if args.get("slow_disk"):
        from strandslike.session import _files

        _files.os = SlowDisk(**args["slow_disk"])  # type: ignore[assignment]
    storage, log, seed = args["storage_dir"], args["log"], args["seed"]
    _emit("START")
    for number in range(args["sessions"]):
        kind = kind_of(number)
        _emit(f"S {number} start")
        orchestrator = build(kind, storage, number, log, seed=seed, padding=args.get("padding", 0))
        paused = orchestrator(TASK)
        orchestrator.session_manager.close()  # type: ignore[attr-defined]
        [interrupt] = paused.interrupts
        _emit(f"S {number} paused {interrupt.id}")
        orchestrator = build(kind, storage, number, log, seed=seed, padding=args.get("padding", 0), progress=True)
        done = orchestrator([{"interruptResponse": {"interruptId": interrupt.id, "response": "y"}}])
        orchestrator.session_manager.close()  # type: ignore[attr-defined]
        if done.status != Status.COMPLETED:
            raise RuntimeError(f"session {number} ended {done.status}")
        _emit(f"S {number} done")
    _emit("DONE")


def _approval_resume(args: dict[str, Any]) -> None:
    """Resume session 0 with "y"; with ``hang`` the approved tool prints IN TOOL and hangs until killed."""
    kind = args["kind"]
    orchestrator: Any = build(
        kind, args["storage_dir"], 0, args["log"], hang=args["hang"], idempotent=args["idempotent"]
    )
    result = orchestrator([{"interruptResponse": {"interruptId": args["interrupt_id"], "response": "y"}}])
    payer = payer_of(orchestrator)
    results = [b["toolResult"] for m in payer.messages for b in m["content"] if "toolResult" in b]
    _emit(
        json.dumps(
            {
                "status": result.status.value,
                "replayed": result.replayed,
                "tool_results": results,
                "audit": orchestrator.interrupt_audit,
                "last_request": payer.model.requests[-1].messages if payer.model.requests else None,  # type: ignore[attr-defined]
            }
        )
    )


def _resume_worker(args: dict[str, Any]) -> None:
    """Take resumes from the parent (one JSON line each on stdin) until STOP; report each outcome on stdout.

    Outcomes: ``ok`` (the run finished; ``replayed`` when the resume repeated one that already finished),
    ``conflict`` (another worker holds or changed the session: the parent delivers the message again later),
    ``typed`` (another strandslike error), ``untyped`` (anything else: a bug).
    """
    from strandslike.types.exceptions import StrandslikeError

    _emit("READY")
    for line in sys.stdin:
        if line.strip() == "STOP":
            return
        message = json.loads(line)
        number = message["session"]
        report: dict[str, Any] = {"message": message["id"], "session": number, "pid": os.getpid()}
        try:
            orchestrator: Any = build(kind_of(number), args["storage_dir"], number, args["log"], seed=args["seed"])
            try:
                answer = [{"interruptResponse": {"interruptId": message["interrupt_id"], "response": "y"}}]
                result = orchestrator(answer)
                report.update(outcome="ok", status=result.status.value, replayed=result.replayed)
            finally:
                orchestrator.session_manager.close()
        except SessionConflictError:
            report.update(outcome="conflict")
        except StrandslikeError as exc:
            report.update(outcome="typed", error=f"{type(exc).__name__}: {exc}")
        except Exception as exc:
            report.update(outcome="untyped", error=f"{type(exc).__name__}: {exc}")
        _emit(json.dumps(report))


class SlowDisk:
    """Stands in for the ``os`` module of strandslike's log writer: a write writes at most ``chunk`` bytes (a short
    write, which POSIX allows) and pauses first when more remain, like a slow disk, so a kill often lands in the
    middle of a large record and leaves a torn last line."""

    def __init__(self, chunk: int, pause: float) -> None:
        self.chunk = chunk
        self.pause = pause

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    def write(self, fd: int, data: Any) -> int:
        if len(data) > self.chunk:
            time.sleep(self.pause)
        return os.write(fd, bytes(memoryview(data)[: self.chunk]))


COMMANDS = {
    "approvals_run": _approvals_run,
    "approval_resume": _approval_resume,
    "resume_worker": _resume_worker,
}


def main(command: str, arguments: str) -> None:
    """Run one child-process command with its JSON-encoded arguments."""
    COMMANDS[command](json.loads(arguments))
