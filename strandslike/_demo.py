"""The approval demo of the Strands interrupts guide, on the scripted model (``python -m strandslike demo``).

An agent asked to clean up old files inspects them and calls ``delete_files``. Its approvals are the public
`HumanInTheLoop` handler, ``HumanInTheLoop(allowed_tools=["inspect_files"], enable_trust=True)``: ``inspect_files``
runs freely, and ``delete_files`` pauses the agent on a ``strands:human-in-the-loop`` interrupt. The demo shows the
question, reads the answer (``y`` approve once, ``t`` approve and trust ``delete_files`` from now on, anything else
deny: HumanInTheLoop's own answers), resumes the agent with it, and says in plain words what ran, who decided
(read from ``agent.interrupt_audit``) and what the model answered. The model's last turn is a reply function of
the conversation, so its answer follows what really happened.

With a storage directory the agent is persisted by a `FileSessionManager` and works on files under
``DIR/demo-files/<session id>/``; `session_agent` is the factory for ``resume`` and ``serve``. The scripted model
reads its place in the script from the conversation (``mode="conversation"``), so a restored agent continues it.
Running the demo again on a session that finished starts a new round on fresh old files; trust granted with ``t``
is kept in the session (``agent.state["hitl:trusted_tools"]``), so that round runs without asking until the trust
is revoked (``python -m strandslike sessions trust revoke``).

The pieces are separate so the demo is easy to extend: `build_agent` builds the agent (its model, tools and
approvals), `ask` gets an answer, and `narrate_*` print what happened.
"""

import argparse
import json
import shlex
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .agent import Agent, AgentResult
from .interrupt import Interrupt
from .models import ScriptedModel, text, tool_call
from .tools.decorator import tool
from .types.content import Messages
from .vended_interventions.hitl import HumanInTheLoop

if TYPE_CHECKING:
    from .models.model import Model
    from .models.scripted import ScriptedTurn
    from .session.file_session_manager import FileSessionManager

PATHS = ["a/b/c.txt", "d/e/f.txt"]
PROMPT = f"paths=<{PATHS}>"
FACTORY = "strandslike._demo:session_agent"
GUARDED = "delete_files"
"""The tool HumanInTheLoop asks about (every tool not in ``allowed_tools``; the demo's other one is allowed)."""
HUMAN = "human"
"""HumanInTheLoop's ``decided_by`` for an answer that names nobody: in the demo, the person at the prompt."""


def approvals() -> HumanInTheLoop:
    """Return the demo's approval handler: ``inspect_files`` runs freely, anything else asks; ``t`` trusts."""
    return HumanInTheLoop(allowed_tools=["inspect_files"], enable_trust=True)


def _closing_words(messages: Messages) -> "ScriptedTurn":
    """The model's last turn: it reads the delete_files result in the conversation, as a real model would."""
    outcome = _tool_outcome(messages, GUARDED)
    listed = " and ".join(PATHS)
    if outcome is not None and outcome["status"] == "success":
        return text(f"I deleted {listed}.")
    return text(f"You declined, so I left {listed} in place.")


def script(rounds: int = 1, first: int = 1) -> list[Any]:
    """Return the scripted model's turns for ``rounds`` requests from round ``first``: inspect, delete, then say so.

    Round ``n`` has its own tool-use ids (``tooluse_<2n-1>`` and ``tooluse_<2n>``: ``tooluse_1`` and ``tooluse_2``
    in the first), so a model in ``mode="conversation"`` tells the rounds apart and a session can be given the task
    again. The model only needs the round the conversation is in and the next one: it finds its place from the
    last assistant message it recognises, even when the conversation manager has trimmed the older rounds.
    """
    turns: list[Any] = []
    for number in range(first, first + rounds):
        turns += [
            tool_call("inspect_files", tool_use_id=f"tooluse_{2 * number - 1}", paths=PATHS),
            tool_call(GUARDED, tool_use_id=f"tooluse_{2 * number}", paths=PATHS),
            _closing_words,
        ]
    return turns


SCRIPT: tuple[Any, ...] = tuple(script(2))
"""The turns of a new agent: the first request, and a second one on the same agent."""


class _Stopped(Exception):
    """The user stopped the demo at its prompt."""

    def __init__(self, exit_code: int) -> None:
        self.exit_code = exit_code
        super().__init__(exit_code)


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

    agent = Agent(
        # The scripted model reads its place from the conversation: restored, it continues where it stopped.
        model=model or ScriptedModel(SCRIPT, mode="conversation"),
        interventions=[approvals()],
        system_prompt="You delete files older than 5 days",
        tools=[delete_files, inspect_files],
        **kwargs,
    )
    last = _last_round(agent.messages)
    if model is None and last:  # a restored session: script the round it is in and the next one
        agent.model = ScriptedModel(script(2, first=last), mode="conversation")
    return agent


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


def _last_round(messages: Messages) -> int:
    """Return the number of the last round the conversation holds (0 if none), from the scripted tool-use ids."""
    last = 0
    for message in reversed(messages):
        for block in message["content"]:
            if "toolUse" in block:
                prefix, _, number = str(block["toolUse"]["toolUseId"]).partition("tooluse_")
                if not prefix and number.isdigit():
                    last = max(last, (int(number) + 1) // 2)
        if last:
            return last
    return last


def _last_tool_use_id(messages: Messages, name: str) -> str | None:
    for message in reversed(messages):
        for block in reversed(message["content"]):
            if "toolUse" in block and block["toolUse"]["name"] == name:
                return str(block["toolUse"]["toolUseId"])
    return None


def _tool_outcome(messages: Messages, name: str) -> dict[str, Any] | None:
    """Return the result of the last call of tool ``name`` in ``messages`` (status and text), or None if none."""
    tool_use_id = _last_tool_use_id(messages, name)
    for message in reversed(messages):
        for block in message["content"]:
            if "toolResult" in block and block["toolResult"]["toolUseId"] == tool_use_id:
                result = block["toolResult"]
                words = [part.get("text") or str(part.get("json", "")) for part in result["content"]]
                return {"status": result["status"], "text": " ".join(word for word in words if word)}
    return None


def _decision(agent: Agent, tool: str | None = None, *, interrupt_id: str | None = None) -> dict[str, Any] | None:
    """Return HumanInTheLoop's audited decision on the last call of ``tool`` (or on an interrupt), or None."""
    tool_use_id = _last_tool_use_id(agent.messages, tool) if tool is not None else None
    for entry in reversed(agent.interrupt_audit):
        if entry.get("event") != "decision":
            continue
        if (tool_use_id is not None and entry.get("tool_use_id") == tool_use_id) or (
            interrupt_id is not None and entry.get("interrupt_id") == interrupt_id
        ):
            found: dict[str, Any] = entry
            return found
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


def _times(count: int) -> str:
    return {1: "once", 2: "twice"}.get(count, f"{count} times")


def _listing(paths: Sequence[str]) -> str:
    return ", ".join(paths) if paths else "none"


def _person(decided_by: Any) -> str:
    return "you" if decided_by in (None, HUMAN) else str(decided_by)


def _granted(trust: Any) -> str:
    """Describe a trust record of the audit trail or of ``agent.state``: who granted it, and when."""
    from .cli._render import when

    record = trust if isinstance(trust, dict) else {}
    by = _person(record.get("granted_by"))
    at = record.get("granted_at")
    return f"granted by {by}" + (f" at {when(at)}" if at else "")


def who_decided(entry: dict[str, Any] | None) -> str:
    """Say in plain words who let a call run or stopped it, from HumanInTheLoop's audit entry."""
    if entry is None:
        return "HumanInTheLoop made no decision on it"
    decision, by = entry.get("decision"), entry.get("decided_by")
    if decision == "allowed":
        if by == "allowed_tools":
            return "HumanInTheLoop let it run without asking: it is in allowed_tools"
        return f"HumanInTheLoop let it run without asking ({by})"
    if decision == "trusted":
        return f"HumanInTheLoop ran it without asking: trust used, {_granted(entry.get('trust'))}"
    if decision in ("approved", "edited"):
        said = f"{'approved' if decision == 'approved' else 'approved with edits'} by {_person(by)}"
        if entry.get("trust"):
            said += f", and trust granted: {entry.get('tool')} is trusted from now on"
        return said
    if decision == "timed_out":
        return f"nobody answered in time ({by})"
    return f"denied by {_person(by)}"


# -- what the demo prints -------------------------------------------------------------------------------------------


def narrate_start(workdir: Path, saved: str | None) -> None:
    """Say what the agent is asked to do."""
    where = f"in {workdir}" if saved else "in a temporary directory"
    print(f"The agent is asked to delete the files older than 5 days: {_listing(PATHS)} ({where}).")
    if saved:
        print(saved)


def narrate_trust(agent: Agent, revoke: str | None) -> None:
    """Say which tools HumanInTheLoop already trusts in this session (it will not ask about them)."""
    for grant in HumanInTheLoop.list_trust(agent):
        granted = _granted(grant.to_dict())
        print(f"HumanInTheLoop trusts {grant.describe()} in this session, {granted}: it will not ask about it.")
        if revoke is not None:
            print(f"  To be asked again, revoke the trust: {revoke}")


def narrate_inspection(agent: Agent) -> None:
    """Say what the agent found with inspect_files, and who let it run."""
    inspected = _tool_outcome(agent.messages, "inspect_files")
    if inspected is not None:
        print(f"It inspected them first with inspect_files: {_sizes(inspected['text'])}.")
        print(f"  ({who_decided(_decision(agent, 'inspect_files'))}.)")


def narrate_question(agent: Agent, interrupt: Interrupt) -> None:
    """Say what the agent wants and why it stopped."""
    narrate_inspection(agent)
    tool = (interrupt.metadata or {}).get("tool", GUARDED)
    print(f"Now it wants to run {tool} on {_listing(_paths(interrupt))}.")
    print(f'HumanInTheLoop paused it before that call to ask you (interrupt "{interrupt.name}", id {interrupt.id}).')


def narrate_answer(agent: Agent, interrupt: Interrupt, answer: str, remembered: bool) -> None:
    """Say what HumanInTheLoop made of the answer to ``interrupt`` (from its audit trail)."""
    entry = _decision(agent, interrupt_id=interrupt.id)
    if entry is None or entry.get("decision") not in ("approved", "edited"):
        print(f'You answered "{answer}": denied.')
        return
    if not entry.get("trust"):
        print(f'You answered "{answer}": approved, this time only.')
        return
    if remembered:
        kept = "saved with the session, so it will not ask about it again, in this process or the next"
    else:
        kept = "so it will not ask again in this run (nothing is saved without --storage-dir: the next run asks)"
    print(
        f'You answered "{answer}": approved, and trusted from now on: HumanInTheLoop keeps {entry.get("tool")} '
        f"in agent.state (hitl:trusted_tools), {kept}."
    )


def narrate_outcome(agent: Agent, result: AgentResult | None, workdir: Path) -> None:
    """Say what ran, who decided, what the model said, and which files are left."""
    outcome = _tool_outcome(agent.messages, GUARDED)
    entry = _decision(agent, GUARDED)
    decided = who_decided(entry)
    if outcome is None:
        print(f"{GUARDED} did not run.")
    elif outcome["status"] == "success":
        print(f"{GUARDED} ran and deleted {_listing(PATHS)} ({decided}).")
    else:
        told = outcome["text"].splitlines()[0] if outcome["text"] else "nothing"
        if entry is not None and entry.get("decision") in ("denied", "timed_out"):
            print(f"{GUARDED} did not run ({decided}); HumanInTheLoop cancelled the call and told the model: {told}")
        else:
            print(f"{GUARDED} failed ({decided}); the model was told: {told}")
    if result is not None:
        said = " ".join(block["text"] for block in result.message.get("content", []) if "text" in block)
        print(f'The model said: "{said}"')
    print(f"Files left: {_listing(_files_left(workdir))}.")


def _paths(interrupt: Interrupt) -> list[str]:
    """Return the paths the interrupted call would delete (HumanInTheLoop puts the call's input in metadata)."""
    tool_input = (interrupt.metadata or {}).get("input")
    paths = tool_input.get("paths") if isinstance(tool_input, dict) else None
    return [str(path) for path in paths] if isinstance(paths, list) else []


def _question(interrupt: Interrupt) -> str:
    return f"Do you want to delete {_paths(interrupt)} (t/y/N): "


# -- the conversation -------------------------------------------------------------------------------------------


def ask(interrupt: Interrupt, answer: str | None) -> str:
    """Return the answer to the approval question: the one given on the command line, else read from the terminal.

    Raises:
        _Stopped: The user ended the input or pressed Ctrl-C.
    """
    prompt = _question(interrupt)
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
    agent: Agent, workdir: Path, result: AgentResult | None, args: argparse.Namespace, remembered: bool
) -> int:
    """Answer the agent's questions until it finishes; say what happened."""
    asked = False
    while interrupts := agent.pending_interrupts:
        asked = True
        answers: list[str] = []
        for interrupt in interrupts:
            narrate_question(agent, interrupt)
            if args.stop_at_prompt:
                print(_question(interrupt) + "(stopped: --stop-at-prompt)")
                raise _Stopped(0)
            answers.append(ask(interrupt, args.answer))
        responses: list[Any] = [interrupt.resume(answer) for interrupt, answer in zip(interrupts, answers, strict=True)]
        result = agent(responses)
        for interrupt, answer in zip(interrupts, answers, strict=True):
            narrate_answer(agent, interrupt, answer, remembered)
    if not asked:
        narrate_inspection(agent)
    narrate_outcome(agent, result, workdir)
    return 0


def _revoke_command(args: argparse.Namespace) -> str:
    program = getattr(args, "program", "python -m strandslike").split()
    words = [*program, "sessions", "trust", "revoke", "--storage-dir", args.storage_dir, args.session_id, GUARDED]
    return shlex.join(words)


def _run_in_session(args: argparse.Namespace) -> int:
    from .cli._render import resume_command
    from .session.file_session_manager import FileSessionManager

    program = getattr(args, "program", "python -m strandslike")
    manager = FileSessionManager(args.session_id, storage_dir=args.storage_dir)
    try:
        workdir = session_workdir(manager)
        agent = session_agent(manager, getattr(args, "built_model", None))
        result: AgentResult | None = None
        if agent.pending_interrupts:
            print(f"Session {args.session_id} in {args.storage_dir} is waiting at the question; picking up there.")
        else:
            again = bool(agent.messages)
            if again:  # the session did the task before: give it old files to clean up again
                _create_files(workdir)
            narrate_start(workdir, f"The agent is saved in session {args.session_id!r} of {args.storage_dir}.")
            if again:
                rounds = _last_round(agent.messages)  # 0 with a real model: its tool-use ids are its own
                times = f"{_times(rounds)} " if rounds else ""
                print(f"It did this task {times}before in this session: the old files are back.")
            narrate_trust(agent, _revoke_command(args))
            result = agent(PROMPT)
        try:
            return _converse(agent, workdir, result, args, remembered=True)
        except _Stopped as stopped:
            print(f"Stopped at the question. The session is saved in {args.storage_dir}; answer it later with:")
            pairs = [(interrupt.id, '"y"') for interrupt in agent.pending_interrupts]
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
        result = agent(PROMPT)
        try:
            return _converse(agent, workdir, result, args, remembered=False)
        except _Stopped as stopped:
            print("Stopped at the question; nothing was saved. Run with --storage-dir DIR to resume later.")
            return stopped.exit_code
