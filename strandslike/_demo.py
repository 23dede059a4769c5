"""The approval demo of the Strands interrupts guide, on the scripted model.

An agent asked to clean up old files inspects them and calls ``delete_files``; an ``ApprovalHook`` on
`BeforeToolCallEvent` interrupts that call, the demo shows the interrupt with its reason, reads the answer
(``y`` approve once, ``t`` trust from now on, anything else deny) and resumes the agent with it.

With ``--storage-dir DIR`` the agent is persisted by a `FileSessionManager` and works on files under
``DIR/demo-files/<session id>/``. Stop it at its prompt (Ctrl-C, end of input, or ``--stop-at-prompt``) and it
prints the ``python -m strandslike resume`` command that answers the interrupt from another process later;
running the demo again with the same directory also picks up at the prompt.
"""

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .agent import Agent, AgentResult
from .cli._model_option import ModelOptionError, add_model_option, build_model
from .hooks import BeforeToolCallEvent, HookProvider, HookRegistry
from .interrupt import Interrupt
from .models import ScriptedModel, text, tool_call
from .models.scripted import ScriptedTurn
from .tools.decorator import tool
from .types.interrupt import InterruptResponseContent

if TYPE_CHECKING:
    from .models.model import Model
    from .session.file_session_manager import FileSessionManager

PATHS = ["a/b/c.txt", "d/e/f.txt"]
FACTORY = "strandslike._demo:session_agent"
# The model reads its place in the script from the conversation, so a restored agent continues the script.
SCRIPT: tuple[ScriptedTurn, ...] = (
    tool_call("inspect_files", tool_use_id="tooluse_1", paths=PATHS),
    tool_call("delete_files", tool_use_id="tooluse_2", paths=PATHS),
    text("I inspected both files and asked to delete them; the tool results above say what happened."),
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
            event.cancel_tool = "User denied permission to delete files"
        event.agent.state.set(f"{self.app_name}-approval", str(approval).lower())


def build_agent(workdir: Path, model: "Model | None" = None, **kwargs: Any) -> Agent:
    """Build the demo agent working on files under ``workdir`` (on the scripted model unless ``model`` is given)."""

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
        hooks=[ApprovalHook("myapp")],
        system_prompt="You delete files older than 5 days",
        tools=[delete_files, inspect_files],
        **kwargs,
    )


def session_workdir(session_manager: "FileSessionManager") -> Path:
    """Return where the demo agent of a file session keeps its work files."""
    return Path(session_manager.storage_dir) / "demo-files" / session_manager.session_id


def session_agent(session_manager: "FileSessionManager", model: "Model | None" = None) -> Agent:
    """Build the demo agent on a file session: the factory for ``python -m strandslike resume``.

    ``python -m strandslike resume --agent strandslike._demo:session_agent --storage-dir DIR SESSION_ID ...``

    Args:
        session_manager: The `FileSessionManager` of the session; the work files are under
            ``<storage_dir>/demo-files/<session_id>/``.
        model: A real model to use instead of the scripted one (``--model``).
    """
    return build_agent(session_workdir(session_manager), model, session_manager=session_manager)


def _create_files(workdir: Path) -> None:
    for name in PATHS:
        (workdir / name).parent.mkdir(parents=True, exist_ok=True)
        (workdir / name).write_text("old data\n")


def _ask(interrupt_reason: Any, answer: str | None) -> str:
    prompt = f"Do you want to delete {interrupt_reason['paths']} (t/y/N): "
    if answer is not None:
        print(prompt + answer)
        return answer
    if not sys.stdin.isatty():
        print(prompt + "N  (no terminal: pass --yes or --no to answer)")
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
    agent: Agent,
    workdir: Path,
    result: AgentResult | None,
    interrupts: Sequence[Interrupt],
    args: argparse.Namespace,
) -> int:
    """Answer interrupts until the agent finishes; print the outcome."""
    while interrupts:
        responses: list[InterruptResponseContent] = []
        for interrupt in interrupts:
            print(f"interrupt {interrupt.name} (id {interrupt.id}): reason {json.dumps(interrupt.reason)}")
            if args.stop_at_prompt:
                print(f"Do you want to delete {interrupt.reason['paths']} (t/y/N): (stopped: --stop-at-prompt)")
                raise _Stopped(0)
            answer = _ask(interrupt.reason, args.answer)
            responses.append({"interruptResponse": {"interruptId": interrupt.id, "response": answer}})
        result = agent(responses)
        interrupts = _open_interrupts(result)
    remaining = sorted(str(p.relative_to(workdir)) for p in workdir.rglob("*.txt"))
    if result is not None:
        print(f"MESSAGE: {json.dumps(result.message)}")
    print(f"files left: {remaining}")
    return 0


def _open_interrupts(result: AgentResult) -> list[Interrupt]:
    return list(result.interrupts or ()) if result.stop_reason == "interrupt" else []


def _run_in_session(args: argparse.Namespace) -> int:
    from .cli._render import resume_command
    from .session.file_session_manager import FileSessionManager

    manager = FileSessionManager(args.session_id, storage_dir=args.storage_dir)
    try:
        agent = session_agent(manager, args.built_model)
        workdir = session_workdir(manager)
        if agent._interrupt_state.activated:
            print(f"session {args.session_id} in {args.storage_dir} is waiting at the prompt; picking up there")
            result, interrupts = None, agent._interrupt_state.unanswered()
        elif agent.messages:
            remaining = sorted(str(p.relative_to(workdir)) for p in workdir.rglob("*.txt"))
            print(f"session {args.session_id} in {args.storage_dir} has finished (files left: {remaining}).")
            print("Pass another --session-id to run the demo again.")
            return 0
        else:
            _create_files(workdir)
            result = agent(f"paths=<{PATHS}>")
            interrupts = _open_interrupts(result)
        try:
            return _converse(agent, workdir, result, interrupts, args)
        except _Stopped as stopped:
            pending = agent._interrupt_state.unanswered()
            print(f"Stopped at the prompt. The session is saved in {args.storage_dir}; answer it later with:")
            pairs = [(interrupt.id, '"y"') for interrupt in pending]
            print("  " + resume_command(FACTORY, args.storage_dir, args.session_id, pairs))
            print("(or run the demo again with the same --storage-dir and --session-id)")
            return stopped.exit_code
    finally:
        manager.close()


def run(argv: list[str] | None = None) -> int:
    """Run the demo; return the process exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m strandslike demo", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--yes", action="store_const", const="y", dest="answer", help="approve without asking")
    group.add_argument("--no", action="store_const", const="N", dest="answer", help="deny without asking")
    group.add_argument(
        "--stop-at-prompt", action="store_true", help="stop at the first prompt, as if the input ended there"
    )
    parser.add_argument("--storage-dir", metavar="DIR", help="persist the agent in DIR so a later process can resume")
    parser.add_argument("--session-id", default="demo", help="the session to use in DIR (default: %(default)s)")
    add_model_option(parser)
    args = parser.parse_args(argv)
    try:
        args.built_model = build_model(args.model) if args.model is not None else None
    except ModelOptionError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.storage_dir is not None:
        return _run_in_session(args)
    if args.session_id != "demo":
        parser.error("--session-id needs --storage-dir")

    with tempfile.TemporaryDirectory(prefix="strandslike-demo-") as tmp:
        workdir = Path(tmp)
        _create_files(workdir)
        agent = build_agent(workdir, args.built_model)
        result = agent(f"paths=<{PATHS}>")
        try:
            return _converse(agent, workdir, result, _open_interrupts(result), args)
        except _Stopped as stopped:
            print("Stopped at the prompt; nothing was saved. Run with --storage-dir DIR to resume later.")
            return stopped.exit_code
