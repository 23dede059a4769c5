"""Model providers: the `Model` interface, `ScriptedModel` for tests and demos, and the real providers.

`BedrockModel`, `OpenAIModel` and `AnthropicModel` import their SDK only when used, so importing this package
never needs boto3, openai or anthropic (install them with the ``bedrock``, ``openai`` and ``anthropic`` extras).

Names are imported on first use.
"""

import typing

from .. import _lazy

if typing.TYPE_CHECKING:
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

__getattr__, __dir__ = _lazy.lazy_exports(
    __name__,
    {
        "AnthropicModel": ".anthropic",
        "BedrockModel": ".bedrock",
        "EventStreamDecodeError": "._aws_eventstream",
        "Model": ".model",
        "OpenAIModel": ".openai",
        "ScriptExhaustedError": ".scripted",
        "ScriptedModel": ".scripted",
        "ScriptedRequest": ".scripted",
        "ScriptedTurn": ".scripted",
        "structured_output_call": ".scripted",
        "text": ".scripted",
        "tool_call": ".scripted",
        "turn": ".scripted",
    },
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
