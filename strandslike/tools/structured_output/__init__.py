"""Structured output: a tool whose input is the output model, and the loop's bookkeeping around it."""

from ._structured_output_context import DEFAULT_STRUCTURED_OUTPUT_PROMPT, StructuredOutputContext
from .structured_output_tool import StructuredOutputTool
from .structured_output_utils import convert_pydantic_to_tool_spec

__all__ = [
    "DEFAULT_STRUCTURED_OUTPUT_PROMPT",
    "StructuredOutputContext",
    "StructuredOutputTool",
    "convert_pydantic_to_tool_spec",
]
