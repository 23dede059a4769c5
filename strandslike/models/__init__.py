"""Model providers: the `Model` interface, `ScriptedModel` for tests and demos, and the real providers.

`BedrockModel`, `OpenAIModel` and `AnthropicModel` import their SDK only when used, so importing this package
never needs boto3, openai or anthropic (install them with the ``bedrock``, ``openai`` and ``anthropic`` extras).
"""

from ._aws_eventstream import EventStreamDecodeError
from .anthropic import AnthropicModel
from .bedrock import BedrockModel
from .model import Model
from .openai import OpenAIModel
from .scripted import (
    ScriptedModel,
    ScriptedRequest,
    ScriptedTurn,
    ScriptExhaustedError,
    structured_output_call,
    text,
    tool_call,
    turn,
)

__all__ = [
    "AnthropicModel",
    "BedrockModel",
    "EventStreamDecodeError",
    "Model",
    "OpenAIModel",
    "ScriptExhaustedError",
    "ScriptedModel",
    "ScriptedRequest",
    "ScriptedTurn",
    "structured_output_call",
    "text",
    "tool_call",
    "turn",
]
