"""The floor: the per-cycle work of an agent loop in bare asyncio, with no framework.

Each cycle streams the same Converse events the frameworks receive from an async generator, parses them into an
assistant message, appends it to a list, awaits the same tool function, and appends the tool-result message.
"""

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

Tool = Callable[..., Awaitable[Any]]


async def _stream(events: list[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
    for event in events:
        yield event


async def _parse(stream: AsyncIterator[dict[str, Any]]) -> tuple[dict[str, Any], str]:
    """Turn Converse stream events into ``(message, stop_reason)``."""
    content: list[dict[str, Any]] = []
    role = "assistant"
    stop_reason = "end_turn"
    current_tool: dict[str, Any] | None = None
    text_parts: list[str] = []
    input_parts: list[str] = []
    async for event in stream:
        if "contentBlockDelta" in event:
            delta = event["contentBlockDelta"]["delta"]
            if "text" in delta:
                text_parts.append(delta["text"])
            elif "toolUse" in delta:
                input_parts.append(delta["toolUse"]["input"])
        elif "contentBlockStart" in event:
            start = event["contentBlockStart"]["start"]
            current_tool = start.get("toolUse")
        elif "contentBlockStop" in event:
            if current_tool is not None:
                tool_input = json.loads("".join(input_parts)) if input_parts else {}
                content.append(
                    {
                        "toolUse": {
                            "toolUseId": current_tool["toolUseId"],
                            "name": current_tool["name"],
                            "input": tool_input,
                        }
                    }
                )
                current_tool = None
                input_parts = []
            else:
                content.append({"text": "".join(text_parts)})
                text_parts = []
        elif "messageStart" in event:
            role = event["messageStart"]["role"]
        elif "messageStop" in event:
            stop_reason = event["messageStop"]["stopReason"]
    return {"role": role, "content": content}, stop_reason


async def _call(tool: Tool, tool_use: dict[str, Any]) -> dict[str, Any]:
    value = await tool(**tool_use["input"])
    return {"toolResult": {"toolUseId": tool_use["toolUseId"], "status": "success", "content": [{"text": str(value)}]}}


async def invoke(
    turns: list[list[dict[str, Any]]], tools: dict[str, Tool], *, concurrent: bool = False
) -> list[dict[str, Any]]:
    """Run the loop over the scripted ``turns`` until a turn does not call tools; return the history."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": "go"}]}]
    for events in turns:
        message, stop_reason = await _parse(_stream(events))
        messages.append(message)
        uses = [block["toolUse"] for block in message["content"] if "toolUse" in block]
        if stop_reason != "tool_use" or not uses:
            break
        if concurrent:
            async with asyncio.TaskGroup() as group:
                tasks = [group.create_task(_call(tools[use["name"]], use)) for use in uses]
            results = [task.result() for task in tasks]
        else:
            results = [await _call(tools[use["name"]], use) for use in uses]
        messages.append({"role": "user", "content": results})
    return messages
