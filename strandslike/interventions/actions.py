"""The typed decisions an intervention handler returns: `Proceed`, `Deny`, `Guide`, `Confirm`, `Transform`.

The registry applies them with Strands 1.62's semantics:

| action    | before_invocation | before_tool_call | before_model_call | after_tool_call | after_model_call |
| --------- | ----------------- | ---------------- | ----------------- | --------------- | ---------------- |
| Proceed   | -                 | -                | -                 | -               | -                |
| Deny      | cancel            | cancel           | cancel            | (warning)       | (warning)        |
| Guide     | cancel+           | cancel+          | inject            | (warning)       | inject + retry   |
| Confirm   | (warning)         | confirm          | (warning)         | (warning)       | (warning)        |
| Transform | apply             | apply            | apply             | apply           | apply            |

*cancel* sets the event's ``cancel``/``cancel_tool`` to ``"DENIED: <reason>"`` and skips the remaining handlers;
*cancel+* cancels with the feedback of every guiding handler (``"GUIDANCE: [<handler>] <feedback>"``, one line per
handler); *inject* appends the feedback as a user message the model sees on this call; *inject + retry* also
discards the response and calls the model again; *confirm* raises an interrupt named after the handler (or uses
the preemptive ``response``), checks the answer with ``evaluate`` and cancels with ``"CONFIRMATION_FAILED:
<prompt>"`` when it does not approve; *apply* calls ``action.apply(event)`` so later handlers see the change.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from ..hooks.events import (
    AfterModelCallEvent,
    AfterToolCallEvent,
    BeforeInvocationEvent,
    BeforeModelCallEvent,
    BeforeToolCallEvent,
)

LifecycleEvent: TypeAlias = (
    BeforeInvocationEvent | BeforeToolCallEvent | AfterToolCallEvent | BeforeModelCallEvent | AfterModelCallEvent
)

_APPROVED_RESPONSES = frozenset({"y", "yes"})


def default_evaluate(response: Any) -> bool:
    """Return whether ``response`` approves: ``True``, or ``"y"``/``"yes"`` (any case, surrounding spaces ignored).

    Args:
        response: The human's answer.
    """
    if response is True:
        return True
    if isinstance(response, str):
        return response.lower().strip() in _APPROVED_RESPONSES
    return False


@dataclass(frozen=True)
class Proceed:
    """Let the operation continue unchanged.

    Attributes:
        reason: Why, for logs and debugging; never shown to the model.
    """

    type: str = field(default="proceed", init=False)
    reason: str | None = None


@dataclass(frozen=True)
class Deny:
    """Block the operation; ``reason`` reaches the model as the cancellation message (``"DENIED: <reason>"``).

    Attributes:
        reason: Why the operation is blocked.
    """

    type: str = field(default="deny", init=False)
    reason: str = ""


@dataclass(frozen=True)
class Guide:
    """Steer the model with feedback.

    Before a tool call or an invocation, it cancels with the feedback of every guiding handler; before a model
    call, the feedback is appended as a user message; after a model call, the response is discarded and the
    model is called again with the feedback appended. A handler guiding after a model call must make sure the
    retries end (count them and deny after a few): the framework does not cap them. Injected messages are
    appended to ``agent.messages`` directly, as in Strands: session managers do not persist them.

    Attributes:
        feedback: What the model should do differently.
        reason: Why, for logs and debugging.
    """

    type: str = field(default="guide", init=False)
    feedback: str = ""
    reason: str | None = None


@dataclass(frozen=True)
class Confirm:
    """Ask a human to approve the tool call (``before_tool_call`` only).

    Without ``response`` the run pauses on an interrupt named after the handler (``reason`` is the prompt) and
    resumes when it is answered; with ``response`` that value is the answer and nothing pauses. ``evaluate``
    decides whether the answer approves; a refusal cancels the call with ``"CONFIRMATION_FAILED: <prompt>"``. An
    interrupt answered with ``restart`` (approve with edits, see `Interrupt.restart`) approves: it asks for the call
    to run again, with the edited input if any.

    The keyword-only fields are strandslike additions, passed on to ``event.interrupt()`` (see
    `BeforeToolCallEvent.interrupt`): ``message`` and ``response_type`` let a UI render the question and the
    answer form, ``allow_edits`` lets the answer restart the call with edited input, ``expires_in``,
    ``metadata`` and ``kind`` are published with the interrupt.

    Attributes:
        prompt: The question, used as the interrupt's reason.
        reason: Why, for logs and debugging.
        response: A preemptive answer.
        evaluate: Decides whether an answer approves (default: `default_evaluate`).
    """

    type: str = field(default="confirm", init=False)
    prompt: str = ""
    reason: str | None = None
    response: Any = None
    evaluate: Callable[[Any], bool] | None = field(default=default_evaluate)
    message: str | None = field(default=None, kw_only=True)
    response_type: Any = field(default=None, kw_only=True)
    allow_edits: bool = field(default=False, kw_only=True)
    expires_in: float | None = field(default=None, kw_only=True)
    metadata: dict[str, Any] | None = field(default=None, kw_only=True)
    kind: str | None = field(default=None, kw_only=True)

    def interrupt_options(self) -> dict[str, Any]:
        """Return the keyword arguments this action adds to ``event.interrupt()`` (only those that are set)."""
        options: dict[str, Any] = {}
        if self.response is not None:
            options["response"] = self.response
        for key in ("message", "response_type", "expires_in", "metadata", "kind"):
            value = getattr(self, key)
            if value is not None:
                options[key] = value
        if self.allow_edits:
            options["allow_edits"] = True
        return options


def _no_change(event: LifecycleEvent) -> None:
    """Leave the event as it is (the default `Transform`)."""


@dataclass(frozen=True)
class Transform:
    """Change the event in place (its tool input, its result, its messages...) before execution continues.

    Attributes:
        apply: Called with the event; later handlers see what it changed.
        reason: Why, for logs and debugging.
    """

    type: str = field(default="transform", init=False)
    apply: Callable[[LifecycleEvent], None] = field(default=_no_change)
    reason: str | None = None


InterventionAction: TypeAlias = Proceed | Deny | Guide | Confirm | Transform
"""Any action a handler can return (see the module docstring for where each one applies)."""

ACTION_TYPES: tuple[type, ...] = (Proceed, Deny, Guide, Confirm, Transform)

__all__ = [
    "ACTION_TYPES",
    "Confirm",
    "Deny",
    "Guide",
    "InterventionAction",
    "LifecycleEvent",
    "Proceed",
    "Transform",
    "default_evaluate",
]
