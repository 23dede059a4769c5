import pytest

from strandslike.interrupt import (
    DuplicateInterruptResponseError,
    Interrupt,
    InterruptAlreadyAnsweredError,
    InterruptError,
    InterruptException,
    InvalidPayloadError,
    InvalidResumeError,
    PendingInterruptsError,
    UnknownInterruptError,
)
from strandslike.interrupt._state import PendingToolExecution, _InterruptState
from strandslike.types.exceptions import NotJSONSerializableError, SessionException


def answer(interrupt_id, response):
    return {"interruptResponse": {"interruptId": interrupt_id, "response": response}}


def raised_state(*names):
    state = _InterruptState()
    for name in names:
        with pytest.raises(InterruptException):
            state.interrupt(f"id-{name}", name, {"why": name}, None)
    state.activate()
    return state


def test_interrupt_raises_then_returns_the_answer():
    state = raised_state("a")
    state.resume([answer("id-a", "yes")])
    assert state.interrupt("id-a", "a", None, None) == "yes"


def test_none_is_a_legitimate_answer():
    state = raised_state("a")
    state.resume([answer("id-a", None)])
    assert state.interrupt("id-a", "a", None, None) is None
    assert state.unanswered() == []


def test_preemptive_response_returns_at_once():
    assert _InterruptState().interrupt("id", "n", None, "early") == "early"


def test_first_reason_sticks():
    state = raised_state("a")
    with pytest.raises(InterruptException) as info:
        state.interrupt("id-a", "a", {"why": "other"}, None)
    assert info.value.interrupt.reason == {"why": "a"}


def test_non_json_reason_is_refused_when_raised():
    with pytest.raises(NotJSONSerializableError, match="reason of interrupt 'a'"):
        _InterruptState().interrupt("id", "a", {"when": object()}, None)
    with pytest.raises(TypeError):
        _InterruptState().interrupt("id", "a", {1, 2}, None)


@pytest.mark.parametrize(
    ("prompt", "error", "match"),
    [
        ("hello", PendingInterruptsError, r"prompt_type=<class 'str'> \| must resume from interrupt"),
        ([{"text": "hi"}], PendingInterruptsError, r"content_types=<\['text'\]> \| must resume"),
        ([{"interruptResponse": {"interruptId": "id-a"}}], InvalidResumeError, "must be a dict with a string"),
        ([answer("nope", 1)], UnknownInterruptError, r"interrupt_id=<nope> \| no interrupt found"),
        ([answer("id-a", 1), answer("id-a", 2)], DuplicateInterruptResponseError, "more than once"),
        ([answer("id-a", object())], InvalidPayloadError, "response to interrupt 'a'"),
    ],
)
def test_bad_resumes_are_refused_and_change_nothing(prompt, error, match):
    state = raised_state("a", "b")
    before = state.to_dict()
    with pytest.raises(error, match=match):
        state.resume([answer("id-b", "fine"), *prompt] if isinstance(prompt, list) else prompt)
    assert state.to_dict() == before


def test_error_types_keep_strands_builtin_bases_and_codes():
    assert issubclass(UnknownInterruptError, KeyError)
    assert issubclass(PendingInterruptsError, TypeError)
    assert str(UnknownInterruptError("x")) == "interrupt_id=<x> | no interrupt found"
    codes = {cls.code for cls in (UnknownInterruptError, PendingInterruptsError, InvalidResumeError)}
    assert codes == {"UNKNOWN_INTERRUPT_ID", "PENDING_INTERRUPTS", "INVALID_PAYLOAD"}
    assert all(issubclass(cls, InterruptError) for cls in (UnknownInterruptError, InterruptAlreadyAnsweredError))


def test_changing_an_answer_is_refused_but_replaying_it_is_a_no_op():
    state = raised_state("a", "b")
    state.resume([answer("id-a", "y")])
    with pytest.raises(InterruptAlreadyAnsweredError, match="already answered"):
        state.resume([answer("id-a", "n")])
    state.resume([answer("id-a", "y"), answer("id-b", "z")])
    assert [i.response for i in state.interrupts.values()] == ["y", "z"]


def test_empty_resume_is_accepted():
    state = raised_state("a")
    state.resume([])
    assert state.unanswered()[0].name == "a"


def test_round_trip_through_dict_keeps_answers_and_pending_batch():
    state = raised_state("a", "b")
    state.resume([answer("id-a", None)])
    message = {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t", "name": "x", "input": {}}}]}
    state.pending_tool_execution = PendingToolExecution(
        message, [{"toolUseId": "u", "status": "success", "content": []}]
    )
    restored = _InterruptState.from_dict(state.to_dict())
    assert restored.to_dict() == state.to_dict()
    assert restored.interrupts["id-a"].answered
    assert restored.interrupts["id-a"].response is None
    assert not restored.interrupts["id-b"].answered


def test_strands_legacy_layout_and_bad_data():
    legacy = {
        "interrupts": {"i": {"id": "i", "name": "n", "reason": None, "response": "y"}},
        "context": {"tool_use_message": {"role": "assistant", "content": []}, "tool_results": []},
        "activated": True,
    }
    state = _InterruptState.from_dict(legacy)
    assert state.pending_tool_execution is not None
    assert state.interrupts["i"].answered
    with pytest.raises(SessionException, match="Failed to restore"):
        _InterruptState.from_dict({"interrupts": {"i": {"name": "n"}}})


def test_deactivate_clears_everything_and_bumps_version():
    state = raised_state("a")
    version = state.version
    state.deactivate()
    assert not state.activated
    assert not state.interrupts
    assert state.version > version


def test_interrupt_to_dict_has_strands_keys():
    assert Interrupt("i", "n", "r").to_dict() == {"id": "i", "name": "n", "reason": "r", "response": None}
