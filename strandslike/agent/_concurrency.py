"""The invocation lock and in-flight idempotency tokens of an agent (Strands 1.62's concurrency controller).

In ``THROW`` mode one invocation runs at a time: a second one raises `ConcurrencyException`, unless it carries the
``idempotency_token`` of the one in flight, in which case it waits for that invocation and returns its result (or
raises its error). ``UNSAFE_REENTRANT`` takes no lock and ignores tokens. Blocking calls may run invocations in
different threads and event loops, so the bookkeeping uses thread primitives and a `concurrent.futures.Future`.
"""

import threading
from typing import TYPE_CHECKING, Any

from ..types.agent import ConcurrentInvocationMode
from ..types.exceptions import IdempotencyAbortedError

if TYPE_CHECKING:
    import concurrent.futures

    from .agent_result import AgentResult


class _Inflight:
    """The invocation a token belongs to; duplicates wait for it to settle."""

    __slots__ = ("_done", "error", "result")

    def __init__(self) -> None:
        self.result: AgentResult | None = None
        self.error: BaseException | None = None
        self._done = _future()

    async def outcome(self) -> "AgentResult":
        """Wait for the primary invocation; return its result or raise its error.

        Raises:
            IdempotencyAbortedError: The primary invocation ended without a result (cancelled, or lost the lock).
        """
        if not self._done.done():
            import asyncio

            try:
                asyncio.get_running_loop()
            except RuntimeError:  # another event loop library (trio): wait in a worker thread
                import anyio.to_thread

                await anyio.to_thread.run_sync(self._done.result)
            else:
                # No thread is held while waiting. Shielded: a waiter that is cancelled must not cancel the signal
                # the other waiters share.
                await asyncio.shield(asyncio.wrap_future(self._done))
        if self.error is not None:
            raise self.error
        if self.result is None:
            raise IdempotencyAbortedError("Primary invocation was aborted before producing a result.")
        return self.result

    def settle(self, result: "AgentResult | None", error: BaseException | None) -> None:
        if self._done.done():
            return
        self.result, self.error = result, error
        self._done.set_result(None)


def _future() -> "concurrent.futures.Future[None]":
    import concurrent.futures  # only for idempotency tokens: not imported with strandslike

    return concurrent.futures.Future()


class Begin:
    """What `ConcurrencyController.begin` decided: wait on a duplicate, refuse, or run (holding the token)."""

    __slots__ = ("lock_acquired", "registered_token", "waiting_on")

    def __init__(self, waiting_on: _Inflight | None, registered_token: Any, lock_acquired: bool) -> None:
        self.waiting_on = waiting_on
        self.registered_token = registered_token
        self.lock_acquired = lock_acquired


class ConcurrencyController:
    """Owns an agent's invocation lock and the token of the invocation in flight."""

    def __init__(self, mode: ConcurrentInvocationMode) -> None:
        self.mode = mode
        self.lock = threading.Lock()
        self._token: Any = None
        self._inflight: _Inflight | None = None
        self._token_lock = threading.Lock()

    def begin(self, idempotency_token: Any) -> Begin:
        """Register the token (or find the invocation it duplicates) and take the lock (``THROW`` mode)."""
        if idempotency_token is not None and self.mode == ConcurrentInvocationMode.THROW:
            with self._token_lock:
                if self._token is not None and self._token == idempotency_token:  # matched with ==, as in Strands
                    return Begin(waiting_on=self._inflight, registered_token=None, lock_acquired=False)
                registered = None
                if self._token is None:  # a different token in flight: this call will find the lock taken
                    self._inflight, self._token, registered = _Inflight(), idempotency_token, idempotency_token
        else:
            registered = None
        acquired = self.lock.acquire(blocking=False) if self.mode == ConcurrentInvocationMode.THROW else True
        return Begin(waiting_on=None, registered_token=registered, lock_acquired=acquired)

    def complete(self, registered_token: Any, *, result: "AgentResult | None" = None, error: Any = None) -> None:
        """Wake the duplicates waiting on the token with the outcome, and free the token (first call wins)."""
        if registered_token is None:
            return
        with self._token_lock:
            if self._token is None or self._token != registered_token:
                return
            inflight, self._inflight, self._token = self._inflight, None, None
        if inflight is not None:
            inflight.settle(result, error)

    def release(self) -> None:
        """Release the invocation lock (``THROW`` mode)."""
        if self.mode == ConcurrentInvocationMode.THROW and self.lock.locked():
            self.lock.release()
