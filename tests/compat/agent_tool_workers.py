"""The agents of the agent-as-tool tests, built the same way in the test process and in child processes.

A child runs ``python -c "<child_code(...)>"``: it builds a fresh outer agent (with a `FileSessionManager`) and a
fresh inner agent (no session), invokes the outer agent once, and prints the result as one JSON line.
"""

import json
import sys
from pathlib import Path
from typing import Any

from strandslike import Agent, ToolContext, tool
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.session import FileSessionManager

HERE = Path(__file__).resolve().parent


def make_delete_tool(log: Path) -> Any:
    @tool(context=True)
    def delete_file(tool_context: ToolContext, path: str) -> str:
        """Delete a file.

        Args:
            path: The file.
        """
        answer = tool_context.interrupt("approve-delete", reason={"path": path}, message=f"Delete {path}?")
        if answer != "y":
            return f"{path} kept"
        with log.open("a") as handle:
            handle.write(json.dumps({"deleted": path}) + "\n")
        return f"{path} deleted"

    return delete_file


def build(storage: Path, log: Path, outer_turns: list[Any], inner_turns: list[Any]) -> tuple[Agent, Agent]:
    """A fresh outer agent on a file session, using a fresh inner agent (no session) as its tool ``cleaner``."""
    inner = Agent(
        model=ScriptedModel(inner_turns), tools=[make_delete_tool(log)], name="cleaner", callback_handler=None
    )
    outer = Agent(
        model=ScriptedModel(outer_turns),
        tools=[inner.as_tool(description="Cleans up files.")],
        session_manager=FileSessionManager("boss", storage_dir=storage),
        callback_handler=None,
    )
    return outer, inner


def first_turns() -> tuple[list[Any], list[Any]]:
    outer = [tool_call("cleaner", input="delete a.txt", tool_use_id="outer-1")]
    inner = [tool_call("delete_file", path="a.txt", tool_use_id="inner-1")]
    return outer, inner


def resume_turns() -> tuple[list[Any], list[Any]]:
    return [text("All done.")], [text("a.txt is gone.")]


def runs(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def child_code(command: str, **arguments: Any) -> str:
    return (
        f"import sys; sys.path.insert(0, {str(HERE)!r}); import agent_tool_workers; "
        f"agent_tool_workers.main({command!r}, {json.dumps(arguments)!r})"
    )


def child_argv(command: str, **arguments: Any) -> list[str]:
    return [sys.executable, "-c", child_code(command, **arguments)]


def main(command: str, raw: str) -> None:
    arguments = json.loads(raw)
    storage, log = Path(arguments["storage"]), Path(arguments["log"])
    if command == "pause":
        outer, _ = build(storage, log, *first_turns())
        result = outer("Clean up a.txt")
    elif command == "resume":
        outer, _ = build(storage, log, *resume_turns())
        pending = outer._interrupt_state.unanswered()
        result = outer([interrupt.resume(arguments["answer"]) for interrupt in pending])
    else:
        raise SystemExit(f"unknown command {command!r}")
    interrupts = [interrupt.to_dict() for interrupt in result.interrupts or ()]
    print(json.dumps({"stop_reason": result.stop_reason, "text": str(result), "interrupts": interrupts}))
