"""Agent input types and the concurrent invocation modes."""

from enum import Enum
from typing import TypeAlias

from .content import ContentBlock, Messages
from .interrupt import InterruptResponseContent

AgentInput: TypeAlias = str | list[ContentBlock] | list[InterruptResponseContent] | Messages | None


class ConcurrentInvocationMode(str, Enum):  # noqa: UP042 - as Strands declares it (str() differs from StrEnum)
    """What an agent does when it is invoked while an invocation is running (Strands 1.62).

    Values:
        THROW: Raise `ConcurrencyException` (the default); a call carrying the running invocation's
            ``idempotency_token`` waits for it and returns its result instead.
        UNSAFE_REENTRANT: Take no lock and let invocations run concurrently; no guarantee about the result.
    """

    THROW = "throw"
    UNSAFE_REENTRANT = "unsafe_reentrant"


__all__ = ["AgentInput", "ConcurrentInvocationMode"]
