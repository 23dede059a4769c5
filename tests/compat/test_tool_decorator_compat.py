"""Issue 12, item 2: @tool reads docstrings as Strands does (docstring_parser), refuses Field in Annotated, and
`tool.stream(...)` yields Strands' event dicts."""

from typing import Annotated, Any

import pytest
from pydantic import Field

from strandslike import Agent, ToolContext, tool
from strandslike.models import ScriptedModel, text, tool_call
from strandslike.types._events import ToolInterruptEvent, ToolStreamEvent
from strandslike.types.events import ToolResultEvent


def properties(decorated: Any) -> dict[str, Any]:
    return decorated.tool_spec["inputSchema"]["json"]["properties"]


def test_rest_docstring_params_are_read_and_kept_out_of_the_description() -> None:
    @tool
    def convert(amount: float, currency: str) -> str:
        """Convert money.

        Uses today's rate.

        :param amount: How much to convert.
            Any positive amount.
        :type amount: float
        :param currency: The target currency code.
        :returns: The converted amount.
        :raises ValueError: For unknown currencies.
        """
        return ""

    assert properties(convert)["amount"]["description"] == "How much to convert.\nAny positive amount."
    assert properties(convert)["currency"]["description"] == "The target currency code."
    assert convert.tool_spec["description"] == (
        "Convert money.\n\nUses today's rate.\n\n"
        ":returns: The converted amount.\n:raises ValueError: For unknown currencies."
    )


def test_numpy_docstring_params_are_read_and_kept_out_of_the_description() -> None:
    @tool
    def scale(values: list[float], factor: float = 2.0) -> list[float]:
        """Scale values.

        Parameters
        ----------
        values : list of float
            The values to scale.
        factor : float, optional
            The factor.

        Returns
        -------
        list of float
            The scaled values.
        """
        return []

    assert properties(scale)["values"]["description"] == "The values to scale."
    assert properties(scale)["factor"]["description"] == "The factor."
    assert scale.tool_spec["description"] == "Scale values.\n\nReturns\n-------\nlist of float\n    The scaled values."


def test_google_docstring_as_strands_cuts_it() -> None:
    @tool
    def search(query: str, limit: int = 10) -> list[str]:
        """Search the index.

        Args:
            query: What to look for,
                possibly several words.
            limit (int): How many hits.

        More text after the arguments stays cut, as in Strands.

        Returns:
            The ids.
        """
        return []

    assert properties(search)["query"]["description"] == "What to look for,\npossibly several words."
    assert properties(search)["limit"]["description"] == "How many hits."
    assert search.tool_spec["description"] == "Search the index.\n\nReturns:\n    The ids."


def test_undocumented_parameters_and_precedence() -> None:
    @tool
    def f(a: Annotated[str, "first", "second"], b: int = Field(3, description="from Field"), c: int = 0) -> None:
        """F.

        Args:
            a: From the docstring.
            b: Also from the docstring.
        """

    assert properties(f)["a"]["description"] == "second"  # Annotated text wins; the last one, as in Strands
    assert properties(f)["b"]["description"] == "from Field"
    assert properties(f)["b"]["default"] == 3
    assert properties(f)["c"]["description"] == "Parameter c"


@pytest.mark.parametrize(
    "annotation",
    [Annotated[int, Field(default=3)], Annotated[int, Field(description="d")], Annotated[int, "d", Field(ge=0)]],
)
def test_field_inside_annotated_is_refused_as_in_strands(annotation: Any) -> None:
    def f(count: annotation) -> int:  # type: ignore[valid-type]
        """F."""
        return 0

    with pytest.raises(NotImplementedError, match=r"Using pydantic\.Field within Annotated is not yet supported"):
        tool(f)


async def test_stream_yields_strands_event_dicts() -> None:
    @tool
    async def progress(steps: int):
        """Report progress."""
        for step in range(steps):
            yield f"step {step}"

    use = {"toolUseId": "t1", "name": "progress", "input": {"steps": 2}}
    events = [event async for event in progress.stream(use, {})]
    assert events == [
        {"type": "tool_stream", "tool_stream_event": {"tool_use": use, "data": "step 0"}},
        {"type": "tool_stream", "tool_stream_event": {"tool_use": use, "data": "step 1"}},
        {
            "type": "tool_result",
            "tool_result": {"toolUseId": "t1", "status": "success", "content": [{"text": "step 1"}]},
        },
    ]
    assert isinstance(events[0], ToolStreamEvent)
    assert isinstance(events[-1], ToolResultEvent)
    assert events[-1].tool_result["status"] == "success"
    assert events[-1].tool_use_id == "t1"

    @tool
    def fails() -> None:
        """Fail."""
        raise RuntimeError("boom")

    (event,) = [e async for e in fails.stream({"toolUseId": "t2", "name": "fails", "input": {}}, {})]
    assert event == {
        "type": "tool_result",
        "tool_result": {"toolUseId": "t2", "status": "error", "content": [{"text": "Error: RuntimeError - boom"}]},
    }
    assert isinstance(event.exception, RuntimeError)


async def test_stream_reports_an_interrupt_as_a_tool_interrupt_event() -> None:
    @tool(context=True)
    def ask(tool_context: ToolContext) -> str:
        """Ask."""
        return str(tool_context.interrupt("question", reason="why?"))

    agent = Agent(model=ScriptedModel([]))
    use = {"toolUseId": "t3", "name": "ask", "input": {}}
    (event,) = [e async for e in ask.stream(use, {"agent": agent})]
    assert isinstance(event, ToolInterruptEvent)
    assert event.tool_use_id == "t3"
    assert [(i.name, i.reason) for i in event.interrupts] == [("question", "why?")]


async def test_agents_run_tools_yielding_strands_events_and_plain_values() -> None:
    seen: list[dict[str, Any]] = []

    @tool
    async def counter(n: int):
        """Count."""
        for i in range(n):
            yield i

    model = ScriptedModel([tool_call("counter", n=3), text("done")])
    agent = Agent(model=model, tools=[counter], callback_handler=lambda **event: seen.append(event))
    result = await agent.invoke_async("go")
    assert result.stop_reason == "end_turn"
    streamed = [event["tool_stream_event"]["data"] for event in seen if "tool_stream_event" in event]
    assert streamed == [0, 1, 2]
    results = [block["toolResult"] for block in agent.messages[2]["content"]]
    assert results[0]["content"] == [{"text": "2"}]
