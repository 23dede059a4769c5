"""Asking a human inline: the ``"stdio"`` prompt, and calling an ``ask`` callback with an optional deadline."""

import functools
import inspect
import threading
from collections.abc import Awaitable
from typing import Any, Protocol, runtime_checkable

import anyio
import anyio.to_thread

_TIMED_OUT: Any = object()


@runtime_checkable
class AskCallback(Protocol):
    """An ``ask`` callback: show ``prompt`` to a human and return the answer (directly or as an awaitable)."""

    def __call__(self, prompt: str, **kwargs: Any) -> Any | Awaitable[Any]:
        """Prompt the human and return their response."""
        ...


@runtime_checkable
class EvaluateCallback(Protocol):
    """An ``evaluate``/``evaluate_trust`` callback: does this answer approve (or trust) the call?"""

    def __call__(self, response: Any, **kwargs: Any) -> bool:
        """Return whether the response approves (or trusts) the pending tool call."""
        ...


def create_stdio_ask(include_trust: bool) -> AskCallback:
    """Return an ``ask`` that prompts on the terminal: ``<prompt> (y/n):``, or ``(y/n/t)`` with trust.

    Prompts are serialized by a lock (concurrent tool calls cannot interleave their reads of one stdin); the
    blocking ``input()`` runs in a worker thread so the event loop keeps running. A thread blocked in ``input()``
    cannot be interrupted: if the run is cancelled, or ``ask_timeout`` passes, it stays parked until a line is
    entered (and that line is then discarded).
    """
    options = "(y/n/t)" if include_trust else "(y/n)"
    lock = threading.Lock()

    def blocking_ask(prompt: str) -> str:
        with lock:
            return input(f"{prompt} {options}: ").strip()

    async def ask(prompt: str, **kwargs: Any) -> Any:
        return await anyio.to_thread.run_sync(blocking_ask, prompt, abandon_on_cancel=True)

    ask.__qualname__ = "stdio"
    return ask


def is_async_callable(obj: Any) -> bool:
    """Whether calling ``obj`` returns a coroutine (async functions, partials of them, objects with async __call__)."""
    while isinstance(obj, functools.partial):
        obj = obj.func
    return inspect.iscoroutinefunction(obj) or inspect.iscoroutinefunction(getattr(obj, "__call__", None))  # noqa: B004


async def call_ask(ask: AskCallback, prompt: str, deadline: float | None) -> Any:
    """Call ``ask`` and return its answer, or a timed-out marker (see `timed_out`) after ``deadline`` seconds.

    Without a timeout the callback is called as Strands calls it (a sync one on the event loop). With one, a
    sync callback runs in a worker thread so the deadline can fire; it is abandoned (not killed) if it does.
    """
    if deadline is None:
        response = ask(prompt)
        return await response if inspect.isawaitable(response) else response
    with anyio.move_on_after(deadline):
        if is_async_callable(ask):
            response = await ask(prompt)
        else:
            response = await anyio.to_thread.run_sync(ask, prompt, abandon_on_cancel=True)
        if inspect.isawaitable(response):
            response = await response
        return response
    return _TIMED_OUT


def timed_out(response: Any) -> bool:
    """Whether `call_ask` returned because its deadline passed."""
    return response is _TIMED_OUT


def describe_ask(ask: Any) -> str:
    """Return how the audit trail names an ``ask`` callback: ``ask:stdio``, ``ask:<qualified name>``."""
    name = getattr(ask, "__qualname__", None) or type(ask).__qualname__
    return f"ask:{name}"
