"""Interrupt-only tools (Genkit's ``defineInterrupt``): tools the model calls to ask the user something.

Calling one always pauses the run with an interrupt bound to that tool call (named after the tool, with the call's
input as its reason); the answer, validated against the response type when one is declared, becomes the tool
result the model reads. The function body of an ``@interrupt_tool`` never runs: its signature and docstring only
describe the question.
"""

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, get_type_hints, overload

from .._schema import first_schema_error
from ..tools._result import ToolResultEvent
from ..types.interrupt import _adapter
from ..types.tools import AgentTool, ToolContext, ToolGenerator, ToolSpec, ToolUse

if TYPE_CHECKING:
    from pydantic import BaseModel


class InterruptTool(AgentTool):
    """A tool whose only effect is to pause the run and return the user's answer as its result."""

    def __init__(
        self,
        name: str,
        description: str,
        input_schema: dict[str, Any],
        *,
        response_type: Any = None,
        message: str | None = None,
        kind: str = "input_required",
    ) -> None:
        """Describe the question: its name, what it asks, the input the model gives and the answer expected."""
        self._spec: ToolSpec = {"name": name, "description": description, "inputSchema": {"json": input_schema}}
        self._schema = input_schema
        self._response_type = response_type
        self._message = message
        self._kind = kind

    @property
    def tool_name(self) -> str:
        """The tool's name (also the name of the interrupt it raises)."""
        return self._spec["name"]

    @property
    def tool_spec(self) -> ToolSpec:
        """The spec shown to the model."""
        return self._spec

    @property
    def tool_type(self) -> str:
        """``"interrupt"``."""
        return "interrupt"

    @property
    def idempotent(self) -> bool:
        """Always True: its body only asks for the answer, so asking again after a crash is safe."""
        return True

    async def stream(self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any) -> ToolGenerator:
        """Pause for the answer; once answered, yield it as the tool result."""
        tool_use_id = tool_use["toolUseId"]
        problem = first_schema_error(self._schema, tool_use["input"])
        if problem is not None:
            text = f"Error: Validation failed for input parameters: {problem}"
            yield ToolResultEvent({"toolUseId": tool_use_id, "status": "error", "content": [{"text": text}]})
            return
        context = ToolContext(tool_use, invocation_state["agent"], invocation_state)
        answer = context.interrupt(
            self.tool_name,
            reason=tool_use["input"],
            message=self._message,
            response_type=self._response_type,
            kind=self._kind,
        )
        if self._response_type is not None:
            answer = _adapter(self._response_type).dump_python(answer, mode="json")
        content: list[Any] = [{"text": answer}] if isinstance(answer, str) else [{"json": answer}]
        yield ToolResultEvent({"toolUseId": tool_use_id, "status": "success", "content": content})


def define_interrupt(
    name: str,
    description: str,
    input_schema: "type[BaseModel] | dict[str, Any]",
    *,
    response_type: Any = None,
    message: str | None = None,
    kind: str = "input_required",
) -> InterruptTool:
    """Declare an interrupt-only tool from a name, a description and an input schema (pydantic model or JSON Schema).

    Example:
        ```python
        ask_user = define_interrupt("ask_user", "Ask the user a question.", Question, response_type=Answer)
        agent = Agent(model=..., tools=[ask_user])
        ```
    """
    schema = input_schema.model_json_schema() if isinstance(input_schema, type) else dict(input_schema)  # pydantic
    return InterruptTool(name, description, schema, response_type=response_type, message=message, kind=kind)


@overload
def interrupt_tool(func: Callable[..., Any], /) -> InterruptTool: ...


@overload
def interrupt_tool(
    *, name: str | None = None, description: str | None = None, message: str | None = None, kind: str = "input_required"
) -> Callable[[Callable[..., Any]], InterruptTool]: ...


def interrupt_tool(
    func: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    message: str | None = None,
    kind: str = "input_required",
) -> InterruptTool | Callable[[Callable[..., Any]], InterruptTool]:
    """Declare an interrupt-only tool from a function's signature and docstring; its return type is the answer type.

    Example:
        ```python
        @interrupt_tool
        def ask_user(question: str, options: list[str]) -> Answer:
            '''Ask the user a clarification question.'''
        ```
    """

    def build(function: Callable[..., Any]) -> InterruptTool:
        from ..tools.decorator import tool

        spec = tool(name=name, description=description)(function).tool_spec
        returns = get_type_hints(function).get("return")
        response_type = None if returns in (None, type(None), Any) else returns
        schema = spec["inputSchema"]["json"]
        return InterruptTool(
            spec["name"], spec["description"], schema, response_type=response_type, message=message, kind=kind
        )

    return build(func) if func is not None else build
