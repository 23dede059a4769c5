"""Malformed and hostile input shared by the validation tests (importable as ``hostile``).

`malformed_resumes(interrupt_id)` lists resumes of every malformed shape an agent or orchestrator waiting on
``interrupt_id`` must refuse, each with the ``code`` of the typed error it must raise.
"""

from typing import Any


def nested(depth: int, leaf: Any = None) -> Any:
    """Return ``depth`` lists nested in one another, around ``leaf``."""
    value: Any = [] if leaf is None else leaf
    for _ in range(depth):
        value = [value]
    return value


def nested_dict(depth: int) -> Any:
    value: Any = {}
    for _ in range(depth):
        value = {"a": value}
    return value


# Values no store can write, or not read back equal.
UNSTORABLE: dict[str, Any] = {
    "int-key": {1: 2},
    "none-key": {None: 1, "a": 2},
    "tuple-key": {(1, 2): "x"},
    "lone-surrogate": "\ud800",
    "surrogate-in-key": {"\udfff": 1},
    "huge-int": 10**5000,
    "nan": float("nan"),
    "infinity": [float("-inf")],
    "deep-list": nested(5000),
    "deep-dict": nested_dict(5000),
    "set": {1, 2},
    "bytes": b"\x00",
    "object": object(),
}


def _ir(**body: Any) -> list[dict[str, Any]]:
    return [{"interruptResponse": body}]


def malformed_resumes(interrupt_id: str) -> list[tuple[str, Any, str]]:
    """Return ``(label, resume, code)`` for resumes of every malformed shape, answering ``interrupt_id``."""
    good = {"interruptId": interrupt_id, "response": "y"}
    cases: list[tuple[str, Any, str]] = [
        # not a list of interruptResponse blocks
        ("string", "a new prompt", "PENDING_INTERRUPTS"),
        ("int", 5, "PENDING_INTERRUPTS"),
        ("dict-not-list", {"interruptResponse": good}, "PENDING_INTERRUPTS"),
        ("tuple", ({"interruptResponse": good},), "PENDING_INTERRUPTS"),
        ("block-not-dict", [5], "PENDING_INTERRUPTS"),
        ("block-string", ["interruptResponse"], "PENDING_INTERRUPTS"),
        ("block-none", [None], "PENDING_INTERRUPTS"),
        ("block-list", [[{"interruptResponse": good}]], "PENDING_INTERRUPTS"),
        ("block-empty", [{}], "PENDING_INTERRUPTS"),
        ("block-extra-key", [{"interruptResponse": good, "text": "x"}], "PENDING_INTERRUPTS"),
        ("block-int-key", [{1: 2}], "PENDING_INTERRUPTS"),
        ("mixed-with-text", [{"interruptResponse": good}, {"text": "and more"}], "PENDING_INTERRUPTS"),
        ("text-blocks", [{"text": "x"}], "PENDING_INTERRUPTS"),
        # malformed bodies
        ("body-string", [{"interruptResponse": "y"}], "INVALID_PAYLOAD"),
        ("body-none", [{"interruptResponse": None}], "INVALID_PAYLOAD"),
        ("body-list", [{"interruptResponse": [good]}], "INVALID_PAYLOAD"),
        ("body-deep", [{"interruptResponse": nested(5000)}], "INVALID_PAYLOAD"),
        ("no-id", _ir(response="y"), "INVALID_PAYLOAD"),
        ("no-response", _ir(interruptId=interrupt_id), "INVALID_PAYLOAD"),
        ("empty-id", _ir(interruptId="", response="y"), "INVALID_PAYLOAD"),
        ("int-id", _ir(interruptId=5, response="y"), "INVALID_PAYLOAD"),
        ("bool-id", _ir(interruptId=True, response="y"), "INVALID_PAYLOAD"),
        ("none-id", _ir(interruptId=None, response="y"), "INVALID_PAYLOAD"),
        ("list-id", _ir(interruptId=[interrupt_id], response="y"), "INVALID_PAYLOAD"),
        ("dict-id", _ir(interruptId={"id": interrupt_id}, response="y"), "INVALID_PAYLOAD"),
        ("deep-id", _ir(interruptId=nested(5000), response="y"), "INVALID_PAYLOAD"),
        ("misspelt-action-key", _ir(**good, acton="cancel"), "INVALID_PAYLOAD"),
        ("unknown-key", _ir(**good, approve=True), "INVALID_PAYLOAD"),
        ("bool-action", _ir(**good, action=True), "INVALID_PAYLOAD"),
        ("int-action", _ir(**good, action=1), "INVALID_PAYLOAD"),
        ("none-action", _ir(**good, action=None), "INVALID_PAYLOAD"),
        ("unknown-action", _ir(**good, action="approve"), "INVALID_PAYLOAD"),
        ("case-action", _ir(**good, action="CANCEL"), "INVALID_PAYLOAD"),
        ("list-action", _ir(**good, action=["cancel"]), "INVALID_PAYLOAD"),
        ("deep-action", _ir(**good, action=nested(5000)), "INVALID_PAYLOAD"),
        ("huge-action", _ir(**good, action="x" * 1_000_000), "INVALID_PAYLOAD"),
        ("int-session", _ir(**good, sessionId=5), "INVALID_PAYLOAD"),
        ("deep-session", _ir(**good, sessionId=nested(5000)), "INVALID_PAYLOAD"),
        ("input-with-resume", _ir(**good, input={"a": 1}), "INVALID_PAYLOAD"),
        ("input-not-object", _ir(**good, action="restart", input=["x"]), "INVALID_PAYLOAD"),
        # ids that name nothing
        ("unknown-id", _ir(interruptId="v1:nope", response="y"), "UNKNOWN_INTERRUPT_ID"),
        ("huge-id", _ir(interruptId="x" * 10_000_000, response="y"), "UNKNOWN_INTERRUPT_ID"),
        ("surrogate-id", _ir(interruptId="\ud800", response="y"), "UNKNOWN_INTERRUPT_ID"),
        ("bidi-id", _ir(interruptId=interrupt_id + "\u202e", response="y"), "UNKNOWN_INTERRUPT_ID"),
        (
            "good-then-unknown",
            [{"interruptResponse": good}, *_ir(interruptId="no", response=1)],
            "UNKNOWN_INTERRUPT_ID",
        ),
        ("duplicate", [{"interruptResponse": good}, {"interruptResponse": good}], "DUPLICATE_RESPONSE"),
        ("other-session", _ir(**good, sessionId="someone-else"), "SESSION_MISMATCH"),
    ]
    for label, value in UNSTORABLE.items():
        cases.append((f"response-{label}", _ir(interruptId=interrupt_id, response=value), "INVALID_PAYLOAD"))
    return cases


async def raised(awaitable: Any) -> BaseException:
    """Await ``awaitable`` and return what it raised; fail the test if it raised nothing."""
    try:
        await awaitable
    except Exception as error:
        return error
    raise AssertionError("accepted, but a refusal was expected")
