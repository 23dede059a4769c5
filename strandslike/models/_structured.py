"""Structured output through a forced tool call: the way most providers (and `ScriptedModel`) produce it."""

from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from ..tools.structured_output._structured_output_context import json_object_from_message
from ..tools.structured_output.structured_output_utils import convert_pydantic_to_tool_spec
from ..types.content import Messages
from ._streaming import process_stream

if TYPE_CHECKING:
    from .model import Model

T = TypeVar("T", bound=BaseModel)


async def structured_output_via_tool(
    model: "Model",
    output_model: type[T],
    prompt: Messages,
    system_prompt: str | None = None,
    **kwargs: Any,
) -> AsyncGenerator[dict[str, Any], None]:
    """Ask ``model`` for one call of a tool whose input is ``output_model``; yield events, then the output.

    Yields each stream event as ``{"event": chunk}`` and finally ``{"output": <output_model instance>}``.

    Raises:
        ValueError: The model neither called the tool nor answered with a JSON object (Strands' error type).
        pydantic.ValidationError: The answer does not validate against ``output_model``.
    """
    tool_spec = convert_pydantic_to_tool_spec(output_model)
    events: list[dict[str, Any]] = []
    stream = model.stream(prompt, [tool_spec], system_prompt, tool_choice={"any": {}}, **kwargs)
    result = await process_stream(stream, events.append)
    for event in events:
        yield event
    message = result.message
    if result.stop_reason == "end_turn":
        data = json_object_from_message(message)
        if data is not None:
            yield {"output": output_model.model_validate(data)}
            return
    if result.stop_reason != "tool_use":
        raise ValueError(f'Model returned stop_reason: {result.stop_reason} instead of "tool_use".')
    for block in message["content"]:
        tool_use = block.get("toolUse")
        if tool_use is not None and tool_use["name"] == tool_spec["name"]:
            yield {"output": output_model.model_validate(tool_use["input"])}
            return
    raise ValueError(
        f"No valid tool use or tool use input was found in the {type(model).__name__} response: the model did not "
        f"call the {tool_spec['name']} tool."
    )
