"""Agent factories and helpers for the command-line tests.

Importable as ``cli_support`` in the tests (pytest puts this directory on ``sys.path``) and, for
``python -m strandslike resume --agent cli_support:build`` in a child process, through ``PYTHONPATH``.
"""

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from strandslike import Agent, tool
from strandslike.hooks import BeforeToolCallEvent
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.session import FileSessionManager

HERE = Path(__file__).parent
REPO = HERE.parent.parent
FIXTURE = HERE / "fixtures" / "strands_sessions"
PATHS = ["a.txt", "b.txt"]
PNG = b"\x89PNG\r\n\x1a\n-not-really-an-image"
LONG = "clean up " + "very " * 100 + "old files"
PROMPT: list[Any] = [{"text": LONG}, {"image": {"format": "png", "source": {"bytes": PNG}}}]

ONE_STEP = (
    tool_call("inspect_files", tool_use_id="t_inspect", paths=PATHS),
    tool_call("delete_files", tool_use_id="t_delete", paths=PATHS),
    text("Done."),
)
TWO_STEPS = (
    tool_call("delete_files", tool_use_id="t_first", paths=["a.txt"]),
    tool_call("delete_files", tool_use_id="t_second", paths=["b.txt"]),
    text("Both handled."),
)


def deleted(storage: Path) -> list[str]:
    """Return what ``delete_files`` deleted so far, one entry per call and path."""
    log = Path(storage) / "deleted.log"
    return log.read_text().split() if log.exists() else []


def approve(event: BeforeToolCallEvent) -> None:
    if event.tool_use["name"] == "delete_files":
        answer = event.interrupt("approval", reason={"paths": event.tool_use["input"]["paths"]})
        if answer != "y":
            event.cancel_tool = "denied"


def _agent(session_manager: FileSessionManager, script: tuple[Any, ...]) -> Agent:
    # Effects go beside the sessions; a session in PostgreSQL has no directory: the test names one.
    storage = Path(getattr(session_manager, "storage_dir", None) or os.environ["STRANDSLIKE_TEST_EFFECTS"])

    @tool
    def inspect_files(paths: list[str]) -> dict[str, int]:
        """Report sizes.

        Args:
            paths: Files to inspect.
        """
        return {path: 1 for path in paths}

    @tool
    def delete_files(paths: list[str]) -> bool:
        """Delete files.

        Args:
            paths: Files to delete.
        """
        with (storage / "deleted.log").open("a") as log:
            log.write("".join(f"{path}\n" for path in paths))
        return True

    return Agent(
        model=ScriptedModel(script, mode="conversation"),  # a restored agent continues the script where it stopped
        tools=[inspect_files, delete_files],
        hooks=[approve],
        session_manager=session_manager,
    )


def build(session_manager: FileSessionManager) -> Agent:
    """Factory: inspect, then delete after approval, then answer."""
    return _agent(session_manager, ONE_STEP)


def build_two_steps(session_manager: FileSessionManager) -> Agent:
    """Factory: two deletions in a row, each interrupted for approval."""
    return _agent(session_manager, TWO_STEPS)


def build_chat(session_manager: FileSessionManager) -> Agent:
    """Factory: a plain text exchange."""
    return Agent(model=ScriptedModel([text("hello")]), session_manager=session_manager)


def build_without_manager(session_manager: FileSessionManager) -> Agent:
    """A broken factory: it ignores the session manager."""
    return Agent(model=ScriptedModel([text("hello")]))


def not_an_agent(session_manager: FileSessionManager) -> int:
    """A broken factory: it returns no agent."""
    return 42


def make_session(storage: Path, session_id: str, factory: Any = build, prompt: Any = None) -> Any:
    """Run ``factory``'s agent once in session ``session_id``; return its result."""
    manager = FileSessionManager(session_id, storage_dir=storage)
    try:
        agent = factory(manager)
        agent.state.set("owner", "alice")
        return agent(PROMPT if prompt is None else prompt)
    finally:
        manager.close()


def tree(root: Path) -> dict[str, tuple[int, int]]:
    """Return every path under ``root`` with its size and mtime, to check that nothing was written."""
    return {
        str(path.relative_to(root)): (path.stat().st_size, path.stat().st_mtime_ns) for path in sorted(root.rglob("*"))
    }


def run_cli(*args: str, cwd: Path | None = None, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """Run ``python -m strandslike ARGS`` in a child process, with this directory importable."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(REPO)])}
    return subprocess.run(
        [sys.executable, "-m", "strandslike", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=60,
        check=False,
        **kwargs,
    )


def build_with_bad_agent_id(session_manager: FileSessionManager) -> Agent:
    """A factory whose agent id could not name a file: a right-to-left override in it."""
    return Agent(model=ScriptedModel([]), agent_id="a\u202eb", session_manager=session_manager)
