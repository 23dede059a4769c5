"""AG-UI ``resume`` entries → strandslike resume blocks, checked against the contract before anything runs.

``resolved`` with a payload becomes ``interrupt.resume(payload)``; a payload with ``editedArgs`` (approve with
edits, unless ``approved`` is false) becomes
``interrupt.restart(input=editedArgs, metadata=payload, response=payload)``; ``cancelled`` becomes
``interrupt.cancel()``. The server checks what only it can check (the thread, the ids it gave out, the published
response schema, that every open interrupt is answered) with the messages naming AG-UI ids; the agent then
applies its own checks (expiry, edits, stale calls) to the whole resume before running.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ag_ui.core import ResumeEntry

from ..._schema import first_schema_error
from ...interrupt import (
    DuplicateInterruptResponseError,
    Interrupt,
    InterruptAnswerContent,
    InterruptExpiredError,
    InvalidPayloadError,
    PartialResumeError,
    UnknownInterruptError,
)
from ._interrupts import agui_interrupt_id, parse_interrupt_id, response_schema
from ._target import OpenInterrupt, Target


@dataclass
class ResumePlan:
    """A checked resume.

    Attributes:
        blocks: The ``interruptResponse`` blocks to resume the run with.
        replay: The same answers were already applied and the run went on: run nothing (AG-UI rule 5).
    """

    blocks: list[InterruptAnswerContent]
    replay: bool = False


def plan_resume(entries: Sequence[ResumeEntry], thread_id: str, target: Target) -> ResumePlan:
    """Check ``entries`` against the thread and turn them into resume blocks; nothing is applied.

    Raises:
        SessionMismatchError: An id names an interrupt of another thread (rule 1).
        UnknownInterruptError: An id is not one of the thread's interrupts (rule 2).
        InterruptExpiredError: A ``resolved`` entry answers an interrupt past its ``expiresAt`` (rule 7).
        DuplicateInterruptResponseError: One interrupt is answered twice.
        InvalidPayloadError: A ``resolved`` entry has no payload, a malformed ``editedArgs``, or a payload that
            fails the interrupt's response schema (rules 6 and 8).
        PartialResumeError: An open interrupt is left unanswered (rule 3).
    """
    ids: list[str] = []
    for entry in entries:
        interrupt_id = parse_interrupt_id(entry.interrupt_id, thread_id)
        if interrupt_id in ids:
            raise DuplicateInterruptResponseError(entry.interrupt_id)
        ids.append(interrupt_id)
    known = {interrupt_id: target.describe(interrupt_id) for interrupt_id in ids}
    blocks = [
        _block(entry, interrupt_id, known[interrupt_id]) for entry, interrupt_id in zip(entries, ids, strict=True)
    ]
    open_ids = [interrupt.id for interrupt in target.open_interrupts()]
    if not set(ids) & set(open_ids) and target.state.is_replay(blocks):
        return ResumePlan(blocks, replay=True)
    if not target.interrupted:
        return ResumePlan(blocks)  # the agent refuses it with its own error (NOT_INTERRUPTED, ALREADY_ANSWERED)
    for entry, interrupt_id in zip(entries, ids, strict=True):
        described = known[interrupt_id]
        if described is None:
            raise UnknownInterruptError(entry.interrupt_id)
        if entry.status == "resolved":
            if described.detail.expired:
                raise InterruptExpiredError(entry.interrupt_id, described.detail.expires_at or "")
            _check_payload(entry, described)
    missing = [agui_interrupt_id(interrupt_id, thread_id) for interrupt_id in open_ids if interrupt_id not in ids]
    if missing:
        raise PartialResumeError(missing)
    return ResumePlan(blocks)


def _block(entry: ResumeEntry, interrupt_id: str, described: OpenInterrupt | None) -> InterruptAnswerContent:
    # Building with the interrupt's own builders keeps what they add (its session id); an id the thread no longer
    # holds (a replay, or one the agent will refuse) gets the same block from a bare interrupt.
    interrupt = described.interrupt if described is not None else Interrupt(interrupt_id, "")
    if entry.status == "cancelled":
        return interrupt.cancel()
    if "payload" not in entry.model_fields_set:
        raise InvalidPayloadError(
            entry.interrupt_id,
            "a 'resolved' resume entry needs a payload (to abandon the interrupt, send status 'cancelled')",
        )
    payload: Any = entry.payload
    if isinstance(payload, dict) and "editedArgs" in payload and payload.get("approved") is not False:
        edited = payload["editedArgs"]
        if not isinstance(edited, dict):
            raise InvalidPayloadError(
                entry.interrupt_id, "editedArgs must be a JSON object: the full replacement of the tool's arguments"
            )
        return interrupt.restart(input=edited, metadata=payload, response=payload)
    return interrupt.resume(payload)


def _check_payload(entry: ResumeEntry, described: OpenInterrupt) -> None:
    schema = response_schema(described)
    if schema is None:
        return
    problem = first_schema_error(schema, entry.payload)
    if problem is not None:
        raise InvalidPayloadError(entry.interrupt_id, f"{problem} (it must match the interrupt's responseSchema)")
