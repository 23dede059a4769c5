"""Per-invocation state of structured output: the tool, the results it recorded, forcing and failure counts."""

import json
import logging
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from ...types.content import Message
from ...types.exceptions import StructuredOutputException, StructuredOutputValidationError
from ...types.tools import ToolChoice, ToolSpec, ToolUse
from .structured_output_tool import StructuredOutputTool, validation_feedback

if TYPE_CHECKING:
    from ..registry import ToolRegistry

logger = logging.getLogger(__name__)

DEFAULT_STRUCTURED_OUTPUT_PROMPT = "You must format the previous response as structured output."
# How many invalid answers in a row the model may give before the run stops with a typed error.
MAX_VALIDATION_ATTEMPTS = 3
CONTEXT_KEY = "structured_output"

_NO_STRUCTURED_OUTPUT_MESSAGE = (
    "The model did not produce structured output: it neither called the structured output tool nor returned a JSON "
    "object."
)


def json_object_from_message(message: Message) -> dict[str, Any] | None:
    """Parse a message's text as one JSON object (how a model answers when it cannot be forced to call a tool)."""
    text = "".join(block.get("text", "") for block in message.get("content", [])).strip()
    if text.startswith("```"):  # a fenced block: keep what is inside the fence
        text = text.strip("`").removeprefix("json").strip()
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


class StructuredOutputContext:
    """Structured output for one invocation.

    Args:
        structured_output_model: The pydantic model to produce, or None (structured output off).
        structured_output_prompt: The user message that asks the model for the output when it ended its turn
            without calling the tool.
        max_attempts: Invalid answers in a row allowed before `StructuredOutputValidationError`.
    """

    def __init__(
        self,
        structured_output_model: type[BaseModel] | None = None,
        structured_output_prompt: str | None = None,
        max_attempts: int = MAX_VALIDATION_ATTEMPTS,
    ) -> None:
        self.structured_output_model = structured_output_model
        self.structured_output_prompt = structured_output_prompt or DEFAULT_STRUCTURED_OUTPUT_PROMPT
        self.max_attempts = max_attempts
        self.results: dict[str, BaseModel] = {}
        self.failures = 0
        self.last_error = ""
        self.forced_mode = False
        self.force_attempted = False
        self.tool_choice: ToolChoice | None = None
        self.structured_output_tool: StructuredOutputTool | None = None
        self._registered = False
        if structured_output_model is not None:
            self.structured_output_tool = StructuredOutputTool(structured_output_model, self._record)

    @property
    def is_enabled(self) -> bool:
        """Whether this invocation produces structured output."""
        return self.structured_output_model is not None

    @property
    def expected_tool_name(self) -> str | None:
        """The structured output tool's name, or None."""
        return self.structured_output_tool.tool_name if self.structured_output_tool else None

    def get_tool_spec(self) -> ToolSpec | None:
        """Return the structured output tool's spec, or None."""
        return self.structured_output_tool.tool_spec if self.structured_output_tool else None

    def _record(self, tool_use_id: str, outcome: BaseModel | ValidationError) -> None:
        if isinstance(outcome, BaseModel):
            self.results[tool_use_id] = outcome
        else:
            self.last_error = validation_feedback(self.expected_tool_name or "", outcome)

    def set_forced_mode(self) -> None:
        """Require the model's next answer to be a call of the structured output tool."""
        if self.structured_output_tool is None:
            return
        self.forced_mode = True
        self.force_attempted = True
        self.tool_choice = {"tool": {"name": self.structured_output_tool.tool_name}}

    def request(self, tool_specs: list[ToolSpec] | None) -> tuple[list[ToolSpec] | None, ToolChoice | None]:
        """Return the tool specs and tool choice of the next model call.

        When forcing, only the structured output tool is offered: a provider that ignores ``tool_choice`` can then
        still only call that tool.
        """
        if self.forced_mode and self.structured_output_tool is not None:
            return [self.structured_output_tool.tool_spec], self.tool_choice
        return tool_specs, None

    def extract_result(self, tool_uses: list[ToolUse], results_message: Message | None = None) -> BaseModel | None:
        """Return (and forget) the validated output of the structured output call among ``tool_uses``, if any.

        A call that validated in an earlier invocation (the batch was paused by another tool's interrupt, maybe
        in another process) has no recorded instance; its input is validated again when ``results_message`` shows
        that its result was a success.
        """
        name = self.expected_tool_name
        succeeded: set[str] = set()
        if results_message is not None:
            for block in results_message.get("content", []):
                result = block.get("toolResult")
                if result is not None and result.get("status") == "success":
                    succeeded.add(str(result.get("toolUseId")))
        for tool_use in tool_uses:
            if tool_use.get("name") != name:
                continue
            tool_use_id = str(tool_use.get("toolUseId", ""))
            recorded = self.results.pop(tool_use_id, None)
            if recorded is not None:
                return recorded
            if tool_use_id in succeeded and self.structured_output_model is not None:
                try:
                    return self.structured_output_model.model_validate(tool_use.get("input") or {})
                except ValidationError:
                    continue
        return None

    def calls_tool(self, tool_uses: list[ToolUse]) -> bool:
        """Whether ``tool_uses`` include a call of the structured output tool."""
        name = self.expected_tool_name
        return name is not None and any(tool_use.get("name") == name for tool_use in tool_uses)

    def count_failure(self, detail: str | None = None) -> None:
        """Count one invalid answer; raise once the model has had its last chance.

        Raises:
            StructuredOutputValidationError: ``max_attempts`` invalid answers in a row.
        """
        if detail is not None:
            self.last_error = detail
        self.failures += 1
        logger.debug(
            "failures=<%d>, max_attempts=<%d> | structured output failed validation", self.failures, self.max_attempts
        )
        if self.failures >= self.max_attempts:
            model = self.structured_output_model
            raise StructuredOutputValidationError(
                model.__name__ if model else "?", self.failures, self.last_error or _NO_STRUCTURED_OUTPUT_MESSAGE
            )

    def result_from_text(self, message: Message) -> BaseModel | str:
        """Validate the text answer of a forced turn; return the output, or feedback for the model.

        Raises:
            StructuredOutputException: Structured output is not enabled.
        """
        model = self.structured_output_model
        if model is None:
            raise StructuredOutputException(_NO_STRUCTURED_OUTPUT_MESSAGE)
        data = json_object_from_message(message)
        if data is None:
            return (
                f"{_NO_STRUCTURED_OUTPUT_MESSAGE} Call the {self.expected_tool_name} tool with the output as its input."
            )
        try:
            return model.model_validate(data)
        except ValidationError as error:
            return validation_feedback(self.expected_tool_name or model.__name__, error)

    def register_tool(self, registry: "ToolRegistry") -> None:
        """Add the structured output tool to ``registry`` for this invocation."""
        if self.structured_output_tool is not None and not self._registered:
            registry.register_tool(self.structured_output_tool)
            self._registered = True

    def cleanup(self, registry: "ToolRegistry") -> None:
        """Remove the structured output tool from ``registry``."""
        if self.structured_output_tool is not None and self._registered:
            registry.unregister_tool(self.structured_output_tool.tool_name)
            self._registered = False

    def to_state(self) -> dict[str, Any]:
        """Return what a paused run must remember to finish its structured output after a resume."""
        return {
            "tool_name": self.expected_tool_name,
            "failures": self.failures,
            "forced": self.forced_mode,
        }

    def load_state(self, state: Any) -> None:
        """Continue from `to_state` output saved when the run paused, if it was for the same output model."""
        if not isinstance(state, dict) or state.get("tool_name") != self.expected_tool_name:
            return
        failures = state.get("failures")
        if isinstance(failures, int) and not isinstance(failures, bool) and failures >= 0:
            self.failures = failures
        if state.get("forced") is True:
            self.set_forced_mode()
