"""Model providers: the `Model` interface and `ScriptedModel`, a deterministic model for tests and demos."""

from .model import Model
from .scripted import ScriptedModel, ScriptedRequest, ScriptedTurn, ScriptExhaustedError, text, tool_call, turn

__all__ = [
    "Model",
    "ScriptExhaustedError",
    "ScriptedModel",
    "ScriptedRequest",
    "ScriptedTurn",
    "text",
    "tool_call",
    "turn",
]
