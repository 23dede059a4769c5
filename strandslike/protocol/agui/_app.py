"""The ASGI application: routes, the server-sent event stream, and the declared capabilities."""

import contextlib
import os
from collections.abc import AsyncGenerator, Callable, Sequence
from pathlib import Path
from typing import Any

from ag_ui.core import (
    AgentCapabilities,
    BaseEvent,
    HumanInTheLoopCapabilities,
    IdentityCapabilities,
    StateCapabilities,
    TransportCapabilities,
)
from ag_ui.encoder import EventEncoder
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ...session.repository_session_manager import RepositorySessionManager
from ._cache import DEFAULT_AGENT_CACHE_SIZE, AgentCache
from ._http import (
    DEFAULT_MAX_BODY_BYTES,
    BearerAuth,
    HttpRefusal,
    ServerConfigError,
    check_agent_cache_size,
    check_body_limit,
    check_json_request,
    check_origins,
    check_token,
    read_body,
    with_cors,
)
from ._run import AgentFactory, RunConfig, run_events

CAPABILITIES = AgentCapabilities(
    identity=IdentityCapabilities(name="strandslike", type="strandslike"),
    transport=TransportCapabilities(streaming=True),
    state=StateCapabilities(snapshots=True, persistent_state=True),
    human_in_the_loop=HumanInTheLoopCapabilities(
        supported=True, approvals=True, interrupts=True, approve_with_edits=True
    ),
)


class _RunEndpoint:
    """``POST``: run a ``RunAgentInput`` and answer with its events as server-sent events.

    A body that is not JSON (415) or too large (413) is refused with an HTTP error before anything runs (see
    `_http`); otherwise the answer is ``200 text/event-stream`` and failures are ``RUN_ERROR`` events. The run goes
    on if the client disconnects, so what it does is persisted even when nobody reads the stream.
    """

    def __init__(self, config: RunConfig) -> None:
        self._config = config

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            check_json_request(scope, self._config.max_body_bytes)
            body = await read_body(receive, self._config.max_body_bytes)
        except HttpRefusal as refusal:
            await refusal.send(send)
            return
        if body is None:
            return  # the client left before it sent the whole request: nothing to run
        encoder = EventEncoder()
        headers = [
            (b"content-type", encoder.get_content_type().encode() + b"; charset=utf-8"),
            (b"cache-control", b"no-cache"),
            (b"x-accel-buffering", b"no"),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        sink = _Sink(send)
        batches: AsyncGenerator[list[BaseEvent], None] = run_events(body, self._config)
        async with contextlib.aclosing(batches) as stream:
            async for batch in stream:
                await sink.send("".join(encoder.encode(event) for event in batch).encode())
        await sink.finish()


class _Sink:
    """Sends body chunks until the client goes away, then drops them."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self._connected = True

    async def send(self, chunk: bytes) -> None:
        if not self._connected:
            return
        try:
            await self._send({"type": "http.response.body", "body": chunk, "more_body": True})
        except OSError:
            self._connected = False

    async def finish(self) -> None:
        if self._connected:
            with contextlib.suppress(OSError):
                await self._send({"type": "http.response.body", "body": b"", "more_body": False})


async def _capabilities(request: Request) -> JSONResponse:
    return JSONResponse(CAPABILITIES.model_dump(mode="json", by_alias=True))


def create_app(
    agent_factory: AgentFactory,
    *,
    storage_dir: str | os.PathLike[str] | None = None,
    session_dsn: str | None = None,
    session_managers: Callable[[str], RepositorySessionManager] | None = None,
    token: str | None = None,
    cors_origins: Sequence[str] | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    agent_cache_size: int = DEFAULT_AGENT_CACHE_SIZE,
) -> ASGIApp:
    """Create the AG-UI server of the agents ``agent_factory`` builds.

    Routes: ``POST /`` and ``POST /agent`` take a ``RunAgentInput`` (``Content-Type: application/json``) and stream
    the run as server-sent events; ``GET /``, ``GET /capabilities`` and ``GET /agent/capabilities`` return the
    agent's ``AgentCapabilities``. The thread is the session: a request runs the agent built on
    ``FileSessionManager(threadId, storage_dir=storage_dir)`` (or the session manager ``session_dsn`` or
    ``session_managers`` gives), claimed for the request, so any replica on the same storage, or a restarted
    process, can serve the thread's next request. The agents of the last
    ``agent_cache_size`` threads are kept in the process and reused by their thread's next request when the
    session's claim confirms that nobody changed the session since; otherwise the agent is rebuilt from the
    session, as it is for a thread not kept.

    Args:
        agent_factory: Called as ``agent_factory(session_manager=...)``; returns an `Agent`, `Graph` or `Swarm`
            persisted by that session manager (see `AgentFactory`).
        storage_dir: Where the sessions are stored (default ``~/.strandslike/sessions``).
        session_dsn: Store the sessions in this PostgreSQL database instead (``PostgresSessionManager(threadId,
            dsn=session_dsn)``; needs the postgres extra), so that several servers, on one machine or many, serve
            the same threads: a resume arriving at two servers at once runs on one, the other gets
            ``SESSION_CONFLICT``.
        session_managers: Or open each thread's session with your own function of the thread id (any store that
            implements the durable log contract).
        token: Require ``Authorization: Bearer <token>`` on every request (401 otherwise). None: no
            authentication, which is only safe on the loopback interface.
        cors_origins: Browser origins allowed to call the server from another origin (``scheme://host[:port]``,
            or ``"*"``). None or empty: CORS is off, and browsers refuse cross-origin calls.
        max_body_bytes: Largest request body accepted (413 beyond it); 10 MiB by default.
        agent_cache_size: How many threads' agents to keep between requests, least recently used out first (256 by
            default; 0: rebuild every thread's agent for every request). Agents only, not Graph or Swarm.

    Raises:
        ServerConfigError: A token, origin, limit or cache size that cannot be used (a `ValueError`).

    Example:
        ```python
        def build(session_manager):
            return Agent(model=..., tools=[...], hooks=[...], session_manager=session_manager)

        app = create_app(build, storage_dir="sessions", token=os.environ["STRANDSLIKE_SERVE_TOKEN"])
        uvicorn.run(app, host="127.0.0.1", port=8000)
        ```
    """
    checked_token = check_token(token)
    origins = check_origins(cors_origins)
    limit = check_body_limit(max_body_bytes)
    cache = AgentCache(check_agent_cache_size(agent_cache_size))
    config = RunConfig(
        agent_factory,
        Path(storage_dir) if storage_dir is not None else None,
        _session_managers(storage_dir, session_dsn, session_managers),
        max_body_bytes=limit,
        agents=cache,
    )
    run = _RunEndpoint(config)
    app: ASGIApp = Starlette(
        routes=[
            Route("/", run, methods=["POST"]),
            Route("/agent", run, methods=["POST"]),
            Route("/", _capabilities, methods=["GET"]),
            Route("/capabilities", _capabilities, methods=["GET"]),
            Route("/agent/capabilities", _capabilities, methods=["GET"]),
        ]
    )
    if checked_token is not None:
        app = BearerAuth(app, checked_token)
    # CORS goes outside authentication: a browser's preflight never carries the token.
    return with_cors(app, origins)


def _session_managers(
    storage_dir: Any, session_dsn: str | None, session_managers: Callable[[str], RepositorySessionManager] | None
) -> Callable[[str], RepositorySessionManager] | None:
    """Return how each request opens its thread's session (None: a file session in ``storage_dir``).

    Raises:
        ServerConfigError: More than one store was named.
    """
    named = [name for name, value in (("storage_dir", storage_dir), ("session_dsn", session_dsn)) if value is not None]
    if session_managers is not None:
        named.append("session_managers")
    if len(named) > 1:
        raise ServerConfigError(f"name one session store: {' and '.join(named)} were both given")
    if session_dsn is None:
        return session_managers
    if not isinstance(session_dsn, str) or not session_dsn.strip():
        raise ServerConfigError(f"session_dsn={session_dsn!r} must be a PostgreSQL connection string")
    from ...session.postgres import PostgresSessionManager

    dsn = session_dsn

    def open_postgres(thread_id: str) -> RepositorySessionManager:
        return PostgresSessionManager(thread_id, dsn=dsn)

    return open_postgres
