"""What a human may answer to a `HumanInTheLoop` question, and what each answer means.

Strands' answers are strings and booleans: ``True``, ``"y"``/``"yes"`` approve, ``"t"``/``"trust"`` approve and
trust the tool (when trust is enabled), anything else denies. strandslike also accepts an object, which is what
the published ``response_schema`` describes so a UI can render the choices::

    {"decision": "approve" | "deny" | "trust",   # or AG-UI's {"approved": true | false}
     "by": "alice",                               # who decided, for the audit trail
     "reason": "...",                             # why, for the audit trail
     "trustArgs": {"path": {"glob": "/tmp/*"}}}   # with "trust": trust only calls whose arguments match

Approving with edits is a restart: ``interrupt.restart(input={...}, metadata={"by": "alice"})``, or through
AG-UI a payload ``{"approved": true, "editedArgs": {...}}``. An ``editedArgs`` in a plain resume is refused (the
call is denied), so edits can never be silently dropped.
"""

import functools
from typing import Annotated, Any, Literal

from pydantic import WithJsonSchema

from ...interventions.actions import default_evaluate
from ._conditions import CONDITION_KEYS

Decision = Literal["approve", "deny", "trust"]
_TRUST_RESPONSES = frozenset({"t", "trust"})


def answer_decision(response: Any) -> Decision | None:
    """Return the decision stated by an object answer (``decision``, or AG-UI's ``approved``), else None."""
    if not isinstance(response, dict):
        return None
    decision = response.get("decision")
    if decision in ("approve", "deny", "trust"):
        return decision  # type: ignore[no-any-return]
    approved = response.get("approved")
    if approved is True:
        return "approve"
    if approved is False:
        return "deny"
    return None


def is_trust_response(response: Any) -> bool:
    """Default ``evaluate_trust``: ``"t"``/``"trust"`` (any case, spaces ignored), or ``{"decision": "trust"}``."""
    if isinstance(response, str):
        return response.lower().strip() in _TRUST_RESPONSES
    return answer_decision(response) == "trust"


def is_approval(response: Any) -> bool:
    """Default ``evaluate``: Strands' approvals, or an object answer that approves (without ``editedArgs``)."""
    if isinstance(response, dict):
        return answer_decision(response) == "approve" and "editedArgs" not in response
    return default_evaluate(response)


def answered_by(response: Any) -> str | None:
    """Return the ``by`` of an object answer, if it names someone."""
    if isinstance(response, dict):
        by = response.get("by")
        if isinstance(by, str) and by:
            return by
    return None


def answer_reason(response: Any) -> str | None:
    """Return the ``reason`` of an object answer, if any."""
    if isinstance(response, dict):
        reason = response.get("reason")
        if isinstance(reason, str) and reason:
            return reason
    return None


def trust_scope(response: Any) -> Any:
    """Return the ``trustArgs`` of an object answer (None: trust for any arguments)."""
    if isinstance(response, dict):
        return response.get("trustArgs")
    return None


_CONDITION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "A test on one argument: glob (string pattern), min and/or max (number), or in (list of values).",
    "properties": {
        "glob": {"type": "string", "minLength": 1},
        "min": {"type": "number"},
        "max": {"type": "number"},
        "in": {"type": "array", "minItems": 1},
    },
    "additionalProperties": False,
    "minProperties": 1,
}


def response_schema(tool_input_schema: dict[str, Any] | None, trust: bool) -> dict[str, Any]:
    """Return the JSON Schema of an answer: a Strands string or boolean, or an object a UI can render."""
    decisions = ["approve", "deny", "trust"] if trust else ["approve", "deny"]
    edited: dict[str, Any] = dict(tool_input_schema) if tool_input_schema else {"type": "object"}
    edited["description"] = "Approve with edits: the full replacement of the tool's arguments (sent as a restart)."
    properties: dict[str, Any] = {
        "decision": {"type": "string", "enum": decisions},
        "approved": {"type": "boolean"},
        "editedArgs": edited,
        "reason": {"type": "string"},
        "by": {"type": "string", "description": "Who decided (recorded in the audit trail)."},
    }
    if trust:
        properties["trustArgs"] = {
            "type": "object",
            "description": "With decision 'trust': trust only calls whose arguments match these conditions.",
            "additionalProperties": _CONDITION_SCHEMA,
        }
    answer = {
        "type": "object",
        "properties": properties,
        "anyOf": [{"required": ["decision"]}, {"required": ["approved"]}],
        "additionalProperties": False,
    }
    strands_words = "'y'/'yes' approves, 't'/'trust' approves and trusts, anything else denies"
    return {
        "title": "Approval",
        "description": "Approve, deny" + (", trust" if trust else "") + f" or edit the tool call ({strands_words}).",
        "anyOf": [{"type": "string"}, {"type": "boolean"}, answer],
    }


@functools.lru_cache(maxsize=512)
def _annotated(schema_json: str) -> Any:
    import json

    return Annotated[Any, WithJsonSchema(json.loads(schema_json))]


def response_type(schema: dict[str, Any]) -> Any:
    """Return a type that publishes ``schema`` as an interrupt's ``response_schema`` and passes answers through."""
    import json

    return _annotated(json.dumps(schema, sort_keys=True))


__all__ = [
    "CONDITION_KEYS",
    "Decision",
    "answer_decision",
    "answer_reason",
    "answered_by",
    "is_approval",
    "is_trust_response",
    "response_schema",
    "response_type",
    "trust_scope",
]
