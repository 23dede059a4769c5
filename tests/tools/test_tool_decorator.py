import threading
import time
from typing import Annotated, Any, Literal, Optional

import anyio
import anyio.lowlevel
import pytest
from pydantic import BaseModel, Field, ValidationError

from strandslike.interrupt._state import _InterruptState
from strandslike.tools import AgentTool, DecoratedFunctionTool, ToolResultEvent, tool
from strandslike.types._events import ToolInterruptEvent, ToolStreamEvent
from strandslike.types.tools import ToolContext, ToolUse


class FakeAgent:
    def __init__(self) -> None:
        self._interrupt_state = _InterruptState()


def tool_use(name: str = "t", tool_input: Any = None, tool_use_id: str = "id-1") -> ToolUse:
    return {"toolUseId": tool_use_id, "name": name, "input": {} if tool_input is None else tool_input}


async def collect(agent_tool: AgentTool, tool_input: Any = None, invocation_state: dict[str, Any] | None = None):
    use = tool_use(agent_tool.tool_name, tool_input)
    return [event async for event in agent_tool.stream(use, invocation_state or {})]


async def run(agent_tool: AgentTool, tool_input: Any = None, invocation_state: dict[str, Any] | None = None):
    events = await collect(agent_tool, tool_input, invocation_state)
    final = events[-1]
    assert isinstance(final, ToolResultEvent)
    return final


def text_of(event: ToolResultEvent) -> str:
    return event.result["content"][0]["text"]


# --- spec generation -------------------------------------------------------------------------------------------


def test_spec_uses_docstring_without_args_section():
    @tool
    def search(query: str, limit: int = 10) -> list[str]:
        """Search the index.

        Use it for exact lookups.

        Args:
            query: What to look for,
                possibly several words.
            limit (int): How many hits to return.

        Returns:
            The matching ids.

        Raises:
            KeyError: Never.
        """
        return []

    spec = search.tool_spec
    assert spec["name"] == "search"
    assert spec["description"] == (
        "Search the index.\n\nUse it for exact lookups.\n\n"
        "Returns:\n    The matching ids.\n\nRaises:\n    KeyError: Never."
    )
    assert spec["inputSchema"] == {
        "json": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look for,\npossibly several words."},
                "limit": {"type": "integer", "default": 10, "description": "How many hits to return."},
            },
            "required": ["query"],
        }
    }


def test_description_falls_back_to_function_name():
    @tool
    def undocumented(x: int) -> int:
        return x

    assert undocumented.tool_spec["description"] == "undocumented"
    assert undocumented.tool_spec["inputSchema"]["json"]["properties"]["x"]["description"] == "Parameter x"


def test_arguments_and_parameters_sections_are_recognised():
    @tool
    def one(a: int) -> None:
        """One.

        Arguments:
            a: From Arguments.
        """

    @tool
    def two(a: int) -> None:
        """Two.

        Parameters:
            a: From Parameters.
        """

    assert one.tool_spec["description"] == "One."
    assert one.tool_spec["inputSchema"]["json"]["properties"]["a"]["description"] == "From Arguments."
    assert two.tool_spec["inputSchema"]["json"]["properties"]["a"]["description"] == "From Parameters."


def test_annotated_description_beats_docstring():
    @tool
    def f(a: Annotated[int, "from Annotated"], b: int) -> None:
        """F.

        Args:
            a: from docstring
            b: b from docstring
        """

    props = f.tool_spec["inputSchema"]["json"]["properties"]
    assert props["a"]["description"] == "from Annotated"
    assert props["b"]["description"] == "b from docstring"


def test_optional_with_default_collapses_but_required_nullable_keeps_any_of():
    @tool
    def f(required_nullable: Optional[int], maybe: Optional[str] = None, union: int | None = 3) -> None:  # noqa: UP045
        """F."""

    schema = f.tool_spec["inputSchema"]["json"]
    props = schema["properties"]
    assert props["maybe"] == {"type": "string", "default": None, "description": "Parameter maybe"}
    assert props["union"] == {"type": "integer", "default": 3, "description": "Parameter union"}
    assert props["required_nullable"]["anyOf"] == [{"type": "integer"}, {"type": "null"}]
    assert schema["required"] == ["required_nullable"]


def test_literal_becomes_enum():
    @tool
    def f(mode: Literal["fast", "slow"] = "fast") -> None:
        """F."""

    prop = f.tool_spec["inputSchema"]["json"]["properties"]["mode"]
    assert prop["enum"] == ["fast", "slow"]
    assert prop["default"] == "fast"


def test_field_default_is_supported():
    @tool
    def f(count: int = Field(5, description="How many", ge=1)) -> int:
        """F."""
        return count

    prop = f.tool_spec["inputSchema"]["json"]["properties"]["count"]
    assert prop == {"type": "integer", "default": 5, "description": "How many", "minimum": 1}


async def test_field_default_is_applied_and_validated():
    @tool
    def f(count: int = Field(5, ge=1)) -> int:
        """F."""
        return count

    assert text_of(await run(f, {})) == "5"
    assert text_of(await run(f, {"count": 0})).startswith("Error: Validation failed for input parameters:")


def test_nested_models_keep_titles_in_defs_only():
    class Address(BaseModel):
        street: str

    @tool
    def f(address: Address) -> None:
        """F."""

    schema = f.tool_spec["inputSchema"]["json"]
    assert "title" not in schema
    assert "title" not in schema["properties"]["address"]
    assert schema["$defs"]["Address"]["title"] == "Address"


def test_parameter_names_that_clash_with_pydantic_are_fine():
    # `json` shadows a BaseModel method and `model_id` is in pydantic's protected namespace; warnings are errors here.
    @tool
    def f(json: str, model_id: str, schema: int = 1) -> str:
        """F."""
        return json

    assert set(f.tool_spec["inputSchema"]["json"]["properties"]) == {"json", "model_id", "schema"}


def test_injected_and_bound_params_are_excluded():
    @tool(context=True)
    def f(agent: Any, tool_context: ToolContext, x: int) -> None:
        """F."""

    assert set(f.tool_spec["inputSchema"]["json"]["properties"]) == {"x"}


def test_unresolvable_hint_on_injected_param_is_tolerated():
    @tool
    def f(x: int, agent: "NotImportedAgent") -> int:  # type: ignore[name-defined]  # noqa: F821
        """F."""
        return x

    assert set(f.tool_spec["inputSchema"]["json"]["properties"]) == {"x"}


def test_unresolvable_hint_on_schema_param_names_the_fix():
    with pytest.raises(NameError, match=r"parameter 'x'.*import the type at module level"):

        @tool
        def f(x: "NotImported") -> None:  # type: ignore[name-defined]  # noqa: F821
            """F."""


def test_name_description_and_input_schema_overrides():
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}

    @tool(name="lookup", description="Custom description.", inputSchema={"json": schema})
    def f(q: str) -> str:
        """Docstring."""
        return q

    @tool(inputSchema=schema)
    def g(q: str) -> str:
        """G."""
        return q

    assert f.tool_name == "lookup"
    assert f.tool_spec == {"name": "lookup", "description": "Custom description.", "inputSchema": {"json": schema}}
    assert g.tool_spec["inputSchema"] == {"json": schema}


async def test_explicit_input_schema_skips_pydantic_validation():
    @tool(inputSchema={"json": {"type": "object"}})
    def f(n: Any, **rest: Any) -> str:
        """F."""
        return f"{n!r} {rest!r}"

    assert text_of(await run(f, {"n": "3", "extra": 1})) == "'3' {'extra': 1}"
    result = await run(f, ["not", "a", "dict"])
    assert result.result["status"] == "error"
    assert (
        text_of(result) == "Error: Validation failed for input parameters: tool input must be a JSON object, got list"
    )


def test_tool_properties_and_direct_call():
    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    assert isinstance(add, DecoratedFunctionTool)
    assert add.tool_type == "function"
    assert add.supports_hot_reload is True
    assert add(2, b=3) == 5
    assert add(a="x", b="y") == "xy"  # direct calls are the plain function: no validation
    assert add.__name__ == "add"
    assert add.get_display_properties() == {"Name": "add", "Type": "function", "Function": "add"}


# --- methods -------------------------------------------------------------------------------------------------------


class DeleteTool:
    def __init__(self, app_name: str) -> None:
        self.app_name = app_name

    @tool(context=True)
    def delete_files(self, tool_context: ToolContext, paths: list[str]) -> bool:
        """Delete files."""
        approval = tool_context.interrupt(f"{self.app_name}-approval", reason={"paths": paths})
        return approval.lower() == "y"

    @tool
    def describe(self, path: str) -> str:
        """Describe a file."""
        return f"{self.app_name}:{path}"


def test_method_binds_self_and_excludes_it_from_the_schema():
    bound = DeleteTool("myapp").delete_files
    assert isinstance(bound, DecoratedFunctionTool)
    assert bound.tool_name == "delete_files"
    assert set(bound.tool_spec["inputSchema"]["json"]["properties"]) == {"paths"}
    assert DeleteTool.describe.tool_name == "describe"  # class access gives the unbound tool
    assert DeleteTool("x").describe("p") == "x:p"


async def test_bound_method_runs_through_stream():
    assert text_of(await run(DeleteTool("myapp").describe, {"path": "a.txt"})) == "myapp:a.txt"


async def test_bound_method_with_context_interrupts():
    agent = FakeAgent()
    events = await collect(DeleteTool("myapp").delete_files, {"paths": ["a"]}, {"agent": agent})
    assert isinstance(events[-1], ToolInterruptEvent)
    assert events[-1].interrupts[0].name == "myapp-approval"
    assert events[-1].interrupts[0].reason == {"paths": ["a"]}


# --- execution -----------------------------------------------------------------------------------------------------


async def test_validation_failure_becomes_error_result():
    @tool
    def f(n: int) -> int:
        """F."""
        return n

    result = await run(f, {"n": "not a number"})
    assert result.result["status"] == "error"
    assert result.result["toolUseId"] == "id-1"
    assert text_of(result).startswith(
        "Error: Validation failed for input parameters: 1 validation error for FTool\nn\n"
    )
    assert isinstance(result.exception, ValidationError)


async def test_input_is_coerced_by_the_model():
    class Point(BaseModel):
        x: int

    @tool
    def f(n: int, point: Point) -> str:
        """F."""
        return f"{n + 1} {type(point).__name__} {point.x}"

    assert text_of(await run(f, {"n": "41", "point": {"x": "2"}})) == "42 Point 2"


async def test_sync_tool_runs_in_a_worker_thread():
    @tool
    def where() -> int:
        """Where."""
        return threading.get_ident()

    result = await run(where)
    assert result.result["status"] == "success"
    assert int(text_of(result)) != threading.get_ident()


async def test_async_tool_is_awaited():
    @tool
    async def double(n: int) -> int:
        """Double."""
        await anyio.lowlevel.checkpoint()
        return n * 2

    events = await collect(double, {"n": 21})
    assert events == [ToolResultEvent({"toolUseId": "id-1", "status": "success", "content": [{"text": "42"}]})]


async def test_async_generator_streams_progress_and_last_value_is_result():
    @tool
    async def progress(steps: int):
        """Progress."""
        for step in range(steps):
            yield {"progress": step}
        yield "done"

    events = await collect(progress, {"steps": 2})
    use = tool_use("progress", {"steps": 2})
    # Strands' shapes: every yielded value as a tool stream event (the last one too), then the result.
    assert events[:-1] == [
        {"type": "tool_stream", "tool_stream_event": {"tool_use": use, "data": {"progress": 0}}},
        {"type": "tool_stream", "tool_stream_event": {"tool_use": use, "data": {"progress": 1}}},
        {"type": "tool_stream", "tool_stream_event": {"tool_use": use, "data": "done"}},
    ]
    assert all(isinstance(event, ToolStreamEvent) for event in events[:-1])
    assert events[-1] == ToolResultEvent({"toolUseId": "id-1", "status": "success", "content": [{"text": "done"}]})
    assert events[-1] == {
        "type": "tool_result",
        "tool_result": {"toolUseId": "id-1", "status": "success", "content": [{"text": "done"}]},
    }


async def test_async_generator_error_after_progress():
    @tool
    async def failing():
        """Failing."""
        yield "step"
        raise RuntimeError("broke")

    events = await collect(failing)
    assert events[0]["tool_stream_event"]["data"] == "step"
    assert text_of(events[-1]) == "Error: RuntimeError - broke"
    assert isinstance(events[-1].exception, RuntimeError)


async def test_positional_only_parameters_are_passed_positionally():
    @tool
    def f(a: int, /, b: int) -> int:
        """F."""
        return a - b

    assert text_of(await run(f, {"a": 5, "b": 2})) == "3"


async def test_fifty_concurrent_sync_tools_are_not_capped_at_forty_threads():
    @tool
    def slow() -> str:
        """Slow."""
        time.sleep(0.05)
        return "ok"

    results: list[ToolResultEvent] = []

    async def one() -> None:
        results.append(await run(slow))

    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(50):
            tg.start_soon(one)
    elapsed = time.perf_counter() - start
    assert len(results) == 50
    assert all(r.result["status"] == "success" for r in results)
    assert elapsed < 0.5  # with 40 threads the last 10 would wait a whole extra round; loose bound on purpose


async def test_cancellation_propagates_without_a_result():
    @tool
    async def forever() -> None:
        """Forever."""
        await anyio.sleep_forever()

    events: list[Any] = []
    with anyio.move_on_after(0.05) as scope:
        async for event in forever.stream(tool_use("forever"), {}):
            events.append(event)
    assert scope.cancelled_caught
    assert events == []


# --- result wrapping -----------------------------------------------------------------------------------------------


class Weather(BaseModel):
    city: str
    temp: float


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("plain text", "plain text"),
        (None, "null"),
        ({"a": [1, 2]}, '{"a": [1, 2]}'),
        ("héllo", "héllo"),
        (["ü"], '["ü"]'),
        (Weather(city="Oslo", temp=3.5), '{"city":"Oslo","temp":3.5}'),
        (3.5, "3.5"),
        (True, "true"),
    ],
)
async def test_return_values_are_wrapped_as_text(value: Any, expected: str):
    @tool
    def f() -> Any:
        """F."""
        return value

    result = await run(f)
    assert result.result == {"toolUseId": "id-1", "status": "success", "content": [{"text": expected}]}
    assert result.exception is None


async def test_unserializable_value_falls_back_to_str():
    class Thing:
        def __str__(self) -> str:
            return "a thing"

    @tool
    def f() -> Thing:
        """F."""
        return Thing()

    assert text_of(await run(f)) == "a thing"


async def test_tool_result_dict_passes_through_with_tool_use_id_overwritten():
    returned = {"toolUseId": "wrong", "status": "error", "content": [{"json": {"x": 1}}]}

    @tool
    def f() -> dict[str, Any]:
        """F."""
        return returned

    result = await run(f)
    assert result.result == {"toolUseId": "id-1", "status": "error", "content": [{"json": {"x": 1}}]}
    assert returned["toolUseId"] == "wrong"  # the function's own dict is not mutated


async def test_value_error_text():
    @tool
    def f() -> None:
        """F."""
        raise ValueError("bad value")

    result = await run(f)
    assert result.result == {"toolUseId": "id-1", "status": "error", "content": [{"text": "Error: bad value"}]}
    assert isinstance(result.exception, ValueError)


async def test_other_exception_text_names_the_type():
    @tool
    async def f() -> None:
        """F."""
        raise KeyError("missing")

    result = await run(f)
    assert text_of(result) == "Error: KeyError - 'missing'"
    assert result.result["status"] == "error"
    assert isinstance(result.exception, KeyError)


# --- ToolContext and agent injection -------------------------------------------------------------------------------


async def test_context_true_injects_tool_context():
    seen: list[ToolContext] = []

    @tool(context=True)
    def f(x: int, tool_context: ToolContext) -> int:
        """F."""
        seen.append(tool_context)
        return x

    agent = FakeAgent()
    state = {"agent": agent, "custom": 1}
    assert text_of(await run(f, {"x": 1}, state)) == "1"
    (ctx,) = seen
    assert ctx.agent is agent
    assert ctx.invocation_state is state
    assert ctx.tool_use == tool_use("f", {"x": 1})
    assert isinstance(ctx.cancel_signal, threading.Event)
    assert not ctx.cancel_signal.is_set()


async def test_context_name_injects_into_that_parameter_and_uses_agent_cancel_signal():
    seen: list[ToolContext] = []

    @tool(context="ctx")
    async def f(ctx: ToolContext) -> str:
        """F."""
        seen.append(ctx)
        return "ok"

    agent = FakeAgent()
    agent._cancel_signal = threading.Event()  # type: ignore[attr-defined]
    await run(f, {}, {"agent": agent})
    assert seen[0].cancel_signal is agent._cancel_signal  # type: ignore[attr-defined]
    assert set(f.tool_spec["inputSchema"]["json"]["properties"]) == set()


async def test_agent_parameter_receives_the_agent():
    @tool
    def f(agent: Any) -> str:
        """F."""
        return type(agent).__name__

    assert text_of(await run(f, {}, {"agent": FakeAgent()})) == "FakeAgent"


async def test_interrupt_is_yielded_as_a_tool_interrupt_event():
    @tool(context=True)
    def ask(tool_context: ToolContext) -> str:
        """Ask."""
        return tool_context.interrupt("ask", reason="why")

    agent = FakeAgent()
    events = await collect(ask, {}, {"agent": agent})
    assert len(events) == 1
    assert isinstance(events[0], ToolInterruptEvent)
    (interrupt,) = events[0].interrupts
    assert interrupt.name == "ask"
    assert interrupt.id.startswith("v1:tool_call:id-1:")
    assert events[0] == {"tool_interrupt_event": {"tool_use": tool_use("ask"), "interrupts": [interrupt]}}
    assert list(agent._interrupt_state.interrupts) == [interrupt.id]


async def test_interrupt_in_an_async_generator_is_yielded_as_an_event():
    @tool(context=True)
    async def ask(tool_context: ToolContext):
        """Ask."""
        yield "before"
        yield tool_context.interrupt("ask")

    events = await collect(ask, {}, {"agent": FakeAgent()})
    assert events[0]["tool_stream_event"]["data"] == "before"
    assert isinstance(events[-1], ToolInterruptEvent)
    assert events[-1].interrupts[0].name == "ask"


async def test_answered_interrupt_returns_the_response():
    @tool(context=True)
    async def ask(tool_context: ToolContext) -> str:
        """Ask."""
        return tool_context.interrupt("ask", response="yes")

    assert text_of(await run(ask, {}, {"agent": FakeAgent()})) == "yes"


# --- decoration-time errors and the spec setter ----------------------------------------------------------------------


def test_tool_context_param_without_context_flag_is_rejected():
    with pytest.raises(ValueError, match=r"^@tool\(context\) must be set if passing in ToolContext param$"):

        @tool
        def f(tool_context: ToolContext) -> None:
            """F."""


def test_context_param_must_exist():
    with pytest.raises(
        ValueError, match=r"^param_name=<tool_context> \| ToolContext param must be named 'tool_context'$"
    ):

        @tool(context=True)
        def f(ctx: ToolContext) -> None:
            """F."""

    with pytest.raises(ValueError, match=r"^param_name=<ctx> \| ToolContext param must be named 'ctx'$"):

        @tool(context="ctx")
        def g(tool_context: ToolContext) -> None:
            """G."""


def test_empty_context_name_is_rejected():
    with pytest.raises(ValueError, match="cannot be empty"):
        tool(context=" ")


def test_tool_spec_setter():
    @tool
    def f(x: int) -> None:
        """F."""

    new_spec = {"name": "f", "description": "Better.", "inputSchema": f.tool_spec["inputSchema"]}
    f.tool_spec = new_spec  # type: ignore[assignment]
    assert f.tool_spec["description"] == "Better."
    with pytest.raises(ValueError, match=r"^cannot change tool name via tool_spec"):
        f.tool_spec = {**new_spec, "name": "g"}  # type: ignore[assignment]
    with pytest.raises(ValueError, match="description"):
        f.tool_spec = {"name": "f", "inputSchema": {}}  # type: ignore[assignment, typeddict-item]
    with pytest.raises(ValueError, match="inputSchema"):
        f.tool_spec = {"name": "f", "description": "x"}  # type: ignore[assignment, typeddict-item]
