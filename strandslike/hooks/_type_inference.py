"""Infer the event types a callback handles from its first parameter's annotation."""

import functools
import inspect
import types
import typing
from typing import Any, Union, get_args, get_origin, get_type_hints

from .events import BaseHookEvent

_HINT = "cannot infer event type, please provide event_type explicitly"


def infer_event_types(callback: Any) -> list[type[BaseHookEvent]]:
    """Return the event classes named by ``callback``'s first parameter (each member of a union).

    Raises:
        ValueError: The annotation is missing or is not an event class (Strands' messages).
    """
    target = callback
    if not inspect.isroutine(target) and not isinstance(target, (type, functools.partial)):
        target = type(target).__call__  # an object with __call__: read the method's annotations
    try:
        hints = get_type_hints(target)
    except Exception:
        raise ValueError(f"failed to get type hints for callback | {_HINT}") from None
    try:
        params = list(inspect.signature(target).parameters.values())
    except (TypeError, ValueError):
        raise ValueError(f"failed to get type hints for callback | {_HINT}") from None
    if len(params) > 1 and params[0].name in ("self", "cls"):
        params = params[1:]
    if not params:
        raise ValueError(f"callback has no parameters | {_HINT}")
    name = params[0].name
    hint = hints.get(name)
    if hint is None:
        raise ValueError(f"parameter=<{name}> has no type hint | {_HINT}")
    if get_origin(hint) in (Union, types.UnionType):
        found: list[type[BaseHookEvent]] = []
        for arg in get_args(hint):
            if arg is type(None):
                raise ValueError("None is not a valid event type in union")
            event_type = _event_class(arg)
            if event_type is None:
                raise ValueError(f"Invalid type in union: {arg} | must be a subclass of BaseHookEvent")
            found.append(event_type)
        return found
    event_type = _event_class(hint)
    if event_type is None:
        raise ValueError(f"parameter=<{name}>, type=<{hint}> | type hint must be a subclass of BaseHookEvent")
    return [event_type]


def _event_class(hint: Any) -> type[BaseHookEvent] | None:
    origin = get_origin(hint)
    candidate = origin if origin is not None and origin is not typing.Annotated else hint
    if isinstance(candidate, type) and issubclass(candidate, BaseHookEvent):
        return candidate
    return None
