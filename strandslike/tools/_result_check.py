"""What becomes of a tool result that could not be stored: an error result saying why, so no session is wedged.

Every result is appended to the conversation and written by the session store, whose strict encoder
(`strandslike._json`) refuses what it could not read back equal: dicts with non-string keys, lone surrogates,
``NaN``, huge integers, nesting past 100 levels, objects that are not JSON. Failing at that point would lose the
result after the tool ran (and a retry would run it again), so the executor checks every final result first and
replaces one that cannot be stored, or that is not a `ToolResult` at all, with an error result the model can read.
The tool did run; only its result is replaced.
"""

from typing import Any

from .._json import json_problem
from ..types.exceptions import safe_repr
from ..types.tools import ToolResult

_STATUSES = ("success", "error")


def result_problem(result: Any) -> str | None:
    """Return why ``result`` cannot be appended and stored as a `ToolResult` (a phrase), or None if it can."""
    if not isinstance(result, dict):
        return f"it is of type {type(result).__name__}, not a ToolResult dict"
    status = result.get("status")
    if not isinstance(status, str) or status not in _STATUSES:
        return f"its status is {safe_repr(status)}, not 'success' or 'error'"
    content = result.get("content")
    if not isinstance(content, list) or not all(isinstance(block, dict) for block in content):
        return "its content is not a list of content blocks"
    problem = json_problem(result, allow_bytes=True)
    if problem is not None:
        return problem.replace("the value", "the result", 1) + "; it could not be stored"
    return None


def storable_result(result: Any, tool_use_id: str) -> ToolResult:
    """Return ``result`` if it is a storable `ToolResult`, else an error result saying what was wrong."""
    problem = result_problem(result)
    if problem is None:
        return result  # type: ignore[no-any-return]
    return {
        "toolUseId": tool_use_id,
        "status": "error",
        "content": [
            {
                "text": f"Error: the tool ran, but its result was replaced because {problem}. Tools must "
                "return text or JSON (objects with string keys, valid Unicode text, finite numbers, at most 100 "
                "levels of nesting)."
            }
        ],
    }


__all__ = ["result_problem", "storable_result"]
