"""`BedrockModel`: models on Amazon Bedrock through the Converse stream API (boto3).

The constructor and configuration keys mirror `strands.models.bedrock`; ``Agent(model="<model id>")`` builds one.
boto3 is imported when a model is built; install it with ``pip install 'strandslike[bedrock]'``. Credentials and
region come from boto3's usual sources (``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``, ``AWS_PROFILE``,
``AWS_REGION``, instance roles, ...).

```python
model = BedrockModel(model_id="us.anthropic.claude-sonnet-4-20250514-v1:0", region_name="us-east-1", max_tokens=1024)
```
"""

import logging
import os
import threading
from collections.abc import AsyncGenerator, Callable, Iterator
from typing import Any, TypeVar

from pydantic import BaseModel
from typing_extensions import TypedDict

from ..types.content import Messages
from ..types.exceptions import ContextWindowOverflowException, ModelThrottledException
from ..types.streaming import StreamEvent
from ..types.tools import ToolChoice, ToolSpec
from ._aws_eventstream import EventStreamDecodeError
from ._bedrock_format import MODELS_INCLUDE_STATUS, format_messages, has_tool_content, non_streaming_events
from ._bedrock_stream import ConverseStreamReader, call_converse_stream, read_events, supports, watch_raw_bodies
from ._provider import check_config_keys, import_sdk
from ._thread_stream import iterate_in_thread
from .model import Model

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

DEFAULT_BEDROCK_MODEL_ID = "us.anthropic.claude-sonnet-4-20250514-v1:0"
DEFAULT_BEDROCK_REGION = "us-west-2"
DEFAULT_READ_TIMEOUT = 120
BEDROCK_CONTEXT_WINDOW_OVERFLOW_MESSAGES = (
    "Input is too long for requested model",
    "input length and `max_tokens` exceed context limit",
    "too many total text bytes",
    "prompt is too long",
    "This model's maximum context length is",
)
_THROTTLING_CODES = frozenset(
    {"ThrottlingException", "throttlingException", "ServiceUnavailableException", "serviceUnavailableException"}
)
_CONFIG_KEYS = frozenset(
    {
        "additional_args",
        "additional_request_fields",
        "additional_response_field_paths",
        "cache_prompt",
        "cache_config",
        "cache_tools",
        "guardrail_id",
        "guardrail_trace",
        "guardrail_stream_processing_mode",
        "guardrail_version",
        "guardrail_redact_input",
        "guardrail_redact_input_message",
        "guardrail_redact_output",
        "guardrail_redact_output_message",
        "guardrail_latest_message",
        "max_tokens",
        "model_id",
        "include_tool_result_status",
        "service_tier",
        "stop_sequences",
        "streaming",
        "strict_tools",
        "temperature",
        "top_p",
        "use_native_token_count",
        "params",
    }
)
# A tool spec for conversations that hold tool blocks while the agent offers no tools: Bedrock then still needs
# a tool configuration.
_NOOP_TOOL: ToolSpec = {
    "name": "noop",
    "description": "This is a fake tool that MUST be completely ignored.",
    "inputSchema": {"json": {"type": "object", "properties": {}}},
}


def _boto3() -> Any:
    return import_sdk("boto3", "BedrockModel", "boto3", "bedrock")


class BedrockModel(Model):
    """A model on Amazon Bedrock, called through ``converse_stream`` (or ``converse`` with ``streaming=False``).

    Args:
        boto_session: The boto3 session to build the client from (default: a new session).
        boto_client_config: A ``botocore.config.Config`` for the client. Without one, botocore's own retries
            are off: the agent's `ModelRetryStrategy` retries throttling, visibly to hooks.
        region_name: The AWS region (default: the session's, ``AWS_REGION``, or us-west-2). Not with
            ``boto_session``.
        endpoint_url: A custom endpoint (VPC endpoint, proxy, local fake).
        **model_config: ``model_id``, ``max_tokens``, ``temperature``, ``top_p``, ``stop_sequences``,
            ``streaming``, ``params`` (extra top-level Converse request fields) and Strands' other
            `BedrockConfig` keys (``additional_request_fields``, ``guardrail_*``, ``include_tool_result_status``...).

    Raises:
        ValueError: Both ``region_name`` and ``boto_session`` were given.
        InvalidModelConfigError: An unknown configuration key was given.
        ProviderNotInstalledError: boto3 is not installed.
    """

    class BedrockConfig(TypedDict, total=False):
        """The main configuration keys (Strands' names; see the class docstring for the rest)."""

        model_id: str
        max_tokens: int | None
        temperature: float | None
        top_p: float | None
        stop_sequences: list[str] | None
        streaming: bool | None
        params: dict[str, Any] | None
        additional_request_fields: dict[str, Any] | None
        include_tool_result_status: Any

    def __init__(
        self,
        *,
        boto_session: Any = None,
        boto_client_config: Any = None,
        region_name: str | None = None,
        endpoint_url: str | None = None,
        **model_config: Any,
    ) -> None:
        if region_name and boto_session:
            raise ValueError("Cannot specify both `region_name` and `boto_session`.")
        check_config_keys("BedrockModel", model_config, _CONFIG_KEYS)
        boto3 = _boto3()
        from botocore.config import Config  # type: ignore[import-untyped]

        session = boto_session or boto3.Session()
        region = region_name or session.region_name or os.environ.get("AWS_REGION") or DEFAULT_BEDROCK_REGION
        self.config: dict[str, Any] = {"model_id": DEFAULT_BEDROCK_MODEL_ID, "include_tool_result_status": "auto"}
        self.config.update(model_config)
        defaults = Config(
            user_agent_extra="strandslike",
            read_timeout=DEFAULT_READ_TIMEOUT,
            retries={"total_max_attempts": 1, "mode": "standard"},
        )
        client_config = defaults.merge(boto_client_config) if boto_client_config is not None else defaults
        self.client = session.client(
            service_name="bedrock-runtime", config=client_config, endpoint_url=endpoint_url, region_name=region
        )
        # boto3 sends the request and raises HTTP errors; the event stream is decoded here (_bedrock_stream).
        self._reader: ConverseStreamReader | None = None
        self._fast_stream = supports(self.client)
        if self._fast_stream:
            watch_raw_bodies(self.client)
        logger.debug("region=<%s>, config=<%s> | bedrock client created", region, self.config)

    def update_config(self, **model_config: Any) -> None:
        """Merge ``model_config`` into the configuration.

        Raises:
            InvalidModelConfigError: An unknown configuration key was given; nothing changed.
        """
        check_config_keys("BedrockModel", model_config, _CONFIG_KEYS)
        self.config.update(model_config)

    def get_config(self) -> dict[str, Any]:
        """Return the configuration."""
        return self.config

    def _include_status(self) -> bool:
        setting = self.config.get("include_tool_result_status", "auto")
        if setting is True or setting is False:
            return setting
        return any(name in self.config["model_id"] for name in MODELS_INCLUDE_STATUS)

    def format_request(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt_content: list[dict[str, Any]] | None = None,
        tool_choice: ToolChoice | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """Build the ``converse_stream`` request."""
        config = self.config
        if not tool_specs and has_tool_content(messages):
            tool_specs = [_NOOP_TOOL]
        system = list(system_prompt_content or [])
        if config.get("cache_prompt"):
            system.append({"cachePoint": {"type": config["cache_prompt"]}})
        request: dict[str, Any] = {
            "modelId": config["model_id"],
            "messages": format_messages(messages, config["model_id"], self._include_status()),
            "system": system,
        }
        if tool_specs:
            tools: list[dict[str, Any]] = [
                {
                    "toolSpec": {
                        "name": spec["name"],
                        "description": spec["description"],
                        "inputSchema": spec["inputSchema"],
                    }
                }
                for spec in tool_specs
            ]
            if config.get("cache_tools"):
                tools.append({"cachePoint": {"type": config["cache_tools"]}})
            request["toolConfig"] = {"tools": tools, "toolChoice": tool_choice or {"auto": {}}}
        fields = config.get("additional_request_fields")
        if fields:
            if tool_choice and ("any" in tool_choice or "tool" in tool_choice) and "thinking" in fields:
                fields = {key: value for key, value in fields.items() if key != "thinking"}  # forcing forbids it
            if fields:
                request["additionalModelRequestFields"] = fields
        if config.get("additional_response_field_paths"):
            request["additionalModelResponseFieldPaths"] = config["additional_response_field_paths"]
        if config.get("guardrail_id") and config.get("guardrail_version"):
            request["guardrailConfig"] = {
                "guardrailIdentifier": config["guardrail_id"],
                "guardrailVersion": config["guardrail_version"],
                "trace": config.get("guardrail_trace", "enabled"),
                **(
                    {"streamProcessingMode": config["guardrail_stream_processing_mode"]}
                    if config.get("guardrail_stream_processing_mode")
                    else {}
                ),
            }
        if config.get("service_tier"):
            request["serviceTier"] = {"type": config["service_tier"]}
        inference = {
            key: value
            for key, value in (
                ("maxTokens", config.get("max_tokens")),
                ("temperature", config.get("temperature")),
                ("topP", config.get("top_p")),
                ("stopSequences", config.get("stop_sequences")),
            )
            if value is not None
        }
        request["inferenceConfig"] = inference
        request.update(config.get("additional_args") or {})
        request.update(config.get("params") or {})
        return request

    async def stream(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        *,
        tool_choice: ToolChoice | None = None,
        **kwargs: Any,
    ) -> AsyncGenerator[StreamEvent, None]:
        """Stream the model's reply (Converse events pass through as Bedrock sends them).

        boto3 sends the request; the response body is read in a worker thread and decoded by strandslike into the
        same events botocore's ``EventStream`` would give (see `_bedrock_stream`), which reach this generator in
        batches, one per read of the socket.

        Raises:
            ModelThrottledException: Bedrock throttled the request (or is briefly unavailable).
            ContextWindowOverflowException: The conversation does not fit the model's context window.
            EventStreamDecodeError: The response's event stream is corrupt (a CRC mismatch) or was cut off.
            botocore.exceptions.ClientError: Any other error (access denied, validation, model stream errors, ...),
                with notes naming the region and model id.
        """
        system = kwargs.get("system_prompt_content")
        if system is None and system_prompt:
            system = [{"text": system_prompt}]
        request = self.format_request(messages, tool_specs, system, tool_choice)
        cancel_signal: threading.Event | None = kwargs.get("cancel_signal")
        streaming = self.config.get("streaming", True) is not False

        def produce(stop: threading.Event) -> Iterator[list[StreamEvent]]:
            if not streaming:
                yield list(non_streaming_events(self._call(lambda: self.client.converse(**request))))
                return
            response, raw = self._call(lambda: call_converse_stream(self.client, request))
            events = response["stream"]
            try:
                if raw is not None and self._fast_stream:
                    batches = read_events(raw, self._converse_reader())
                else:  # a stubbed client: botocore's own reader, one event at a time
                    batches = ([event] for event in events)
                for batch in self._guard(batches):
                    if stop.is_set() or (cancel_signal is not None and cancel_signal.is_set()):
                        break
                    yield batch
            finally:
                events.close()

        async for event in iterate_in_thread(produce, name="strandslike-bedrock"):
            yield event

    def _converse_reader(self) -> ConverseStreamReader:
        reader = self._reader
        if reader is None:  # compiled from the service model on first use; a race only compiles it twice
            reader = self._reader = ConverseStreamReader(self.client.meta.service_model)
        return reader

    def _call(self, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except Exception as error:
            translated = self._translate(error)
            if translated is error:
                raise
            raise translated from error

    def _guard(self, batches: Iterator[list[StreamEvent]]) -> Iterator[list[StreamEvent]]:
        try:
            yield from batches
        except Exception as error:
            translated = self._translate(error)
            if translated is error:
                raise
            raise translated from error

    def _translate(self, error: Exception) -> Exception:
        """Map a botocore error to the exception the agent loop acts on, or annotate and return it."""
        response = getattr(error, "response", None)
        if not isinstance(response, dict):
            return error
        code = response.get("Error", {}).get("Code", "")
        message = str(error)
        if code in _THROTTLING_CODES:
            return ModelThrottledException(message)
        if any(phrase in message for phrase in BEDROCK_CONTEXT_WINDOW_OVERFLOW_MESSAGES):
            logger.warning("bedrock threw context window overflow error")
            return ContextWindowOverflowException(message)
        error.add_note(f"└ Bedrock region: {self.client.meta.region_name}")
        error.add_note(f"└ Model id: {self.config.get('model_id')}")
        return error

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


__all__ = ["BedrockModel", "EventStreamDecodeError"]
