"""`ModelRetryStrategy`: retry throttled model calls with bounded exponential backoff and jitter.

A hook provider, as in Strands: it listens to `AfterModelCallEvent`, and when the call failed with a retryable
exception it waits, then sets ``event.retry`` so the loop calls the model again. Every retry therefore passes
through the hooks (the event carries the exception) and is counted in ``agent.event_loop_metrics``.
"""

from collections.abc import Awaitable, Callable
from typing import Any

from .._log import get_logger
from ..hooks.events import AfterInvocationEvent, AfterModelCallEvent
from ..hooks.registry import HookProvider, HookRegistry
from ..types.exceptions import ModelThrottledException, StrandslikeError

logger = get_logger(__name__)  # logging is imported on first use

# Strands' defaults (agent.py: MAX_ATTEMPTS, INITIAL_DELAY, MAX_DELAY).
MAX_ATTEMPTS = 6
INITIAL_DELAY = 4
MAX_DELAY = 240


class InvalidRetryStrategyError(StrandslikeError, ValueError):
    """A retry strategy was configured with values it cannot work with."""

    code = "INVALID_RETRY_STRATEGY"


class ModelRetryStrategy(HookProvider):
    """Retry model calls that fail with a retryable exception, waiting longer after each failure.

    The wait before retry ``n`` (0-based) is ``min(max_delay, initial_delay * 2**n)``, shortened by a random
    fraction of at most ``jitter`` so that many agents throttled at once do not retry in lockstep. With the
    defaults the waits are about 4, 8, 16, 32 and 64 seconds, and the sixth failure is raised. A successful call,
    or the end of the invocation, starts the count again.

    Subclass and override `is_retryable` to retry more (or fewer) kinds of errors.

    Args:
        max_attempts: Total model attempts before the exception is raised (1: never retry).
        initial_delay: Seconds to wait before the first retry.
        max_delay: The longest wait, in seconds.
        jitter: The largest fraction (0 to 1) taken off each wait at random; 0 gives Strands' exact schedule.
        sleep: Awaitable sleep used between attempts (default `anyio.sleep`); tests pass a fake clock's.
        rng: Returns a float in [0, 1) for the jitter (default `random.random`).

    Raises:
        InvalidRetryStrategyError: A value is out of range.
    """

    def __init__(
        self,
        *,
        max_attempts: int = MAX_ATTEMPTS,
        initial_delay: float = INITIAL_DELAY,
        max_delay: float = MAX_DELAY,
        jitter: float = 0.25,
        sleep: Callable[[float], Awaitable[Any]] | None = None,
        rng: Callable[[], float] | None = None,
    ) -> None:
        if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or max_attempts < 1:
            raise InvalidRetryStrategyError(f"max_attempts must be an integer of at least 1, got {max_attempts!r}.")
        for name, value in (("initial_delay", initial_delay), ("max_delay", max_delay)):
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise InvalidRetryStrategyError(f"{name} must be a number of seconds >= 0, got {value!r}.")
        if max_delay < initial_delay:
            raise InvalidRetryStrategyError(
                f"max_delay ({max_delay!r}) must not be smaller than initial_delay ({initial_delay!r})."
            )
        if isinstance(jitter, bool) or not isinstance(jitter, int | float) or not 0 <= jitter <= 1:
            raise InvalidRetryStrategyError(f"jitter must be a fraction between 0 and 1, got {jitter!r}.")
        self._max_attempts = max_attempts
        self._initial_delay = initial_delay
        self._max_delay = max_delay
        self._jitter = jitter
        self._sleep = sleep or _anyio_sleep
        self._rng = rng or _random
        self._current_attempt = 0
        self.last_delay: float | None = None

    @property
    def max_attempts(self) -> int:
        """Total model attempts before the exception is raised."""
        return self._max_attempts

    def is_retryable(self, exception: Exception) -> bool:
        """Return whether a failed model call should be retried (default: `ModelThrottledException` only).

        Args:
            exception: The exception the model call raised.
        """
        return isinstance(exception, ModelThrottledException)

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        """Register the callbacks on `AfterModelCallEvent` and `AfterInvocationEvent`.

        Args:
            registry: The agent's hook registry.
            **kwargs: Reserved for future use.
        """
        registry.add_callback(AfterModelCallEvent, self._handle_after_model_call)
        registry.add_callback(AfterInvocationEvent, self._handle_after_invocation)

    def calculate_delay(self, attempt: int) -> float:
        """Return the wait in seconds before retry ``attempt`` (0-based), jitter included.

        Args:
            attempt: How many retries came before this one.
        """
        capped = float(min(self._max_delay, self._initial_delay * 2 ** min(attempt, 62)))
        return capped * (1 - self._jitter * self._rng())

    def _reset(self) -> None:
        self._current_attempt = 0

    def _handle_after_invocation(self, event: AfterInvocationEvent) -> None:
        self._reset()

    async def _handle_after_model_call(self, event: AfterModelCallEvent) -> None:
        self.last_delay = None
        if event.retry:  # another hook already asked for a retry
            return
        if event.exception is None:
            self._reset()
            return
        if not self.is_retryable(event.exception):
            return
        attempt = self._current_attempt
        self._current_attempt += 1
        if self._current_attempt >= self._max_attempts:
            logger.debug(
                "current_attempt=<%d>, max_attempts=<%d> | max retry attempts reached, not retrying",
                self._current_attempt,
                self._max_attempts,
            )
            return
        delay = self.calculate_delay(attempt)
        logger.debug(
            "retry_delay_seconds=<%.3f>, max_attempts=<%d>, current_attempt=<%d> | %s encountered | delaying "
            "before next retry",
            delay,
            self._max_attempts,
            self._current_attempt,
            type(event.exception).__name__,
        )
        await self._sleep(delay)
        self.last_delay = delay
        event.retry = True


__all__ = ["INITIAL_DELAY", "MAX_ATTEMPTS", "MAX_DELAY", "InvalidRetryStrategyError", "ModelRetryStrategy"]


# anyio and random are imported by the first retry, not with every agent (each agent has a retry strategy).
async def _anyio_sleep(delay: float) -> None:
    import anyio

    await anyio.sleep(delay)


def _random() -> float:
    import random

    return random.random()
