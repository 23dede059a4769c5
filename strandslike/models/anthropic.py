"""`AnthropicModel`: Claude through Anthropic's Messages API.

The constructor, configuration keys and translation mirror `strands.models.anthropic`. The ``anthropic`` package
is imported when the model is first used; install it with ``pip install 'strandslike[anthropic]'``.

```python
model = AnthropicModel(model_id="claude-sonnet-4-5", max_tokens=1024, params={"temperature": 0.2})
```
"""

import base64
import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, TypeVar, cast

from pydantic import BaseModel
from typing_extensions import TypedDict

from ..types.content import ContentBlock, Messages
from ..types.exceptions import ContextWindowOverflowException, ModelThrottledException
from ..types.streaming import StreamEvent, Usage
from ..types.tools import ToolChoice, ToolSpec
from ._provider import check_config_keys, import_sdk
from .model import Model
from .openai import shared_ssl_context

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

_CONFIG_KEYS = frozenset(
    {"model_id", "max_tokens", "params", "cache_config", "cache_tools", "anthropic_tools", "use_native_token_count"}
)
_IMAGE_MEDIA_TYPES = {
    "gif": "image/gif",
    "jpeg": "image/jpeg",
    "jpg": "image/jpeg",
    "png": "image/png",
    "webp": "image/webp",
}
_TEXT_DOCUMENTS = {"txt", "md", "markdown", "csv", "html", "htm", "json", "xml", "yaml", "yml"}
# Lower-cased phrases of Anthropic's context-window overflow errors.
OVERFLOW_MESSAGES = (
    "prompt is too long:",
    "input is too long",
    "input length exceeds context window",
    "input and output tokens exceed your context limit",
)


def _anthropic() -> Any:
    return import_sdk("anthropic", "AnthropicModel", "anthropic", "anthropic")


class AnthropicModel(Model):
    """A Claude model through the Anthropic Messages API.

    Args:
        client_args: Arguments for ``anthropic.AsyncAnthropic`` (``api_key``, ``base_url``, ``timeout``, ...).
            The SDK's own retries are off unless ``max_retries`` is given: the agent's `ModelRetryStrategy`
            retries rate limits and overloads, visibly to hooks.
        **model_config: ``model_id`` and ``max_tokens`` (both required to call), ``params`` (request fields such
            as ``temperature``), ``anthropic_tools`` (server tools sent next to the agent's tools).

    Raises:
        InvalidModelConfigError: An unknown configuration key was given.
    """

    EVENT_TYPES = frozenset(
        {"message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_stop"}
    )
    OVERFLOW_MESSAGES = OVERFLOW_MESSAGES

    class AnthropicConfig(TypedDict, total=False):
        """The configuration keys (Strands' names)."""

        model_id: str
        max_tokens: int
        params: dict[str, Any] | None
        anthropic_tools: list[dict[str, Any]]
        cache_config: Any
        cache_tools: Any
        use_native_token_count: bool

    def __init__(self, *, client_args: dict[str, Any] | None = None, **model_config: Any) -> None:
        check_config_keys("AnthropicModel", model_config, _CONFIG_KEYS)
        self.config: dict[str, Any] = dict(model_config)
        self.client_args: dict[str, Any] = dict(client_args or {})
        logger.debug("config=<%s> | initializing", self.config)

    def update_config(self, **model_config: Any) -> None:
        """Merge ``model_config`` into the configuration.

        Raises:
            InvalidModelConfigError: An unknown configuration key was given; nothing changed.
        """
        check_config_keys("AnthropicModel", model_config, _CONFIG_KEYS)
        self.config.update(model_config)

    def get_config(self) -> dict[str, Any]:
        """Return the configuration."""
        return self.config

    def _client(self) -> Any:
        """Build a client for one request: clients are cheap with a shared TLS context, and never cross loops."""
        anthropic = _anthropic()
        args = {"max_retries": 0, **self.client_args}
        if "http_client" not in args:
            args["http_client"] = anthropic.DefaultAsyncHttpxClient(verify=shared_ssl_context())
        return anthropic.AsyncAnthropic(**args)

    # -- request ----------------------------------------------------------------------------------------------

    def _format_request_message_content(self, content: ContentBlock) -> dict[str, Any] | None:
        """Format one content block for Anthropic; None for a block Anthropic cannot take back (skipped).

        Raises:
            TypeError: The block type or format has no Anthropic equivalent.
        """
        if "text" in content:
            return {"text": content["text"], "type": "text"}
        if "toolUse" in content:
            tool_use = content["toolUse"]
            return {
                "id": tool_use["toolUseId"],
                "input": tool_use["input"],
                "name": tool_use["name"],
                "type": "tool_use",
            }
        if "toolResult" in content:
            result = content["toolResult"]
            blocks = []
            for part in result["content"]:
                if "json" in part:
                    part = {"text": json.dumps(part["json"], ensure_ascii=False)}
                formatted = self._format_request_message_content(cast(ContentBlock, part))
                if formatted is not None:
                    blocks.append(formatted)
            return {
                "content": blocks,
                "is_error": result.get("status") == "error",
                "tool_use_id": result["toolUseId"],
                "type": "tool_result",
            }
        if "image" in content:
            image = content["image"]
            media_type = _IMAGE_MEDIA_TYPES.get(image["format"])
            if media_type is None:
                raise TypeError(f"content_type=<image>, format=<{image['format']}> | unsupported format")
            data = base64.b64encode(image["source"]["bytes"]).decode("ascii")
            return {"source": {"data": data, "media_type": media_type, "type": "base64"}, "type": "image"}
        if "document" in content:
            document = content["document"]
            fmt = document["format"]
            raw = document["source"]["bytes"]
            if fmt == "pdf":
                source = {
                    "data": base64.b64encode(raw).decode("ascii"),
                    "media_type": "application/pdf",
                    "type": "base64",
                }
            elif fmt in _TEXT_DOCUMENTS:
                source = {"data": raw.decode("utf-8"), "media_type": "text/plain", "type": "text"}
            else:
                raise TypeError(f"content_type=<document>, format=<{fmt}> | unsupported format")
            return {"source": source, "title": document.get("name", "document"), "type": "document"}
        if "reasoningContent" in content:
            reasoning = content["reasoningContent"]
            text = reasoning.get("reasoningText", {})
            if text.get("signature"):
                return {"signature": text["signature"], "thinking": text.get("text", ""), "type": "thinking"}
            if reasoning.get("redactedContent"):
                return {
                    "data": base64.b64encode(reasoning["redactedContent"]).decode("ascii"),
                    "type": "redacted_thinking",
                }
            return None  # Anthropic rejects thinking without a signature (other models' reasoning)
        if "citationsContent" in content:
            parts = content["citationsContent"].get("content", [])
            return {"text": "".join(part.get("text", "") for part in parts), "type": "text"}
        if "cachePoint" in content:
            return None
        raise TypeError(f"content_type=<{next(iter(content), None)}> | unsupported type")

    def _format_request_messages(self, messages: Messages) -> list[dict[str, Any]]:
        formatted = []
        for message in messages:
            blocks = [self._format_request_message_content(block) for block in message["content"]]
            content = [block for block in blocks if block is not None]
            if content:
                formatted.append({"content": content, "role": message["role"]})
        return formatted

    @staticmethod
    def _format_tool_choice(tool_choice: ToolChoice | None) -> dict[str, Any]:
        if tool_choice is None:
            return {}
        if "any" in tool_choice:
            return {"tool_choice": {"type": "any"}}
        if "auto" in tool_choice:
            return {"tool_choice": {"type": "auto"}}
        if "tool" in tool_choice:
            return {"tool_choice": {"type": "tool", "name": tool_choice["tool"]["name"]}}
        return {}

    def format_request(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        tool_choice: ToolChoice | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """Build the ``messages.stream`` arguments.

        Raises:
            ValueError: ``model_id`` or ``max_tokens`` is not configured.
        """
        for key in ("model_id", "max_tokens"):
            if not self.config.get(key):
                raise ValueError(
                    f"AnthropicModel has no {key}. Pass AnthropicModel(model_id='claude-sonnet-4-5', max_tokens=1024)."
                )
        tools: list[dict[str, Any]] = [
            {"name": spec["name"], "description": spec["description"], "input_schema": spec["inputSchema"]["json"]}
            for spec in tool_specs or []
        ]
        params = dict(self.config.get("params") or {})
        server_tools = [*(self.config.get("anthropic_tools") or []), *(params.pop("tools", None) or [])]
        if tool_choice is None or "auto" in tool_choice:  # a forced call must be of a function tool
            tools.extend(server_tools)
        system_content = kwargs.get("system_prompt_content")
        system: Any = system_prompt
        if system_content:
            system = [{"type": "text", "text": block["text"]} for block in system_content if "text" in block]
        return {
            "max_tokens": self.config["max_tokens"],
            "messages": self._format_request_messages(messages),
            "model": self.config["model_id"],
            **self._format_tool_choice(tool_choice),
            **({"system": system} if system else {}),
            **params,
            "tools": tools,
        }

    # -- response ---------------------------------------------------------------------------------------------

    def format_chunk(self, event: dict[str, Any]) -> StreamEvent:
        """Turn one Anthropic stream event (as a dict) into a Bedrock Converse stream event.

        Raises:
            RuntimeError: The event or delta type is unknown.
        """
        kind = event["type"]
        if kind == "message_start":
            return {"messageStart": {"role": "assistant"}}
        if kind == "content_block_start":
            block = event["content_block"]
            if block["type"] == "tool_use":
                return {
                    "contentBlockStart": {
                        "contentBlockIndex": event["index"],
                        "start": {"toolUse": {"name": block["name"], "toolUseId": block["id"]}},
                    }
                }
            return {"contentBlockStart": {"contentBlockIndex": event["index"], "start": {}}}
        if kind == "content_block_delta":
            delta = event["delta"]
            dtype = delta["type"]
            if dtype == "text_delta":
                converted: dict[str, Any] = {"text": delta["text"]}
            elif dtype == "input_json_delta":
                converted = {"toolUse": {"input": delta["partial_json"]}}
            elif dtype == "thinking_delta":
                converted = {"reasoningContent": {"text": delta["thinking"]}}
            elif dtype == "signature_delta":
                converted = {"reasoningContent": {"signature": delta["signature"]}}
            elif dtype == "citations_delta":
                converted = {"citation": delta["citation"]}
            else:
                raise RuntimeError(f"event_type=<content_block_delta>, delta_type=<{dtype}> | unknown type")
            return {"contentBlockDelta": {"contentBlockIndex": event["index"], "delta": converted}}
        if kind == "content_block_stop":
            return {"contentBlockStop": {"contentBlockIndex": event["index"]}}
        if kind == "message_stop":
            reason = event["message"]["stop_reason"]
            return {"messageStop": {"stopReason": "content_filtered" if reason == "refusal" else reason}}
        if kind == "metadata":
            return {"metadata": {"usage": _usage(event["usage"]), "metrics": {"latencyMs": 0}}}
        raise RuntimeError(f"event_type=<{kind}> | unknown type")

    async def stream(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        *,
        tool_choice: ToolChoice | None = None,
        **kwargs: Any,
    ) -> AsyncGenerator[StreamEvent, None]:
        """Stream the model's reply as Bedrock Converse events.

        Raises:
            ModelThrottledException: The API rate-limited the request, or is overloaded.
            ContextWindowOverflowException: The conversation does not fit the model's context window.
            anthropic.APIError: Any other API error (authentication, bad request, ...), unchanged.
        """
        anthropic = _anthropic()
        content = kwargs.get("system_prompt_content")
        request = self.format_request(
            messages, tool_specs, system_prompt, tool_choice, **({"system_prompt_content": content} if content else {})
        )
        try:
            async with (
                self._client() as client,
                client.messages.with_streaming_response.create(stream=True, **request) as response,
            ):
                async for chunk in self._events(_sse_events(response, anthropic)):
                    yield chunk
        except (anthropic.RateLimitError, anthropic.OverloadedError) as error:
            raise ModelThrottledException(str(error)) from error
        except anthropic.BadRequestError as error:
            if any(phrase in str(error).lower() for phrase in OVERFLOW_MESSAGES):
                raise ContextWindowOverflowException(str(error)) from error
            raise
        except anthropic.APIStatusError as error:
            if error.status_code in (429, 529):
                raise ModelThrottledException(str(error)) from error
            raise

    async def _events(self, events: AsyncIterator[dict[str, Any]]) -> AsyncGenerator[StreamEvent, None]:
        """Convert Anthropic's events; the stop reason and usage (which arrive split) come last, as Strands has it.

        The server-sent events are decoded here straight from JSON, which costs a fraction of building the SDK's
        typed event objects (the bulk of a long answer's time); the SDK still sends the request and reports HTTP
        errors.
        """
        format_chunk = self.format_chunk
        server_blocks: set[int] = set()
        usage: dict[str, int] = {}
        stop_reason: str | None = None
        async for event in events:
            kind = event.get("type")
            if kind == "content_block_delta":
                index = event["index"]
                if index in server_blocks:
                    continue
                delta = event["delta"]
                dtype = delta.get("type")
                if dtype == "text_delta":  # the hot case, converted without a function call per token
                    yield {"contentBlockDelta": {"contentBlockIndex": index, "delta": {"text": delta["text"]}}}
                else:
                    yield format_chunk(event)
            elif kind == "content_block_start":
                block_type = event["content_block"].get("type")
                if block_type in ("text", "tool_use", "thinking", "redacted_thinking"):
                    yield format_chunk(event)
                else:
                    server_blocks.add(event["index"])  # server tools run at Anthropic; the agent never sees them
            elif kind == "content_block_stop":
                if event["index"] in server_blocks:
                    server_blocks.discard(event["index"])
                    continue
                yield {"contentBlockStop": {"contentBlockIndex": event["index"]}}
            elif kind == "message_start":
                _add_usage(usage, event["message"].get("usage"))
                yield {"messageStart": {"role": "assistant"}}
            elif kind == "message_delta":
                stop_reason = event.get("delta", {}).get("stop_reason") or stop_reason
                _add_usage(usage, event.get("usage"), replace=True)
        if stop_reason is not None:
            yield format_chunk({"type": "message_stop", "message": {"stop_reason": stop_reason}})
        if usage:
            yield format_chunk({"type": "metadata", "usage": usage})

    async def structured_output(
        self, output_model: type[T], prompt: Messages, system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncGenerator[dict[str, T | Any], None]:
        """Ask for ``output_model`` by forcing a call of a tool whose input is the model (see `Model`).

        Yields:
            Stream events as ``{"event": chunk}``, then ``{"output": <output_model instance>}``.
        """
        from ._structured import structured_output_via_tool

        async for event in structured_output_via_tool(self, output_model, prompt, system_prompt, **kwargs):
            yield event


def _add_usage(usage: dict[str, int], raw: Any, *, replace: bool = False) -> None:
    """Merge a usage object: ``message_delta`` carries cumulative counts, so its values replace earlier ones."""
    if not isinstance(raw, dict):
        return
    for key, value in raw.items():
        if isinstance(value, int) and not isinstance(value, bool):
            usage[key] = value if replace or key not in usage else usage[key] + value


async def _sse_events(response: Any, anthropic: Any) -> AsyncIterator[dict[str, Any]]:
    """Yield the JSON payload of each event of an Anthropic event stream; an ``error`` event is raised."""
    async for line in response.iter_lines():
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if not data:
            continue
        event = json.loads(data)
        if event.get("type") == "error":
            error = event.get("error") or {}
            message = error.get("message", str(error))
            if error.get("type") in ("overloaded_error", "rate_limit_error"):
                raise ModelThrottledException(message)
            raise anthropic.APIError(message, response.http_request, body=event)
        yield event


def _usage(raw: dict[str, Any]) -> Usage:
    input_tokens = raw.get("input_tokens") or 0
    output_tokens = raw.get("output_tokens") or 0
    cache_read = raw.get("cache_read_input_tokens") or 0
    cache_write = raw.get("cache_creation_input_tokens") or 0
    usage: Usage = {
        "inputTokens": input_tokens,
        "outputTokens": output_tokens,
        # input_tokens excludes cached tokens, so the billed total adds them.
        "totalTokens": input_tokens + output_tokens + cache_read + cache_write,
    }
    if cache_read:
        usage["cacheReadInputTokens"] = cache_read
    if cache_write:
        usage["cacheWriteInputTokens"] = cache_write
    return usage


__all__ = ["AnthropicModel"]
