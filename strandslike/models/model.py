"""The `Model` base class: what a model provider implements to drive an agent.

The interface mirrors `strands.models.Model`, so a provider written for Strands ports by changing its imports.
"""

from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterable
from typing import TYPE_CHECKING, Any, TypeVar

from ..types.content import Messages
from ..types.streaming import StreamEvent
from ..types.tools import ToolChoice, ToolSpec

if TYPE_CHECKING:
    from pydantic import BaseModel

T = TypeVar("T", bound="BaseModel")


class Model(ABC):
    """Base class of model providers.

    A provider turns a conversation into a stream of Bedrock Converse events (``messageStart``,
    ``contentBlockStart``/``Delta``/``Stop``, ``messageStop``, ``metadata``); the agent parses that stream into the
    assistant message, stop reason and usage. Providers keep no conversation state of their own: the agent passes
    the whole history on every call.
    """

    @abstractmethod
    def update_config(self, **model_config: Any) -> None:
        """Merge ``model_config`` into the provider's configuration.

        Args:
            **model_config: Settings to change, e.g. ``model_id`` or ``temperature``.
        """

    @abstractmethod
    def get_config(self) -> Any:
        """Return the provider's current configuration."""

    @abstractmethod
    def stream(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        *,
        tool_choice: ToolChoice | None = None,
        **kwargs: Any,
    ) -> AsyncIterable[StreamEvent]:
        """Stream the model's reply to ``messages`` as Bedrock Converse events.

        Implementations are async generators. The agent passes further keywords (``system_prompt_content``,
        ``invocation_state``, ``cancel_signal``, ``model_state`` and others as Strands adds them), so every
        implementation must accept ``**kwargs`` and ignore what it does not use.

        Args:
            messages: The conversation so far; treat it as read-only.
            tool_specs: Tools the model may call, or None when the agent has none.
            system_prompt: The system prompt, if any.
            tool_choice: How the model must choose tools (Bedrock ``toolChoice`` shape), if constrained.
            **kwargs: Further per-call arguments from the agent.

        Returns:
            An async iterable of stream events.
        """

    def structured_output(
        self,
        output_model: type[T],
        prompt: Messages,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncGenerator[dict[str, T | Any], None]:
        """Stream events that end with ``{"output": <output_model instance>}``.

        Providers that support structured output override this with an async generator. The base class raises
        at call time rather than when iterated, so the mistake surfaces where the call is made.

        Args:
            output_model: The pydantic model to fill in.
            prompt: The conversation to answer.
            system_prompt: The system prompt, if any.
            **kwargs: Further per-call arguments.

        Raises:
            NotImplementedError: Always, unless a subclass overrides this method.
        """
        raise NotImplementedError(
            f"{type(self).__name__} does not support structured output (requested {output_model.__name__}). "
            "Use a provider that implements Model.structured_output, or override it in your Model subclass."
        )

    @property
    def stateful(self) -> bool:
        """Whether the provider keeps conversation state server-side (False: the full history is sent each call)."""
        return False


__all__ = ["Model"]
