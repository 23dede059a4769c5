"""The `Interrupt` record, its resume builders, and the exception that carries it out of a hook or tool."""

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, NotRequired, TypeAlias

from typing_extensions import TypedDict

ResumeAction: TypeAlias = Literal["resume", "respond", "restart", "cancel"]
CORE_KINDS = ("tool_call", "input_required", "confirmation")
_DETAILS = ("message", "response_schema", "expires_at", "tool_use_id", "metadata", "kind")


class InterruptAnswer(TypedDict):
    """The body of an ``interruptResponse`` block: Strands' two keys plus strandslike's optional ones."""

    interruptId: str
    response: Any
    action: NotRequired[ResumeAction]
    input: NotRequired[dict[str, Any]]
    metadata: NotRequired[Any]
    sessionId: NotRequired[str]


class InterruptAnswerContent(TypedDict):
    """A content block that answers one interrupt; what the `Interrupt` builders return."""

    interruptResponse: InterruptAnswer


@dataclass
class Interrupt:
    """A named request for outside input that paused a run.

    Equality is Strands': two interrupts are equal when their ``id``, ``name``, ``reason`` and ``response`` are,
    so an interrupt built the Strands way, ``Interrupt(id=..., name=..., reason=...)``, equals the one the agent
    returns whatever optional details (message, kind, tool binding, ...) the agent's copy carries.

    Attributes:
        id: Opaque, deterministic id; answer the interrupt by sending it back in an ``interruptResponse``.
        name: The name the hook or tool gave the interrupt.
        reason: JSON-serializable context for whoever answers.
        response: The answer, once given.
        message: A human-readable prompt.
        response_schema: JSON Schema the answer must satisfy.
        expires_at: ISO-8601 time after which an answer is refused.
        tool_use_id: The tool call the interrupt is bound to, if any.
        metadata: Free-form JSON data for clients.
        kind: The AG-UI reason: ``tool_call``, ``input_required``, ``confirmation`` or ``<framework>:<name>``.
    """

    id: str
    name: str
    reason: Any = None
    response: Any = None
    message: str | None = field(default=None, compare=False, kw_only=True)
    response_schema: dict[str, Any] | None = field(default=None, compare=False, kw_only=True)
    expires_at: str | None = field(default=None, compare=False, kw_only=True)
    tool_use_id: str | None = field(default=None, compare=False, kw_only=True)
    metadata: dict[str, Any] | None = field(default=None, compare=False, kw_only=True)
    kind: str | None = field(default=None, compare=False, kw_only=True)
    # Whether an answer was given. Kept apart from `response` so that `None` is a legitimate answer
    # (Strands treats a None response as "unanswered" and asks again forever, harness-sdk#4470).
    answered: bool = field(default=False, repr=False, compare=False, kw_only=True)
    # Bookkeeping persisted with the interrupt state, not part of the public record.
    allow_edits: bool = field(default=False, repr=False, compare=False, kw_only=True)
    fingerprint: str | None = field(default=None, repr=False, compare=False, kw_only=True)
    session_id: str | None = field(default=None, repr=False, compare=False, kw_only=True)
    source: str | None = field(default=None, repr=False, compare=False, kw_only=True)
    action: ResumeAction | None = field(default=None, repr=False, compare=False, kw_only=True)
    edited_input: dict[str, Any] | None = field(default=None, repr=False, compare=False, kw_only=True)
    restart_metadata: Any = field(default=None, repr=False, compare=False, kw_only=True)
    # ``module:qualname`` of the raiser's response_type, to run its validators on answers after a restore.
    response_type: str | None = field(default=None, repr=False, compare=False, kw_only=True)
    # Whether the raiser gave any of the optional details; plain Strands interrupts keep Strands' four keys.
    rich: bool = field(default=False, repr=False, compare=False, kw_only=True)

    def __post_init__(self) -> None:
        if self.response is not None:
            self.answered = True

    def __repr__(self) -> str:
        # Strands' four fields, then only the optional details that are set, so a plain interrupt reads as in Strands.
        shown = [f"{key}={getattr(self, key)!r}" for key in ("id", "name", "reason", "response")]
        shown += [f"{key}={getattr(self, key)!r}" for key in _DETAILS if getattr(self, key) is not None]
        return f"Interrupt({', '.join(shown)})"

    @property
    def expired(self) -> bool:
        """Whether ``expires_at`` has passed."""
        return self.expires_at is not None and datetime.now(UTC) >= datetime.fromisoformat(self.expires_at)

    def to_dict(self) -> dict[str, Any]:
        """Return the interrupt as a JSON-serializable dict.

        A plain Strands interrupt gives exactly Strands' four keys; one raised with any of the optional details
        (message, response type, expiry, metadata, kind) also gives those that are set, with its tool binding.
        """
        data = {"id": self.id, "name": self.name, "reason": self.reason, "response": self.response}
        if not self.rich:
            return data
        for key in _DETAILS:
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        return data

    def state_dict(self) -> dict[str, Any]:
        """Return everything needed to restore the interrupt in another process."""
        return {
            "id": self.id,
            "name": self.name,
            "reason": self.reason,
            "response": self.response,
            "message": self.message,
            "response_schema": self.response_schema,
            "expires_at": self.expires_at,
            "tool_use_id": self.tool_use_id,
            "metadata": self.metadata,
            "kind": self.kind,
            "answered": self.answered,
            "allow_edits": self.allow_edits,
            "fingerprint": self.fingerprint,
            "session_id": self.session_id,
            "source": self.source,
            "action": self.action,
            "edited_input": self.edited_input,
            "restart_metadata": self.restart_metadata,
            "rich": self.rich,
            "response_type": self.response_type,
        }

    @classmethod
    def from_state_dict(cls, data: dict[str, Any]) -> "Interrupt":
        """Rebuild an interrupt from `state_dict` (or Strands' `to_dict`) output."""
        interrupt = cls(data["id"], data["name"], data.get("reason"), data.get("response"))
        for key in _DETAILS:
            setattr(interrupt, key, data.get(key))
        for key in (
            "allow_edits",
            "fingerprint",
            "session_id",
            "source",
            "action",
            "edited_input",
            "restart_metadata",
            "rich",
            "response_type",
        ):
            if key in data:
                setattr(interrupt, key, data[key])
        if "rich" not in data:
            interrupt.rich = any(data.get(key) is not None for key in ("message", "response_schema", "metadata"))
        if "answered" in data:
            interrupt.answered = bool(data["answered"])
        return interrupt

    # -- resume builders ------------------------------------------------------------------------------------------

    def _block(self, response: Any, action: ResumeAction | None, **extra: Any) -> InterruptAnswerContent:
        body: InterruptAnswer = {"interruptId": self.id, "response": response}
        if action is not None:
            body["action"] = action
        if self.session_id is not None:
            body["sessionId"] = self.session_id
        body.update(extra)  # type: ignore[typeddict-item]
        return {"interruptResponse": body}

    def resume(self, value: Any) -> InterruptAnswerContent:
        """Answer the interrupt: the ``interrupt()`` call that raised it returns ``value`` (Strands' resume)."""
        return self._block(value, None)

    def respond(self, output: Any) -> InterruptAnswerContent:
        """Give the result of the tool call this interrupt is bound to; the tool does not run (Genkit respond)."""
        return self._block(output, "respond")

    def restart(
        self, input: dict[str, Any] | None = None, metadata: Any = None, *, response: Any = None
    ) -> InterruptAnswerContent:
        """Run the tool call again, optionally with edited input (only if raised with ``allow_edits=True``).

        The call goes back through the `BeforeToolCallEvent` hooks (with the edited input), then the tool runs
        again from the top. Its context reports ``is_resumed``, ``resumed_metadata`` (``metadata``) and
        ``original_input`` (the model's input, when ``input`` replaced it). The ``interrupt()`` call that raised
        this interrupt does not pause again: it returns ``response``, checked and converted like a resume's
        answer. When the tool itself asked (``tool_context.interrupt(..., response_type=T)``), its restarted body
        gets that value, so the restart must carry a ``response`` that fits ``T``; when a hook asked whether the
        call may run, the restart is the approval and a ``response`` is optional (None when not given).
        ``metadata`` is never returned by ``interrupt()``: it is context (who restarted, why), not an answer.

        Args:
            input: The full replacement of the tool's input (not merged); None keeps the model's input.
            metadata: JSON data handed to the restarted tool as ``tool_context.resumed_metadata``.
            response: What ``interrupt()`` returns in the restarted call, e.g. ``{"approved": True}``.
        """
        extra: dict[str, Any] = {"metadata": metadata}
        if input is not None:
            extra["input"] = input
        return self._block(response, "restart", **extra)

    def cancel(self) -> InterruptAnswerContent:
        """Abandon: the tool call (or node, or step) does not run and the model sees a cancelled result."""
        return self._block(None, "cancel")


class InterruptException(Exception):
    """Raised inside a hook or tool to pause the run; the framework catches it.

    An interrupt is control flow, not an error: it never reaches the caller as an exception.
    """

    def __init__(self, interrupt: Interrupt) -> None:
        self.interrupt = interrupt
        super().__init__(interrupt)
