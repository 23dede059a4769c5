"""Find a plugin's ``@hook`` and ``@tool`` methods, and run its (sync or async) init method."""

import inspect
import logging
from collections.abc import Callable
from typing import Any

from .._sync import run_sync
from ..tools.decorator import DecoratedFunctionTool

logger = logging.getLogger(__name__)


def _discover(instance: object, plugin_name: str, predicate: Callable[[Any], bool], label: str) -> list[Any]:
    """Return the attributes of ``instance`` matching ``predicate``, in declaration order, parents' first.

    The class hierarchy is walked from the base down, so a parent's methods come first; a method overridden in a
    subclass is taken once, in the subclass's version (what ``getattr`` returns).
    """
    found: list[Any] = []
    seen: set[str] = set()
    for cls in reversed(type(instance).__mro__):
        for attr_name in cls.__dict__:
            if attr_name in seen:
                continue
            seen.add(attr_name)
            # Look at what the name resolves to without running it: properties (``hooks``, ``tools``, a user's own)
            # are never decorated methods, and evaluating them here could recurse or fail.
            static = inspect.getattr_static(instance, attr_name, None)
            if isinstance(static, staticmethod | classmethod):
                static = static.__func__
            if not (isinstance(static, DecoratedFunctionTool) or hasattr(static, "_hook_event_types")):
                continue
            bound = getattr(instance, attr_name)
            if predicate(bound):
                found.append(bound)
                logger.debug("plugin=<%s>, %s=<%s> | discovered", plugin_name, label, attr_name)
    return found


def discover_hooks(instance: object, plugin_name: str) -> list[Callable[..., Any]]:
    """Return the bound ``@hook`` methods of ``instance``."""
    return _discover(
        instance, plugin_name, lambda bound: callable(bound) and hasattr(bound, "_hook_event_types"), "hook"
    )


def discover_tools(instance: object, plugin_name: str) -> list[DecoratedFunctionTool[..., Any]]:
    """Return the ``@tool`` methods of ``instance``, bound to it."""
    return _discover(instance, plugin_name, lambda bound: isinstance(bound, DecoratedFunctionTool), "tool")


def call_init_method(init_method: Callable[[Any], Any], target: Any) -> None:
    """Call a plugin's ``init_agent``/``init_multi_agent`` and wait for it if it is async.

    An async init runs to completion before this returns, with or without a running event loop (in a worker
    thread with its own loop when one is running, as Strands does).
    """
    if inspect.iscoroutinefunction(init_method):
        run_sync(init_method, target)
        return
    result = init_method(target)
    if inspect.isawaitable(result):  # a plain function returning an awaitable

        async def wait() -> None:
            await result

        run_sync(wait)
