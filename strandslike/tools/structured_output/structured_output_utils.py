"""Turn a pydantic model into the tool spec a model fills in to produce structured output."""

import copy
import re
from typing import Any

from pydantic import BaseModel

from ...types.tools import ToolSpec


class _Recursive(ValueError):
    pass


def _inline(node: Any, defs: dict[str, Any], seen: tuple[str, ...]) -> Any:
    """Replace every ``$ref`` into ``$defs`` by the definition itself (models of every provider read it so)."""
    if isinstance(node, list):
        return [_inline(item, defs, seen) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref.removeprefix("#/$defs/")
        if name in seen:
            raise _Recursive(name)
        if name not in defs:
            raise ValueError(f"The output model's JSON schema refers to {ref!r}, which it does not define.")
        target = _inline(defs[name], defs, (*seen, name))
        extra = {key: _inline(value, defs, seen) for key, value in node.items() if key != "$ref"}
        return {**target, **extra}
    return {key: _inline(value, defs, seen) for key, value in node.items() if key != "$defs"}


def convert_pydantic_to_tool_spec(model: type[BaseModel], description: str | None = None) -> ToolSpec:
    """Return a tool spec whose input schema is ``model``'s JSON schema, with ``$defs`` inlined.

    Args:
        model: The pydantic model to describe.
        description: The tool description; default: the model's docstring, or a generic sentence.

    Returns:
        ``{"name": <model name>, "description": ..., "inputSchema": {"json": <schema>}}``.

    Raises:
        ValueError: The model refers to itself (directly or through other models), which a flat schema cannot
            express.
    """
    schema = copy.deepcopy(model.model_json_schema())
    defs = schema.get("$defs", {})
    try:
        flat = _inline(schema, defs, ())
    except _Recursive as exc:
        raise ValueError(
            f"{model.__name__} refers to itself through {exc.args[0]!r}; structured output needs a schema "
            "without cycles. Replace the recursive field with a list of a non-recursive model."
        ) from None
    flat.pop("title", None)
    text = description or flat.pop("description", None) or f"Produce the {model.__name__} structured output."
    name = re.sub(r"[^A-Za-z0-9_-]", "_", model.__name__)[:64] or "StructuredOutput"
    return {"name": name, "description": text, "inputSchema": {"json": flat}}


__all__ = ["convert_pydantic_to_tool_spec"]
