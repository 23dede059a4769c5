"""Interrupt state: the open interrupts of a run, their answers, and the tool batch waiting on them."""

import copy
from dataclasses import dataclass, field
from typing import Any

from .._json import ensure_json_serializable
from ..types.content import Message
from ..types.exceptions import SessionException
from ..types.tools import ToolResult
from ._errors import (
    DuplicateInterruptResponseError,
    InterruptAlreadyAnsweredError,
    InvalidResumeError,
    PendingInterruptsError,
    UnknownInterruptError,
)
from ._interrupt import Interrupt, InterruptException


@dataclass
class PendingToolExecution:
    """A tool batch paused by interrupts.

    Attributes:
        assistant_message: The assistant message whose tool uses form the batch.
        completed_tool_results: Results of the tools that already finished; they do not run again on resume.
    """

    assistant_message: Message
    completed_tool_results: list[ToolResult] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serializable dict."""
        return {"assistant_message": self.assistant_message, "completed_tool_results": self.completed_tool_results}


class _InterruptState:
    """Interrupts raised at one interrupt point (a model call, a tool batch, a node) and their answers.

    While ``activated``, the agent accepts only interrupt responses. The state is cleared (deactivated) once the
    interrupted point completes without new interrupts.
    """

    __slots__ = ("_version", "activated", "context", "interrupts", "pending_tool_execution")

    def __init__(self) -> None:
        self.interrupts: dict[str, Interrupt] = {}
        self.context: dict[str, Any] = {}
        self.activated = False
        self.pending_tool_execution: PendingToolExecution | None = None
        self._version = 0

    @property
    def version(self) -> int:
        """Counter bumped by every change; session managers use it to skip unchanged writes."""
        return self._version

    def activate(self) -> None:
        """Mark the run as waiting on its unanswered interrupts."""
        self.activated = True
        self._version += 1

    def deactivate(self) -> None:
        """Forget all interrupts, answers and pending work: the interrupted point has completed."""
        if not (self.activated or self.interrupts or self.context or self.pending_tool_execution):
            return
        self.interrupts = {}
        self.context = {}
        self.activated = False
        self.pending_tool_execution = None
        self._version += 1

    def unanswered(self) -> list[Interrupt]:
        """Return the interrupts still waiting for an answer, in the order they were raised."""
        return [interrupt for interrupt in self.interrupts.values() if not interrupt.answered]

    def interrupt(self, interrupt_id: str, name: str, reason: Any, response: Any) -> Any:
        """Return the answer to an interrupt, or raise `InterruptException` to pause for one.

        Args:
            interrupt_id: Deterministic id of the interrupt.
            name: Name given by the hook or tool.
            reason: JSON-serializable context; the first reason given for an id is kept.
            response: A preemptive answer: when not None, it is returned at once without pausing.
        """
        existing = self.interrupts.get(interrupt_id)
        if existing is None:
            ensure_json_serializable(reason, f"The reason of interrupt {name!r}")
            if response is not None:
                ensure_json_serializable(response, f"The response of interrupt {name!r}")
            existing = Interrupt(interrupt_id, name, reason, response)
            self.interrupts[interrupt_id] = existing
            self._version += 1
        if existing.answered:
            return existing.response
        raise InterruptException(existing)

    def resume(self, prompt: Any) -> None:
        """Apply interrupt responses, validating all of them before any is applied.

        Args:
            prompt: The caller's input; while activated it must be a list of ``interruptResponse`` blocks.

        Raises:
            PendingInterruptsError: ``prompt`` is not a list of interrupt responses (a `TypeError`).
            InvalidResumeError: A response block is malformed (a `TypeError`).
            UnknownInterruptError: A response names an unknown interrupt id (a `KeyError`).
            DuplicateInterruptResponseError: One interrupt is answered twice in this resume.
            InterruptAlreadyAnsweredError: A response changes the answer of an already answered interrupt.
            NotJSONSerializableError: A response is not JSON-serializable.
        """
        if not self.activated:
            return
        self.apply(self.parse_responses(prompt), prompt)

    def apply(self, answers: dict[str, Any], prompt: Any) -> None:
        """Record answers returned by `parse_responses`."""
        for interrupt_id, response in answers.items():
            interrupt = self.interrupts[interrupt_id]
            interrupt.response = response
            interrupt.answered = True
        self.context["responses"] = copy.deepcopy(prompt)
        self._version += 1

    def parse_responses(self, prompt: Any) -> dict[str, Any]:
        """Validate a resume against this state and return its answers by interrupt id, changing nothing."""
        if not isinstance(prompt, list):
            raise PendingInterruptsError(
                f"prompt_type={type(prompt)} | must resume from interrupt with list of interruptResponse's"
            )
        other_types = sorted(
            {key for block in prompt if isinstance(block, dict) for key in block} - {"interruptResponse"}
        )
        if other_types or not all(isinstance(block, dict) for block in prompt):
            raise PendingInterruptsError(
                f"content_types=<{other_types}> | must resume from interrupt with list of interruptResponse's"
            )
        answers: dict[str, Any] = {}
        seen: set[str] = set()
        for block in prompt:
            body = block["interruptResponse"]
            if not isinstance(body, dict) or not isinstance(body.get("interruptId"), str) or "response" not in body:
                raise InvalidResumeError(
                    f"interruptResponse={body!r} | each interruptResponse must be a dict with a string 'interruptId' "
                    "and a 'response' (which may be null). Nothing was applied."
                )
            interrupt_id = body["interruptId"]
            interrupt = self.interrupts.get(interrupt_id)
            if interrupt is None:
                raise UnknownInterruptError(interrupt_id)
            if interrupt_id in seen:
                raise DuplicateInterruptResponseError(interrupt_id)
            seen.add(interrupt_id)
            response = body["response"]
            if interrupt.answered:
                if response == interrupt.response:
                    continue  # replaying the same answer (e.g. retrying a failed resume) changes nothing
                raise InterruptAlreadyAnsweredError(interrupt_id, interrupt.name)
            ensure_json_serializable(response, f"The response to interrupt {interrupt.name!r}")
            answers[interrupt_id] = response
        return answers

    def to_dict(self) -> dict[str, Any]:
        """Return the state as a JSON-serializable dict (Strands' keys plus ``answered`` per interrupt)."""
        data: dict[str, Any] = {
            "interrupts": {
                interrupt_id: {**interrupt.to_dict(), "answered": interrupt.answered}
                for interrupt_id, interrupt in self.interrupts.items()
            },
            "context": self.context,
            "activated": self.activated,
        }
        if self.pending_tool_execution is not None:
            data["pending_tool_execution"] = self.pending_tool_execution.to_dict()
        return data

    def load_dict(self, data: dict[str, Any]) -> None:
        """Replace this state with one read from `to_dict` output (or from a Strands session).

        Raises:
            SessionException: The data is not an interrupt state.
        """
        try:
            interrupts: dict[str, Interrupt] = {}
            for interrupt_id, raw in data.get("interrupts", {}).items():
                interrupt = Interrupt(raw["id"], raw["name"], raw.get("reason"), raw.get("response"))
                if "answered" in raw:
                    interrupt.answered = bool(raw["answered"])
                interrupts[interrupt_id] = interrupt
            pending = data.get("pending_tool_execution")
            context = dict(data.get("context") or {})
            if pending is None and "tool_use_message" in context:  # Strands 1.40 layout
                pending = {
                    "assistant_message": context.pop("tool_use_message"),
                    "completed_tool_results": context.pop("tool_results", []),
                }
            pending_execution = (
                None
                if pending is None
                else PendingToolExecution(pending["assistant_message"], list(pending.get("completed_tool_results", [])))
            )
            activated = bool(data.get("activated", False))
        except (AttributeError, KeyError, TypeError) as exc:
            raise SessionException(f"Failed to restore pending tool execution state: {exc!r}") from exc
        self.interrupts = interrupts
        self.context = context
        self.activated = activated
        self.pending_tool_execution = pending_execution
        self._version += 1

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "_InterruptState":
        """Build a state from `to_dict` output."""
        state = cls()
        state.load_dict(data)
        return state
