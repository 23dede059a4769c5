"""Which OpenAI-compatible API errors mean "rate limited" and which mean "the context window overflowed".

Servers that speak the OpenAI protocol word these errors differently, so the status code and error code are
checked first and the message is matched against the phrasings seen in the wild.
"""

import re
from typing import Literal

OpenAIErrorKind = Literal["context_overflow", "throttling"]

_OVERFLOW_PHRASES = (
    "maximum context length",
    "context_length_exceeded",
    "context length",
    "context window",
    "too many tokens",
    "input is too long for requested model",
    "input length and `max_tokens` exceed context limit",
    "too many total text bytes",
    "exceeds the max_model_len",
    "prompt is too long",
)
_OVERFLOW_PATTERN = re.compile(r"exceed(?:s|ed)?(?: customer)? model maximum")
_RATE_LIMIT_PHRASES = ("rate_limit_exceeded", "rate limit", "too many requests")


def classify_openai_error(error: BaseException) -> OpenAIErrorKind | None:
    """Return ``"throttling"``, ``"context_overflow"`` or None for an error of an OpenAI-compatible API."""
    message = str(error).lower()
    code = getattr(error, "code", None)
    code = code.lower() if isinstance(code, str) else ""
    if (
        getattr(error, "status_code", None) == 429
        or code == "rate_limit_exceeded"
        or any(phrase in message for phrase in _RATE_LIMIT_PHRASES)
    ):
        return "throttling"
    if (
        code == "context_length_exceeded"
        or any(phrase in message for phrase in _OVERFLOW_PHRASES)
        or _OVERFLOW_PATTERN.search(message)
    ):
        return "context_overflow"
    return None
