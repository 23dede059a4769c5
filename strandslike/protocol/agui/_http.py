"""The HTTP guards in front of the runs: bearer-token authentication, JSON-only bodies of bounded size, and CORS.

Each refusal is an HTTP error with a JSON body ``{"code": ..., "message": ...}``, sent before the request body is
read (or as soon as it grows past the limit), so nothing runs and nothing is persisted:

- ``401`` ``UNAUTHORIZED`` (with ``WWW-Authenticate: Bearer``): a token is configured and the request does not
  carry it as ``Authorization: Bearer <token>``. Tokens are compared in constant time.
- ``415`` ``UNSUPPORTED_MEDIA_TYPE``: a run whose ``Content-Type`` is not ``application/json``. Requiring JSON also
  means a browser page on another origin cannot start a run without a CORS preflight, which fails unless the
  page's origin is configured.
- ``413`` ``BODY_TOO_LARGE``: a body over the limit, by its declared ``Content-Length`` or while it is read.

CORS is off unless origins are configured; then Starlette's ``CORSMiddleware`` answers preflights for those
origins (methods ``GET`` and ``POST``; headers ``Authorization``, ``Content-Type`` and ``Accept``).
"""

import hmac
import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Receive, Scope, Send

from ...types.exceptions import StrandslikeError

DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024

UNAUTHORIZED = "UNAUTHORIZED"
UNSUPPORTED_MEDIA_TYPE = "UNSUPPORTED_MEDIA_TYPE"
BODY_TOO_LARGE = "BODY_TOO_LARGE"
INVALID_CONTENT_LENGTH = "INVALID_CONTENT_LENGTH"

# RFC 6750's b64token: what may follow "Bearer " in an Authorization header.
_TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_ORIGIN = re.compile(r"[a-z][a-z0-9+.\-]*://[^/\s?#@]+", re.IGNORECASE)


class ServerConfigError(StrandslikeError, ValueError):
    """`create_app` (or ``serve``) was given an option it cannot use; no server was created."""


class HttpRefusal(StrandslikeError):
    """A request refused at the HTTP level, before any run.

    Attributes:
        status: The HTTP status code.
        code: A stable code for the JSON body.
        headers: Extra response headers.
    """

    def __init__(self, status: int, code: str, message: str, headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
        self.status = status
        self.code = code
        self.headers = list(headers)
        super().__init__(message)

    async def send(self, send: Send) -> None:
        """Answer the request with this refusal."""
        body = json.dumps({"code": self.code, "message": str(self)}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": self.status, "headers": headers + self.headers})
        await send({"type": "http.response.body", "body": body})


def check_token(token: str | None) -> str | None:
    """Return ``token`` if it can be sent as a bearer token (None: no authentication).

    Raises:
        ServerConfigError: It is empty or has characters a bearer token cannot carry.
    """
    if token is None:
        return None
    if not isinstance(token, str):
        raise ServerConfigError(f"The bearer token must be a string, not a {type(token).__name__}.")
    if not _TOKEN.fullmatch(token):
        problem = "is empty" if not token else "has characters a bearer token cannot carry"
        raise ServerConfigError(
            f"The bearer token {problem}: it must be a non-empty string of letters, digits and -._~+/ (optionally "
            "ending in =). Generate one with: python -c 'import secrets; print(secrets.token_urlsafe(32))'"
        )
    return token


def check_origins(origins: Iterable[str] | None) -> list[str]:
    """Return the CORS origins as a list (empty: CORS off).

    Raises:
        ServerConfigError: ``origins`` is a lone string, or holds something that is not an origin
            (``scheme://host[:port]``, no path) or ``"*"``.
    """
    if origins is None:
        return []
    if isinstance(origins, str):
        raise ServerConfigError(
            f"cors_origins={origins!r} is a string; pass a list of origins, e.g. cors_origins=[{origins!r}]"
        )
    checked = []
    for origin in origins:
        if not isinstance(origin, str) or not (origin == "*" or _ORIGIN.fullmatch(origin)):
            raise ServerConfigError(
                f"CORS origin {origin!r} is not an origin: give scheme://host[:port] exactly as the browser sends it "
                "(e.g. 'https://app.example.com' or 'http://localhost:3000', no path or trailing slash), or '*' for "
                "every origin."
            )
        checked.append(origin.lower() if origin != "*" else origin)
    return checked


def check_body_limit(max_body_bytes: int) -> int:
    """Return the body limit in bytes.

    Raises:
        ServerConfigError: It is not a positive integer.
    """
    if isinstance(max_body_bytes, bool) or not isinstance(max_body_bytes, int) or max_body_bytes <= 0:
        raise ServerConfigError(
            f"max_body_bytes={max_body_bytes!r} must be a positive number of bytes (default {DEFAULT_MAX_BODY_BYTES})"
        )
    return max_body_bytes


def check_agent_cache_size(size: int) -> int:
    """Return the number of agents to keep between requests.

    Raises:
        ServerConfigError: It is not an integer of at least 0.
    """
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ServerConfigError(
            f"agent_cache_size={size!r} must be a number of agents, 0 or more (0 keeps none between requests)"
        )
    return size


class BearerAuth:
    """ASGI middleware: every HTTP request must carry ``Authorization: Bearer <token>``."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self._app = app
        self._expected = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        given = _header(scope, b"authorization")
        if given is None:
            await _unauthorized("The request has no Authorization header; send 'Authorization: Bearer <token>'.").send(
                send
            )
            return
        scheme, _, credentials = given.partition(b" ")
        # compare_digest takes the same time wherever the first difference is, so the token cannot be guessed
        # byte by byte from response times.
        if scheme.lower() != b"bearer" or not hmac.compare_digest(credentials.strip(), self._expected):
            await _unauthorized(
                "The bearer token is missing or wrong; send 'Authorization: Bearer <token>' with the server's token.",
                error=True,
            ).send(send)
            return
        await self._app(scope, receive, send)


def _unauthorized(message: str, *, error: bool = False) -> HttpRefusal:
    challenge = b'Bearer realm="strandslike"' + (b', error="invalid_token"' if error else b"")
    return HttpRefusal(401, UNAUTHORIZED, message, [(b"www-authenticate", challenge)])


def with_cors(app: ASGIApp, origins: list[str]) -> ASGIApp:
    """Wrap ``app`` in CORS for ``origins`` (no wrapping when there are none: CORS stays off)."""
    if not origins:
        return app
    return CORSMiddleware(
        app,
        allow_origins=origins,
        allow_methods=["GET", "POST"],
        allow_headers=["authorization", "content-type", "accept"],
        allow_credentials=False,  # bearer tokens travel in a header, never in cookies
    )


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value)
    return None


def check_json_request(scope: Scope, limit: int) -> None:
    """Refuse a run whose body is not JSON, or declares more bytes than ``limit``.

    Raises:
        HttpRefusal: 415 for another (or no) ``Content-Type``; 413 for a ``Content-Length`` over the limit; 400
            for a ``Content-Length`` that is not a number.
    """
    content_type = _header(scope, b"content-type")
    media_type = content_type.split(b";", 1)[0].strip().lower() if content_type is not None else b""
    if media_type != b"application/json":
        shown = repr(content_type.decode("latin-1")) if content_type is not None else "missing"
        raise HttpRefusal(
            415,
            UNSUPPORTED_MEDIA_TYPE,
            f"The Content-Type is {shown}; a RunAgentInput must be sent as 'application/json'. Nothing ran.",
        )
    declared = _header(scope, b"content-length")
    if declared is not None:
        try:
            length = int(declared)
        except ValueError:
            raise HttpRefusal(
                400, INVALID_CONTENT_LENGTH, f"The Content-Length {declared!r} is not a number. Nothing ran."
            ) from None
        if length > limit:
            raise _too_large(limit, f"declares {length} bytes")


async def read_body(receive: Receive, limit: int) -> bytes | None:
    """Read the request body, refusing it as soon as it grows past ``limit`` bytes; None if the client left.

    Raises:
        HttpRefusal: 413: the body is larger than ``limit``.
    """
    chunks: list[bytes] = []
    size = 0
    while True:
        message: dict[str, Any] = dict(await receive())
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise _too_large(limit, f"is over {limit} bytes")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _too_large(limit: int, what: str) -> HttpRefusal:
    return HttpRefusal(
        413,
        BODY_TOO_LARGE,
        f"The request body {what}; this server accepts at most {limit} bytes (create_app(max_body_bytes=...), "
        "serve --max-body-bytes). Nothing ran.",
    )
