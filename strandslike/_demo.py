"""The approval demo of the Strands interrupts guide, on the scripted model.

An agent asked to clean up old files inspects them and calls ``delete_files``; an ``ApprovalHook`` on
`BeforeToolCallEvent` interrupts that call, the demo shows the interrupt with its reason, reads the answer
(``y`` approve once, ``t`` trust from now on, anything else deny) and resumes the agent with it.
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from .agent import Agent, AgentResult
from .hooks import BeforeToolCallEvent, HookProvider, HookRegistry
from .models import ScriptedModel, text, tool_call
from .tools.decorator import tool
from .types.interrupt import InterruptResponseContent


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


def build_agent(workdir: Path, **kwargs: Any) -> Agent:
    """Build the demo agent working on files under ``workdir``."""

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

    paths = ["a/b/c.txt", "d/e/f.txt"]
    model = ScriptedModel(
        [
            tool_call("inspect_files", paths=paths),
            tool_call("delete_files", paths=paths),
            text("I inspected both files and asked to delete them; the tool results above say what happened."),
        ]
    )
    return Agent(
        model=model,
        hooks=[ApprovalHook("myapp")],
        system_prompt="You delete files older than 5 days",
        tools=[delete_files, inspect_files],
        **kwargs,
    )


def _ask(interrupt_reason: Any, answer: str | None) -> str:
    prompt = f"Do you want to delete {interrupt_reason['paths']} (t/y/N): "
    if answer is not None:
        print(prompt + answer)
        return answer
    if not sys.stdin.isatty():
        print(prompt + "N  (no terminal: pass --yes or --no to answer)")
        return "N"
    return input(prompt)


def run(argv: list[str] | None = None) -> int:
    """Run the demo; return the process exit code."""
    parser = argparse.ArgumentParser(prog="python -m strandslike demo", description=__doc__)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--yes", action="store_const", const="y", dest="answer", help="approve without asking")
    group.add_argument("--no", action="store_const", const="N", dest="answer", help="deny without asking")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="strandslike-demo-") as tmp:
        workdir = Path(tmp)
        for name in ("a/b/c.txt", "d/e/f.txt"):
            (workdir / name).parent.mkdir(parents=True, exist_ok=True)
            (workdir / name).write_text("old data\n")
        agent = build_agent(workdir)
        result: AgentResult = agent(f"paths=<{['a/b/c.txt', 'd/e/f.txt']}>")
        while result.stop_reason == "interrupt":
            responses: list[InterruptResponseContent] = []
            for interrupt in result.interrupts or ():
                print(f"interrupt {interrupt.name} (id {interrupt.id}): reason {json.dumps(interrupt.reason)}")
                answer = _ask(interrupt.reason, args.answer)
                responses.append({"interruptResponse": {"interruptId": interrupt.id, "response": answer}})
            result = agent(responses)
        remaining = sorted(str(p.relative_to(workdir)) for p in workdir.rglob("*.txt"))
        print(f"MESSAGE: {json.dumps(result.message)}")
        print(f"files left: {remaining}")
    return 0
