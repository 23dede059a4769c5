"""`InterventionRegistry`: wires intervention handlers into an agent's hook registry and applies their actions.

One hook callback is registered per lifecycle event that at least one handler overrides, at
`HookOrder.INTERVENTION_INPUT` for Before* events (after ordinary hooks) and `HookOrder.INTERVENTION_OUTPUT` for
After* events (before them, since After* callbacks with a lower order run first). The callback asks every handler
that overrides the event, in registration order, and applies each action at once: a `Deny` (or a refused
`Confirm`) skips the remaining handlers, `Guide` feedback is gathered and applied once at the end.
"""

import inspect
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from ..hooks.events import (
    AfterModelCallEvent,
    AfterToolCallEvent,
    BeforeInvocationEvent,
    BeforeModelCallEvent,
    BeforeToolCallEvent,
)
from ..hooks.registry import HookOrder, HookRegistry
from ..interrupt import InterruptException, find_interrupt
from ._errors import InterventionConfigError, InterventionTypeError
from .actions import (
    ACTION_TYPES,
    Confirm,
    Deny,
    Guide,
    InterventionAction,
    LifecycleEvent,
    Proceed,
    Transform,
    default_evaluate,
)
from .handler import LIFECYCLE_METHODS, ON_ERROR_MODES, InterventionHandler

logger = logging.getLogger(__name__)

_Apply = Callable[[Any, InterventionAction, str], bool]

_EVENTS: dict[str, tuple[type, float]] = {
    "before_invocation": (BeforeInvocationEvent, HookOrder.INTERVENTION_INPUT),
    "before_tool_call": (BeforeToolCallEvent, HookOrder.INTERVENTION_INPUT),
    "after_tool_call": (AfterToolCallEvent, HookOrder.INTERVENTION_OUTPUT),
    "before_model_call": (BeforeModelCallEvent, HookOrder.INTERVENTION_INPUT),
    "after_model_call": (AfterModelCallEvent, HookOrder.INTERVENTION_OUTPUT),
}


def _is_overridden(handler: InterventionHandler, method: str) -> bool:
    return getattr(type(handler), method, None) is not getattr(InterventionHandler, method)


def check_handlers(handlers: Iterable[Any]) -> list[InterventionHandler]:
    """Return ``handlers`` as a list after checking each is a handler instance with a unique name and a valid mode.

    Raises:
        InterventionTypeError: An item is not an `InterventionHandler` instance (a `TypeError`).
        InterventionConfigError: Two handlers share a name, or a handler's ``on_error`` is unknown (a `ValueError`).
    """
    if isinstance(handlers, InterventionHandler):
        raise InterventionTypeError(
            f"interventions= takes a list of handlers, got a single {type(handlers).__name__}: use [handler]"
        )
    try:
        items = list(handlers)
    except TypeError:
        raise InterventionTypeError(f"interventions= takes a list of handlers, got {type(handlers).__name__}") from None
    checked: list[InterventionHandler] = []
    seen: set[str] = set()
    for handler in items:
        if isinstance(handler, type) and issubclass(handler, InterventionHandler):
            raise InterventionTypeError(
                f"interventions= got the class {handler.__name__}; pass an instance: {handler.__name__}(...)"
            )
        if not isinstance(handler, InterventionHandler):
            raise InterventionTypeError(
                f"interventions= takes InterventionHandler instances, got {type(handler).__name__} ({handler!r}). "
                "Hook providers and callbacks go in hooks=, plugins in plugins=."
            )
        name = handler.name
        if not isinstance(name, str) or not name:
            raise InterventionConfigError(
                f"intervention handler {type(handler).__name__} has name={name!r}; give it a non-empty string name"
            )
        if name in seen:
            raise InterventionConfigError(f"Duplicate intervention handler name: '{name}'")
        if handler.on_error not in ON_ERROR_MODES:
            raise InterventionConfigError(
                f"intervention handler '{name}' has on_error={handler.on_error!r}; it must be one of "
                f"{', '.join(repr(mode) for mode in ON_ERROR_MODES)}"
            )
        seen.add(name)
        checked.append(handler)
    return checked


class InterventionRegistry:
    """Bridges `InterventionHandler` instances and a hook registry (one callback per overridden lifecycle event)."""

    def __init__(self, handlers: Iterable[InterventionHandler], hook_registry: HookRegistry) -> None:
        """Check the handlers and register their callbacks.

        Args:
            handlers: The handlers, in evaluation order.
            hook_registry: The agent's hook registry.

        Raises:
            InterventionTypeError: An item is not a handler instance.
            InterventionConfigError: Two handlers share a name, or an ``on_error`` is unknown.
        """
        self._handlers = check_handlers(handlers)
        self._by_method: dict[str, tuple[InterventionHandler, ...]] = {
            method: tuple(handler for handler in self._handlers if _is_overridden(handler, method))
            for method in LIFECYCLE_METHODS
        }
        callbacks: dict[str, Callable[[Any], Any]] = {
            "before_invocation": self._on_before_invocation,
            "before_tool_call": self._on_before_tool_call,
            "after_tool_call": self._on_after_tool_call,
            "before_model_call": self._on_before_model_call,
            "after_model_call": self._on_after_model_call,
        }
        for method, (event_type, order) in _EVENTS.items():
            if self._by_method[method]:
                hook_registry.add_callback(event_type, callbacks[method], order=order)

    # The hook callbacks below return the dispatch coroutine for the registry to await (one frame less per event
    # than an ``async def`` wrapper: this runs before every tool call).

    @property
    def handlers(self) -> list[InterventionHandler]:
        """The handlers, in registration order."""
        return list(self._handlers)

    def _on_before_invocation(self, event: BeforeInvocationEvent) -> Awaitable[None]:
        return self._dispatch(event, "before_invocation", self._apply_before_invocation)

    def _on_before_tool_call(self, event: BeforeToolCallEvent) -> Awaitable[None]:
        return self._dispatch(event, "before_tool_call", self._apply_before_tool_call)

    def _on_after_tool_call(self, event: AfterToolCallEvent) -> Awaitable[None]:
        return self._dispatch(event, "after_tool_call", self._apply_after_tool_call)

    def _on_before_model_call(self, event: BeforeModelCallEvent) -> Awaitable[None]:
        return self._dispatch(event, "before_model_call", self._apply_before_model_call)

    def _on_after_model_call(self, event: AfterModelCallEvent) -> Awaitable[None]:
        return self._dispatch(event, "after_model_call", self._apply_after_model_call)

    # -- applying actions ---------------------------------------------------------------------------------------
    # Each returns True when the action short-circuits the remaining handlers.

    @staticmethod
    def _apply_before_invocation(event: BeforeInvocationEvent, action: InterventionAction, handler_name: str) -> bool:
        if isinstance(action, Deny):
            event.cancel = f"DENIED: {action.reason}"
            return True
        if isinstance(action, Guide):
            event.cancel = f"GUIDANCE: {action.feedback}"
        elif isinstance(action, Transform):
            action.apply(event)
        elif not isinstance(action, Proceed):
            _no_effect(handler_name, "before_invocation", action)
        return False

    @staticmethod
    def _apply_before_tool_call(event: BeforeToolCallEvent, action: InterventionAction, handler_name: str) -> bool:
        if isinstance(action, Deny):
            event.cancel_tool = f"DENIED: {action.reason}"
            return True
        if isinstance(action, Confirm):
            answer = event.interrupt(handler_name, reason=action.prompt, **action.interrupt_options())
            check = action.evaluate if action.evaluate is not None else default_evaluate
            approved = check(answer)
            if not approved and _restarted(event, handler_name):
                approved = True  # a restart answer asks for the call to run (again, perhaps with edits)
            if not approved:
                event.cancel_tool = f"CONFIRMATION_FAILED: {action.prompt}"
                return True
        elif isinstance(action, Guide):
            event.cancel_tool = f"GUIDANCE: {action.feedback}"
        elif isinstance(action, Transform):
            action.apply(event)
        return False  # Proceed: every action applies before a tool call

    @staticmethod
    def _apply_after_tool_call(event: AfterToolCallEvent, action: InterventionAction, handler_name: str) -> bool:
        if isinstance(action, Transform):
            action.apply(event)
        elif not isinstance(action, Proceed):
            _no_effect(handler_name, "after_tool_call", action)
        return False

    @staticmethod
    def _apply_before_model_call(event: BeforeModelCallEvent, action: InterventionAction, handler_name: str) -> bool:
        if isinstance(action, Deny):
            event.cancel = f"DENIED: {action.reason}"
            return True
        if isinstance(action, Guide):
            event.agent.messages.append({"role": "user", "content": [{"text": action.feedback}]})
        elif isinstance(action, Transform):
            action.apply(event)
        elif not isinstance(action, Proceed):
            _no_effect(handler_name, "before_model_call", action)
        return False

    @staticmethod
    def _apply_after_model_call(event: AfterModelCallEvent, action: InterventionAction, handler_name: str) -> bool:
        if isinstance(action, Guide):
            event.retry = True
            event.agent.messages.append({"role": "user", "content": [{"text": action.feedback}]})
        elif isinstance(action, Transform):
            action.apply(event)
        elif not isinstance(action, Proceed):
            _no_effect(handler_name, "after_model_call", action)
        return False

    # -- dispatch -----------------------------------------------------------------------------------------------

    async def _dispatch(self, event: LifecycleEvent, method: str, apply: _Apply) -> None:
        """Ask the handlers that override ``method`` in order and apply their actions."""
        guides: list[tuple[str, Guide]] = []
        for handler in self._by_method[method]:
            try:
                result = getattr(handler, method)(event)
                action = await result if inspect.isawaitable(result) else result
                if type(action) is Proceed:  # the usual answer: nothing to check or apply
                    continue
                _check_action(handler, method, action)
            except InterruptException:
                raise  # control flow (the run pauses), not a handler failure: on_error does not apply
            except InterventionTypeError:
                raise  # a programming error in the handler: never skipped or turned into a denial
            except Exception as error:
                fallback = self._handle_error(handler, method, error)
                if fallback is None:
                    continue
                action = fallback
            if isinstance(action, Guide):
                guides.append((handler.name, action))
                continue
            try:
                if apply(event, action, handler.name):
                    logger.debug("handler=<%s>, event=<%s> | short-circuited", handler.name, method)
                    return
            except InterruptException:
                raise
            except Exception as error:
                fallback = self._handle_error(handler, method, error)
                if fallback is not None and apply(event, fallback, handler.name):
                    return
        if guides:
            feedback = "\n".join(f"[{name}] {guide.feedback}" for name, guide in guides)
            apply(event, Guide(feedback=feedback), "")

    @staticmethod
    def _handle_error(handler: InterventionHandler, method: str, error: Exception) -> InterventionAction | None:
        """Apply the handler's ``on_error``: re-raise, skip it (None), or deny."""
        mode = handler.on_error
        if mode == "deny":
            logger.warning("handler=<%s>, event=<%s>, on_error=<deny> | %s", handler.name, method, error)
            return Deny(reason=f"Handler threw: {error}")
        if mode == "proceed":
            logger.warning(
                "handler=<%s>, event=<%s>, on_error=<proceed> | handler error skipped (fail-open) | %s",
                handler.name,
                method,
                error,
            )
            return None
        error.add_note(f"raised by intervention handler {handler.name!r} in {method}")
        raise error


def _check_action(handler: InterventionHandler, method: str, action: Any) -> None:
    if action is None:
        raise InterventionTypeError(f"handler '{handler.name}.{method}' returned None; expected an InterventionAction")
    if not isinstance(action, ACTION_TYPES):
        raise InterventionTypeError(
            f"handler '{handler.name}.{method}' returned {action!r}; expected an InterventionAction: Proceed(), "
            "Deny(reason=...), Guide(feedback=...), Confirm(prompt=...) or Transform(apply=...)"
        )


def _restarted(event: BeforeToolCallEvent, handler_name: str) -> bool:
    interrupt = find_interrupt(event, handler_name)
    return interrupt is not None and interrupt.action == "restart"


def _no_effect(handler_name: str, method: str, action: InterventionAction) -> None:
    logger.warning("handler=<%s>, event=<%s> | %s has no effect", handler_name, method, action.type)


__all__ = ["InterventionRegistry", "check_handlers"]
