"""`InterventionHandler`: the base class of a control layer that answers lifecycle events with typed actions.

A handler overrides, at class level, the lifecycle methods it cares about; only those are called (the registry
compares each method with the base class's). Every method may be a plain ``def`` returning an action or an
``async def``: the registry awaits what it gets back.
"""

from abc import ABC, abstractmethod
from collections.abc import Awaitable
from typing import Any, Literal, TypeAlias, TypeVar

from ..hooks.events import (
    AfterModelCallEvent,
    AfterToolCallEvent,
    BeforeInvocationEvent,
    BeforeModelCallEvent,
    BeforeToolCallEvent,
)
from .actions import Confirm, Deny, Guide, Proceed, Transform

_T = TypeVar("_T")
# An override returns its action directly (``def``) or as a coroutine (``async def``).
_MaybeAwaitable: TypeAlias = _T | Awaitable[_T]

OnError: TypeAlias = Literal["throw", "proceed", "deny"]
"""What happens when a handler raises: ``"throw"`` re-raises (the default: a broken check stops the run),
``"proceed"`` logs it and continues as if the handler returned `Proceed` (fail-open: the check is skipped), and
``"deny"`` logs it and treats it as a `Deny` (fail-closed)."""

ON_ERROR_MODES: tuple[str, ...] = ("throw", "proceed", "deny")

LIFECYCLE_METHODS: tuple[str, ...] = (
    "before_invocation",
    "before_tool_call",
    "after_tool_call",
    "before_model_call",
    "after_model_call",
)


class InterventionHandler(ABC):
    """Base class of intervention handlers (authorization, guardrails, steering, approvals).

    Subclasses define ``name`` (unique among an agent's handlers) and override the lifecycle methods they need;
    the defaults return `Proceed`. Handlers run in the order they were given to ``Agent(interventions=[...])``:
    put cheap checks first, since a `Deny` skips the handlers after it.

    Example:
        ```python
        class NoProduction(InterventionHandler):
            name = "no-production"

            def before_tool_call(self, event):
                if event.tool_use["input"].get("env") == "production":
                    return Deny(reason="production is off limits")
                return Proceed()

        agent = Agent(model=model, tools=[deploy], interventions=[NoProduction()])
        ```
    """

    @property
    @abstractmethod
    def name(self) -> str:
        """Unique name of the handler among the agent's handlers (also the name of the interrupts it raises)."""

    @property
    def on_error(self) -> OnError:
        """What to do when this handler raises; ``"throw"`` unless overridden."""
        return "throw"

    def before_invocation(
        self, event: BeforeInvocationEvent, **kwargs: Any
    ) -> _MaybeAwaitable[Proceed | Deny | Guide | Transform]:
        """Decide before an invocation starts."""
        return Proceed()

    def before_tool_call(
        self, event: BeforeToolCallEvent, **kwargs: Any
    ) -> _MaybeAwaitable[Proceed | Deny | Guide | Confirm | Transform]:
        """Decide before a tool runs."""
        return Proceed()

    def after_tool_call(self, event: AfterToolCallEvent, **kwargs: Any) -> _MaybeAwaitable[Proceed | Transform]:
        """Decide after a tool ran (or was cancelled)."""
        return Proceed()

    def before_model_call(
        self, event: BeforeModelCallEvent, **kwargs: Any
    ) -> _MaybeAwaitable[Proceed | Deny | Guide | Transform]:
        """Decide before the model is called."""
        return Proceed()

    def after_model_call(
        self, event: AfterModelCallEvent, **kwargs: Any
    ) -> _MaybeAwaitable[Proceed | Guide | Transform]:
        """Decide after the model answered (or failed)."""
        return Proceed()


__all__ = ["LIFECYCLE_METHODS", "ON_ERROR_MODES", "InterventionHandler", "OnError"]
