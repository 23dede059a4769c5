"""`ToolJournal`: when each tool body started and how it ended, so a crash mid-tool is never taken for "never ran".

The journal is the seam between the tool executor and durable storage (the second rule of the durable line,
*intent before effect*):

- Before a tool body starts, the executor awaits `ToolJournal.start`. With a sink attached (a session manager
  attaches itself when it restores the agent), that call returns only once an *intent* record for the tool use
  is durable. Tools that start together share one durable write.
- When the body ends (with a result, or paused by an interrupt), the executor calls `ToolJournal.finish`; the sink
  may buffer that record.
- A session manager restoring an agent hands the journal the attempts it found in storage (`restore`). An attempt
  that started and has no recorded end means the process died while the tool ran: the executor must not run that
  tool use again silently (see `strandslike.tools.executors`), unless the tool is idempotent or the agent's
  policy says so.

Every tool use has an idempotency key (`idempotency_key`), the same in every process and on every retry, so a tool
that calls an external system (a payment, an e-mail, a ticket) can pass it on and get exactly-once effects end to
end. Without a session the key is derived from the agent id; with one, from the session and the agent (or the
orchestration node), so keys never collide across sessions.
"""

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, Protocol

from ..types.tools import ToolResult, ToolUse

AttemptOutcome = Literal["started", "done", "interrupted"]

# A fixed namespace, so keys are stable across processes, machines and strandslike versions.
_KEY_NAMESPACE = uuid.UUID("6f0d4a52-9a3e-5d4c-8f51-2b7c1e0a9d11")


@dataclass
class ToolAttempt:
    """One run of one tool use's body.

    Attributes:
        tool_use_id: The model's id of the tool use.
        name: The tool's name.
        idempotency_key: The tool use's idempotency key.
        outcome: ``"started"`` until the body ended; then ``"done"`` (with ``result``) or ``"interrupted"``.
        result: The result the body produced, once ``outcome`` is ``"done"``.
    """

    tool_use_id: str
    name: str
    idempotency_key: str
    outcome: AttemptOutcome = "started"
    result: ToolResult | None = None


def unknown_outcome_result(attempt: ToolAttempt) -> ToolResult:
    """Return the error result a tool use gets when its body started in a process that died before it ended.

    The tool is not run again (unless it is idempotent or the agent's policy says so), so the model is told that
    its effect may or may not have happened, with the key to check it by.
    """
    text = (
        f"The outcome of this call of tool {attempt.name!r} is unknown: the process running it stopped while the "
        "tool was running, and it was not run again so that its effect cannot happen twice. It may or may not "
        f"have taken effect (idempotency key {attempt.idempotency_key}); check before trying again."
    )
    return {"toolUseId": attempt.tool_use_id, "status": "error", "content": [{"text": text}]}


class JournalSink(Protocol):
    """Where a journal records attempts: a session manager, or an orchestrator's session for its node agents."""

    async def tool_started(self, attempt: ToolAttempt) -> None:
        """Record that ``attempt`` is about to start; return only once that record is durable."""
        ...

    def tool_finished(self, attempt: ToolAttempt) -> None:
        """Record how ``attempt`` ended (may be buffered and written with the next durable write)."""
        ...


class ToolJournal:
    """The tool attempts of one agent: those of this process, and the unfinished ones found in storage.

    Attributes:
        scope: What the idempotency keys are derived from (the agent id; the session manager sets
            ``"<session id>/<agent id>"``).
        sink: Where attempts are recorded; None keeps them in memory only (no session).
    """

    def __init__(self, scope: str) -> None:
        self.scope = scope
        self.sink: JournalSink | None = None
        self._restored: dict[str, ToolAttempt] = {}

    def idempotency_key(self, tool_use_id: str) -> str:
        """Return the idempotency key of a tool use: stable across crashes, retries and processes."""
        return str(uuid.uuid5(_KEY_NAMESPACE, f"{self.scope}\x00{tool_use_id}"))

    def restore(self, attempts: Iterable[ToolAttempt]) -> None:
        """Remember the attempts found in storage (the last one per tool use wins)."""
        self._restored = {attempt.tool_use_id: attempt for attempt in attempts}

    def restored(self, tool_use_id: str) -> ToolAttempt | None:
        """Return the attempt of an earlier process for this tool use, if storage recorded one."""
        return self._restored.get(tool_use_id)

    def unfinished(self) -> list[ToolAttempt]:
        """Return the restored attempts that started and never recorded an end (the process died in the body)."""
        return [attempt for attempt in self._restored.values() if attempt.outcome == "started"]

    def settle(self, tool_use_id: str) -> None:
        """Forget the restored attempt of a tool use once it has been dealt with (reported, re-run or recovered)."""
        self._restored.pop(tool_use_id, None)

    async def start(self, tool_use: ToolUse) -> ToolAttempt:
        """Record that the body of ``tool_use`` is about to run; durable when this returns (with a sink)."""
        attempt = ToolAttempt(tool_use["toolUseId"], tool_use["name"], self.idempotency_key(tool_use["toolUseId"]))
        if self.sink is not None:
            await self.sink.tool_started(attempt)
        return attempt

    def finish(self, attempt: ToolAttempt, result: ToolResult | None) -> None:
        """Record how an attempt ended: with ``result``, or (None) paused by an interrupt."""
        attempt.outcome = "done" if result is not None else "interrupted"
        attempt.result = result
        if self.sink is not None:
            self.sink.tool_finished(attempt)


__all__ = ["AttemptOutcome", "JournalSink", "ToolAttempt", "ToolJournal", "unknown_outcome_result"]
