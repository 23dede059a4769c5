"""The approval demo of the Strands interrupts guide, on the scripted model (``python -m strandslike demo``).

An agent asked to clean up old files inspects them and calls ``delete_files``; an ``ApprovalHook`` on
`BeforeToolCallEvent` interrupts that call. The demo shows the question, reads the answer (``y`` approve once,
``t`` trust from now on, anything else deny), resumes the agent with it, and says in plain words what ran and what
the model answered. The model's last turn is a reply function of the conversation, so its answer follows what
really happened.

With a storage directory the agent is persisted by a `FileSessionManager` and works on files under
``DIR/demo-files/<session id>/``; `session_agent` is the factory for ``resume`` and ``serve``. The scripted model
reads its place in the script from the conversation (``mode="conversation"``), so a restored agent continues it.

The pieces are separate so the demo is easy to extend: `build_agent` builds the agent (its model, tools and
hooks), `ask` gets an answer, and `narrate_*` print what happened.
"""

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .agent import Agent, AgentResult
from .hooks import BeforeToolCallEvent, HookProvider, HookRegistry
from .interrupt import Interrupt
from .models import ScriptedModel, text, tool_call
from .tools.decorator import tool
from .types.content import Messages

if TYPE_CHECKING:
    from .models.model import Model
    from .models.scripted import ScriptedTurn
    from .session.file_session_manager import FileSessionManager

PATHS = ["a/b/c.txt", "d/e/f.txt"]
FACTORY = "strandslike._demo:session_agent"
APP = "myapp"
DENIED = "User denied permission to delete files"
ANSWERS = {
    "y": "approved, this time only",
    "t": f"approved, and trusted from now on (remembered in agent.state as {APP}-approval: this session will not "
    "ask again)",
}


def _closing_words(messages: Messages) -> "ScriptedTurn":
    """The model's last turn: it reads the delete_files result in the conversation, as a real model would."""
    outcome = _tool_outcome(messages, "delete_files")
    listed = " and ".join(PATHS)
    if outcome is not None and outcome["status"] == "success":
        return text(f"I deleted {listed}.")
    return text(f"You declined, so I left {listed} in place.")


SCRIPT: tuple[Any, ...] = (
    tool_call("inspect_files", tool_use_id="tooluse_1", paths=PATHS),
    tool_call("delete_files", tool_use_id="tooluse_2", paths=PATHS),
    _closing_words,
)


class _Stopped(Exception):
    """The user stopped the demo at its prompt."""

    def __init__(self, exit_code: int) -> None:
        self.exit_code = exit_code
        super().__init__(exit_code)


class ApprovalHook(HookProvider):
    """Asks before ``delete_files`` runs; remembers a ``t`` (trust) answer in ``agent.state``."""

    def __init__(self, app_name: str) -> None:
        self.app_name = app_name

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        """Register the approval callback."""
        registry.add_callback(BeforeToolCallEvent, self.approve)

    def approve(self, event: BeforeToolCallEvent) -> None:
        """Interrupt ``delete_files`` calls for approval unless the user trusted the app."""
        if event.tool_use["name"] != "delete_files":
            return
        if event.agent.state.get(f"{self.app_name}-approval") == "t":
            return
        approval = event.interrupt(f"{self.app_name}-approval", reason={"paths": event.tool_use["input"]["paths"]})
        if str(approval).lower() not in ("y", "t"):
            event.cancel_tool = DENIED
        event.agent.state.set(f"{self.app_name}-approval", str(approval).lower())


def build_agent(workdir: Path, model: "Model | None" = None, **kwargs: Any) -> Agent:
    """Build the demo agent working on files under ``workdir``.

    Args:
        workdir: Where the files to clean up are.
        model: A real model to use instead of the scripted one (``--model``).
        **kwargs: More `Agent` arguments (a ``session_manager``).
    """

    @tool
    def inspect_files(paths: list[str]) -> dict[str, Any]:
        """Report the size of each file.

        Args:
            paths: Files to inspect, relative to the working directory.
        """
        return {path: (workdir / path).stat().st_size for path in paths if (workdir / path).exists()}

    @tool
    def delete_files(paths: list[str]) -> bool:
        """Delete files.

        Args:
            paths: Files to delete, relative to the working directory.
        """
        for path in paths:
            (workdir / path).unlink(missing_ok=True)
        return True

    return Agent(
        # The scripted model reads its place from the conversation: restored, it continues where it stopped.
        model=model or ScriptedModel(SCRIPT, mode="conversation"),
        hooks=[ApprovalHook(APP)],
        system_prompt="You delete files older than 5 days",
        tools=[delete_files, inspect_files],
        **kwargs,
    )


def session_workdir(session_manager: "FileSessionManager") -> Path:
    """Return where the demo agent of a file session keeps its work files."""
    return Path(session_manager.storage_dir) / "demo-files" / session_manager.session_id


def session_agent(session_manager: "FileSessionManager", model: "Model | None" = None) -> Agent:
    """Build the demo agent on a file session: the factory for ``resume`` and ``serve``.

    ``python -m strandslike resume --agent strandslike._demo:session_agent --storage-dir DIR SESSION_ID ...``

    Args:
        session_manager: The `FileSessionManager` of the session; the work files are under
            ``<storage_dir>/demo-files/<session_id>/``.
        model: A real model to use instead of the scripted one (``--model``).
    """
    workdir = session_workdir(session_manager)
    if not workdir.exists():  # a new session (e.g. a new AG-UI thread): give it old files to clean up
        _create_files(workdir)
    return build_agent(workdir, model, session_manager=session_manager)


def _create_files(workdir: Path) -> None:
    for name in PATHS:
        (workdir / name).parent.mkdir(parents=True, exist_ok=True)
        (workdir / name).write_text("old data\n")


def _tool_outcome(messages: Messages, name: str) -> dict[str, Any] | None:
    """Return the last result of tool ``name`` in ``messages`` (status and text), or None if it has none."""
    names = {
        block["toolUse"]["toolUseId"]: block["toolUse"]["name"]
        for message in messages
        for block in message["content"]
        if "toolUse" in block
    }
    for message in reversed(messages):
        for block in message["content"]:
            if "toolResult" in block and names.get(block["toolResult"]["toolUseId"]) == name:
                result = block["toolResult"]
                words = [part.get("text") or str(part.get("json", "")) for part in result["content"]]
                return {"status": result["status"], "text": " ".join(word for word in words if word)}
    return None


def _sizes(reported: str) -> str:
    try:
        sizes = json.loads(reported)
    except ValueError:
        return reported
    if not isinstance(sizes, dict) or not sizes:
        return "it found none of them"
    return ", ".join(f"{path} is {size} bytes" for path, size in sizes.items())


def _files_left(workdir: Path) -> list[str]:
    return sorted(str(path.relative_to(workdir)) for path in workdir.rglob("*.txt"))


def _listing(paths: Sequence[str]) -> str:
    return ", ".join(paths) if paths else "none"


# -- what the demo prints -------------------------------------------------------------------------------------------


def narrate_start(workdir: Path, saved: str | None) -> None:
    """Say what the agent is asked to do."""
    where = f"in {workdir}" if saved else "in a temporary directory"
    print(f"The agent is asked to delete the files older than 5 days: {_listing(PATHS)} ({where}).")
    if saved:
        print(saved)


def narrate_question(agent: Agent, interrupt: Interrupt) -> None:
    """Say what the agent wants and why it stopped."""
    inspected = _tool_outcome(agent.messages, "inspect_files")
    if inspected is not None:
        print(f"It inspected them first with inspect_files: {_sizes(inspected['text'])}.")
    paths = interrupt.reason.get("paths", []) if isinstance(interrupt.reason, dict) else []
    print(f"Now it wants to run delete_files on {_listing(paths)}.")
    print(f'The approval hook paused it before that call to ask you (interrupt "{interrupt.name}", id {interrupt.id}).')


def narrate_answer(answer: str) -> None:
    """Say what the answer means."""
    meaning = ANSWERS.get(answer.lower(), "denied")
    print(f'You answered "{answer}": {meaning}.')


def narrate_outcome(agent: Agent, result: AgentResult | None, workdir: Path) -> None:
    """Say what ran, what the model said, and which files are left."""
    outcome = _tool_outcome(agent.messages, "delete_files")
    if outcome is None:
        print("delete_files did not run.")
    elif outcome["status"] == "success":
        print(f"delete_files ran and deleted {_listing(PATHS)}.")
    else:
        print(f'delete_files did not run: the hook cancelled it, and the model was told "{outcome["text"]}".')
    if result is not None:
        said = " ".join(block["text"] for block in result.message.get("content", []) if "text" in block)
        print(f'The model said: "{said}"')
    print(f"Files left: {_listing(_files_left(workdir))}.")


# -- the conversation -------------------------------------------------------------------------------------------


def ask(interrupt: Interrupt, answer: str | None) -> str:
    """Return the answer to the approval question: the one given on the command line, else read from the terminal.

    Raises:
        _Stopped: The user ended the input or pressed Ctrl-C.
    """
    prompt = f"Do you want to delete {interrupt.reason['paths']} (t/y/N): "
    if answer is not None:
        print(prompt + answer)
        return answer
    if not sys.stdin.isatty():
        print(prompt + "N  (no terminal: pass --yes, --trust or --no to answer)")
        return "N"
    try:
        return input(prompt)
    except EOFError:
        print()
        raise _Stopped(0) from None
    except KeyboardInterrupt:
        print()
        raise _Stopped(130) from None


def _converse(
    agent: Agent, workdir: Path, result: AgentResult | None, interrupts: Sequence[Interrupt], args: argparse.Namespace
) -> int:
    """Answer interrupts until the agent finishes; say what happened."""
    while interrupts:
        responses: list[Any] = []
        for interrupt in interrupts:
            narrate_question(agent, interrupt)
            if args.stop_at_prompt:
                print(f"Do you want to delete {interrupt.reason['paths']} (t/y/N): (stopped: --stop-at-prompt)")
                raise _Stopped(0)
            answer = ask(interrupt, args.answer)
            narrate_answer(answer)
            responses.append(interrupt.resume(answer))
        result = agent(responses)
        interrupts = _open_interrupts(result)
    narrate_outcome(agent, result, workdir)
    return 0


def _open_interrupts(result: AgentResult) -> list[Interrupt]:
    return list(result.interrupts or ()) if result.stop_reason == "interrupt" else []


def _run_in_session(args: argparse.Namespace) -> int:
    from .cli._render import resume_command
    from .session.file_session_manager import FileSessionManager

    program = getattr(args, "program", "python -m strandslike")
    manager = FileSessionManager(args.session_id, storage_dir=args.storage_dir)
    try:
        workdir = session_workdir(manager)
        fresh = not workdir.exists()
        agent = session_agent(manager, getattr(args, "built_model", None))
        if agent._interrupt_state.activated:
            print(f"Session {args.session_id} in {args.storage_dir} is waiting at the question; picking up there.")
            result, interrupts = None, agent._interrupt_state.unanswered()
        elif agent.messages and not fresh:
            left = _listing(_files_left(workdir))
            print(f"Session {args.session_id} in {args.storage_dir} has finished (files left: {left}).")
            print("Pass another --session-id to run the demo again.")
            return 0
        else:
            narrate_start(workdir, f"The agent is saved in session {args.session_id!r} of {args.storage_dir}.")
            result = agent(f"paths=<{PATHS}>")
            interrupts = _open_interrupts(result)
        try:
            return _converse(agent, workdir, result, interrupts, args)
        except _Stopped as stopped:
            pending = agent._interrupt_state.unanswered()
            print(f"Stopped at the question. The session is saved in {args.storage_dir}; answer it later with:")
            pairs = [(interrupt.id, '"y"') for interrupt in pending]
            print("  " + resume_command(FACTORY, args.storage_dir, args.session_id, pairs, program))
            print("(or run the demo again with the same --storage-dir and --session-id)")
            return stopped.exit_code
    finally:
        manager.close()


def run(args: argparse.Namespace) -> int:
    """Run the demo with parsed arguments (see `strandslike.cli.demo`); return the process exit code."""
    if args.storage_dir is not None:
        return _run_in_session(args)
    with tempfile.TemporaryDirectory(prefix="strandslike-demo-") as tmp:
        workdir = Path(tmp)
        _create_files(workdir)
        agent = build_agent(workdir, getattr(args, "built_model", None))
        narrate_start(workdir, None)
        result = agent(f"paths=<{PATHS}>")
        try:
            return _converse(agent, workdir, result, _open_interrupts(result), args)
        except _Stopped as stopped:
            print("Stopped at the question; nothing was saved. Run with --storage-dir DIR to resume later.")
            return stopped.exit_code
