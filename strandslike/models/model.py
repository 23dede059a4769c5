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

        The default asks the model, through `stream`, to call one tool whose input schema is ``output_model`` and
        validates that input (a JSON object answered as text is accepted too). Providers with a native mechanism
        override it.

        Args:
            output_model: The pydantic model to fill in.
            prompt: The conversation to answer.
            system_prompt: The system prompt, if any.
            **kwargs: Further per-call arguments, passed to `stream`.

        Returns:
            An async generator of ``{"event": chunk}`` dicts ending with ``{"output": instance}``.

        Raises:
            ValueError: The model did not call the tool (nor answer with a JSON object).
            pydantic.ValidationError: The answer does not validate against ``output_model``.
        """
        from ._structured import structured_output_via_tool

        return structured_output_via_tool(self, output_model, prompt, system_prompt, **kwargs)

    @property
    def stateful(self) -> bool:
        """Whether the provider keeps conversation state server-side (False: the full history is sent each call)."""
        return False


__all__ = ["Model"]
