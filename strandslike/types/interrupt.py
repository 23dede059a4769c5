"""Interrupt wire types and the mixin that gives events and tool contexts their ``interrupt()`` method."""

import contextvars
import functools
import uuid
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, cast

from typing_extensions import TypedDict

from .._json import json_problem
from .exceptions import InvalidInterruptError, safe_repr

if TYPE_CHECKING:
    from ..interrupt._state import InterruptSpec, _InterruptState

# The hook callback running in this task, so an interrupt can name who raised it. The registry keeps it on the
# interruptible event being dispatched (`RUNNING_HOOK` in the event's ``__dict__``), which costs a dict store per
# callback instead of a context-variable set and reset; the context variable is for other dispatchers.
CURRENT_CALLBACK: contextvars.ContextVar[Any] = contextvars.ContextVar("strandslike_hook", default=None)
RUNNING_HOOK = "_running_hook"
_CORE_KINDS = ("tool_call", "input_required", "confirmation")


class InterruptResponse(TypedDict):
    """An answer to one interrupt."""

    interruptId: str
    response: Any


class InterruptResponseContent(TypedDict):
    """A content block carrying an interrupt answer."""

    interruptResponse: InterruptResponse


@functools.lru_cache(maxsize=4096)
def name_uuid(name: str) -> str:
    """Return the uuid5 (OID namespace) of ``name``, the building block of Strands' interrupt ids."""
    return str(uuid.uuid5(uuid.NAMESPACE_OID, name))


@functools.lru_cache(maxsize=256)
def _adapter(response_type: Any) -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(response_type)


class _Interruptible:
    """Mixin for objects that can pause the run: interruptible hook events and tool contexts."""

    __slots__ = ()

    def interrupt(
        self,
        name: str,
        reason: Any = None,
        response: Any = None,
        *,
        message: str | None = None,
        response_type: Any = None,
        expires_in: float | timedelta | None = None,
        allow_edits: bool = False,
        metadata: dict[str, Any] | None = None,
        kind: str | None = None,
    ) -> Any:
        """Pause the run for outside input, or return the answer once it was given.

        Args:
            name: Name of the interrupt; unique among the interrupts raised at this point.
            reason: JSON-serializable context shown to whoever answers.
            response: A preemptive answer; when not None the run does not pause and this value is returned.
            message: A human-readable prompt for the person answering.
            response_type: A pydantic model (or any type pydantic validates): its JSON Schema is published as the
                interrupt's ``response_schema``, answers are checked against it, and the answer is returned as
                that type.
            expires_in: Seconds (or a timedelta) after which answers are refused.
            allow_edits: Whether ``restart`` may replace the input of the tool call this interrupt is bound to.
            metadata: Free-form JSON data for clients.
            kind: AG-UI reason: ``tool_call``, ``input_required``, ``confirmation`` or ``<framework>:<name>``;
                by default ``tool_call`` when bound to a tool call, else ``input_required`` with a response type,
                else ``confirmation``.

        Returns:
            The answer given by the caller on resume (validated into ``response_type`` when given).

        Raises:
            InterruptException: No answer yet; the framework catches it and pauses the run.
            InvalidInterruptError: ``name``, ``message``, ``metadata``, ``expires_in`` or ``allow_edits`` has the
                wrong type, ``response_type`` is not a type pydantic can validate, or ``kind`` is not a core value
                nor namespaced as ``<framework>:<name>`` (a `TypeError` and a `ValueError`).
            NotJSONSerializableError: ``reason``, ``response`` or ``metadata`` cannot be stored.
        """
        _check_details(name, message, expires_in, allow_edits, metadata)
        state = self._interrupt_state()
        interrupt_id = self._interrupt_id(name)
        validate = _validator(response_type) if response_type is not None else None
        existing = state.interrupts.get(interrupt_id)
        if existing is not None:  # raised before (now answered, or still open): its details are already recorded
            answer = state.interrupt(interrupt_id, name, reason, response, validate=validate)
            if existing.action == "cancel":
                self._cancelled(existing.name)
            return answer
        return state.interrupt(
            interrupt_id,
            name,
            reason,
            response,
            self._spec(
                message=message,
                response_type=response_type,
                expires_in=expires_in,
                allow_edits=allow_edits,
                metadata=metadata,
                kind=kind,
            ),
            validate=validate,
        )

    def _spec(
        self,
        *,
        message: str | None,
        response_type: Any,
        expires_in: float | timedelta | None,
        allow_edits: bool,
        metadata: dict[str, Any] | None,
        kind: str | None,
    ) -> "InterruptSpec":
        """Describe a new interrupt: its details, its binding to a tool call, its session and who raised it."""
        spec_class, call_fingerprint, model_call_var = _late_imports()
        spec = spec_class(message=message, metadata=metadata, allow_edits=allow_edits)
        spec.rich = (
            message is not None
            or response_type is not None
            or expires_in is not None
            or metadata is not None
            or kind is not None
        )
        tool_use = self._bound_tool_use()
        if tool_use is not None:
            spec.tool_use_id = tool_use["toolUseId"]
            model_call = model_call_var.get()
            if model_call is None or model_call["toolUseId"] != tool_use["toolUseId"]:
                model_call = tool_use
            spec.fingerprint = call_fingerprint(model_call["name"], model_call["input"])
        if response_type is not None:
            spec.response_schema = _adapter(response_type).json_schema()
            spec.response_type = _type_ref(response_type)
        if expires_in is not None:
            delta = expires_in if isinstance(expires_in, timedelta) else timedelta(seconds=expires_in)
            spec.expires_at = (datetime.now(UTC) + delta).isoformat()
        spec.kind = _check_kind(kind) or (
            "tool_call" if tool_use is not None else "input_required" if response_type is not None else "confirmation"
        )
        owner = self._owner()
        spec.session_id = getattr(getattr(owner, "session_manager", None), "session_id", None)
        spec.source = self._source()
        return cast("InterruptSpec", spec)

    def _interrupt_id(self, name: str) -> str:
        raise NotImplementedError

    def _bound_tool_use(self) -> Any:
        """Return the tool use an interrupt raised here is bound to, if any."""
        return None

    def _source(self) -> str:
        callback = getattr(self, "__dict__", {}).get(RUNNING_HOOK) or CURRENT_CALLBACK.get()
        if callback is None:
            return type(self).__name__
        return f"hook {getattr(callback, '__qualname__', None) or callback!r} on {type(self).__name__}"

    def _cancelled(self, name: str) -> None:
        """React to an interrupt answered with ``cancel`` (events set their cancel field)."""

    def _owner(self) -> Any:
        owner = getattr(self, "agent", None)
        return owner if owner is not None else getattr(self, "source", None)

    def _interrupt_state(self) -> "_InterruptState":
        owner = self._owner()
        if owner is None:
            raise RuntimeError("agent instance attribute not set")
        state: _InterruptState = owner._interrupt_state
        return state


@functools.cache
def _late_imports() -> tuple[Any, Any, Any]:
    # These modules import this one; bind them on first use instead of on every interrupt.
    from ..interrupt._state import InterruptSpec, call_fingerprint
    from .tools import MODEL_CALL

    return InterruptSpec, call_fingerprint, MODEL_CALL


def _type_ref(response_type: Any) -> str | None:
    from ..interrupt._response_types import type_ref

    return type_ref(response_type)


def _check_details(name: Any, message: Any, expires_in: Any, allow_edits: Any, metadata: Any) -> None:
    """Refuse details of the wrong type before anything is recorded (a bad one would fail later, in a store)."""
    problem = None
    if not isinstance(name, str) or json_problem(name) is not None:
        problem = f"name={safe_repr(name)} | the name of an interrupt must be a string of valid Unicode"
    elif message is not None and (not isinstance(message, str) or json_problem(message) is not None):
        problem = f"message={safe_repr(message)} | the message of an interrupt must be a string of valid Unicode"
    elif metadata is not None and not isinstance(metadata, dict):
        problem = f"metadata={safe_repr(metadata)} | the metadata of an interrupt must be a dict"
    elif expires_in is not None and (
        isinstance(expires_in, bool) or not isinstance(expires_in, int | float | timedelta)
    ):
        problem = f"expires_in={safe_repr(expires_in)} | must be a number of seconds or a timedelta"
    elif not isinstance(allow_edits, bool):
        problem = f"allow_edits={safe_repr(allow_edits)} | must be True or False"
    if problem is not None:
        raise InvalidInterruptError(f"{problem}. Nothing was recorded.")


def _validator(response_type: Any) -> Any:
    try:
        return _adapter(response_type).validate_python
    except Exception as exc:  # pydantic refuses the type: say so as the interrupt's error
        raise InvalidInterruptError(
            f"response_type={safe_repr(response_type)} | pydantic cannot validate this type "
            f"({type(exc).__name__}: {exc}). Pass a pydantic model or a type such as int, str or list[str]."
        ) from exc


def _check_kind(kind: Any) -> str | None:
    if kind is None or kind in _CORE_KINDS:
        return kind  # type: ignore[no-any-return]
    if (
        not isinstance(kind, str)
        or ":" not in kind
        or kind.startswith(("core:", ":"))
        or kind.endswith(":")
        or json_problem(kind) is not None
    ):
        raise InvalidInterruptError(
            f"kind={safe_repr(kind)} | must be one of {', '.join(_CORE_KINDS)} or a namespaced custom reason such as "
            "'myapp:database_change' (the 'core:' prefix is reserved)"
        )
    return kind


__all__ = ["CURRENT_CALLBACK", "RUNNING_HOOK", "InterruptResponse", "InterruptResponseContent", "name_uuid"]
