"""Interrupt state: the open interrupts of a run, their answers, the tool batch waiting on them, and an audit trail."""

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from .._json import ensure_json_serializable
from .._schema import first_schema_error
from ..telemetry.spans import current_tracer
from ..types.content import Message
from ..types.exceptions import NotJSONSerializableError, SessionException, safe_repr
from ..types.tools import ToolResult, ToolUse
from ._errors import (
    DuplicateInterruptResponseError,
    EditsNotAllowedError,
    InterruptAlreadyAnsweredError,
    InterruptError,
    InterruptExpiredError,
    InvalidPayloadError,
    InvalidResumeError,
    NotJSONPayloadError,
    NotToolBoundError,
    PartialResumeError,
    PendingInterruptsError,
    SessionMismatchError,
    StaleToolCallError,
    UnknownInterruptError,
)
from ._interrupt import Interrupt, InterruptException, ResumeAction
from ._response_types import restored_validator

logger = logging.getLogger(__name__)

_ACTIONS = ("resume", "respond", "restart", "cancel")
_RESTART_HINT = (
    " (a restart answers the interrupt too: the restarted tool's interrupt() returns the restart's response, so "
    "pass one that fits the response type, e.g. interrupt.restart(input=..., response={...}))"
)
_RESOLVED_LIMIT = 1000


# json.dumps builds a new encoder for every call with non-default options; these are built once.
_CANONICAL_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str)


def call_fingerprint(name: str, tool_input: Any) -> str:
    """Return a canonical form of a tool call's name and input, to bind an approval to the exact call it approved.

    Small calls are kept as their canonical JSON; larger ones as its SHA-256, so the state stays small.
    """
    canonical = _CANONICAL_JSON.encode([name, tool_input])
    return canonical if len(canonical) <= 200 else _sha256(canonical)


@dataclass
class InterruptSpec:
    """The optional details of an interrupt, given when it is raised."""

    message: str | None = None
    response_schema: dict[str, Any] | None = None
    expires_at: str | None = None
    tool_use_id: str | None = None
    metadata: dict[str, Any] | None = None
    kind: str | None = None
    allow_edits: bool = False
    fingerprint: str | None = None
    session_id: str | None = None
    source: str | None = None
    rich: bool = False
    response_type: str | None = None


@dataclass
class ParsedAnswer:
    """One validated answer of a resume."""

    action: ResumeAction
    response: Any
    edited_input: dict[str, Any] | None = None
    metadata: Any = None


class ResumeChecks(Protocol):
    """What the owner of an interrupt state knows that validation needs: the pending calls and the tools."""

    session_id: str | None

    def pending_call(self, tool_use_id: str) -> ToolUse | None:
        """Return the pending tool use with this id, if any."""

    def validate_tool_input(self, interrupt_id: str, tool_use: ToolUse, tool_input: dict[str, Any]) -> None:
        """Raise `InvalidToolInputError` if ``tool_input`` does not fit the tool of ``tool_use``."""


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

    While ``activated``, the owner accepts only interrupt responses. The open interrupts are cleared (deactivated)
    once the interrupted point completes without new interrupts; the audit trail and the record of resolved
    answers (for idempotent replays) survive that.
    """

    __slots__ = (
        "_validators",
        "_version",
        "activated",
        "audit",
        "context",
        "interrupts",
        "pending_tool_execution",
        "resolved",
    )

    def __init__(self) -> None:
        self.interrupts: dict[str, Interrupt] = {}
        self.context: dict[str, Any] = {}
        self.activated = False
        self.pending_tool_execution: PendingToolExecution | None = None
        self.audit: list[dict[str, Any]] = []
        self.resolved: dict[str, str] = {}
        # Validators of typed answers (response_type), by interrupt id; they live in memory only and are
        # registered again whenever the raising hook or tool runs again.
        self._validators: dict[str, Callable[[Any], Any]] = {}
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
        """Forget the open interrupts and pending work: the interrupted point has completed."""
        if not (self.activated or self.interrupts or self.context or self.pending_tool_execution):
            return
        for interrupt_id, interrupt in self.interrupts.items():
            self._remember(interrupt_id, interrupt)
        self.interrupts = {}
        self.context = {}
        self.activated = False
        self.pending_tool_execution = None
        self._validators = {}
        self._version += 1

    def spend(self, interrupt_id: str) -> None:
        """Forget an answered interrupt whose step completed, keeping its answer on record for idempotent replays.

        For an interrupt point that is passed more than once in one run (a node revisited): the next pass asks
        again, and a resume that repeats the spent answer once the run is over is still recognised as a replay.
        """
        interrupt = self.interrupts.pop(interrupt_id, None)
        if interrupt is not None:
            self._remember(interrupt_id, interrupt)
            self._version += 1

    def _remember(self, interrupt_id: str, interrupt: Interrupt) -> None:
        if not interrupt.answered:
            return
        self.resolved[interrupt_id] = _answer_key(
            interrupt.action or "resume", interrupt.response, interrupt.edited_input, interrupt.restart_metadata
        )
        while len(self.resolved) > _RESOLVED_LIMIT:
            del self.resolved[next(iter(self.resolved))]

    def set_context(self, key: str, value: Any) -> None:
        """Store JSON-serializable ``value`` under ``key`` of the persisted context, until `deactivate`."""
        self.context[key] = value
        self._version += 1

    def adopt(self, interrupt: Interrupt) -> Interrupt:
        """Register an interrupt raised elsewhere (an agent used as a tool relays its own); keep a known one.

        Raises:
            NotJSONSerializableError: The interrupt's reason or metadata cannot be persisted.
        """
        existing = self.interrupts.get(interrupt.id)
        if existing is not None:
            return existing
        ensure_json_serializable(interrupt.reason, f"The reason of interrupt {interrupt.name!r}")
        ensure_json_serializable(interrupt.metadata, f"The metadata of interrupt {interrupt.name!r}")
        self.interrupts[interrupt.id] = interrupt
        self.record(interrupt, "raised", by=interrupt.source, reason=interrupt.reason)
        self._version += 1
        return interrupt

    def unanswered(self) -> list[Interrupt]:
        """Return the interrupts still waiting for an answer, in the order they were raised."""
        return [interrupt for interrupt in self.interrupts.values() if not interrupt.answered]

    def bound_to(self, tool_use_id: str) -> list[Interrupt]:
        """Return the answered interrupts bound to a tool call."""
        return [i for i in self.interrupts.values() if i.answered and i.tool_use_id == tool_use_id]

    # -- raising --------------------------------------------------------------------------------------------------

    def interrupt(
        self,
        interrupt_id: str,
        name: str,
        reason: Any,
        response: Any,
        spec: InterruptSpec | None = None,
        *,
        validate: Callable[[Any], Any] | None = None,
    ) -> Any:
        """Return the answer to an interrupt, or raise `InterruptException` to pause for one.

        Args:
            interrupt_id: Deterministic id of the interrupt.
            name: Name given by the hook or tool.
            reason: JSON-serializable context; the first reason given for an id is kept.
            response: A preemptive answer: when not None, it is returned at once without pausing.
            spec: Optional details (message, schema, expiry, binding to a tool call, ...) of a new interrupt.
            validate: Validates and converts the answer into the raiser's response type.
        """
        existing = self.interrupts.get(interrupt_id)
        if existing is None:
            existing = self._create(interrupt_id, name, reason, response, spec or InterruptSpec())
        if validate is not None:
            self._validators[interrupt_id] = validate
        if not existing.answered:
            raise InterruptException(existing)
        # A restart answers too: the restarted call's interrupt() returns the restart's response (never its
        # metadata), typed like a resume's answer.
        if validate is None or existing.action not in (None, "resume", "restart"):
            return existing.response
        if existing.action == "restart" and existing.response is None and not asked_by_tool(interrupt_id):
            return None  # a hook's question answered by a restart without a response: the restart approves
        try:
            return validate(existing.response)
        except ValueError as exc:  # pydantic's ValidationError: the answer fits the schema, not the type
            # Reopen the interrupt so a corrected answer can be given; the run stays interrupted and resumable.
            existing.answered, existing.response, existing.action = False, None, None
            self.record(existing, "rejected", detail=str(exc))
            logger.warning(
                "interrupt_id=<%s>, name=<%s> | the answer does not fit the response type; the interrupt is open again",
                interrupt_id,
                name,
            )
            raise InvalidPayloadError(interrupt_id, _first_line(exc)) from None

    def _create(self, interrupt_id: str, name: str, reason: Any, response: Any, spec: InterruptSpec) -> Interrupt:
        ensure_json_serializable(reason, f"The reason of interrupt {name!r}")
        ensure_json_serializable(spec.metadata, f"The metadata of interrupt {name!r}")
        ensure_json_serializable(spec.response_schema, f"The response schema of interrupt {name!r}")
        if response is not None:
            ensure_json_serializable(response, f"The response of interrupt {name!r}")
        interrupt = Interrupt(
            interrupt_id,
            name,
            reason,
            response,
            message=spec.message,
            response_schema=spec.response_schema,
            expires_at=spec.expires_at,
            tool_use_id=spec.tool_use_id,
            metadata=spec.metadata,
            kind=spec.kind,
            allow_edits=spec.allow_edits,
            fingerprint=spec.fingerprint,
            session_id=spec.session_id,
            source=spec.source,
            rich=spec.rich,
            response_type=spec.response_type,
        )
        self.interrupts[interrupt_id] = interrupt
        self.record(interrupt, "raised", by=spec.source, reason=reason)
        logger.info("interrupt_id=<%s>, name=<%s>, by=<%s> | interrupt raised", interrupt_id, name, spec.source)
        tracer = current_tracer()
        if tracer is not None:
            tracer.interrupt_raised(interrupt)
        self._version += 1
        return interrupt

    # -- resuming -------------------------------------------------------------------------------------------------

    def resume(self, prompt: Any, checks: ResumeChecks | None = None, *, refuse_partial: bool = False) -> None:
        """Validate a whole resume, then apply it; raise before applying anything if any answer is refused.

        Raises:
            PendingInterruptsError: ``prompt`` is not a list of interrupt responses (a `TypeError`).
            InvalidResumeError: A response block is malformed (a `TypeError`).
            UnknownInterruptError: A response names an unknown interrupt id (a `KeyError`).
            InterruptError: Any other refusal (see `parse_responses`).
        """
        if not self.activated:
            return
        self.apply(self.parse_responses(prompt, checks, refuse_partial=refuse_partial), prompt)

    def parse_responses(
        self, prompt: Any, checks: ResumeChecks | None = None, *, refuse_partial: bool = False
    ) -> dict[str, ParsedAnswer]:
        """Validate a resume against this state and return its new answers by interrupt id, changing nothing.

        Raises:
            PendingInterruptsError: ``prompt`` is not a list of interrupt responses.
            InvalidResumeError: A block is malformed or names an unknown action.
            UnknownInterruptError: An id is unknown.
            DuplicateInterruptResponseError: One interrupt is answered twice.
            InterruptAlreadyAnsweredError: An answer changes an earlier answer.
            SessionMismatchError: An answer belongs to another session.
            InterruptExpiredError: An interrupt expired.
            InvalidPayloadError: An answer fails the response schema or is not JSON-serializable.
            NotToolBoundError: ``respond`` on an interrupt not bound to a tool call.
            EditsNotAllowedError: ``restart`` with input on an interrupt raised without ``allow_edits``.
            InvalidToolInputError: Edited input fails the tool's input schema.
            StaleToolCallError: The pending tool call no longer matches the interrupt's.
            PartialResumeError: ``refuse_partial`` and an open interrupt is left unanswered.
        """
        try:
            return self._parse(prompt, checks, refuse_partial)
        except InterruptError as exc:
            logger.warning("code=<%s> | resume refused, nothing was applied: %s", exc.code, exc)
            raise

    def _parse(self, prompt: Any, checks: ResumeChecks | None, refuse_partial: bool) -> dict[str, ParsedAnswer]:
        answers: dict[str, ParsedAnswer] = {}
        seen: set[str] = set()
        for body in _bodies(prompt):
            interrupt_id = body["interruptId"]
            interrupt = self.interrupts.get(interrupt_id)
            if interrupt is None:
                raise UnknownInterruptError(interrupt_id)
            if interrupt_id in seen:
                raise DuplicateInterruptResponseError(interrupt_id)
            seen.add(interrupt_id)
            answer = _parse_body(body)
            # Before anything looks at the values (comparing them below encodes them): whatever a resume carries
            # must be storable by every store, or a session could be left unwritable or unreadable for good.
            _check_storable(interrupt_id, interrupt.name, answer)
            if interrupt.answered:
                if (answer.action, _canonical(answer.response)) == (
                    interrupt.action or "resume",
                    _canonical(interrupt.response),
                ):
                    continue  # replaying the same answer (e.g. retrying a failed resume) changes nothing
                raise InterruptAlreadyAnsweredError(interrupt_id, interrupt.name)
            self._check(interrupt, body, answer, checks)
            answers[interrupt_id] = answer
        if refuse_partial:
            missing = [i.id for i in self.unanswered() if i.id not in answers]
            if missing:
                raise PartialResumeError(missing)
        return answers

    def _check(
        self, interrupt: Interrupt, body: dict[str, Any], answer: ParsedAnswer, checks: ResumeChecks | None
    ) -> None:
        interrupt_id = interrupt.id
        given_session = body.get("sessionId")
        expected_session = checks.session_id if checks is not None else interrupt.session_id
        if given_session is not None and given_session != (interrupt.session_id or expected_session):
            raise SessionMismatchError(interrupt_id, given_session, interrupt.session_id or expected_session)
        if interrupt.expired and answer.action != "cancel":
            raise InterruptExpiredError(interrupt_id, interrupt.expires_at or "")
        # interrupt() returns the response: a resume's always; a restart's when it gives one, and always when the
        # tool itself asked (its restarted body gets the value; a hook's question is answered by the restart).
        answers_call = answer.action == "resume" or (
            answer.action == "restart" and (answer.response is not None or asked_by_tool(interrupt_id))
        )
        hint = _RESTART_HINT if answer.action == "restart" else ""
        if answers_call and interrupt.response_schema is not None:
            _validate_schema(interrupt_id, interrupt.response_schema, answer.response, hint)
        validate = self._validators.get(interrupt_id)
        if validate is None and answers_call and interrupt.response_type is not None:
            # Restored, and the raiser has not run in this process: find its type again (never imports anything).
            validate = restored_validator(interrupt.response_type, interrupt.response_schema)
        if answers_call and validate is not None:
            try:
                validate(answer.response)
            except ValueError as exc:
                raise InvalidPayloadError(interrupt_id, _first_line(exc) + hint) from None
        if answer.action in ("respond", "restart", "cancel") and interrupt.tool_use_id is None:
            if answer.action != "cancel":
                raise NotToolBoundError(interrupt_id, answer.action)
        if answer.edited_input is not None and not interrupt.allow_edits:
            raise EditsNotAllowedError(interrupt_id)
        if interrupt.tool_use_id is not None and checks is not None and answer.action != "cancel":
            # Cancelling never runs anything, so it is accepted even for a call that changed.
            pending = checks.pending_call(interrupt.tool_use_id)
            if pending is not None:
                if (
                    interrupt.fingerprint is not None
                    and call_fingerprint(pending["name"], pending["input"]) != interrupt.fingerprint
                ):
                    raise StaleToolCallError(interrupt_id)
                if answer.edited_input is not None:
                    checks.validate_tool_input(interrupt_id, pending, answer.edited_input)

    def apply(self, answers: dict[str, ParsedAnswer], prompt: Any) -> None:
        """Record answers returned by `parse_responses`."""
        tracer = current_tracer()
        for interrupt_id, answer in answers.items():
            interrupt = self.interrupts[interrupt_id]
            interrupt.response = answer.response
            interrupt.answered = True
            interrupt.action = answer.action
            interrupt.edited_input = answer.edited_input
            interrupt.restart_metadata = answer.metadata
            details: dict[str, Any] = {"action": answer.action, "answer": answer.response}
            if answer.edited_input is not None:
                details["edited_input"] = answer.edited_input
            if answer.action == "restart" and answer.metadata is not None:
                details["metadata"] = answer.metadata
            self.record(interrupt, "answered", **details)
            logger.info(
                "interrupt_id=<%s>, name=<%s>, action=<%s> | interrupt answered",
                interrupt_id,
                interrupt.name,
                answer.action,
            )
            if tracer is not None:
                tracer.interrupt_answered(interrupt, answer.action)
        self._version += 1

    def resume_ids(self, prompt: Any) -> list[str] | None:
        """Return the interrupt ids a well-formed resume answers, in order, or None if ``prompt`` is not one."""
        try:
            return [body["interruptId"] for body in _bodies(prompt)]
        except InterruptError:
            return None

    def is_replay(self, prompt: Any) -> bool:
        """Whether ``prompt`` repeats answers that were already applied and completed (safe to ignore)."""
        try:
            bodies = _bodies(prompt)
            parsed = [(body["interruptId"], _parse_body(body)) for body in bodies]
            for interrupt_id, answer in parsed:
                _check_storable(interrupt_id, interrupt_id, answer)
        except InterruptError:
            return False
        if not parsed:
            return False
        for interrupt_id, answer in parsed:
            key = _answer_key(answer.action, answer.response, answer.edited_input, answer.metadata)
            if self.resolved.get(interrupt_id) != key:
                return False
        return True

    def replays_resolved(self, prompt: Any) -> bool:
        """Whether ``prompt`` is a resume of interrupts already resolved, repeating their answers (nothing to run).

        Returns False when ``prompt`` is not a resume or names no resolved interrupt (the caller goes on as usual).

        Raises:
            UnknownInterruptError: The resume mixes resolved interrupts with ids that were never raised.
            InterruptAlreadyAnsweredError: The resume names resolved interrupts but changes their answers (another
                request resolved them first: a second server, a duplicate delivery).
        """
        ids = self.resume_ids(prompt)
        if ids is None:
            return False
        known = [interrupt_id for interrupt_id in ids if interrupt_id in self.resolved]
        if not known:
            return False
        unknown = [interrupt_id for interrupt_id in ids if interrupt_id not in self.resolved]
        if unknown:
            raise UnknownInterruptError(unknown[0])
        if not self.is_replay(prompt):
            raise InterruptAlreadyAnsweredError(known[0], known[0])
        return True

    # -- audit ----------------------------------------------------------------------------------------------------

    def settle(self, prefix: str, outcome: str) -> None:
        """Record what ran after the answered interrupts whose ids start with ``prefix`` (a step, not a tool)."""
        for interrupt in self.interrupts.values():
            if interrupt.answered and interrupt.id.startswith(prefix):
                self.record(interrupt, "outcome", action=interrupt.action or "resume", result=outcome)

    def record_tool(self, event: str, tool_use_id: str, tool: str, idempotency_key: str) -> None:
        """Append an entry about a tool use whose body started in an earlier process (see `ToolJournal`).

        ``event`` is ``tool_outcome_unknown``, ``tool_rerun`` or ``tool_result_recovered``. The entry names the
        interrupt bound to the tool use (the approval that let it run), if any.
        """
        bound = next((i for i in self.interrupts.values() if i.tool_use_id == tool_use_id), None)
        self.append_entry(
            {
                "time": time.time(),
                "event": event,
                "interrupt_id": bound.id if bound is not None else None,
                "name": bound.name if bound is not None else None,
                "tool": tool,
                "tool_use_id": tool_use_id,
                "idempotency_key": idempotency_key,
            }
        )

    def record(self, interrupt: Interrupt, event: str, **details: Any) -> None:
        """Append an entry to the audit trail; ``time`` is in seconds since the epoch (UTC)."""
        self.note(event, interrupt.name, interrupt.id, **details)

    def note(self, event: str, name: str, interrupt_id: str | None = None, **details: Any) -> None:
        """Append an entry that may concern no interrupt (an approval decided by a rule, a trust grant)."""
        self.append_entry({"time": time.time(), "event": event, "interrupt_id": interrupt_id, "name": name, **details})

    def append_entry(self, entry: dict[str, Any]) -> None:
        """Append a complete entry (``time``, ``event``, ``interrupt_id``, ``name`` and JSON-serializable details)."""
        self.audit.append(entry)
        self._version += 1

    # -- persistence ----------------------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Return the state as a JSON-serializable dict (Strands' keys plus strandslike's)."""
        data: dict[str, Any] = {
            "interrupts": {interrupt_id: i.state_dict() for interrupt_id, i in self.interrupts.items()},
            "context": self.context,
            "activated": self.activated,
            "resolved": self.resolved,
            "audit": self.audit,
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
            interrupts = {key: Interrupt.from_state_dict(raw) for key, raw in data.get("interrupts", {}).items()}
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
            resolved = dict(data.get("resolved") or {})
            audit = list(data.get("audit") or [])
        except (AttributeError, KeyError, TypeError) as exc:
            raise SessionException(f"Failed to restore pending tool execution state: {exc!r}") from exc
        self.interrupts = interrupts
        self.context = context
        self.activated = activated
        self.pending_tool_execution = pending_execution
        self.resolved = resolved
        self.audit = audit
        self._version += 1

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "_InterruptState":
        """Build a state from `to_dict` output."""
        state = cls()
        state.load_dict(data)
        return state


_BODY_KEYS = ("interruptId", "response", "action", "input", "metadata", "sessionId")


def _bodies(prompt: Any) -> list[dict[str, Any]]:
    """Return the bodies of a resume's ``interruptResponse`` blocks, after checking the shape of every block.

    Raises:
        PendingInterruptsError: ``prompt`` is not a list of ``interruptResponse`` blocks.
        InvalidResumeError: A block's body is malformed.
    """
    if not isinstance(prompt, list):
        raise PendingInterruptsError(
            f"prompt_type={type(prompt)} | must resume from interrupt with list of interruptResponse's"
        )
    bodies = []
    for block in prompt:
        if type(block) is not dict or len(block) != 1 or "interruptResponse" not in block:
            raise PendingInterruptsError(
                f"content_types=<{_content_types(prompt)}> | must resume from interrupt with list of "
                "interruptResponse's"
            )
        body = block["interruptResponse"]
        problem = _body_problem(body)
        if problem is not None:
            raise InvalidResumeError(
                f"interruptResponse={safe_repr(body)} | {problem}: each interruptResponse must be a dict with a "
                "string 'interruptId' and a 'response' (which may be null), and may have 'action', 'input', "
                "'metadata' and 'sessionId' (the Interrupt's resume(), respond(), restart() and cancel() build "
                "one). Nothing was applied."
            )
        bodies.append(body)
    return bodies


def _body_problem(body: Any) -> str | None:
    if not isinstance(body, dict):
        return f"it is of type {type(body).__name__}, not an object"
    interrupt_id = body.get("interruptId")
    if not isinstance(interrupt_id, str) or not interrupt_id:
        return f"'interruptId' must be a non-empty string, got {_type_of(interrupt_id)}"
    if "response" not in body:
        return "'response' is missing"
    unknown = [key for key in body if key not in _BODY_KEYS]
    if unknown:
        # A misspelt key ('acton': 'cancel') must not be ignored: the answer would mean something else.
        return f"unknown key {safe_repr(unknown[0])}"
    session_id = body.get("sessionId")
    if session_id is not None and not isinstance(session_id, str):
        return f"'sessionId' must be a string, got {_type_of(session_id)}"
    return None


def _type_of(value: Any) -> str:
    return "nothing" if value is None else f"{safe_repr(value)} ({type(value).__name__})"


def _content_types(prompt: list[Any]) -> str:
    keys: list[str] = []
    for item in prompt:
        if isinstance(item, dict):
            keys.extend(key if isinstance(key, str) else safe_repr(key) for key in item if key != "interruptResponse")
        else:
            keys.append(f"<{type(item).__name__}>")
        if len(keys) > 10:
            break
    return safe_repr(sorted(set(keys)))


def _parse_body(body: dict[str, Any]) -> ParsedAnswer:
    """Return the answer a well-formed body (see `_bodies`) carries.

    Raises:
        InvalidResumeError: The action is unknown, or edited input is given without ``restart`` or is not an object.
    """
    action = body.get("action", "resume")
    if not isinstance(action, str) or action not in _ACTIONS:
        raise InvalidResumeError(
            f"action={safe_repr(action)} | the action of an interruptResponse must be one of {', '.join(_ACTIONS)}. "
            "Nothing was applied."
        )
    edited = body.get("input")
    if edited is not None and (action != "restart" or not isinstance(edited, dict)):
        raise InvalidResumeError(
            "input= is only accepted with action 'restart', as a JSON object of the tool's arguments. "
            "Nothing was applied."
        )
    return ParsedAnswer(action, body["response"], edited, body.get("metadata"))  # type: ignore[arg-type]


def _check_storable(interrupt_id: str, name: str, answer: ParsedAnswer) -> None:
    """Refuse an answer that the stores could not write, or not read back equal (`strandslike._json`).

    Raises:
        NotJSONPayloadError: The response, the edited input or the metadata cannot be stored.
    """
    try:
        ensure_json_serializable(answer.response, f"The response to interrupt {name!r}")
        ensure_json_serializable(answer.metadata, f"The restart metadata of interrupt {name!r}")
        ensure_json_serializable(answer.edited_input, f"The edited input of interrupt {name!r}")
    except NotJSONSerializableError as exc:
        raise NotJSONPayloadError(interrupt_id, str(exc)) from None


def _canonical(value: Any) -> str:
    return _CANONICAL_JSON.encode(value)


def _answer_key(action: str, response: Any, edited_input: Any = None, metadata: Any = None) -> str:
    material = _canonical([action, response, edited_input, metadata])
    # Short answers are kept as they are; long ones by digest, so the record of resolved answers stays small.
    return material if len(material) <= 200 else _sha256(material)


def asked_by_tool(interrupt_id: str) -> bool:
    """Whether a tool raised the interrupt with ``tool_context.interrupt()`` (not a hook), also inside a node."""
    return interrupt_id.startswith("v1:tool_call:") or ":v1:tool_call:" in interrupt_id


def _first_line(exc: Exception) -> str:
    return " ".join(str(exc).split("\n")[:3])


def _validate_schema(interrupt_id: str, schema: dict[str, Any], payload: Any, hint: str = "") -> None:
    problem = first_schema_error(schema, payload)
    if problem is not None:
        raise InvalidPayloadError(interrupt_id, problem + hint)


def _sha256(text: str) -> str:
    import hashlib  # OpenSSL's start-up is paid by the first long call, not by importing strandslike

    return hashlib.sha256(text.encode()).hexdigest()
