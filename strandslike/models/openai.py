"""`OpenAIModel`: the OpenAI Chat Completions API, and every server that speaks it (Ollama, vLLM, llama.cpp, ...).

The constructor, configuration keys and request/response translation mirror `strands.models.openai`. The
``openai`` package is imported when the model is first used; install it with ``pip install 'strandslike[openai]'``.

```python
model = OpenAIModel(client_args={"base_url": "http://localhost:11434/v1", "api_key": "ollama"}, model_id="llama3.2")
```
"""

import base64
import json
import logging
import mimetypes
import ssl
import threading
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from pydantic import BaseModel
from typing_extensions import TypedDict

from ..types.content import ContentBlock, Messages
from ..types.exceptions import ContextWindowOverflowException, ModelThrottledException
from ..types.streaming import StreamEvent, Usage
from ..types.tools import ToolChoice, ToolResult, ToolSpec, ToolUse
from ._openai_errors import classify_openai_error
from ._provider import check_config_keys, import_sdk
from .model import Model

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

_CONFIG_KEYS = frozenset({"model_id", "params", "stream", "cache_config"})
_STOP_REASONS = {"tool_calls": "tool_use", "length": "max_tokens", "content_filter": "content_filtered"}
_ssl_context: ssl.SSLContext | None = None
_ssl_lock = threading.Lock()


def _openai() -> Any:
    return import_sdk("openai", "OpenAIModel", "openai", "openai")


def shared_ssl_context() -> ssl.SSLContext:
    """Return one TLS context for every client this process builds.

    Building a context loads the CA bundle (tens of milliseconds); sharing it makes a fresh HTTP client per
    request cheap, and a fresh client per request is what keeps connections from crossing event loops.
    """
    global _ssl_context
    if _ssl_context is None:
        with _ssl_lock:
            if _ssl_context is None:
                try:
                    import certifi

                    _ssl_context = ssl.create_default_context(cafile=certifi.where())
                except ImportError:
                    _ssl_context = ssl.create_default_context()
    return _ssl_context


class OpenAIModel(Model):
    """A model served through the OpenAI Chat Completions API.

    Args:
        client: A ready client (e.g. ``openai.AsyncOpenAI``) reused for every request and never closed by the
            model; the caller owns it. Exclusive with ``client_args``.
        client_args: Arguments for ``openai.AsyncOpenAI`` (``api_key``, ``base_url``, ``timeout``, ...); a fresh
            client is built per request. The SDK's own retries are off unless ``max_retries`` is given: the
            agent's `ModelRetryStrategy` retries rate limits, visibly to hooks.
        **model_config: ``model_id`` (required to call), ``params`` (request fields such as ``max_tokens`` or
            ``temperature``), ``stream`` (default True), ``cache_config`` (accepted for Strands compatibility).

    Raises:
        ValueError: Both ``client`` and ``client_args`` were given.
        InvalidModelConfigError: An unknown configuration key was given.
    """

    class OpenAIConfig(TypedDict, total=False):
        """The configuration keys (Strands' names)."""

        model_id: str
        params: dict[str, Any] | None
        stream: bool
        cache_config: Any

    def __init__(self, client: Any = None, client_args: dict[str, Any] | None = None, **model_config: Any) -> None:
        if client is not None and client_args:
            raise ValueError("Only one of 'client' or 'client_args' should be provided, not both.")
        check_config_keys("OpenAIModel", model_config, _CONFIG_KEYS)
        self.config: dict[str, Any] = dict(model_config)
        self._custom_client = client
        self.client_args: dict[str, Any] = dict(client_args or {})
        logger.debug("config=<%s> | initializing", self.config)

    def update_config(self, **model_config: Any) -> None:
        """Merge ``model_config`` into the configuration.

        Raises:
            InvalidModelConfigError: An unknown configuration key was given; nothing changed.
        """
        check_config_keys("OpenAIModel", model_config, _CONFIG_KEYS)
        self.config.update(model_config)

    def get_config(self) -> dict[str, Any]:
        """Return the configuration."""
        return self.config

    # -- request ----------------------------------------------------------------------------------------------

    @classmethod
    def format_request_message_content(cls, content: ContentBlock, **kwargs: Any) -> dict[str, Any]:
        """Format one content block (text, image or document) as an OpenAI content part.

        Raises:
            TypeError: The block has no OpenAI equivalent.
        """
        if "text" in content:
            return {"text": content["text"], "type": "text"}
        if "image" in content:
            image = content["image"]
            mime_type = mimetypes.types_map.get(f".{image['format']}", "application/octet-stream")
            data = base64.b64encode(image["source"]["bytes"]).decode("ascii")
            return {
                "image_url": {"detail": "auto", "format": mime_type, "url": f"data:{mime_type};base64,{data}"},
                "type": "image_url",
            }
        if "document" in content:
            document = content["document"]
            mime_type = mimetypes.types_map.get(f".{document['format']}", "application/octet-stream")
            data = base64.b64encode(document["source"]["bytes"]).decode("ascii")
            return {
                "file": {"file_data": f"data:{mime_type};base64,{data}", "filename": document["name"]},
                "type": "file",
            }
        raise TypeError(f"content_type=<{next(iter(content), None)}> | unsupported type")

    @classmethod
    def format_request_message_tool_call(cls, tool_use: ToolUse, **kwargs: Any) -> dict[str, Any]:
        """Format a tool use as an OpenAI ``tool_calls`` entry."""
        return {
            "function": {"arguments": json.dumps(tool_use["input"], ensure_ascii=False), "name": tool_use["name"]},
            "id": tool_use["toolUseId"],
            "type": "function",
        }

    @classmethod
    def format_request_tool_message(cls, tool_result: ToolResult, **kwargs: Any) -> dict[str, Any]:
        """Format a tool result as a ``tool`` message (JSON as text; adjacent texts joined; images kept)."""
        parts: list[dict[str, Any]] = []
        has_media = False
        for block in tool_result["content"]:
            if "json" in block:
                block = {"text": json.dumps(block["json"], ensure_ascii=False)}
            if "text" in block:
                if parts and parts[-1].get("type") == "text":
                    parts[-1]["text"] += "\n" + block["text"]
                else:
                    parts.append({"type": "text", "text": block["text"]})
            elif "image" in block or "document" in block:
                has_media = True
                parts.append(cls.format_request_message_content(block))  # type: ignore[arg-type]
        content: str | list[dict[str, Any]] = parts if has_media else (parts[0]["text"] if parts else "")
        if tool_result.get("status") == "error" and isinstance(content, str):
            # Chat Completions has no error flag on tool messages; say it in the text so the model knows.
            content = f"Error: {content}" if not content.startswith("Error") else content
        return {"role": "tool", "tool_call_id": tool_result["toolUseId"], "content": content}

    @classmethod
    def _split_tool_message_images(cls, message: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """Move images out of a tool message into a user message: OpenAI accepts images only from the user."""
        content = message.get("content")
        if not isinstance(content, list):
            return message, None
        images = [part for part in content if part.get("type") == "image_url"]
        if not images:
            return message, None
        rest = [part for part in content if part.get("type") != "image_url"]
        rest.append(
            {
                "type": "text",
                "text": "Tool successfully returned an image. The image is being provided in the "
                "following user message.",
            }
        )
        return {**message, "content": rest}, {"role": "user", "content": images}

    @classmethod
    def format_request_messages(
        cls, messages: Messages, system_prompt: str | None = None, **kwargs: Any
    ) -> list[dict[str, Any]]:
        """Format the conversation (and system prompt) as OpenAI chat messages."""
        formatted: list[dict[str, Any]] = []
        system_content = kwargs.get("system_prompt_content")
        if system_content:
            formatted.extend(
                {"role": "system", "content": block["text"]} for block in system_content if "text" in block
            )
        elif system_prompt:
            formatted.append({"role": "system", "content": system_prompt})
        for message in messages:
            contents = message["content"]
            parts: list[dict[str, Any]] = []
            tool_calls: list[dict[str, Any]] = []
            user_images: list[dict[str, Any]] = []
            for block in contents:
                if "toolUse" in block:
                    tool_calls.append(cls.format_request_message_tool_call(block["toolUse"]))
                elif "toolResult" in block:
                    tool_message, images = cls._split_tool_message_images(
                        cls.format_request_tool_message(block["toolResult"])
                    )
                    formatted.append(tool_message)  # tool results must follow the tool calls at once
                    if images is not None:
                        user_images.append(images)
                elif "reasoningContent" in block or "cachePoint" in block:
                    continue  # Chat Completions takes neither back
                else:
                    parts.append(cls.format_request_message_content(block))
            formatted.extend(user_images)
            if parts or tool_calls:
                entry: dict[str, Any] = {"role": message["role"]}
                if parts:
                    entry["content"] = parts
                if tool_calls:
                    entry["tool_calls"] = tool_calls
                formatted.append(entry)
        return formatted

    @staticmethod
    def _format_request_tool_choice(tool_choice: ToolChoice | None) -> dict[str, Any]:
        if not tool_choice:
            return {}
        if "any" in tool_choice:
            return {"tool_choice": "required"}
        if "tool" in tool_choice:
            return {"tool_choice": {"type": "function", "function": {"name": tool_choice["tool"]["name"]}}}
        return {"tool_choice": "auto"}

    def format_request(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        tool_choice: ToolChoice | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """Build the ``chat.completions.create`` arguments.

        Raises:
            ValueError: No ``model_id`` is configured.
        """
        model_id = self.config.get("model_id")
        if not model_id:
            raise ValueError("OpenAIModel has no model_id. Pass OpenAIModel(model_id='gpt-4o', ...).")
        params = dict(self.config.get("params") or {})
        stream = bool(self.config.get("stream", params.pop("stream", True)))
        stream_options = params.pop("stream_options", {"include_usage": True})
        request: dict[str, Any] = {
            "messages": self.format_request_messages(messages, system_prompt, **kwargs),
            "model": model_id,
            "stream": stream,
            "tools": [
                {
                    "type": "function",
                    "function": {
                        "name": spec["name"],
                        "description": spec["description"],
                        "parameters": spec["inputSchema"]["json"],
                    },
                }
                for spec in tool_specs or []
            ],
            **self._format_request_tool_choice(tool_choice),
            **params,
        }
        if stream:
            request["stream_options"] = stream_options
        cache_config = self.config.get("cache_config")
        cache_key = getattr(cache_config, "cache_key", None) or (
            cache_config.get("cache_key") if isinstance(cache_config, dict) else None
        )
        if cache_key and "prompt_cache_key" not in request:
            request["prompt_cache_key"] = cache_key
        return request

    # -- response ---------------------------------------------------------------------------------------------

    def format_chunk(self, event: dict[str, Any], **kwargs: Any) -> StreamEvent:
        """Turn one step of an OpenAI response into a Bedrock Converse stream event (Strands' chunk types).

        Raises:
            RuntimeError: ``event["chunk_type"]`` is unknown.
        """
        chunk_type = event["chunk_type"]
        if chunk_type == "message_start":
            return {"messageStart": {"role": "assistant"}}
        if chunk_type == "content_start":
            if event["data_type"] == "tool":
                return {
                    "contentBlockStart": {
                        "start": {"toolUse": {"name": event["data"].function.name, "toolUseId": event["data"].id}}
                    }
                }
            return {"contentBlockStart": {"start": {}}}
        if chunk_type == "content_delta":
            if event["data_type"] == "tool":
                return {"contentBlockDelta": {"delta": {"toolUse": {"input": event["data"].function.arguments or ""}}}}
            if event["data_type"] == "reasoning_content":
                return {"contentBlockDelta": {"delta": {"reasoningContent": {"text": event["data"]}}}}
            return {"contentBlockDelta": {"delta": {"text": event["data"]}}}
        if chunk_type == "content_stop":
            return {"contentBlockStop": {}}
        if chunk_type == "message_stop":
            return {"messageStop": {"stopReason": _STOP_REASONS.get(event["data"], "end_turn")}}
        if chunk_type == "metadata":
            return {"metadata": {"usage": _usage(event["data"]), "metrics": {"latencyMs": 0}}}
        raise RuntimeError(f"chunk_type=<{chunk_type}> | unknown type")

    @asynccontextmanager
    async def _get_client(self) -> AsyncIterator[Any]:
        """Yield the injected client, or a fresh one for this request (closed afterwards)."""
        if self._custom_client is not None:
            yield self._custom_client
            return
        openai = _openai()
        args = {"max_retries": 0, **self.client_args}
        if "http_client" not in args:
            args["http_client"] = openai.DefaultAsyncHttpxClient(verify=shared_ssl_context())
        async with openai.AsyncOpenAI(**args) as client:
            yield client

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

        Text streams as it arrives; tool calls (which OpenAI may interleave by index) are gathered and emitted
        as whole blocks once the choice finishes. The SDK sends the request and reports HTTP errors; the
        server-sent events are decoded here straight from JSON, which costs a fraction of building the SDK's
        typed chunk objects (the bulk of a long answer's time).

        Raises:
            ModelThrottledException: The API rate-limited the request.
            ContextWindowOverflowException: The conversation does not fit the model's context window.
            openai.APIError: Any other API error (authentication, bad request, ...), unchanged.
        """
        request = self.format_request(messages, tool_specs, system_prompt, tool_choice, **_system(kwargs))
        openai = _openai()
        async with self._get_client() as client:
            try:
                if not request["stream"]:
                    response = await client.chat.completions.create(**request)
                    for chunk in self._non_streaming(response):
                        yield chunk
                    return
                async with client.chat.completions.with_streaming_response.create(**request) as response:
                    async for chunk in self._streaming(_sse_data(response, openai)):
                        yield chunk
            except openai.APIError as error:
                translated = _translate(error)
                if translated is error:
                    raise
                raise translated from error

    async def _streaming(self, events: AsyncIterator[dict[str, Any]]) -> AsyncGenerator[StreamEvent, None]:
        yield {"messageStart": {"role": "assistant"}}
        tool_calls: dict[int, list[dict[str, Any]]] = {}
        block: str | None = None  # "text" or "reasoning" while such a block is open
        finish_reason: str | None = None
        usage: Any = None
        async for event in events:
            if event.get("usage"):
                usage = event["usage"]
            choices = event.get("choices")
            if not choices:
                continue
            choice = choices[0]
            delta = choice.get("delta")
            if delta:
                reasoning = delta.get("reasoning_content") or delta.get("reasoning")
                if isinstance(reasoning, str) and reasoning:
                    if block != "reasoning":
                        if block is not None:
                            yield {"contentBlockStop": {}}
                        yield {"contentBlockStart": {"start": {}}}
                        block = "reasoning"
                    yield {"contentBlockDelta": {"delta": {"reasoningContent": {"text": reasoning}}}}
                text = delta.get("content")
                if text:
                    if block != "text":
                        if block is not None:
                            yield {"contentBlockStop": {}}
                        yield {"contentBlockStart": {"start": {}}}
                        block = "text"
                    yield {"contentBlockDelta": {"delta": {"text": text}}}
                for tool_delta in delta.get("tool_calls") or ():
                    tool_calls.setdefault(tool_delta.get("index", 0), []).append(tool_delta)
            if choice.get("finish_reason"):
                finish_reason = choice["finish_reason"]
        if block is not None:
            yield {"contentBlockStop": {}}
        for deltas in tool_calls.values():
            functions = [d.get("function") or {} for d in deltas]
            tool_id = next((d["id"] for d in deltas if d.get("id")), "")
            name = next((f["name"] for f in functions if f.get("name")), "")
            yield {"contentBlockStart": {"start": {"toolUse": {"name": name, "toolUseId": tool_id}}}}
            arguments = "".join(f.get("arguments") or "" for f in functions)
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": arguments}}}}
            yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": _STOP_REASONS.get(finish_reason or "", "end_turn")}}
        if usage is not None:
            yield {"metadata": {"usage": _usage(usage), "metrics": {"latencyMs": 0}}}

    def _non_streaming(self, response: Any) -> list[StreamEvent]:
        chunks: list[StreamEvent] = [{"messageStart": {"role": "assistant"}}]
        choice = response.choices[0] if response.choices else None
        message = getattr(choice, "message", None)
        reasoning = getattr(message, "reasoning_content", None) or getattr(message, "reasoning", None)
        if isinstance(reasoning, str) and reasoning:
            chunks += [
                {"contentBlockStart": {"start": {}}},
                {"contentBlockDelta": {"delta": {"reasoningContent": {"text": reasoning}}}},
                {"contentBlockStop": {}},
            ]
        text = getattr(message, "content", None)
        if text:
            chunks += [
                {"contentBlockStart": {"start": {}}},
                {"contentBlockDelta": {"delta": {"text": text}}},
                {"contentBlockStop": {}},
            ]
        for call in getattr(message, "tool_calls", None) or ():
            chunks += [
                {"contentBlockStart": {"start": {"toolUse": {"name": call.function.name, "toolUseId": call.id}}}},
                {"contentBlockDelta": {"delta": {"toolUse": {"input": call.function.arguments or ""}}}},
                {"contentBlockStop": {}},
            ]
        finish = getattr(choice, "finish_reason", None) or ""
        chunks.append({"messageStop": {"stopReason": _STOP_REASONS.get(finish, "end_turn")}})
        if getattr(response, "usage", None):
            chunks.append({"metadata": {"usage": _usage(response.usage), "metrics": {"latencyMs": 0}}})
        return chunks

    async def structured_output(
        self, output_model: type[T], prompt: Messages, system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncGenerator[dict[str, T | Any], None]:
        """Ask for ``output_model`` with OpenAI's native JSON-schema response format (``parse``).

        Yields:
            ``{"output": <output_model instance>}``.

        Raises:
            ModelThrottledException: The API rate-limited the request.
            ContextWindowOverflowException: The conversation does not fit the model's context window.
            ValueError: The response held no parsed output (Strands' error).
        """
        openai = _openai()
        request = self.format_request(prompt, system_prompt=system_prompt)
        request.pop("stream", None)
        request.pop("stream_options", None)
        if not request["tools"]:
            request.pop("tools")
        async with self._get_client() as client:
            try:
                response = await client.chat.completions.parse(**request, response_format=output_model)
            except openai.APIError as error:
                translated = _translate(error)
                if translated is error:
                    raise
                raise translated from error
        if len(response.choices) > 1:
            raise ValueError("Multiple choices found in the OpenAI response.")
        for choice in response.choices:
            parsed = choice.message.parsed
            if isinstance(parsed, output_model):
                yield {"output": parsed}
                return
        raise ValueError("No valid tool use or tool use input was found in the OpenAI response.")


def _system(kwargs: dict[str, Any]) -> dict[str, Any]:
    content = kwargs.get("system_prompt_content")
    return {"system_prompt_content": content} if content else {}


async def _sse_data(response: Any, openai: Any) -> AsyncIterator[dict[str, Any]]:
    """Yield the JSON payload of each ``data:`` line of a chat-completions event stream, until ``[DONE]``."""
    async for line in response.iter_lines():
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            return
        if not data:
            continue
        event = json.loads(data)
        if isinstance(event, dict) and event.get("error"):
            error = event["error"]
            message = error.get("message", str(error)) if isinstance(error, dict) else str(error)
            raise openai.APIError(message, response.http_request, body=error)
        yield event


def _usage(data: Any) -> Usage:
    if isinstance(data, dict):
        prompt, completion, total = data.get("prompt_tokens"), data.get("completion_tokens"), data.get("total_tokens")
        details: Any = data.get("prompt_tokens_details") or {}
        cached = details.get("cached_tokens") if isinstance(details, dict) else None
    else:
        prompt, completion, total = data.prompt_tokens, data.completion_tokens, data.total_tokens
        cached = getattr(getattr(data, "prompt_tokens_details", None), "cached_tokens", None)
    usage: Usage = {"inputTokens": prompt or 0, "outputTokens": completion or 0, "totalTokens": total or 0}
    if isinstance(cached, int) and cached:
        usage["cacheReadInputTokens"] = cached
    return usage


def _translate(error: Exception) -> Exception:
    """Map an OpenAI API error to the exception the agent loop acts on, or return it unchanged."""
    kind = classify_openai_error(error)
    if kind == "throttling":
        logger.warning("OpenAI threw rate limit error")
        return ModelThrottledException(str(error))
    if kind == "context_overflow":
        logger.warning("OpenAI threw context window overflow error")
        return ContextWindowOverflowException(str(error))
    return error


__all__ = ["OpenAIModel"]
