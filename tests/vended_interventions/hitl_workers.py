"""An agent with `HumanInTheLoop` persisted by a `FileSessionManager`, run step by step in fresh processes.

A test runs ``python -c "<child_code(...)>"``; the child builds the agent from the session (a new process each
time, like a stateless server), runs one step and prints one JSON line. Tool runs are appended to a log file so
they can be counted across processes.
"""

import json
import sys
from pathlib import Path
from typing import Any

from strandslike import Agent, tool
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.session import FileSessionManager
from strandslike.vended_interventions.hitl import ApprovalPolicy, HumanInTheLoop, PolicyRule

HERE = Path(__file__).resolve().parent
SESSION_ID = "hitl"
LOG: list[Path] = []

POLICY = ApprovalPolicy(
    [PolicyRule("system files", "delete_files", "deny", {"paths": {"glob": "/etc/*"}}, "system files are off limits")],
    default="ask",
)


@tool
def delete_files(paths: list[str]) -> str:
    """Delete files.

    Args:
        paths: The files to delete.
    """
    with LOG[0].open("a") as log:
        log.write(json.dumps(paths) + "\n")
    return f"deleted {len(paths)}"


def build(storage: str, turns: list[Any]) -> Agent:
    """Build the agent from the session in ``storage``."""
    return Agent(
        model=ScriptedModel(turns),
        tools=[delete_files],
        interventions=[HumanInTheLoop(enable_trust=True, policy=POLICY)],
        session_manager=FileSessionManager(SESSION_ID, storage_dir=storage),
    )


def runs(log: Path) -> list[list[str]]:
    """Return the tool runs recorded in ``log``."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def main(command: str, raw: str) -> None:
    """Run one step: ``ask`` (a new prompt deleting ``paths``) or ``answer`` (answer the pending interrupts)."""
    arguments = json.loads(raw)
    LOG.append(Path(arguments["log"]))
    if command == "ask":
        agent = build(
            arguments["storage"],
            [tool_call("delete_files", paths=arguments["paths"], tool_use_id=arguments["id"]), text("done")],
        )
        result = agent(f"delete {arguments['paths']}")
    elif command == "answer":
        agent = build(arguments["storage"], [text("done")])
        result = agent([interrupt.resume(arguments["answer"]) for interrupt in agent.pending_interrupts])
    else:
        raise SystemExit(f"unknown command {command!r}")
    sys.stdout.write(
        json.dumps(
            {
                "stop_reason": result.stop_reason,
                "interrupts": [interrupt.to_dict() for interrupt in result.interrupts or ()],
                "trust": [grant.to_dict() for grant in HumanInTheLoop.list_trust(agent)],
            }
        )
        + "\n"
    )


def child_argv(command: str, **arguments: Any) -> list[str]:
    """Return the argv of a fresh interpreter running ``main(command, arguments)``."""
    code = (
        f"import sys; sys.path.insert(0, {str(HERE)!r}); import hitl_workers; "
        f"hitl_workers.main({command!r}, {json.dumps(arguments)!r})"
    )
    return [sys.executable, "-c", code]
