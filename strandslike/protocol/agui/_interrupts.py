"""strandslike interrupts as AG-UI `Interrupt`s, and the thread-scoped ids a client answers them by.

An AG-UI interrupt id is ``<interrupt id>@<threadId>``. strandslike ids are deterministic (the same tool call in
two threads raises the same id), so the thread is part of the AG-UI id: a resume naming an interrupt of another
thread is recognised and refused (AG-UI rule 1) instead of answering an interrupt that merely has the same id here.
"""

import json
from typing import Any

from ag_ui.core import Interrupt as AguiInterrupt

from ...interrupt import Interrupt, SessionMismatchError, UnknownInterruptError
from ._target import OpenInterrupt

_SEPARATOR = "@"
# The schema AG-UI recommends for tool-call interrupts that accept approve-with-edits.
_EDITS_DESCRIPTION = "Full replacement of the tool args. Not merged."


def agui_interrupt_id(interrupt_id: str, thread_id: str) -> str:
    """Return the AG-UI id of an interrupt raised in ``thread_id``."""
    return f"{interrupt_id}{_SEPARATOR}{thread_id}"


def parse_interrupt_id(agui_id: str, thread_id: str) -> str:
    """Return the strandslike id inside an AG-UI interrupt id given on ``thread_id``.

    Raises:
        SessionMismatchError: The id names an interrupt of another thread (AG-UI rule 1).
        UnknownInterruptError: The id is not an interrupt id this server gave out (AG-UI rule 2).
    """
    suffix = _SEPARATOR + thread_id
    if agui_id.endswith(suffix) and len(agui_id) > len(suffix):
        return agui_id[: -len(suffix)]
    if _SEPARATOR in agui_id:
        raise SessionMismatchError(agui_id, agui_id.rpartition(_SEPARATOR)[2], thread_id)
    raise UnknownInterruptError(agui_id)


def response_schema(open_interrupt: OpenInterrupt) -> dict[str, Any] | None:
    """Return the JSON Schema a resume payload must satisfy, if any.

    The interrupt's own ``response_schema`` when it has one. A tool-call interrupt raised with ``allow_edits=True``
    and no schema publishes AG-UI's approve-with-edits schema (``approved``, and ``editedArgs`` shaped like the
    tool's input), which is also what its payload is checked against.
    """
    detail = open_interrupt.detail
    if detail.response_schema is not None:
        return detail.response_schema
    if detail.tool_use_id is None or not detail.allow_edits:
        return None
    edited: dict[str, Any] = {"type": "object", "description": _EDITS_DESCRIPTION}
    tool_schema = _tool_input_schema(open_interrupt)
    if tool_schema is not None:
        edited = {**tool_schema, "description": _EDITS_DESCRIPTION}
    return {
        "type": "object",
        "properties": {"approved": {"type": "boolean"}, "editedArgs": edited},
        "required": ["approved"],
    }


def _tool_input_schema(open_interrupt: OpenInterrupt) -> dict[str, Any] | None:
    call = open_interrupt.pending_call()
    agent = open_interrupt.agent
    if call is None or agent is None:
        return None
    tool = agent.tool_registry.registry.get(call["name"])
    if tool is None:
        return None
    spec = tool.tool_spec["inputSchema"]
    schema = spec.get("json", spec)
    return dict(schema) if isinstance(schema, dict) else None


def to_agui(open_interrupt: OpenInterrupt, thread_id: str) -> AguiInterrupt:
    """Describe an open interrupt to an AG-UI client.

    ``reason`` is the interrupt's ``kind`` (``tool_call`` for a tool-bound one without a kind, else
    ``confirmation``); ``metadata`` holds the interrupt's own metadata plus its ``name`` and ``reason``, and the
    ``nodeId`` it was raised in for an orchestration.
    """
    detail = open_interrupt.detail
    metadata: dict[str, Any] = {**(detail.metadata or {}), "name": detail.name, "reason": detail.reason}
    if open_interrupt.node_id is not None:
        metadata["nodeId"] = open_interrupt.node_id
    answered = _answered_entry(open_interrupt.interrupt)
    if answered is not None:
        metadata["answered"] = answered
    return AguiInterrupt(
        id=agui_interrupt_id(open_interrupt.id, thread_id),
        reason=detail.kind or ("tool_call" if detail.tool_use_id is not None else "confirmation"),
        message=detail.message or _fallback_message(open_interrupt),
        tool_call_id=detail.tool_use_id,
        response_schema=response_schema(open_interrupt),
        expires_at=detail.expires_at,
        metadata=metadata,
    )


def _answered_entry(interrupt: Interrupt) -> dict[str, Any] | None:
    """Return the resume entry (without its id) that gave ``interrupt`` its answer, if it has one.

    A ``resume`` answer was ``resolved`` with the response as payload; a ``restart`` (approve with edits) with the
    whole payload, kept as the restart metadata; a ``cancel`` was ``cancelled``. A ``respond`` answer (given
    outside AG-UI) has no AG-UI form.
    """
    if not interrupt.answered or interrupt.action == "respond":
        return None
    if interrupt.action == "cancel":
        return {"status": "cancelled"}
    payload = interrupt.restart_metadata if interrupt.action == "restart" else interrupt.response
    return {"status": "resolved", "payload": payload}


def _fallback_message(open_interrupt: OpenInterrupt) -> str:
    detail = open_interrupt.detail
    text = detail.name
    call = open_interrupt.pending_call()
    if call is not None:
        text += f" for {call['name']}({_compact(call['input'])})"
    if detail.reason is not None:
        text += f": {_compact(detail.reason)}"
    return text


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)
