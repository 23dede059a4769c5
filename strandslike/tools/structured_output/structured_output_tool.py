"""`StructuredOutputTool`: the tool a model calls to hand over its structured output."""

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ValidationError

from ...types.tools import AgentTool, ToolGenerator, ToolResult, ToolSpec, ToolUse
from .structured_output_utils import convert_pydantic_to_tool_spec

_SPEC_CACHE: dict[type[BaseModel], ToolSpec] = {}


def validation_feedback(tool_name: str, error: ValidationError) -> str:
    """Describe a validation failure so the model can correct its next call."""
    lines = []
    for detail in error.errors():
        path = " -> ".join(str(part) for part in detail["loc"]) or "root"
        lines.append(f"- Field '{path}': {detail['msg']}")
    return f"Validation failed for {tool_name}. Please fix the following errors:\n" + "\n".join(lines)


class StructuredOutputTool(AgentTool):
    """A tool whose input is the output model: calling it validates the input and records the result.

    Args:
        structured_output_model: The pydantic model the model must fill in.
        on_result: Called with ``(tool_use_id, instance)`` when a call validates, or ``(tool_use_id, error)``
            when it does not.
    """

    def __init__(
        self,
        structured_output_model: type[BaseModel],
        on_result: Callable[[str, BaseModel | ValidationError], None] | None = None,
    ) -> None:
        self._model = structured_output_model
        spec = _SPEC_CACHE.get(structured_output_model)
        if spec is None:
            spec = _SPEC_CACHE[structured_output_model] = convert_pydantic_to_tool_spec(structured_output_model)
        self._spec: ToolSpec = {
            **spec,
            "description": (
                "IMPORTANT: This StructuredOutputTool should only be invoked as the last and final tool before "
                f"returning the completed result to the caller. <description>{spec['description']}</description>"
            ),
        }
        self._on_result = on_result

    @property
    def tool_name(self) -> str:
        """The tool name: the output model's class name."""
        return self._spec["name"]

    @property
    def tool_spec(self) -> ToolSpec:
        """The spec sent to the model."""
        return self._spec

    @property
    def tool_type(self) -> str:
        """Always ``"structured_output"``."""
        return "structured_output"

    @property
    def structured_output_model(self) -> type[BaseModel]:
        """The pydantic model this tool validates against."""
        return self._model

    async def stream(self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any) -> ToolGenerator:
        """Validate the call's input against the output model and yield the tool result.

        Args:
            tool_use: The model's call; its input is the candidate output.
            invocation_state: Unused.
            **kwargs: Unused.

        Yields:
            One `ToolResult`: success, or an error listing what to fix.
        """
        tool_use_id = str(tool_use.get("toolUseId", ""))
        tool_input = tool_use.get("input")
        try:
            instance = self._model.model_validate(tool_input if tool_input is not None else {})
        except ValidationError as error:
            if self._on_result is not None:
                self._on_result(tool_use_id, error)
            failed: ToolResult = {
                "toolUseId": tool_use_id,
                "status": "error",
                "content": [{"text": validation_feedback(self.tool_name, error)}],
            }
            yield failed
            return
        if self._on_result is not None:
            self._on_result(tool_use_id, instance)
        done: ToolResult = {
            "toolUseId": tool_use_id,
            "status": "success",
            "content": [{"text": f"Successfully validated {self.tool_name} structured output"}],
        }
        yield done


__all__ = ["StructuredOutputTool", "validation_feedback"]
